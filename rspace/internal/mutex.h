// A std::mutex with abseil thread-safety annotations. RSpace uses it instead
// of absl::Mutex because Debian's prebuilt abseil is not built with
// ThreadSanitizer, so TSAN cannot see absl::Mutex synchronisation and reports
// false races; std::mutex goes through pthread, which TSAN intercepts.
#ifndef RNODE_RSPACE_INTERNAL_MUTEX_H_
#define RNODE_RSPACE_INTERNAL_MUTEX_H_

#include <mutex>

#include "absl/base/thread_annotations.h"

namespace rnode::rspace::internal {

class ABSL_LOCKABLE Mutex {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

}  // namespace rnode::rspace::internal

#endif  // RNODE_RSPACE_INTERNAL_MUTEX_H_

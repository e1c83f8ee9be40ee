// The project's mutex: a std::mutex with abseil's thread-safety annotations,
// so clang's -Wthread-safety (the `thread-safety` preset) checks every
// ABSL_GUARDED_BY field, and a condition variable that waits on it.
//
// Not absl::Mutex: Debian's prebuilt abseil is not built with
// ThreadSanitizer, so TSAN cannot see absl::Mutex synchronisation and
// reports false races; std::mutex goes through pthread, which TSAN
// intercepts. Not std::mutex directly: libstdc++'s is not annotated.
#ifndef RNODE_UTIL_MUTEX_H_
#define RNODE_UTIL_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"

namespace rnode {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  // Tells the analysis that the caller holds this mutex (a no-op at run time;
  // for lambdas run under a lock the analysis cannot follow).
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` for its scope.
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

// A condition variable over Mutex. Thread-safe.
class CondVar {
 public:
  // Releases `mu`, waits for a Signal/SignalAll (or a spurious wake-up) and
  // takes `mu` again. Callers loop on their condition:
  //   while (!ready_) cv_.Wait(&mu_);
  void Wait(Mutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // Wait, returning at `deadline` at the latest; true if it returned
  // because the deadline passed. Callers loop on their condition.
  template <typename Clock, typename Duration>
  bool WaitUntil(Mutex* mu,
                 const std::chrono::time_point<Clock, Duration>& deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool timed_out = cv_.wait_until(lock, deadline) ==
                           std::cv_status::timeout;
    lock.release();
    return timed_out;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace rnode

#endif  // RNODE_UTIL_MUTEX_H_

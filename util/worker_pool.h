// A fixed pool of worker threads: the reducer's parallel phase and the
// merger's per-channel work.
//
// Plain std::thread + util::Mutex rather than TBB: the system libtbb is not
// built with ThreadSanitizer, whose reports on its task handoff hide real
// races in the tsan build; util::Mutex goes through pthread, which TSAN sees.
#ifndef RNODE_UTIL_WORKER_POOL_H_
#define RNODE_UTIL_WORKER_POOL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "util/mutex.h"

namespace rnode {

// Thread-safe for one ParallelFor caller at a time (the reducer runs one
// deploy at a time per runtime; the merger serialises its callers).
class WorkerPool {
 public:
  // Starts `threads` - 1 workers; the caller of ParallelFor is the last one.
  explicit WorkerPool(int threads);
  // Threads that run a ParallelFor's calls, the caller included.
  int threads() const { return static_cast<int>(threads_.size()) + 1; }
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Calls fn(i) once for every i in [0, n), on the calling thread and the
  // workers, and returns when every call has returned (so everything the
  // calls wrote is visible to the caller). `fn` must not throw.
  void ParallelFor(size_t n, const std::function<void(size_t)>& fn);

 private:
  struct Job;
  void WorkerLoop();
  void Drain(Job& job);

  Mutex mu_;
  CondVar wake_;
  CondVar done_;
  std::shared_ptr<Job> job_ ABSL_GUARDED_BY(mu_);
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace rnode

#endif  // RNODE_UTIL_WORKER_POOL_H_

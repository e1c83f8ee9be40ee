// The node's one pool of worker threads, shared by everything that runs in
// parallel: block replay's lanes, the validator's signature checks, the
// reducer's parallel phase, the merger's per-channel work and the trie's
// rebuilds. A node makes one, sized by its configuration, and hands it to
// each of those; nothing else starts threads for that work, so the machine
// is not oversubscribed (docs/adr/0009-one-worker-pool-on-tbb.md).
//
// Two implementations of this one interface, chosen at build time
// (RNODE_TBB_POOL): an Intel TBB task arena (the default), and std::thread
// workers on util::Mutex for the tsan preset, because Debian's libtbb is
// not built with ThreadSanitizer, which then reports TBB's own task handoff
// as races.
#ifndef RNODE_UTIL_WORKER_POOL_H_
#define RNODE_UTIL_WORKER_POOL_H_

#include <cstddef>
#include <functional>
#include <memory>

namespace rnode {

// Thread-safe. ParallelFor may be called from any number of threads at
// once, and from inside a call of another ParallelFor (nested): the caller
// works on its own calls and the pool's threads help; a caller waits only
// for calls of its own that other threads took, and while waiting never
// takes up unrelated work (so nesting cannot deadlock and a caller's stack
// never holds another caller's task).
class WorkerPool {
 public:
  // A pool whose ParallelFor runs on at most `threads` threads (>= 1; less
  // counts as 1), its caller's included.
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Threads that run a ParallelFor's calls, the caller included.
  int threads() const { return threads_; }

  // Calls fn(i) once for every i in [0, n), on the calling thread and the
  // pool's, and returns when every call has returned (so everything the
  // calls wrote is visible to the caller). `fn` must not throw. Which
  // thread runs which call, in which order, and how many at once (at most
  // threads()) is unspecified: callers that need a result independent of
  // it store results by index.
  void ParallelFor(size_t n, const std::function<void(size_t)>& fn);

 private:
  struct Impl;
  int threads_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rnode

#endif  // RNODE_UTIL_WORKER_POOL_H_

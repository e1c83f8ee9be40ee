// Worker pool (see worker_pool.h): TBB's task arena, or std::thread workers
// under RNODE_TBB_POOL=0 (the tsan preset).
#include "util/worker_pool.h"

#include <algorithm>

#if RNODE_TBB_POOL
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include "absl/base/thread_annotations.h"
#include "util/mutex.h"
#else
#include <atomic>
#include <deque>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "util/mutex.h"
#endif

namespace rnode {

#if RNODE_TBB_POOL

namespace {

// TBB starts at most max_allowed_parallelism - 1 workers for the whole
// process (by default the machine's cores); a pool asked for more threads
// than that raises it, once, for the life of the process. One control at a
// time: of several, TBB would apply the smallest.
void AllowParallelism(int threads) {
  struct Control {
    Mutex mu;
    tbb::global_control* raised ABSL_GUARDED_BY(mu) = nullptr;
  };
  static Control* const control = new Control;  // never destroyed
  MutexLock l(&control->mu);
  const size_t active = tbb::global_control::active_value(
      tbb::global_control::max_allowed_parallelism);
  if (static_cast<size_t>(threads) <= active) return;
  auto* raised =
      new tbb::global_control(tbb::global_control::max_allowed_parallelism,
                              static_cast<size_t>(threads));
  delete control->raised;
  control->raised = raised;  // kept: pools may come at any time
}

}  // namespace

struct WorkerPool::Impl {
  explicit Impl(int threads) : arena(threads) {}
  tbb::task_arena arena;
};

WorkerPool::WorkerPool(int threads) : threads_(std::max(threads, 1)) {
  if (threads_ > 1) {
    AllowParallelism(threads_);
    impl_ = std::make_unique<Impl>(threads_);
  }
}

WorkerPool::~WorkerPool() = default;

void WorkerPool::ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
  if (impl_ == nullptr || n <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  // isolate: while this caller waits for its calls, its thread runs only
  // calls of this ParallelFor (and of ParallelFors nested in them), never
  // another caller's, whose locks or state it could then hold.
  impl_->arena.execute([&] {
    tbb::this_task_arena::isolate(
        [&] { tbb::parallel_for(size_t{0}, n, [&](size_t i) { fn(i); }); });
  });
}

#else  // std::thread workers

struct WorkerPool::Impl {
  struct Job {
    const std::function<void(size_t)>* fn = nullptr;
    size_t n = 0;
    std::atomic<size_t> next{0};
    size_t done = 0;  // calls returned; guarded by mu
    bool claimed_all() const { return next.load() >= n; }
  };

  explicit Impl(int threads) {
    for (int i = 1; i < threads; ++i) {
      workers.emplace_back([this] { WorkerLoop(); });
    }
  }

  ~Impl() {
    {
      MutexLock l(&mu);
      stop = true;
    }
    wake.SignalAll();
    for (std::thread& t : workers) t.join();
  }

  // Runs calls of `job` until none is left unclaimed.
  void Drain(Job& job) {
    size_t count = 0;
    for (size_t i = job.next.fetch_add(1); i < job.n;
         i = job.next.fetch_add(1)) {
      (*job.fn)(i);
      ++count;
    }
    if (count == 0) return;
    MutexLock l(&mu);
    job.done += count;
    if (job.done == job.n) done.SignalAll();
  }

  // Helps the oldest job with calls left.
  void WorkerLoop() {
    while (true) {
      std::shared_ptr<Job> job;
      {
        MutexLock l(&mu);
        while (true) {
          while (!jobs.empty() && jobs.front()->claimed_all()) {
            jobs.pop_front();
          }
          if (stop || !jobs.empty()) break;
          wake.Wait(&mu);
        }
        if (stop) return;
        job = jobs.front();
      }
      Drain(*job);
    }
  }

  // A caller works on its own job, then waits for the calls others took;
  // those never wait for it, so nested and concurrent jobs cannot deadlock.
  void Run(size_t n, const std::function<void(size_t)>& fn) {
    auto job = std::make_shared<Job>();
    job->fn = &fn;
    job->n = n;
    {
      MutexLock l(&mu);
      jobs.push_back(job);
    }
    wake.SignalAll();
    Drain(*job);
    MutexLock l(&mu);
    auto it = std::find(jobs.begin(), jobs.end(), job);
    if (it != jobs.end()) jobs.erase(it);
    while (job->done != job->n) done.Wait(&mu);
  }

  Mutex mu;
  CondVar wake;
  CondVar done;
  // Jobs that may still have unclaimed calls, oldest first.
  std::deque<std::shared_ptr<Job> > jobs ABSL_GUARDED_BY(mu);
  bool stop ABSL_GUARDED_BY(mu) = false;
  std::vector<std::thread> workers;
};

WorkerPool::WorkerPool(int threads) : threads_(std::max(threads, 1)) {
  if (threads_ > 1) impl_ = std::make_unique<Impl>(threads_);
}

WorkerPool::~WorkerPool() = default;

void WorkerPool::ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
  if (impl_ == nullptr || n <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  impl_->Run(n, fn);
}

#endif

}  // namespace rnode

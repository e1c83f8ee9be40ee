// Worker pool (see worker_pool.h).
#include "util/worker_pool.h"

#include <atomic>

namespace rnode {

struct WorkerPool::Job {
  const std::function<void(size_t)>* fn = nullptr;
  size_t n = 0;
  std::atomic<size_t> next{0};
  size_t done = 0;  // calls returned; guarded by the pool's mu_
};

WorkerPool::WorkerPool(int threads) {
  for (int i = 1; i < threads; ++i) {
    threads_.emplace_back([this] { WorkerLoop(); });
  }
}

WorkerPool::~WorkerPool() {
  {
    MutexLock l(&mu_);
    stop_ = true;
  }
  wake_.SignalAll();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::Drain(Job& job) {
  size_t count = 0;
  for (size_t i = job.next.fetch_add(1); i < job.n; i = job.next.fetch_add(1)) {
    (*job.fn)(i);
    ++count;
  }
  if (count == 0) return;
  MutexLock l(&mu_);
  job.done += count;
  if (job.done == job.n) done_.SignalAll();
}

void WorkerPool::WorkerLoop() {
  uint64_t seen = 0;
  while (true) {
    std::shared_ptr<Job> job;
    {
      MutexLock l(&mu_);
      while (!stop_ && generation_ == seen) wake_.Wait(&mu_);
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    if (job != nullptr) Drain(*job);
  }
}

void WorkerPool::ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  auto job = std::make_shared<Job>();
  job->fn = &fn;
  job->n = n;
  if (!threads_.empty()) {
    {
      MutexLock l(&mu_);
      job_ = job;
      ++generation_;
    }
    wake_.SignalAll();
  }
  Drain(*job);
  MutexLock l(&mu_);
  while (job->done != job->n) done_.Wait(&mu_);
  job_.reset();
}

}  // namespace rnode

// Worker pool (see worker_pool.h).
#include "util/worker_pool.h"

#include <atomic>

namespace rnode {

struct WorkerPool::Job {
  const std::function<void(size_t)>* fn = nullptr;
  size_t n = 0;
  std::atomic<size_t> next{0};
  size_t done = 0;  // calls returned; guarded by WorkerPool::mu_
};

WorkerPool::WorkerPool(int threads) {
  for (int i = 1; i < threads; ++i) {
    threads_.emplace_back([this] { WorkerLoop(); });
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::Drain(Job& job) {
  size_t count = 0;
  for (size_t i = job.next.fetch_add(1); i < job.n; i = job.next.fetch_add(1)) {
    (*job.fn)(i);
    ++count;
  }
  if (count == 0) return;
  std::lock_guard<std::mutex> l(mu_);
  job.done += count;
  if (job.done == job.n) done_.notify_all();
}

void WorkerPool::WorkerLoop() {
  uint64_t seen = 0;
  while (true) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> l(mu_);
      wake_.wait(l, [&] { return stop_ || generation_ != seen; });
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
      std::lock_guard<std::mutex> l(mu_);
      job_ = job;
      ++generation_;
    }
    wake_.notify_all();
  }
  Drain(*job);
  std::unique_lock<std::mutex> l(mu_);
  done_.wait(l, [&] { return job->done == job->n; });
  job_.reset();
}

}  // namespace rnode

// A thread running posted tasks in order (see serial_executor.h).
#include "casper/merge/internal/serial_executor.h"

#include <utility>

namespace rnode::casper::merge::internal {

SerialExecutor::SerialExecutor() : thread_([this] { Loop(); }) {}

SerialExecutor::~SerialExecutor() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  wake_.Signal();
  thread_.join();
}

void SerialExecutor::Post(std::function<void()> task) {
  {
    MutexLock lock(&mu_);
    queue_.push_back(std::move(task));
  }
  wake_.Signal();
}

void SerialExecutor::Loop() {
  while (true) {
    std::function<void()> task;
    {
      MutexLock lock(&mu_);
      while (queue_.empty() && !stop_) wake_.Wait(&mu_);
      if (queue_.empty()) return;  // Stopped with nothing left to run.
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace rnode::casper::merge::internal

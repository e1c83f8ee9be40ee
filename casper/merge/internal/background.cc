// Background work of a merge (see background.h).
#include "casper/merge/internal/background.h"

#include <utility>

namespace rnode::casper::merge::internal {

HelperThread& HelperThread::Get() {
  static HelperThread* helper = new HelperThread;
  return *helper;
}

void HelperThread::Post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void HelperThread::Loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return !queue_.empty(); });
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

void BackgroundTask::Start(std::function<absl::Status()> task) {
  started_ = true;
  HelperThread::Get().Post([this, task = std::move(task)] {
    absl::Status status = task();
    std::lock_guard<std::mutex> lock(mu_);
    status_ = std::move(status);
    done_ = true;
    cv_.notify_one();
  });
}

absl::Status BackgroundTask::Join() {
  if (!started_) return status_;
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return done_; });
  return status_;
}

}  // namespace rnode::casper::merge::internal

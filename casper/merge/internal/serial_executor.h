// One thread that runs posted tasks in order: a MergeContext's helper for
// the background base read and the background freeing of base states.
#ifndef RNODE_CASPER_MERGE_INTERNAL_SERIAL_EXECUTOR_H_
#define RNODE_CASPER_MERGE_INTERNAL_SERIAL_EXECUTOR_H_

#include <deque>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "util/mutex.h"

namespace rnode::casper::merge::internal {

// Starts its thread on construction; the destructor runs every task already
// posted, then joins. The queue is unbounded, but its one user (a merge on
// the owning MergeContext, one at a time) posts at most two tasks per merge
// and waits for the first. Post is thread-safe; tasks must not throw.
class SerialExecutor {
 public:
  SerialExecutor();
  ~SerialExecutor();
  SerialExecutor(const SerialExecutor&) = delete;
  SerialExecutor& operator=(const SerialExecutor&) = delete;

  // Queues `task`; it runs after every task posted before it.
  void Post(std::function<void()> task);

 private:
  void Loop();

  Mutex mu_;
  CondVar wake_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // Last: starts after the members it uses.
};

}  // namespace rnode::casper::merge::internal

#endif  // RNODE_CASPER_MERGE_INTERNAL_SERIAL_EXECUTOR_H_

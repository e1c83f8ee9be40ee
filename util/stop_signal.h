// A one-way stop flag that sleeping threads wait on: a loop that wakes
// every so often sleeps with WaitFor and leaves when it returns true.
#ifndef RNODE_UTIL_STOP_SIGNAL_H_
#define RNODE_UTIL_STOP_SIGNAL_H_

#include <chrono>

#include "util/mutex.h"

namespace rnode {

// Thread-safe.
class StopSignal {
 public:
  // Wakes every waiter; later waits return at once. Idempotent.
  void Stop() {
    MutexLock lock(&mu_);
    stopped_ = true;
    cv_.SignalAll();
  }
  bool stopped() const {
    MutexLock lock(&mu_);
    return stopped_;
  }
  // Sleeps until `deadline` or Stop, whichever comes first; true if
  // stopped.
  template <typename Clock, typename Duration>
  bool WaitUntil(const std::chrono::time_point<Clock, Duration>& deadline) {
    MutexLock lock(&mu_);
    while (!stopped_ && Clock::now() < deadline) cv_.WaitUntil(&mu_, deadline);
    return stopped_;
  }
  template <typename Rep, typename Period>
  bool WaitFor(std::chrono::duration<Rep, Period> d) {
    return WaitUntil(std::chrono::steady_clock::now() + d);
  }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace rnode

#endif  // RNODE_UTIL_STOP_SIGNAL_H_

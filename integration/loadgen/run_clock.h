// The load generator's time base: seconds since the run started, on the
// monotonic clock, as every tracker and report time is expressed.
#ifndef RNODE_INTEGRATION_LOADGEN_RUN_CLOCK_H_
#define RNODE_INTEGRATION_LOADGEN_RUN_CLOCK_H_

#include <chrono>

namespace rnode::loadgen {

// Copyable; thread-safe (it only reads the steady clock).
class RunClock {
 public:
  using Clock = std::chrono::steady_clock;

  RunClock() : start_(Clock::now()) {}
  explicit RunClock(Clock::time_point start) : start_(start) {}

  // Seconds since the start.
  double Now() const { return ToSeconds(Clock::now()); }
  double ToSeconds(Clock::time_point t) const {
    return std::chrono::duration<double>(t - start_).count();
  }
  // The steady-clock instant `seconds` after the start.
  Clock::time_point ToTimePoint(double seconds) const {
    return start_ + std::chrono::duration_cast<Clock::duration>(
                        std::chrono::duration<double>(seconds));
  }
  Clock::time_point start() const { return start_; }

 private:
  Clock::time_point start_;
};

}  // namespace rnode::loadgen

#endif  // RNODE_INTEGRATION_LOADGEN_RUN_CLOCK_H_

// A rate limit for work a remote party can trigger (a signature to verify,
// a log line to write): at most `burst` at once, refilled at `per_second`.
#ifndef RNODE_UTIL_TOKEN_BUCKET_H_
#define RNODE_UTIL_TOKEN_BUCKET_H_

#include <algorithm>
#include <chrono>

#include "absl/base/thread_annotations.h"
#include "util/mutex.h"

namespace rnode {

// Starts full. Thread-safe. Times are the caller's (steady clock), so that
// tests can step them; a time earlier than the last one refills nothing.
class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;

  // per_second > 0 and burst >= 1 (smaller values are raised to those).
  TokenBucket(double per_second, double burst)
      : per_second_(std::max(per_second, 1e-9)),
        burst_(std::max(burst, 1.0)),
        tokens_(burst_) {}
  TokenBucket(const TokenBucket&) = delete;
  TokenBucket& operator=(const TokenBucket&) = delete;

  // Takes one token if one is there at `now`; false (nothing taken) if not.
  bool TryTake(Clock::time_point now = Clock::now()) {
    MutexLock lock(&mu_);
    if (now > last_) {
      if (last_ != Clock::time_point{}) {
        const double seconds =
            std::chrono::duration<double>(now - last_).count();
        tokens_ = std::min(burst_, tokens_ + seconds * per_second_);
      }
      last_ = now;
    } else if (last_ == Clock::time_point{}) {
      last_ = now;
    }
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
  }

 private:
  const double per_second_;
  const double burst_;
  Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_);
  Clock::time_point last_ ABSL_GUARDED_BY(mu_){};
};

}  // namespace rnode

#endif  // RNODE_UTIL_TOKEN_BUCKET_H_

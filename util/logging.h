// Logging: levels, one named logger per category, and a rate limiter for
// anything a peer or client can trigger. Keys and secrets are never logged.
#ifndef RNODE_UTIL_LOGGING_H_
#define RNODE_UTIL_LOGGING_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "spdlog/spdlog.h"
#include "util/mutex.h"

namespace rnode {

// Sets the level of every category, present and future, from a name:
// trace, debug, info, warn, error, critical, off. InvalidArgument otherwise.
absl::Status SetLogLevel(std::string_view level);

// The logger of `category` ("casper", "rspace", "api", ...), created on first
// use; all categories write to stderr with the category in each line.
// Thread-safe; the returned logger lives for the whole process.
std::shared_ptr<spdlog::logger> Log(std::string_view category);

// Allows at most `per_second` events each second (a token bucket refilled
// continuously, burst = per_second) and counts what it suppressed, so a log
// line that a peer can trigger cannot flood the log. Thread-safe.
class LogRateLimiter {
 public:
  explicit LogRateLimiter(double per_second);

  // True if the caller may log now. When it returns true after suppressing
  // events, `*suppressed` (if not null) receives how many were dropped since.
  bool Allow(uint64_t* suppressed = nullptr);

 private:
  using Clock = std::chrono::steady_clock;
  const double per_second_;
  Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_);
  Clock::time_point last_ ABSL_GUARDED_BY(mu_);
  uint64_t suppressed_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace rnode

#endif  // RNODE_UTIL_LOGGING_H_

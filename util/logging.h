// Logging: levels, one named logger per category, and a rate limiter for
// anything a peer or client can trigger. Keys and secrets are never logged.
#ifndef RNODE_UTIL_LOGGING_H_
#define RNODE_UTIL_LOGGING_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "spdlog/spdlog.h"
#include "util/token_bucket.h"

namespace rnode {

// Sets the level of every category, present and future, from a name:
// trace, debug, info, warn, error, critical, off. InvalidArgument otherwise.
absl::Status SetLogLevel(std::string_view level);

// The logger of `category` ("casper", "rspace", "api", ...), created on first
// use; all categories write to stderr with the category in each line.
// Thread-safe; the returned logger lives for the whole process.
std::shared_ptr<spdlog::logger> Log(std::string_view category);

// Allows at most `per_second` events each second (a token bucket refilled
// continuously, burst = max(per_second, 1)) and counts what it suppressed,
// so a log line that a peer can trigger cannot flood the log. Thread-safe.
class LogRateLimiter {
 public:
  explicit LogRateLimiter(double per_second);

  // True if the caller may log now. When it returns true after suppressing
  // events, `*suppressed` (if not null) receives how many were dropped since.
  bool Allow(uint64_t* suppressed = nullptr);

 private:
  TokenBucket bucket_;
  std::atomic<uint64_t> suppressed_{0};
};

// How many bytes of a text a peer or client chose a log line shows.
inline constexpr size_t kLogTextBytes = 200;

// `text`, chosen by a peer or a client, fit for a log line: at most
// `max_bytes` of it, each byte outside printable ASCII (and the backslash)
// written \xNN, and when cut, "...(N bytes)" with its whole length. Such a
// text can neither make a line long nor forge another line.
std::string LogText(std::string_view text, size_t max_bytes = kLogTextBytes);

// What one component logs at most per second of lines peers cause
// (RateLimitedLog), by default.
inline constexpr double kPeerLogLinesPerSecond = 5;

// A category's logger for lines a peer or a client can cause: at most
// `per_second` lines a second (burst as many); the first line written
// after some were dropped is preceded by one saying how many. Thread-safe.
class RateLimitedLog {
 public:
  RateLimitedLog(std::string_view category, double per_second)
      : log_(Log(category)), limiter_(per_second) {}

  template <typename... Args>
  void Write(spdlog::level::level_enum level,
             spdlog::format_string_t<Args...> format, Args&&... args) {
    if (!log_->should_log(level)) return;
    uint64_t dropped = 0;
    if (!limiter_.Allow(&dropped)) return;
    if (dropped > 0) {
      log_->log(level, "({} lines like the next not logged: too many)",
                dropped);
    }
    log_->log(level, format, std::forward<Args>(args)...);
  }
  template <typename... Args>
  void Info(spdlog::format_string_t<Args...> format, Args&&... args) {
    Write(spdlog::level::info, format, std::forward<Args>(args)...);
  }
  template <typename... Args>
  void Warn(spdlog::format_string_t<Args...> format, Args&&... args) {
    Write(spdlog::level::warn, format, std::forward<Args>(args)...);
  }
  template <typename... Args>
  void Error(spdlog::format_string_t<Args...> format, Args&&... args) {
    Write(spdlog::level::err, format, std::forward<Args>(args)...);
  }

 private:
  const std::shared_ptr<spdlog::logger> log_;
  LogRateLimiter limiter_;
};

}  // namespace rnode

#endif  // RNODE_UTIL_LOGGING_H_

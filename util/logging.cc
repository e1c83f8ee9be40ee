// Category loggers over one shared stderr sink.
#include "util/logging.h"

#include <algorithm>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "spdlog/sinks/stdout_color_sinks.h"

namespace rnode {
namespace {

struct Registry {
  Mutex mu;
  spdlog::level::level_enum level ABSL_GUARDED_BY(mu) = spdlog::level::info;
  spdlog::sink_ptr sink ABSL_GUARDED_BY(mu);
  absl::flat_hash_map<std::string, std::shared_ptr<spdlog::logger>> loggers
      ABSL_GUARDED_BY(mu);
};

Registry& GetRegistry() {
  static Registry* registry = new Registry();  // Never destroyed: loggers
                                               // may be used during exit.
  return *registry;
}

}  // namespace

absl::Status SetLogLevel(std::string_view level) {
  spdlog::level::level_enum parsed =
      spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown log level '", std::string(level),
                     "' (trace, debug, info, warn, error, critical, off)"));
  }
  Registry& r = GetRegistry();
  MutexLock lock(&r.mu);
  r.level = parsed;
  for (auto& [name, logger] : r.loggers) logger->set_level(parsed);
  return absl::OkStatus();
}

std::shared_ptr<spdlog::logger> Log(std::string_view category) {
  Registry& r = GetRegistry();
  MutexLock lock(&r.mu);
  auto it = r.loggers.find(std::string(category));
  if (it != r.loggers.end()) return it->second;
  if (r.sink == nullptr) {
    r.sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    r.sink->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %v");
  }
  auto logger = std::make_shared<spdlog::logger>(std::string(category), r.sink);
  logger->set_level(r.level);
  r.loggers.emplace(std::string(category), logger);
  return logger;
}

LogRateLimiter::LogRateLimiter(double per_second)
    : per_second_(std::max(per_second, 1e-9)),
      tokens_(std::max(per_second, 1.0)),
      last_(Clock::now()) {}

bool LogRateLimiter::Allow(uint64_t* suppressed) {
  MutexLock lock(&mu_);
  Clock::time_point now = Clock::now();
  double elapsed = std::chrono::duration<double>(now - last_).count();
  last_ = now;
  tokens_ =
      std::min(std::max(per_second_, 1.0), tokens_ + elapsed * per_second_);
  if (tokens_ < 1.0) {
    ++suppressed_;
    return false;
  }
  tokens_ -= 1.0;
  if (suppressed != nullptr) *suppressed = suppressed_;
  suppressed_ = 0;
  return true;
}

}  // namespace rnode

// Category loggers over one shared stderr sink.
#include "util/logging.h"

#include <algorithm>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "util/mutex.h"

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
    : bucket_(per_second, per_second) {}

bool LogRateLimiter::Allow(uint64_t* suppressed) {
  if (!bucket_.TryTake()) {
    suppressed_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  const uint64_t dropped = suppressed_.exchange(0, std::memory_order_relaxed);
  if (suppressed != nullptr) *suppressed = dropped;
  return true;
}

std::string LogText(std::string_view text, size_t max_bytes) {
  const std::string_view shown = text.substr(0, max_bytes);
  std::string out;
  out.reserve(shown.size() + 16);
  static constexpr char kHex[] = "0123456789abcdef";
  for (const char c : shown) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7f && b != '\\') {
      out.push_back(c);
    } else {
      out += "\\x";
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 0xf]);
    }
  }
  if (shown.size() < text.size()) {
    absl::StrAppend(&out, "...(", text.size(), " bytes)");
  }
  return out;
}

}  // namespace rnode

// The metrics registry and its text exposition (format 0.0.4).
#include "node/metrics/metrics.h"

#include <dlfcn.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "util/status_macros.h"
#include "util/string_view.h"

namespace rnode::node::metrics {
namespace {

// Integral values below this render as plain integers; 1e15 < 2^53, so each
// is exact.
constexpr double kMaxPlainInteger = 1e15;

// Non-integral values at least this large (and below kMaxPlainInteger)
// render in fixed notation, smaller ones in scientific, as Go's 'g' does.
constexpr double kMinFixedNotation = 1e-4;

// Longest line of /proc/self/statm we read: seven decimal page counts.
constexpr size_t kStatmBytes = 256;

void AppendValue(double v, std::string* out) {
  if (std::isnan(v)) {
    out->append("NaN");
  } else if (std::isinf(v)) {
    out->append(v > 0 ? "+Inf" : "-Inf");
  } else if (v == std::trunc(v) && std::fabs(v) < kMaxPlainInteger) {
    absl::StrAppend(out, static_cast<int64_t>(v));
  } else {
    char buf[64];
    const double a = std::fabs(v);
    const auto format = a >= kMinFixedNotation && a < kMaxPlainInteger
                            ? std::chars_format::fixed
                            : std::chars_format::scientific;
    const auto result = std::to_chars(buf, buf + sizeof(buf), v, format);
    out->append(buf, result.ptr);
  }
}

std::string FormatValue(double v) {
  std::string s;
  AppendValue(v, &s);
  return s;
}

// Label values escape backslash, double quote and newline; help text
// backslash and newline.
void AppendEscaped(std::string_view s, bool quote, std::string* out) {
  for (char c : s) {
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '"':
        out->append(quote ? "\\\"" : "\"");
        break;
      default:
        out->push_back(c);
    }
  }
}

bool IsUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
        (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

// [a-zA-Z_][a-zA-Z0-9_]*, and no lower case letter followed by an upper
// case one (promtool's camelCase lint).
bool IsSnakeIdentifier(std::string_view s) {
  if (s.empty() || absl::ascii_isdigit(static_cast<unsigned char>(s[0]))) {
    return false;
  }
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (!absl::ascii_isalnum(c) && c != '_') return false;
    if (i + 1 < s.size() && absl::ascii_islower(c) &&
        absl::ascii_isupper(static_cast<unsigned char>(s[i + 1]))) {
      return false;
    }
  }
  return true;
}

absl::Status CheckMetricName(std::string_view name,
                             std::string_view type_name) {
  if (!IsSnakeIdentifier(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric name \"", absl::CHexEscape(AbslView(name)),
                     "\" is not a snake_case [a-zA-Z_][a-zA-Z0-9_]* name"));
  }
  const bool is_counter = type_name == Counter::kTypeName;
  const bool is_histogram = type_name == Histogram::kTypeName;
  if (is_counter != name.ends_with("_total")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metric name \"", AbslView(name), "\": ",
        is_counter ? "a counter's name must end in \"_total\""
                   : "only a counter's name may end in \"_total\""));
  }
  if (!is_histogram) {
    for (std::string_view suffix : {"_bucket", "_count", "_sum"}) {
      if (name.ends_with(suffix)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "metric name \"", AbslView(name), "\": only a histogram's name ",
            "may end in \"", AbslView(suffix), "\""));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckLabelNames(absl::Span<const std::string_view> label_names) {
  if (label_names.size() > kMaxLabelNames) {
    return absl::InvalidArgumentError(
        absl::StrCat(label_names.size(), " label names; at most ",
                     kMaxLabelNames, " are allowed"));
  }
  std::set<std::string_view> seen;
  for (std::string_view label : label_names) {
    if (!IsSnakeIdentifier(label) || label.starts_with("__") || label == "le" ||
        label == "quantile") {
      return absl::InvalidArgumentError(absl::StrCat(
          "label name \"", absl::CHexEscape(AbslView(label)),
          "\" is not a snake_case [a-zA-Z_][a-zA-Z0-9_]* name, or is "
          "reserved (\"__\" prefix, \"le\", \"quantile\")"));
    }
    if (!seen.insert(label).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("label name \"", AbslView(label), "\" is repeated"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckBounds(absl::Span<const double> bounds) {
  if (bounds.size() > kMaxBuckets) {
    return absl::InvalidArgumentError(
        absl::StrCat(bounds.size(), " bucket bounds; at most ", kMaxBuckets,
                     " are allowed"));
  }
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("bucket bound ", FormatValue(bounds[i]),
                       " is not finite (the +Inf bucket is implicit)"));
    }
    if (i > 0 && !(bounds[i - 1] < bounds[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("bucket bounds are not strictly increasing at ",
                       FormatValue(bounds[i])));
    }
  }
  return absl::OkStatus();
}

void AppendHeader(std::string_view name, std::string_view help,
                  std::string_view type_name, std::string* out) {
  absl::StrAppend(out, "# HELP ", AbslView(name), " ");
  AppendEscaped(help, /*quote=*/false, out);
  absl::StrAppend(out, "\n# TYPE ", AbslView(name), " ", AbslView(type_name),
                  "\n");
}

// `name{labels} value\n`, or `name value\n` for empty `labels`.
void AppendSample(std::string_view name, std::string_view labels,
                  std::string_view value, std::string* out) {
  out->append(name);
  if (!labels.empty()) absl::StrAppend(out, "{", AbslView(labels), "}");
  absl::StrAppend(out, " ", AbslView(value), "\n");
}

}  // namespace

absl::StatusOr<std::vector<double>> ExponentialBuckets(double start,
                                                       double factor,
                                                       size_t count) {
  if (!(start > 0) || !std::isfinite(start) || !(factor > 1) ||
      !std::isfinite(factor) || count == 0 || count > kMaxBuckets) {
    return absl::InvalidArgumentError(absl::StrCat(
        "exponential buckets need start > 0, factor > 1 and 1 <= count <= ",
        kMaxBuckets, "; got start ", FormatValue(start), ", factor ",
        FormatValue(factor), ", count ", count));
  }
  std::vector<double> bounds;
  bounds.reserve(count);
  double bound = start;
  for (size_t i = 0; i < count; ++i) {
    bounds.push_back(bound);
    bound *= factor;
  }
  if (!std::isfinite(bounds.back())) {
    return absl::InvalidArgumentError("exponential buckets overflow a double");
  }
  return bounds;
}

// Counter

void Counter::Add(double v) {
  if (!(v >= 0) || std::isinf(v)) return;
  fractional_.fetch_add(v, std::memory_order_relaxed);
}

double Counter::Value() const {
  return static_cast<double>(integral_.load(std::memory_order_relaxed)) +
         fractional_.load(std::memory_order_relaxed);
}

void Counter::AppendSamples(std::string_view name, std::string_view labels,
                            std::string* out) const {
  const uint64_t integral = integral_.load(std::memory_order_relaxed);
  const double fractional = fractional_.load(std::memory_order_relaxed);
  AppendSample(name, labels,
               fractional == 0
                   ? absl::StrCat(integral)
                   : FormatValue(static_cast<double>(integral) + fractional),
               out);
}

// Gauge

void Gauge::AppendSamples(std::string_view name, std::string_view labels,
                          std::string* out) const {
  AppendSample(name, labels, FormatValue(Value()), out);
}

// Histogram

Histogram::Histogram(absl::Span<const double> bounds)
    : bounds_(bounds.begin(), bounds.end()),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(bounds.size() + 1)) {}

void Histogram::Observe(double v) {
  if (std::isnan(v)) return;
  const size_t bucket =
      std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

uint64_t Histogram::Count() const {
  uint64_t count = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    count += counts_[i].load(std::memory_order_relaxed);
  }
  return count;
}

void Histogram::AppendSamples(std::string_view name, std::string_view labels,
                              std::string* out) const {
  const std::string bucket_name = absl::StrCat(AbslView(name), "_bucket");
  const std::string_view sep = labels.empty() ? "" : ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i].load(std::memory_order_relaxed);
    const std::string le =
        i < bounds_.size() ? FormatValue(bounds_[i]) : "+Inf";
    AppendSample(
        bucket_name,
        absl::StrCat(AbslView(labels), AbslView(sep), "le=\"", le, "\""),
        absl::StrCat(cumulative), out);
  }
  AppendSample(absl::StrCat(AbslView(name), "_sum"), labels, FormatValue(Sum()),
               out);
  AppendSample(absl::StrCat(AbslView(name), "_count"), labels,
               absl::StrCat(cumulative), out);
}

// Family

template <typename M>
Family<M>::Family(std::string name, std::string help,
                  std::vector<std::string> label_names,
                  std::vector<double> bounds)
    : name_(std::move(name)),
      help_(std::move(help)),
      label_names_(std::move(label_names)),
      bounds_(std::move(bounds)) {}

template <typename M>
absl::StatusOr<M*> Family<M>::WithLabels(
    absl::Span<const std::string_view> values) {
  if (values.size() != label_names_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ": ", values.size(), " label values for ",
                     label_names_.size(), " label names"));
  }
  for (std::string_view value : values) {
    if (value.size() > kMaxLabelValueBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(name_, ": a label value is longer than ",
                       kMaxLabelValueBytes, " bytes"));
    }
  }
  std::vector<std::string> key(values.begin(), values.end());
  MutexLock lock(&mu_);
  auto it = children_.find(key);
  if (it != children_.end()) return it->second.get();
  for (std::string_view value : values) {
    if (!IsUtf8(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name_, ": label value \"",
                       absl::CHexEscape(AbslView(value)), "\" is not UTF-8"));
    }
  }
  if (children_.size() >= kMaxChildrenPerFamily) {
    return absl::ResourceExhaustedError(
        absl::StrCat(name_, " already has ", kMaxChildrenPerFamily,
                     " label-value sets (kMaxChildrenPerFamily)"));
  }
  M* child = children_.emplace(std::move(key), NewChild()).first->second.get();
  return child;
}

template <typename M>
size_t Family<M>::size() const {
  MutexLock lock(&mu_);
  return children_.size();
}

template <typename M>
std::unique_ptr<M> Family<M>::NewChild() const {
  if constexpr (std::is_same_v<M, Histogram>) {
    return std::unique_ptr<M>(new Histogram(bounds_));
  } else {
    return std::unique_ptr<M>(new M());
  }
}

template <typename M>
void Family<M>::AppendText(std::string* out) const {
  AppendHeader(name_, help_, M::kTypeName, out);
  MutexLock lock(&mu_);
  std::string labels;
  for (const auto& [values, child] : children_) {
    labels.clear();
    for (size_t i = 0; i < values.size(); ++i) {
      absl::StrAppend(&labels, i == 0 ? "" : ",", label_names_[i], "=\"");
      AppendEscaped(values[i], /*quote=*/true, &labels);
      labels.push_back('"');
    }
    child->AppendSamples(name_, labels, out);
  }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

// Registry

struct Registry::Entry {
  struct Callback {
    std::string name;
    std::string help;
    std::string_view type_name;
    ValueCallback fn;

    void AppendText(std::string* out) const {
      AppendHeader(name, help, type_name, out);
      absl::StatusOr<double> value = fn();
      if (value.ok()) AppendSample(name, "", FormatValue(*value), out);
    }
  };

  // monostate only between Reserve and the Add* that filled it, under mu_.
  std::variant<std::monostate, std::unique_ptr<Family<Counter>>,
               std::unique_ptr<Family<Gauge>>,
               std::unique_ptr<Family<Histogram>>, Callback>
      metric;
};

Registry::Registry() = default;
Registry::~Registry() = default;

absl::StatusOr<Registry::Entry*> Registry::Reserve(
    std::string_view name, std::string_view help, std::string_view type_name,
    absl::Span<const std::string_view> label_names) {
  RETURN_IF_ERROR(CheckMetricName(name, type_name));
  RETURN_IF_ERROR(CheckLabelNames(label_names));
  if (help.empty() || !IsUtf8(help)) {
    return absl::InvalidArgumentError(
        absl::StrCat(AbslView(name), ": help text is empty or not UTF-8"));
  }
  std::vector<std::string> taken = {std::string(name)};
  if (type_name == Histogram::kTypeName) {
    for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
      taken.push_back(absl::StrCat(AbslView(name), AbslView(suffix)));
    }
  }
  for (const std::string& n : taken) {
    auto it = taken_names_.find(n);
    if (it != taken_names_.end()) {
      return absl::AlreadyExistsError(
          absl::StrCat("metric name \"", AbslView(name),
                       "\" collides with metric \"", it->second, "\""));
    }
  }
  for (std::string& n : taken) {
    taken_names_.emplace(std::move(n), std::string(name));
  }
  return entries_.emplace(std::string(name), std::make_unique<Entry>())
      .first->second.get();
}

template <typename M>
absl::StatusOr<Family<M>*> Registry::AddFamily(
    std::string_view name, std::string_view help,
    absl::Span<const std::string_view> label_names,
    absl::Span<const double> bounds) {
  if constexpr (std::is_same_v<M, Histogram>) {
    RETURN_IF_ERROR(CheckBounds(bounds));
  }
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Entry * entry,
                   Reserve(name, help, M::kTypeName, label_names));
  auto family = std::unique_ptr<Family<M>>(new Family<M>(
      std::string(name), std::string(help),
      std::vector<std::string>(label_names.begin(), label_names.end()),
      std::vector<double>(bounds.begin(), bounds.end())));
  Family<M>* result = family.get();
  entry->metric = std::move(family);
  return result;
}

absl::StatusOr<Counter*> Registry::AddCounter(std::string_view name,
                                              std::string_view help) {
  ASSIGN_OR_RETURN(Family<Counter> * family,
                   AddFamily<Counter>(name, help, {}, {}));
  return family->WithLabels({});
}

absl::StatusOr<Gauge*> Registry::AddGauge(std::string_view name,
                                          std::string_view help) {
  ASSIGN_OR_RETURN(Family<Gauge> * family,
                   AddFamily<Gauge>(name, help, {}, {}));
  return family->WithLabels({});
}

absl::StatusOr<Histogram*> Registry::AddHistogram(
    std::string_view name, std::string_view help,
    absl::Span<const double> bounds) {
  ASSIGN_OR_RETURN(Family<Histogram> * family,
                   AddFamily<Histogram>(name, help, {}, bounds));
  return family->WithLabels({});
}

absl::StatusOr<Family<Counter>*> Registry::AddCounterFamily(
    std::string_view name, std::string_view help,
    absl::Span<const std::string_view> label_names) {
  return AddFamily<Counter>(name, help, label_names, {});
}

absl::StatusOr<Family<Gauge>*> Registry::AddGaugeFamily(
    std::string_view name, std::string_view help,
    absl::Span<const std::string_view> label_names) {
  return AddFamily<Gauge>(name, help, label_names, {});
}

absl::StatusOr<Family<Histogram>*> Registry::AddHistogramFamily(
    std::string_view name, std::string_view help,
    absl::Span<const std::string_view> label_names,
    absl::Span<const double> bounds) {
  return AddFamily<Histogram>(name, help, label_names, bounds);
}

absl::Status Registry::AddCallback(std::string_view name, std::string_view help,
                                   std::string_view type_name,
                                   ValueCallback fn) {
  if (!fn) {
    return absl::InvalidArgumentError(
        absl::StrCat(AbslView(name), ": the callback is empty"));
  }
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Entry * entry, Reserve(name, help, type_name, {}));
  entry->metric = Entry::Callback{std::string(name), std::string(help),
                                  type_name, std::move(fn)};
  return absl::OkStatus();
}

absl::Status Registry::AddCallbackGauge(std::string_view name,
                                        std::string_view help,
                                        ValueCallback fn) {
  return AddCallback(name, help, Gauge::kTypeName, std::move(fn));
}

absl::Status Registry::AddCallbackCounter(std::string_view name,
                                          std::string_view help,
                                          ValueCallback fn) {
  return AddCallback(name, help, Counter::kTypeName, std::move(fn));
}

std::string Registry::Render() const {
  std::vector<const Entry*> entries;
  {
    MutexLock lock(&mu_);
    entries.reserve(entries_.size());
    for (const auto& [name, entry] : entries_) entries.push_back(entry.get());
  }
  std::string out;
  for (const Entry* entry : entries) {
    std::visit(
        [&out](const auto& metric) {
          using T = std::decay_t<decltype(metric)>;
          if constexpr (std::is_same_v<T, Entry::Callback>) {
            metric.AppendText(&out);
          } else if constexpr (!std::is_same_v<T, std::monostate>) {
            metric->AppendText(&out);
          }
        },
        entry->metric);
  }
  return out;
}

// Process metrics

absl::StatusOr<uint64_t> ProcessRssBytes() {
  std::FILE* file = std::fopen("/proc/self/statm", "r");
  if (file == nullptr) {
    return absl::UnavailableError("cannot open /proc/self/statm");
  }
  char buf[kStatmBytes];
  const size_t n = std::fread(buf, 1, sizeof(buf) - 1, file);
  std::fclose(file);
  std::vector<absl::string_view> fields = absl::StrSplit(
      absl::string_view(buf, n), absl::ByAnyChar(" \n"), absl::SkipEmpty());
  uint64_t resident_pages;
  if (fields.size() < 2 || !absl::SimpleAtoi(fields[1], &resident_pages)) {
    return absl::InternalError(
        absl::StrCat("cannot parse /proc/self/statm: \"",
                     absl::CHexEscape(absl::string_view(buf, n)), "\""));
  }
  const long page_size = sysconf(_SC_PAGESIZE);
  if (page_size <= 0) return absl::InternalError("sysconf(_SC_PAGESIZE)");
  return resident_pages * static_cast<uint64_t>(page_size);
}

absl::StatusOr<double> ProcessCpuSeconds() {
  rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0) {
    return absl::InternalError("getrusage(RUSAGE_SELF) failed");
  }
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

namespace {

// jemalloc's mallctl, if this process's allocator is jemalloc.
using MallctlFn = int (*)(const char*, void*, size_t*, void*, size_t);

MallctlFn FindMallctl() {
  return reinterpret_cast<MallctlFn>(dlsym(RTLD_DEFAULT, "mallctl"));
}

// A jemalloc statistic, refreshed first (jemalloc caches its statistics
// until the epoch is advanced).
absl::StatusOr<double> JemallocStat(MallctlFn mallctl, const char* name) {
  uint64_t epoch = 1;
  size_t epoch_size = sizeof(epoch);
  if (mallctl("epoch", &epoch, &epoch_size, &epoch, epoch_size) != 0) {
    return absl::InternalError("mallctl epoch failed");
  }
  size_t value = 0;
  size_t size = sizeof(value);
  if (mallctl(name, &value, &size, nullptr, 0) != 0) {
    return absl::InternalError(absl::StrCat("mallctl ", name, " failed"));
  }
  return static_cast<double>(value);
}

}  // namespace

absl::Status RegisterProcessMetrics(Registry& registry) {
  if (MallctlFn mallctl = FindMallctl(); mallctl != nullptr) {
    RETURN_IF_ERROR(registry.AddCallbackGauge(
        "process_heap_allocated_bytes",
        "Bytes of live heap allocations (jemalloc stats.allocated).",
        [mallctl] { return JemallocStat(mallctl, "stats.allocated"); }));
    RETURN_IF_ERROR(registry.AddCallbackGauge(
        "process_heap_resident_bytes",
        "Bytes of resident pages the allocator holds (jemalloc "
        "stats.resident).",
        [mallctl] { return JemallocStat(mallctl, "stats.resident"); }));
  }
  RETURN_IF_ERROR(registry.AddCallbackGauge(
      "process_resident_memory_bytes", "Resident memory size in bytes.",
      []() -> absl::StatusOr<double> {
        ASSIGN_OR_RETURN(uint64_t bytes, ProcessRssBytes());
        return static_cast<double>(bytes);
      }));
  return registry.AddCallbackCounter("process_cpu_seconds_total",
                                     "Total user and system CPU time spent in "
                                     "seconds.",
                                     ProcessCpuSeconds);
}

}  // namespace rnode::node::metrics

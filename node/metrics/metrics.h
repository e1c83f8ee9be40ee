// The node's Prometheus metrics: counters, gauges and histograms in families
// with bounded label sets, owned by a Registry that renders the text
// exposition format 0.0.4 for /metrics.
// Conventions and the node's metric names: docs/metrics.md.
#ifndef RNODE_NODE_METRICS_METRICS_H_
#define RNODE_NODE_METRICS_METRICS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "util/mutex.h"

namespace rnode::node::metrics {

// The HTTP Content-Type of Registry::Render's output.
inline constexpr std::string_view kContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// Most children (distinct label-value tuples) one family holds. Labels name
// bounded sets (a verdict, a message type); 64 covers every enum the node
// labels by, and bounds the memory and the scrape size when a caller labels
// by something unbounded by mistake.
inline constexpr size_t kMaxChildrenPerFamily = 64;

// Most label names of one family. Every extra label multiplies the series a
// family can produce; the node's families use one or two.
inline constexpr size_t kMaxLabelNames = 8;

// Longest label value, in bytes. Values are short enum names; 128 bytes
// keeps one child's rendered line small whatever the caller passes.
inline constexpr size_t kMaxLabelValueBytes = 128;

// Most bucket bounds of one histogram (besides +Inf). Every child renders a
// line per bucket; 32 is twice the latency set below.
inline constexpr size_t kMaxBuckets = 32;

// Bucket bounds for latencies in seconds: 0.5 ms to 60 s, about 2-2.5x
// apart, for RPCs, block validation and proposal, deploy execution.
inline constexpr double kLatencySecondsBuckets[] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
    0.25,   0.5,   1,      2.5,   5,    10,    30,   60};

// `count` bounds start, start*factor, start*factor^2, ... Returns
// InvalidArgument unless start > 0 is finite, factor > 1 is finite and
// 1 <= count <= kMaxBuckets.
absl::StatusOr<std::vector<double>> ExponentialBuckets(double start,
                                                       double factor,
                                                       size_t count);

// A monotonic count: integral increments are kept exactly in a uint64,
// fractional ones (seconds, REV) in a double beside it. Thread-safe and
// lock-free; an increment is one relaxed atomic add.
class Counter {
 public:
  // The exposition's TYPE.
  static constexpr std::string_view kTypeName = "counter";

  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  // Adds `n`.
  void Inc(uint64_t n = 1) {
    integral_.fetch_add(n, std::memory_order_relaxed);
  }
  // Adds `v`. A negative, infinite or NaN `v` is ignored: a counter never
  // goes down and never becomes unusable.
  void Add(double v);
  // The current count (exact below 2^53).
  double Value() const;

 private:
  template <typename>
  friend class Family;

  Counter() = default;
  // Appends `name{labels} value\n`; `labels` is rendered, possibly empty.
  void AppendSamples(std::string_view name, std::string_view labels,
                     std::string* out) const;

  std::atomic<uint64_t> integral_{0};
  std::atomic<double> fractional_{0};
};

// A value that goes up and down. Thread-safe and lock-free.
class Gauge {
 public:
  static constexpr std::string_view kTypeName = "gauge";

  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  // Adds `v` (negative to subtract).
  void Add(double v) { value_.fetch_add(v, std::memory_order_relaxed); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  template <typename>
  friend class Family;

  Gauge() = default;
  void AppendSamples(std::string_view name, std::string_view labels,
                     std::string* out) const;

  std::atomic<double> value_{0};
};

// Counts observations into buckets with fixed upper bounds (inclusive, as
// Prometheus' `le`), plus their sum and count. Thread-safe and lock-free:
// an observation is a binary search and two relaxed atomic adds. A render
// concurrent with observations may show a sum that lags the buckets by those
// observations; the count is always the +Inf bucket.
class Histogram {
 public:
  static constexpr std::string_view kTypeName = "histogram";

  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // Records `v`. NaN is ignored (it would make the sum NaN for good).
  void Observe(double v);
  // Observations recorded so far.
  uint64_t Count() const;
  double Sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  template <typename>
  friend class Family;

  // `bounds` were validated by the registry.
  explicit Histogram(absl::Span<const double> bounds);
  void AppendSamples(std::string_view name, std::string_view labels,
                     std::string* out) const;

  const std::vector<double> bounds_;
  // counts_[i]: observations in (bounds_[i-1], bounds_[i]]; the last one
  // counts those above every bound. Not cumulative.
  const std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::atomic<double> sum_{0};
};

// A metric name with its help text and label names, and one child metric
// per tuple of label values (an unlabeled family has exactly one child, for
// the empty tuple). Created by a Registry, which owns it and its children:
// every pointer it hands out stays valid for the registry's lifetime.
// Thread-safe. M is Counter, Gauge or Histogram.
template <typename M>
class Family {
 public:
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;

  // The child for `values`, one per label name in order, created on first
  // use. Returns InvalidArgument if the number of values differs from the
  // number of label names, or a value is longer than kMaxLabelValueBytes or
  // not UTF-8; ResourceExhausted if the family already holds
  // kMaxChildrenPerFamily other children. Takes the family's mutex: resolve
  // a child once and keep the pointer rather than calling this per event.
  absl::StatusOr<M*> WithLabels(absl::Span<const std::string_view> values);

  const std::string& name() const { return name_; }
  const std::vector<std::string>& label_names() const { return label_names_; }
  // Number of children.
  size_t size() const;

 private:
  friend class Registry;

  // Arguments were validated by the registry; `bounds` is for histograms.
  Family(std::string name, std::string help,
         std::vector<std::string> label_names, std::vector<double> bounds);
  std::unique_ptr<M> NewChild() const;
  // Appends the HELP and TYPE lines and every child's samples, children
  // ordered by label values.
  void AppendText(std::string* out) const;

  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
  const std::vector<double> bounds_;
  mutable Mutex mu_;
  // Keyed by label values; std::map keeps the rendering order.
  std::map<std::vector<std::string>, std::unique_ptr<M>> children_
      ABSL_GUARDED_BY(mu_);
};

extern template class Family<Counter>;
extern template class Family<Gauge>;
extern template class Family<Histogram>;

// Computes a callback metric's value at render time. An error omits the
// sample from that rendering (the HELP and TYPE lines remain).
using ValueCallback = std::function<absl::StatusOr<double>()>;

// The set of metric families of one node, rendered as one exposition. Owned
// by the node (never a global); it owns every family and child it creates.
//
// Names: a metric name matches [a-zA-Z_][a-zA-Z0-9_]* (Prometheus allows
// ':' too, but reserves it for recording rules) with no camelCase (a lower
// case letter followed by an upper case one); a counter's name ends in
// "_total" and no other type's does; only a histogram's may end in
// "_bucket", "_count" or "_sum". Label names match [a-zA-Z_][a-zA-Z0-9_]*,
// without camelCase, a "__" prefix, or the reserved "le" and "quantile";
// they are distinct and at most kMaxLabelNames. Help text is non-empty
// UTF-8. Every Add* returns InvalidArgument when one of these rules fails,
// and AlreadyExists when the name, or a sample name it renders (a
// histogram's name_bucket, name_sum, name_count), is already registered.
//
// Thread safety: every method may be called from any thread, concurrently
// with updates of the metrics and with Render.
class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Unlabeled metrics: the returned child lives as long as the registry.
  absl::StatusOr<Counter*> AddCounter(std::string_view name,
                                      std::string_view help);
  absl::StatusOr<Gauge*> AddGauge(std::string_view name, std::string_view help);
  // `bounds`: at most kMaxBuckets finite, strictly increasing upper bounds
  // (+Inf is implicit), else InvalidArgument.
  absl::StatusOr<Histogram*> AddHistogram(std::string_view name,
                                          std::string_view help,
                                          absl::Span<const double> bounds);

  // Labeled families: the returned family lives as long as the registry.
  absl::StatusOr<Family<Counter>*> AddCounterFamily(
      std::string_view name, std::string_view help,
      absl::Span<const std::string_view> label_names);
  absl::StatusOr<Family<Gauge>*> AddGaugeFamily(
      std::string_view name, std::string_view help,
      absl::Span<const std::string_view> label_names);
  absl::StatusOr<Family<Histogram>*> AddHistogramFamily(
      std::string_view name, std::string_view help,
      absl::Span<const std::string_view> label_names,
      absl::Span<const double> bounds);

  // Unlabeled metrics whose value `fn` computes at each Render, for values
  // the node already holds (queue depths, the last finalized height). `fn`
  // runs on the rendering thread with no registry lock held; it must be
  // thread-safe and stay callable for the registry's lifetime. A counter's
  // value must not decrease between calls.
  absl::Status AddCallbackGauge(std::string_view name, std::string_view help,
                                ValueCallback fn);
  absl::Status AddCallbackCounter(std::string_view name, std::string_view help,
                                  ValueCallback fn);

  // The text exposition format 0.0.4 (served as kContentType): per family,
  // in name order, "# HELP" and "# TYPE" lines and its samples, children in
  // label-value order. Values are integers where integral (below 1e15),
  // otherwise shortest round-trip decimals; +Inf, -Inf and NaN are spelled
  // so. Runs the callbacks.
  std::string Render() const;

 private:
  struct Entry;

  // Checks the naming rules and that `name` and its sample names are free,
  // then reserves them and returns the new, empty entry.
  absl::StatusOr<Entry*> Reserve(std::string_view name, std::string_view help,
                                 std::string_view type_name,
                                 absl::Span<const std::string_view> label_names)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  template <typename M>
  absl::StatusOr<Family<M>*> AddFamily(
      std::string_view name, std::string_view help,
      absl::Span<const std::string_view> label_names,
      absl::Span<const double> bounds);
  absl::Status AddCallback(std::string_view name, std::string_view help,
                           std::string_view type_name, ValueCallback fn);

  mutable Mutex mu_;
  // Keyed by family name (std::map: the rendering order). Entries are never
  // removed, so Render may use them after releasing mu_.
  std::map<std::string, std::unique_ptr<Entry>, std::less<>> entries_
      ABSL_GUARDED_BY(mu_);
  // Every family name and sample name (name_bucket, ...) taken, to the
  // family that took it.
  std::map<std::string, std::string, std::less<>> taken_names_
      ABSL_GUARDED_BY(mu_);
};

// The resident set size of this process in bytes, from /proc/self/statm.
// Returns Unavailable if the file cannot be read, Internal if it cannot be
// parsed.
absl::StatusOr<uint64_t> ProcessRssBytes();

// User plus system CPU time of this process in seconds (getrusage). Returns
// Internal if getrusage fails.
absl::StatusOr<double> ProcessCpuSeconds();

// Registers the standard process metrics as callbacks:
// process_resident_memory_bytes (gauge) and process_cpu_seconds_total
// (counter); in a process whose allocator is jemalloc (found at run time,
// so that sanitizer builds simply lack them), also
// process_heap_allocated_bytes (live allocations) and
// process_heap_resident_bytes (the allocator's resident pages). Returns the
// registry's error (AlreadyExists if registered before).
absl::Status RegisterProcessMetrics(Registry& registry);

}  // namespace rnode::node::metrics

#endif  // RNODE_NODE_METRICS_METRICS_H_

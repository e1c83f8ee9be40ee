// Scrapes a node's Prometheus /metrics page and computes deltas between two
// scrapes (counters, histogram means).
#ifndef RNODE_INTEGRATION_LOADGEN_METRICS_SCRAPE_H_
#define RNODE_INTEGRATION_LOADGEN_METRICS_SCRAPE_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace rnode::loadgen {

// Largest /metrics body read. A node's page is tens of KiB (a few hundred
// samples); 8 MiB leaves room for label growth and bounds a broken reply.
inline constexpr size_t kMaxMetricsBytes = 8u << 20;

// Deadline of one scrape, connect to last byte. The node renders the page
// in milliseconds; a scrape slower than this means a stuck node, and the
// report shows "-" rather than stall the run.
inline constexpr std::chrono::milliseconds kDefaultScrapeTimeout{3000};

// The samples of one exposition, keyed by the sample name with its label
// set exactly as written: `process_resident_memory_bytes`,
// `casper_propose_total{result="created"}`.
struct MetricSamples {
  absl::flat_hash_map<std::string, double> values;
  // Sample lines that did not parse (skipped). Comments (`#`) and blank
  // lines are not counted.
  int64_t skipped_lines = 0;
};

// Parses the Prometheus text format: `NAME VALUE [TIMESTAMP]` or
// `NAME{LABELS} VALUE [TIMESTAMP]`, VALUE a decimal, +Inf, -Inf or NaN. A
// later duplicate replaces an earlier one. Never fails.
MetricSamples ParseMetrics(std::string_view text);

// samples[key], nullopt when absent.
std::optional<double> Value(const MetricSamples& samples, std::string_view key);

// after[key] - before[key]; nullopt when either is absent.
std::optional<double> Delta(const MetricSamples& before,
                            const MetricSamples& after, std::string_view key);

// The change of a histogram (or of a family of them) between two scrapes.
struct HistogramDelta {
  double sum = 0;
  double count = 0;
};

// Δ of `name`_sum and `name`_count (unlabelled); nullopt when either is
// absent from either scrape.
std::optional<HistogramDelta> DeltaOfHistogram(const MetricSamples& before,
                                               const MetricSamples& after,
                                               std::string_view name);

// Δsum / Δcount of the unlabelled histogram `name` (e.g.
// "rnode_deploy_inclusion_seconds"): the mean of the observations between
// the scrapes. nullopt when absent or when Δcount is 0.
std::optional<double> HistogramMean(const MetricSamples& before,
                                    const MetricSamples& after,
                                    std::string_view name);

// For a histogram family with one label set per step of an operation, each
// observed once per operation (casper_merge_step_seconds by step): the sum
// of Δsum over every label set, and as count the largest Δcount of any
// label set (the number of operations). nullopt when the family is absent
// from either scrape.
std::optional<HistogramDelta> DeltaOfStepFamily(const MetricSamples& before,
                                                const MetricSamples& after,
                                                std::string_view name);

// GETs http://host:port/metrics and parses it. Unavailable on a connection
// or protocol failure or a non-200 status, DeadlineExceeded past `timeout`,
// ResourceExhausted for a body over kMaxMetricsBytes. Blocks the caller up
// to `timeout`; thread-safe (each call has its own connection).
absl::StatusOr<MetricSamples> ScrapeMetrics(
    const std::string& host, uint16_t port,
    std::chrono::milliseconds timeout = kDefaultScrapeTimeout);

}  // namespace rnode::loadgen

#endif  // RNODE_INTEGRATION_LOADGEN_METRICS_SCRAPE_H_

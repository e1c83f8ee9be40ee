// The load run's report: one row per phase from the tracker, the event
// stream and /metrics scrapes, rendered as Markdown, JSON and a CSV series.
#ifndef RNODE_INTEGRATION_LOADGEN_REPORT_H_
#define RNODE_INTEGRATION_LOADGEN_REPORT_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/loadgen/events_client.h"
#include "integration/loadgen/metrics_scrape.h"
#include "integration/loadgen/phases.h"
#include "integration/loadgen/tracker.h"

namespace rnode::loadgen {

// The metrics a row is made of (the node's names, node/core/node_metrics.cc
// and node/metrics/metrics.cc).
inline constexpr std::string_view kLfbNumberMetric =
    "casper_last_finalized_block_number";
inline constexpr std::string_view kValidationPerDeployMetric =
    "casper_block_validation_seconds_per_deploy";
inline constexpr std::string_view kMergeStepMetric =
    "casper_merge_step_seconds";
inline constexpr std::string_view kRssMetric = "process_resident_memory_bytes";
inline constexpr std::string_view kCpuMetric = "process_cpu_seconds_total";

// One scraped node's resources over a phase.
struct NodeUsage {
  std::string node;  // How the report names it ("127.0.0.1:40403").
  std::optional<double> rss_mib;      // At the phase's end.
  std::optional<double> cpu_seconds;  // Used during the phase.
};

struct PhaseRow {
  std::string name;
  std::optional<double> target_rate;  // Deploys/s; nullopt for a burst.
  int64_t submitted = 0;
  int64_t acknowledged = 0;
  int64_t failed = 0;
  int64_t late = 0;  // Sent more than the tolerance after their due time.
  int64_t errored = 0;
  int64_t not_finalized = 0;
  // Finalized with their effect / FAILED (ran with an error, charged);
  // rejected by a merge at least once / held by a block again after that.
  int64_t finalized_with_effect = 0;
  int64_t finalized_failed = 0;
  int64_t rejected = 0;
  int64_t reproposed = 0;
  double wall_seconds = 0;
  std::optional<double> achieved_rate;
  std::optional<double> effective_rate;  // finalized_with_effect per second.
  std::optional<double> acknowledgement_p50, acknowledgement_p99;
  std::optional<double> inclusion_p50, inclusion_p95, inclusion_p99;
  std::optional<double> finalization_p50, finalization_p95, finalization_p99;
  std::optional<double> lfb_blocks_per_minute;  // Δ LFB number / minutes.
  std::optional<double> blocks_per_minute;      // block-added events.
  std::optional<double> empty_block_share;      // In [0, 1].
  // Δsum / Δcount over every node of the block validation time per deploy
  // (replay included).
  std::optional<double> validation_seconds_per_deploy;
  // Mean time of a whole merge (its steps summed) over every node.
  std::optional<double> merge_seconds_mean;
  std::vector<NodeUsage> nodes;
};

// What one phase measured besides the tracker. Scrapes are per node, in the
// same order in `before`, `after` and `node_names`; a failed scrape is
// nullopt and its values are missing from the row.
struct PhaseMeasurement {
  Phase phase;
  // From the phase's start to the reply to its last deploy.
  double wall_seconds = 0;
  int64_t late = 0;
  EventCounts events_before;
  EventCounts events_after;
  std::vector<std::string> node_names;
  std::vector<std::optional<MetricSamples>> before;
  std::vector<std::optional<MetricSamples>> after;
  // The node whose LFB number gives the LFB rate (the followed node).
  size_t lfb_node = 0;
};

// Shortest wall time a phase's block rates are computed over: a burst is
// sent in milliseconds, in which a block or none is chance.
inline constexpr double kMinRateWindowSeconds = 1.0;

// The row of a phase. LFB and block rates are per wall minute (nullopt for
// a wall time under kMinRateWindowSeconds); the empty share is nullopt with
// no block added.
PhaseRow BuildRow(const PhaseMeasurement& m, const PhaseStats& stats);

// A ramp's ceiling: the highest target rate of a paced row with no failed
// deploy, none left unfinalized and a finalization p50 of at most
// `limit_seconds`; nullopt when no row qualifies.
std::optional<double> RampCeiling(const std::vector<PhaseRow>& rows,
                                  double limit_seconds);

// Run-level facts for the JSON report.
struct RunInfo {
  std::string phases;  // The spec, or "public", "ramp", "smoke".
  std::vector<std::string> grpc_targets;
  std::string http;                  // "host:port" of the followed node
  std::vector<std::string> metrics;  // "host:port" of each scraped node
  std::string shard_id;
  int64_t phlo_limit = 0;
  int64_t phlo_price = 0;
  size_t keys = 0;
  size_t sender_threads = 0;
  double drain_seconds = 0;
  double run_seconds = 0;
  bool passed = false;
  std::string verdict;  // Why it passed or failed.
  std::map<std::string, int64_t> failure_reasons;
  int64_t local_failures = 0;
  // Deploys sent again under a new signature after the node said their
  // validAfterBlockNumber window had closed (not failures).
  int64_t resigned = 0;
  // Acknowledged deploys a node's status answer, not an event, showed
  // final (the event stream had closed or fallen behind), and those it
  // called EXPIRED.
  int64_t finalized_unseen = 0;
  int64_t expired = 0;
  std::string event_stream;            // The event stream's final status.
  std::optional<double> ramp_ceiling;  // Deploys/s; ramps only.
};

// A Markdown table: a header row, the separator, one line per row. Numbers
// have fixed decimals (rates 2, latencies 3, block rates 1, share as a
// percentage with 1, validation and merge in milliseconds with 3, RSS MiB 0,
// CPU seconds 1); per-node values are joined with "/"; missing ones are
// "-".
std::string RenderMarkdown(const std::vector<PhaseRow>& rows);

// {"run": {...RunInfo}, "phases": [{...PhaseRow}]}, snake_case names as in
// the structs (latencies as {"inclusion_seconds": {"p50","p95","p99"}} and
// "finalization_seconds"); missing values are null.
nlohmann::json RenderJson(const std::vector<PhaseRow>& rows,
                          const RunInfo& run);

// "t,submitted,acknowledged,included,finalized,pending,incl_p50,incl_p95,
// final_p50,final_p95" and a line per point; latencies in seconds with 3
// decimals, an empty field where the point has none.
std::string TimeSeriesCsv(const std::vector<SeriesPoint>& points);

}  // namespace rnode::loadgen

#endif  // RNODE_INTEGRATION_LOADGEN_REPORT_H_

// Report rows from measurements, and their Markdown, JSON and CSV forms.
#include "integration/loadgen/report.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"

namespace rnode::loadgen {
namespace {

using json = nlohmann::json;

constexpr double kBytesPerMiB = 1024.0 * 1024.0;
constexpr double kSecondsPerMinute = 60;
constexpr double kMillisPerSecond = 1000;
constexpr std::string_view kMissing = "-";

std::string Fixed(std::optional<double> value, int decimals, double scale = 1) {
  if (!value.has_value()) return std::string(kMissing);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, *value * scale);
  return buf;
}

std::string Percent(std::optional<double> share) {
  if (!share.has_value()) return std::string(kMissing);
  return Fixed(share, 1, 100) + "%";
}

// Per-node values joined with "/".
template <typename Field>
std::string PerNode(const std::vector<NodeUsage>& nodes, Field field,
                    int decimals) {
  if (nodes.empty()) return std::string(kMissing);
  std::string out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i > 0) out += "/";
    out += Fixed(nodes[i].*field, decimals);
  }
  return out;
}

json Nullable(std::optional<double> value) {
  return value.has_value() ? json(*value) : json(nullptr);
}

json Latencies(std::optional<double> p50, std::optional<double> p95,
               std::optional<double> p99) {
  return {
      {"p50", Nullable(p50)}, {"p95", Nullable(p95)}, {"p99", Nullable(p99)}};
}

// Σ of a per-node histogram delta over the nodes scraped both times;
// nullopt when no node has it or its Δcount is 0.
template <typename DeltaFn>
std::optional<double> MeanOverNodes(const PhaseMeasurement& m,
                                    std::string_view metric, DeltaFn delta) {
  HistogramDelta total;
  const size_t n = std::min(m.before.size(), m.after.size());
  for (size_t i = 0; i < n; ++i) {
    if (!m.before[i].has_value() || !m.after[i].has_value()) continue;
    std::optional<HistogramDelta> d = delta(*m.before[i], *m.after[i], metric);
    if (!d.has_value()) continue;
    total.sum += d->sum;
    total.count += d->count;
  }
  if (total.count <= 0) return std::nullopt;
  return total.sum / total.count;
}

}  // namespace

PhaseRow BuildRow(const PhaseMeasurement& m, const PhaseStats& stats) {
  PhaseRow row;
  row.name = m.phase.name;
  if (m.phase.kind == PhaseKind::kPaced) {
    row.target_rate = m.phase.rate_per_second;
  }
  row.submitted = stats.submitted;
  row.acknowledged = stats.acknowledged;
  row.failed = stats.failed;
  row.late = m.late;
  row.errored = stats.errored;
  row.not_finalized = stats.not_finalized;
  row.finalized_with_effect = stats.finalized_with_effect;
  row.finalized_failed = stats.finalized_failed;
  row.rejected = stats.rejected;
  row.reproposed = stats.reproposed;
  row.wall_seconds = m.wall_seconds;
  row.achieved_rate = stats.achieved_rate;
  row.effective_rate = stats.effective_rate;
  row.acknowledgement_p50 = stats.acknowledgement_p50;
  row.acknowledgement_p99 = stats.acknowledgement_p99;
  row.inclusion_p50 = stats.inclusion_p50;
  row.inclusion_p95 = stats.inclusion_p95;
  row.inclusion_p99 = stats.inclusion_p99;
  row.finalization_p50 = stats.finalization_p50;
  row.finalization_p95 = stats.finalization_p95;
  row.finalization_p99 = stats.finalization_p99;

  const double minutes = m.wall_seconds / kSecondsPerMinute;
  if (m.wall_seconds >= kMinRateWindowSeconds) {
    if (m.lfb_node < m.before.size() && m.lfb_node < m.after.size() &&
        m.before[m.lfb_node].has_value() && m.after[m.lfb_node].has_value()) {
      std::optional<double> lfb =
          Delta(*m.before[m.lfb_node], *m.after[m.lfb_node], kLfbNumberMetric);
      if (lfb.has_value()) row.lfb_blocks_per_minute = *lfb / minutes;
    }
    row.blocks_per_minute = static_cast<double>(m.events_after.blocks_added -
                                                m.events_before.blocks_added) /
                            minutes;
  }
  const int64_t added =
      m.events_after.blocks_added - m.events_before.blocks_added;
  if (added > 0) {
    row.empty_block_share =
        static_cast<double>(m.events_after.empty_blocks_added -
                            m.events_before.empty_blocks_added) /
        static_cast<double>(added);
  }
  row.validation_seconds_per_deploy =
      MeanOverNodes(m, kValidationPerDeployMetric, DeltaOfHistogram);
  row.merge_seconds_mean =
      MeanOverNodes(m, kMergeStepMetric, DeltaOfStepFamily);

  for (size_t i = 0; i < m.node_names.size(); ++i) {
    NodeUsage usage;
    usage.node = m.node_names[i];
    const bool have_before = i < m.before.size() && m.before[i].has_value();
    const bool have_after = i < m.after.size() && m.after[i].has_value();
    if (have_after) {
      std::optional<double> rss = Value(*m.after[i], kRssMetric);
      if (rss.has_value()) usage.rss_mib = *rss / kBytesPerMiB;
    }
    if (have_before && have_after) {
      usage.cpu_seconds = Delta(*m.before[i], *m.after[i], kCpuMetric);
    }
    row.nodes.push_back(std::move(usage));
  }
  return row;
}

std::string RenderMarkdown(const std::vector<PhaseRow>& rows) {
  std::string out =
      "| phase | target/s | submitted | failed | late | achieved/s "
      "| effective/s | rejected | again | FAILED "
      "| incl p50 s | incl p95 s | incl p99 s "
      "| final p50 s | final p95 s | final p99 s | not final "
      "| LFB/min | blocks/min | empty | validation ms/deploy | merge ms "
      "| RSS MiB | CPU s |\n";
  out +=
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:"
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const PhaseRow& r : rows) {
    const std::string cells[] = {
        r.name,
        Fixed(r.target_rate, 2),
        absl::StrCat(r.submitted),
        absl::StrCat(r.failed),
        absl::StrCat(r.late),
        Fixed(r.achieved_rate, 2),
        Fixed(r.effective_rate, 2),
        absl::StrCat(r.rejected),
        absl::StrCat(r.reproposed),
        absl::StrCat(r.finalized_failed),
        Fixed(r.inclusion_p50, 3),
        Fixed(r.inclusion_p95, 3),
        Fixed(r.inclusion_p99, 3),
        Fixed(r.finalization_p50, 3),
        Fixed(r.finalization_p95, 3),
        Fixed(r.finalization_p99, 3),
        absl::StrCat(r.not_finalized),
        Fixed(r.lfb_blocks_per_minute, 1),
        Fixed(r.blocks_per_minute, 1),
        Percent(r.empty_block_share),
        Fixed(r.validation_seconds_per_deploy, 3, kMillisPerSecond),
        Fixed(r.merge_seconds_mean, 3, kMillisPerSecond),
        PerNode(r.nodes, &NodeUsage::rss_mib, 0),
        PerNode(r.nodes, &NodeUsage::cpu_seconds, 1),
    };
    out += "|";
    for (const std::string& cell : cells)
      absl::StrAppend(&out, " ", cell, " |");
    out += "\n";
  }
  return out;
}

std::optional<double> RampCeiling(const std::vector<PhaseRow>& rows,
                                  double limit_seconds) {
  std::optional<double> ceiling;
  for (const PhaseRow& r : rows) {
    if (!r.target_rate.has_value() || r.failed > 0 || r.not_finalized > 0 ||
        !r.finalization_p50.has_value() ||
        *r.finalization_p50 > limit_seconds) {
      continue;
    }
    if (!ceiling.has_value() || *r.target_rate > *ceiling) {
      ceiling = r.target_rate;
    }
  }
  return ceiling;
}

json RenderJson(const std::vector<PhaseRow>& rows, const RunInfo& run) {
  json phases = json::array();
  for (const PhaseRow& r : rows) {
    json nodes = json::array();
    for (const NodeUsage& n : r.nodes) {
      nodes.push_back({{"node", n.node},
                       {"rss_mib", Nullable(n.rss_mib)},
                       {"cpu_seconds", Nullable(n.cpu_seconds)}});
    }
    phases.push_back({
        {"name", r.name},
        {"target_rate", Nullable(r.target_rate)},
        {"submitted", r.submitted},
        {"acknowledged", r.acknowledged},
        {"failed", r.failed},
        {"late", r.late},
        {"errored", r.errored},
        {"not_finalized", r.not_finalized},
        {"finalized_with_effect", r.finalized_with_effect},
        {"finalized_failed", r.finalized_failed},
        {"rejected", r.rejected},
        {"reproposed", r.reproposed},
        {"wall_seconds", r.wall_seconds},
        {"achieved_rate", Nullable(r.achieved_rate)},
        {"effective_rate", Nullable(r.effective_rate)},
        {"acknowledgement_seconds",
         {{"p50", Nullable(r.acknowledgement_p50)},
          {"p99", Nullable(r.acknowledgement_p99)}}},
        {"inclusion_seconds",
         Latencies(r.inclusion_p50, r.inclusion_p95, r.inclusion_p99)},
        {"finalization_seconds",
         Latencies(r.finalization_p50, r.finalization_p95, r.finalization_p99)},
        {"lfb_blocks_per_minute", Nullable(r.lfb_blocks_per_minute)},
        {"blocks_per_minute", Nullable(r.blocks_per_minute)},
        {"empty_block_share", Nullable(r.empty_block_share)},
        {"validation_seconds_per_deploy",
         Nullable(r.validation_seconds_per_deploy)},
        {"merge_seconds_mean", Nullable(r.merge_seconds_mean)},
        {"nodes", std::move(nodes)},
    });
  }
  json reasons = json::object();
  for (const auto& entry : run.failure_reasons) {
    reasons[entry.first] = entry.second;
  }
  json info = {
      {"phases", run.phases},
      {"grpc_targets", run.grpc_targets},
      {"http", run.http},
      {"metrics", run.metrics},
      {"shard_id", run.shard_id},
      {"phlo_limit", run.phlo_limit},
      {"phlo_price", run.phlo_price},
      {"keys", run.keys},
      {"sender_threads", run.sender_threads},
      {"drain_seconds", run.drain_seconds},
      {"run_seconds", run.run_seconds},
      {"passed", run.passed},
      {"verdict", run.verdict},
      {"failure_reasons", std::move(reasons)},
      {"local_failures", run.local_failures},
      {"resigned", run.resigned},
      {"finalized_unseen", run.finalized_unseen},
      {"expired", run.expired},
      {"event_stream", run.event_stream},
      {"ramp_ceiling", Nullable(run.ramp_ceiling)},
  };
  return {{"run", std::move(info)}, {"phases", std::move(phases)}};
}

std::string TimeSeriesCsv(const std::vector<SeriesPoint>& points) {
  std::string out =
      "t,submitted,acknowledged,included,finalized,pending,"
      "incl_p50,incl_p95,final_p50,final_p95\n";
  // A latency with 3 decimals, an empty field when missing.
  auto latency = [](std::optional<double> v) {
    return v.has_value() ? Fixed(v, 3) : std::string();
  };
  for (const SeriesPoint& p : points) {
    absl::StrAppend(&out, p.t, ",", p.submitted, ",", p.acknowledged, ",",
                    p.included, ",", p.finalized, ",", p.pending, ",",
                    latency(p.inclusion_p50), ",", latency(p.inclusion_p95),
                    ",", latency(p.finalization_p50), ",",
                    latency(p.finalization_p95), "\n");
  }
  return out;
}

}  // namespace rnode::loadgen

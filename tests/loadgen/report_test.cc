// Report rows from measurements, and their Markdown, JSON and CSV forms.
#include "integration/loadgen/report.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rnode::loadgen {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    out.push_back(text.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

// The cells of a Markdown table line.
std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> out;
  size_t start = line.find('|');
  while (start != std::string::npos) {
    const size_t end = line.find('|', start + 1);
    if (end == std::string::npos) break;
    std::string cell = line.substr(start + 1, end - start - 1);
    const size_t first = cell.find_first_not_of(' ');
    const size_t last = cell.find_last_not_of(' ');
    out.push_back(
        first == std::string::npos ? "" : cell.substr(first, last - first + 1));
    start = end;
  }
  return out;
}

PhaseRow FullRow() {
  PhaseRow r;
  r.name = "5/s:20s";
  r.target_rate = 5;
  r.submitted = 100;
  r.acknowledged = 99;
  r.failed = 1;
  r.late = 2;
  r.not_finalized = 3;
  r.wall_seconds = 20.5;
  r.achieved_rate = 4.8292;
  r.inclusion_p50 = 0.31234;
  r.inclusion_p95 = 0.5;
  r.inclusion_p99 = 0.9;
  r.finalization_p50 = 1.25;
  r.finalization_p95 = 2;
  r.finalization_p99 = 3.0004;
  r.lfb_blocks_per_minute = 58.04;
  r.blocks_per_minute = 600;
  r.empty_block_share = 0.25;
  r.validation_seconds_per_deploy = 0.00125;
  r.merge_seconds_mean = 0.004;
  r.nodes = {{"a", 412.4, 12.34}, {"b", 398.6, std::nullopt}};
  r.effective_rate = 4.5;
  r.rejected = 7;
  r.reproposed = 6;
  r.finalized_failed = 1;
  r.finalized_with_effect = 90;
  return r;
}

TEST(RenderMarkdownTest, HeaderSeparatorAndOneLinePerPhase) {
  PhaseRow empty;
  empty.name = "burst:32";
  const std::string md = RenderMarkdown({FullRow(), empty});
  const std::vector<std::string> lines = Lines(md);
  ASSERT_EQ(lines.size(), 4u);
  const std::vector<std::string> header = Cells(lines[0]);
  ASSERT_EQ(header.size(), 24u);
  EXPECT_EQ(header[0], "phase");
  EXPECT_EQ(header[1], "target/s");
  EXPECT_EQ(header[6], "effective/s");
  EXPECT_EQ(header[7], "rejected");
  EXPECT_EQ(header[8], "again");
  EXPECT_EQ(header[9], "FAILED");
  EXPECT_EQ(header[13], "final p50 s");
  EXPECT_EQ(header[17], "LFB/min");
  EXPECT_EQ(header[22], "RSS MiB");
  EXPECT_THAT(lines[1], StartsWith("|---|"));
  EXPECT_EQ(Cells(lines[1]).size(), 24u);

  EXPECT_EQ(Cells(lines[2]),
            (std::vector<std::string>{
                "5/s:20s", "5.00",  "100",   "1",     "2",       "4.83",
                "4.50",    "7",     "6",     "1",     "0.312",   "0.500",
                "0.900",   "1.250", "2.000", "3.000", "3",       "58.0",
                "600.0",   "25.0%", "1.250", "4.000", "412/399", "12.3/-"}));
}

TEST(RenderMarkdownTest, MissingValuesAreDashes) {
  PhaseRow empty;
  empty.name = "burst:32";
  const std::vector<std::string> cells =
      Cells(Lines(RenderMarkdown({empty}))[2]);
  ASSERT_EQ(cells.size(), 24u);
  EXPECT_EQ(cells[0], "burst:32");
  EXPECT_EQ(cells[1], "-");  // A burst has no target rate.
  EXPECT_EQ(cells[2], "0");
  EXPECT_EQ(cells[7], "0");
  for (size_t i : {5, 6, 10, 11, 12, 13, 14, 15, 17, 18, 19, 20, 21, 22, 23}) {
    EXPECT_EQ(cells[i], "-") << "column " << i;
  }
}

TEST(RenderJsonTest, FieldNamesAndNulls) {
  PhaseRow empty;
  empty.name = "burst:32";
  RunInfo run;
  run.phases = "public";
  run.grpc_targets = {"127.0.0.1:40401"};
  run.http = "127.0.0.1:40403";
  run.metrics = {"127.0.0.1:40403", "10.213.4.12:40413"};
  run.shard_id = "root";
  run.phlo_limit = 100000;
  run.phlo_price = 1;
  run.keys = 3;
  run.passed = false;
  run.verdict = "failed:\n- 1 deploys failed";
  run.failure_reasons = {{"refused: x", 1}};
  const nlohmann::json j = RenderJson({FullRow(), empty}, run);

  ASSERT_TRUE(j.contains("run"));
  ASSERT_TRUE(j.contains("phases"));
  const nlohmann::json& r = j["run"];
  for (const char* key :
       {"phases", "grpc_targets", "http", "metrics", "shard_id", "phlo_limit",
        "phlo_price", "keys", "sender_threads", "drain_seconds", "run_seconds",
        "passed", "verdict", "failure_reasons", "local_failures",
        "event_stream", "ramp_ceiling"}) {
    EXPECT_TRUE(r.contains(key)) << key;
  }
  EXPECT_EQ(r["failure_reasons"]["refused: x"], 1);
  EXPECT_EQ(r["metrics"][1], "10.213.4.12:40413");
  EXPECT_TRUE(r["ramp_ceiling"].is_null());

  ASSERT_EQ(j["phases"].size(), 2u);
  const nlohmann::json& p = j["phases"][0];
  for (const char* key :
       {"name", "target_rate", "submitted", "acknowledged", "failed", "late",
        "errored", "not_finalized", "wall_seconds", "achieved_rate",
        "inclusion_seconds", "finalization_seconds", "lfb_blocks_per_minute",
        "blocks_per_minute", "empty_block_share",
        "validation_seconds_per_deploy", "merge_seconds_mean", "nodes"}) {
    EXPECT_TRUE(p.contains(key)) << key;
  }
  EXPECT_EQ(p["name"], "5/s:20s");
  EXPECT_EQ(p["finalized_with_effect"], 90);
  EXPECT_EQ(p["finalized_failed"], 1);
  EXPECT_EQ(p["rejected"], 7);
  EXPECT_EQ(p["reproposed"], 6);
  EXPECT_EQ(p["effective_rate"], 4.5);
  EXPECT_EQ(p["inclusion_seconds"]["p95"], 0.5);
  EXPECT_EQ(p["finalization_seconds"]["p50"], 1.25);
  EXPECT_EQ(p["nodes"][0]["node"], "a");
  EXPECT_EQ(p["nodes"][0]["rss_mib"], 412.4);
  EXPECT_TRUE(p["nodes"][1]["cpu_seconds"].is_null());

  const nlohmann::json& q = j["phases"][1];
  EXPECT_TRUE(q["target_rate"].is_null());
  EXPECT_TRUE(q["achieved_rate"].is_null());
  EXPECT_TRUE(q["effective_rate"].is_null());
  EXPECT_TRUE(q["inclusion_seconds"]["p50"].is_null());
  EXPECT_TRUE(q["lfb_blocks_per_minute"].is_null());
}

PhaseRow RampStep(double rate, double final_p50) {
  PhaseRow r;
  r.name = absl::StrCat(rate, "/s:30s");
  r.target_rate = rate;
  r.finalization_p50 = final_p50;
  return r;
}

TEST(RampCeilingTest, HighestStepWithinTheLimitAndWithoutFailures) {
  EXPECT_EQ(RampCeiling({}, 5), std::nullopt);
  std::vector<PhaseRow> rows = {RampStep(25, 0.2), RampStep(50, 0.3),
                                RampStep(100, 5.0), RampStep(200, 5.1)};
  EXPECT_EQ(RampCeiling(rows, 5), 100);  // At the limit counts.
  rows[2].failed = 1;
  EXPECT_EQ(RampCeiling(rows, 5), 50);
  rows[1].not_finalized = 2;
  EXPECT_EQ(RampCeiling(rows, 5), 25);
  rows[0].finalization_p50 = std::nullopt;  // Nothing finalized.
  EXPECT_EQ(RampCeiling(rows, 5), std::nullopt);
  PhaseRow burst;
  burst.finalization_p50 = 0.1;  // No target rate: never the ceiling.
  EXPECT_EQ(RampCeiling({burst}, 5), std::nullopt);
}

MetricSamples Samples(const std::string& text) { return ParseMetrics(text); }

TEST(BuildRowTest, CombinesTrackerEventsAndScrapes) {
  PhaseMeasurement m;
  m.phase = ParsePhases("5/s:30s")->front();
  m.wall_seconds = 30;
  m.late = 4;
  m.events_before.blocks_added = 100;
  m.events_before.empty_blocks_added = 40;
  m.events_after.blocks_added = 400;
  m.events_after.empty_blocks_added = 115;
  m.node_names = {"n0", "n1"};
  m.lfb_node = 1;
  m.before = {Samples("casper_last_finalized_block_number 1000\n"
                      "casper_block_validation_seconds_per_deploy_sum 1\n"
                      "casper_block_validation_seconds_per_deploy_count 100\n"
                      "casper_merge_step_seconds_sum{step=\"index\"} 1\n"
                      "casper_merge_step_seconds_count{step=\"index\"} 5\n"
                      "casper_merge_step_seconds_sum{step=\"apply\"} 1\n"
                      "casper_merge_step_seconds_count{step=\"apply\"} 5\n"
                      "process_cpu_seconds_total 10\n"),
              Samples("casper_last_finalized_block_number 990\n"
                      "casper_block_validation_seconds_per_deploy_sum 2\n"
                      "casper_block_validation_seconds_per_deploy_count 100\n"
                      "process_cpu_seconds_total 20\n")};
  m.after = {Samples("casper_last_finalized_block_number 1200\n"
                     "casper_block_validation_seconds_per_deploy_sum 1.2\n"
                     "casper_block_validation_seconds_per_deploy_count 200\n"
                     "casper_merge_step_seconds_sum{step=\"index\"} 1.1\n"
                     "casper_merge_step_seconds_count{step=\"index\"} 7\n"
                     "casper_merge_step_seconds_sum{step=\"apply\"} 1.3\n"
                     "casper_merge_step_seconds_count{step=\"apply\"} 7\n"
                     "process_resident_memory_bytes 104857600\n"
                     "process_cpu_seconds_total 25.5\n"),
             std::nullopt};  // A failed scrape.
  PhaseStats stats;
  stats.submitted = 150;
  stats.acknowledged = 150;
  stats.achieved_rate = 5;
  stats.finalization_p50 = 1.5;

  const PhaseRow row = BuildRow(m, stats);
  EXPECT_EQ(row.name, "5/s:30s");
  EXPECT_EQ(row.target_rate, 5);
  EXPECT_EQ(row.late, 4);
  EXPECT_EQ(row.submitted, 150);
  EXPECT_EQ(row.finalization_p50, 1.5);
  // 300 blocks in half a minute, 75 of them empty.
  EXPECT_EQ(row.blocks_per_minute, 600);
  EXPECT_EQ(row.empty_block_share, 0.25);
  // The followed node (n1) was not scraped after the phase.
  EXPECT_EQ(row.lfb_blocks_per_minute, std::nullopt);
  // Only n0 has both scrapes: 0.2 s over 100 deploys.
  ASSERT_TRUE(row.validation_seconds_per_deploy.has_value());
  EXPECT_NEAR(*row.validation_seconds_per_deploy, 0.002, 1e-12);
  // Two merges whose steps took 0.4 s together.
  ASSERT_TRUE(row.merge_seconds_mean.has_value());
  EXPECT_NEAR(*row.merge_seconds_mean, 0.2, 1e-12);
  ASSERT_EQ(row.nodes.size(), 2u);
  EXPECT_EQ(row.nodes[0].node, "n0");
  EXPECT_EQ(row.nodes[0].rss_mib, 100);
  EXPECT_EQ(row.nodes[0].cpu_seconds, 15.5);
  EXPECT_EQ(row.nodes[1].rss_mib, std::nullopt);
  EXPECT_EQ(row.nodes[1].cpu_seconds, std::nullopt);

  m.lfb_node = 0;
  EXPECT_EQ(BuildRow(m, stats).lfb_blocks_per_minute, 400);
}

TEST(BuildRowTest, BurstHasNoTargetAndNoBlocksMeansNoEmptyShare) {
  PhaseMeasurement m;
  m.phase = ParsePhases("burst:32")->front();
  m.wall_seconds = 0.5;
  const PhaseRow row = BuildRow(m, PhaseStats{});
  EXPECT_EQ(row.target_rate, std::nullopt);
  // Half a second says nothing about block rates.
  EXPECT_EQ(row.blocks_per_minute, std::nullopt);
  EXPECT_EQ(row.lfb_blocks_per_minute, std::nullopt);
  EXPECT_EQ(row.empty_block_share, std::nullopt);
  EXPECT_EQ(row.validation_seconds_per_deploy, std::nullopt);
  EXPECT_TRUE(row.nodes.empty());
}

TEST(TimeSeriesCsvTest, HeaderAndOneLinePerSecond) {
  SeriesPoint a;
  SeriesPoint b;
  b.t = 1;
  b.submitted = 5;
  b.acknowledged = 4;
  b.included = 3;
  b.finalized = 2;
  b.pending = 2;
  b.inclusion_p50 = 0.1234;
  b.inclusion_p95 = 0.5;
  b.finalization_p95 = 2;
  EXPECT_EQ(TimeSeriesCsv({a, b}),
            "t,submitted,acknowledged,included,finalized,pending,"
            "incl_p50,incl_p95,final_p50,final_p95\n"
            "0,0,0,0,0,0,,,,\n"
            "1,5,4,3,2,2,0.123,0.500,,2.000\n");
}

}  // namespace
}  // namespace rnode::loadgen

// Tests of node/metrics: the exact exposition text, the naming and label
// rules, bounded children, concurrent updates, callbacks, process metrics,
// and promtool's verdict on a rendered registry.
#include "node/metrics/metrics.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rnode::node::metrics {
namespace {

using ::testing::HasSubstr;

constexpr const char* kPromtool = "/usr/bin/promtool";

TEST(RegistryTest, RendersSmallRegistryExactly) {
  Registry registry;
  absl::StatusOr<Counter*> received = registry.AddCounter(
      "rnode_blocks_received_total", "Blocks received from peers.");
  ASSERT_TRUE(received.ok()) << received.status();
  absl::StatusOr<Gauge*> pool =
      registry.AddGauge("rnode_deploy_pool_deploys", "Deploys in the pool.");
  ASSERT_TRUE(pool.ok()) << pool.status();
  absl::StatusOr<Family<Counter>*> validated =
      registry.AddCounterFamily("rnode_blocks_validated_total",
                                "Blocks validated, by verdict.", {"verdict"});
  ASSERT_TRUE(validated.ok()) << validated.status();
  absl::StatusOr<Histogram*> latency = registry.AddHistogram(
      "rnode_block_validation_seconds", "Time to validate a block.",
      std::vector<double>{0.25, 0.5, 1});
  ASSERT_TRUE(latency.ok()) << latency.status();

  (*received)->Inc(3);
  (*pool)->Set(7.5);
  absl::StatusOr<Counter*> valid = (*validated)->WithLabels({"valid"});
  absl::StatusOr<Counter*> invalid = (*validated)->WithLabels({"invalid"});
  ASSERT_TRUE(valid.ok() && invalid.ok());
  (*valid)->Inc();
  (*valid)->Inc();
  (*invalid)->Inc();
  for (double v : {0.125, 0.25, 0.5, 2.0}) (*latency)->Observe(v);

  EXPECT_EQ(registry.Render(),
            "# HELP rnode_block_validation_seconds Time to validate a block.\n"
            "# TYPE rnode_block_validation_seconds histogram\n"
            "rnode_block_validation_seconds_bucket{le=\"0.25\"} 2\n"
            "rnode_block_validation_seconds_bucket{le=\"0.5\"} 3\n"
            "rnode_block_validation_seconds_bucket{le=\"1\"} 3\n"
            "rnode_block_validation_seconds_bucket{le=\"+Inf\"} 4\n"
            "rnode_block_validation_seconds_sum 2.875\n"
            "rnode_block_validation_seconds_count 4\n"
            "# HELP rnode_blocks_received_total Blocks received from peers.\n"
            "# TYPE rnode_blocks_received_total counter\n"
            "rnode_blocks_received_total 3\n"
            "# HELP rnode_blocks_validated_total Blocks validated, by "
            "verdict.\n"
            "# TYPE rnode_blocks_validated_total counter\n"
            "rnode_blocks_validated_total{verdict=\"invalid\"} 1\n"
            "rnode_blocks_validated_total{verdict=\"valid\"} 2\n"
            "# HELP rnode_deploy_pool_deploys Deploys in the pool.\n"
            "# TYPE rnode_deploy_pool_deploys gauge\n"
            "rnode_deploy_pool_deploys 7.5\n");
}

TEST(RegistryTest, LabeledHistogramPutsLeAfterTheFamilyLabels) {
  Registry registry;
  absl::StatusOr<Family<Histogram>*> family =
      registry.AddHistogramFamily("rpc_seconds", "RPC latency.",
                                  {"method", "code"}, std::vector<double>{1});
  ASSERT_TRUE(family.ok()) << family.status();
  absl::StatusOr<Histogram*> child = (*family)->WithLabels({"deploy", "ok"});
  ASSERT_TRUE(child.ok()) << child.status();
  (*child)->Observe(1);
  EXPECT_EQ(registry.Render(),
            "# HELP rpc_seconds RPC latency.\n"
            "# TYPE rpc_seconds histogram\n"
            "rpc_seconds_bucket{method=\"deploy\",code=\"ok\",le=\"1\"} 1\n"
            "rpc_seconds_bucket{method=\"deploy\",code=\"ok\",le=\"+Inf\"} 1\n"
            "rpc_seconds_sum{method=\"deploy\",code=\"ok\"} 1\n"
            "rpc_seconds_count{method=\"deploy\",code=\"ok\"} 1\n");
}

TEST(RegistryTest, FamilyWithoutChildrenRendersOnlyHelpAndType) {
  Registry registry;
  ASSERT_TRUE(registry.AddGaugeFamily("peers", "Peers.", {"kind"}).ok());
  EXPECT_EQ(registry.Render(), "# HELP peers Peers.\n# TYPE peers gauge\n");
}

// The rendered value of a gauge set to `v`.
std::string RenderedGauge(double v) {
  Registry registry;
  absl::StatusOr<Gauge*> gauge = registry.AddGauge("g", "G.");
  EXPECT_TRUE(gauge.ok());
  (*gauge)->Set(v);
  std::string text = registry.Render();
  const std::string prefix = "# HELP g G.\n# TYPE g gauge\ng ";
  EXPECT_EQ(text.substr(0, prefix.size()), prefix);
  EXPECT_EQ(text.back(), '\n');
  return text.substr(prefix.size(), text.size() - prefix.size() - 1);
}

TEST(RegistryTest, FormatsNumbersAsPrometheusExpects) {
  const double inf = std::numeric_limits<double>::infinity();
  const struct {
    double value;
    const char* text;
  } kCases[] = {
      {0, "0"},
      {-0.0, "0"},
      {42, "42"},
      {-7, "-7"},
      {1e6, "1000000"},
      {999999999999999, "999999999999999"},
      {1e15, "1e+15"},
      {1.2345678901234568e17, "1.2345678901234568e+17"},
      {1.5, "1.5"},
      {-2.25, "-2.25"},
      {0.1, "0.1"},
      {0.0005, "0.0005"},
      {0.0001, "0.0001"},
      {0.00005, "5e-05"},
      {1234.5678, "1234.5678"},
      {inf, "+Inf"},
      {-inf, "-Inf"},
      {std::nan(""), "NaN"},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(RenderedGauge(c.value), c.text) << "value " << c.value;
  }
}

TEST(RegistryTest, RejectsInvalidMetricNames) {
  const char* kBad[] = {"",
                        "1blocks_total",
                        "blocks-x_total",
                        "a b_total",
                        "rnode:blocks_total",
                        "blockCount_total",
                        "blocks_total\n",
                        "é_total"};
  for (const char* name : kBad) {
    Registry registry;
    EXPECT_EQ(registry.AddCounter(name, "Help.").status().code(),
              absl::StatusCode::kInvalidArgument)
        << "name \"" << name << "\"";
  }
  Registry registry;
  EXPECT_TRUE(registry.AddCounter("_private_total", "Help.").ok());
  EXPECT_TRUE(registry.AddCounter("HTTP_total", "Help.").ok());
}

TEST(RegistryTest, RejectsInvalidLabelNames) {
  const std::vector<std::vector<std::string_view>> kBad = {
      {"1st"},
      {"a-b"},
      {"__name"},
      {"le"},
      {"quantile"},
      {"peerId"},
      {"a", "a"},
      {""},
      {"a", "b", "c", "d", "e", "f", "g", "h", "i"},  // > kMaxLabelNames
  };
  for (const auto& labels : kBad) {
    Registry registry;
    EXPECT_EQ(
        registry.AddCounterFamily("x_total", "Help.", labels).status().code(),
        absl::StatusCode::kInvalidArgument)
        << "first label \"" << labels[0] << "\"";
  }
}

TEST(RegistryTest, RejectsEmptyOrNonUtf8Help) {
  Registry registry;
  EXPECT_EQ(registry.AddGauge("g", "").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.AddGauge("g", "bad \xff").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RegistryTest, DuplicateNameReturnsAlreadyExists) {
  Registry registry;
  ASSERT_TRUE(registry.AddCounter("blocks_total", "Blocks.").ok());
  EXPECT_EQ(registry.AddCounter("blocks_total", "Blocks.").status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(registry.AddCounterFamily("blocks_total", "Blocks.", {"kind"})
                .status()
                .code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(
      registry.AddCallbackCounter("blocks_total", "Blocks.", [] { return 1.0; })
          .code(),
      absl::StatusCode::kAlreadyExists);
}

TEST(RegistryTest, HistogramSampleNamesCannotBeTakenTwice) {
  Registry registry;
  const std::vector<double> bounds = {1};
  ASSERT_TRUE(registry.AddHistogram("lat_seconds", "Latency.", bounds).ok());
  EXPECT_EQ(registry.AddHistogram("lat_seconds_bucket", "Latency.", bounds)
                .status()
                .code(),
            absl::StatusCode::kAlreadyExists);
}

TEST(RegistryTest, OnlyCountersEndInTotal) {
  Registry registry;
  EXPECT_EQ(registry.AddCounter("blocks", "Blocks.").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      registry.AddCounterFamily("blocks", "Blocks.", {"a"}).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      registry.AddCallbackCounter("cpu_seconds", "CPU.", [] { return 1.0; })
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.AddGauge("height_total", "Height.").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      registry
          .AddHistogram("lat_seconds_total", "Latency.", std::vector<double>{1})
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.AddGauge("queue_count", "Queue.").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.AddGauge("queue_sum", "Queue.").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.AddGauge("queue_bucket", "Queue.").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(registry.AddCounter("blocks_total", "Blocks.").ok());
  EXPECT_TRUE(registry.AddGauge("queue_deploys", "Queue.").ok());
}

TEST(RegistryTest, EscapesLabelValuesAndHelp) {
  Registry registry;
  absl::StatusOr<Family<Counter>*> family = registry.AddCounterFamily(
      "errors_total", "Errors \"quoted\", back\\slash\nnext line.", {"reason"});
  ASSERT_TRUE(family.ok()) << family.status();
  ASSERT_TRUE((*family)->WithLabels({"a\\b\"c\nd"}).ok());
  EXPECT_EQ(registry.Render(),
            "# HELP errors_total Errors \"quoted\", back\\\\slash\\nnext "
            "line.\n"
            "# TYPE errors_total counter\n"
            "errors_total{reason=\"a\\\\b\\\"c\\nd\"} 0\n");
}

TEST(FamilyTest, ChildrenAreCappedAndStable) {
  Registry registry;
  absl::StatusOr<Family<Counter>*> family =
      registry.AddCounterFamily("msgs_total", "Messages.", {"peer"});
  ASSERT_TRUE(family.ok()) << family.status();
  std::vector<Counter*> children;
  for (size_t i = 0; i < kMaxChildrenPerFamily; ++i) {
    absl::StatusOr<Counter*> child =
        (*family)->WithLabels({absl::StrCat("p", i)});
    ASSERT_TRUE(child.ok()) << child.status();
    children.push_back(*child);
  }
  EXPECT_EQ((*family)->size(), kMaxChildrenPerFamily);
  EXPECT_EQ((*family)->WithLabels({"one_more"}).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ((*family)->size(), kMaxChildrenPerFamily);
  for (size_t i = 0; i < kMaxChildrenPerFamily; ++i) {
    absl::StatusOr<Counter*> again =
        (*family)->WithLabels({absl::StrCat("p", i)});
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(*again, children[i]);
  }
}

TEST(FamilyTest, RejectsWrongArityLongAndNonUtf8Values) {
  Registry registry;
  absl::StatusOr<Family<Gauge>*> family =
      registry.AddGaugeFamily("depth", "Depth.", {"queue", "kind"});
  ASSERT_TRUE(family.ok()) << family.status();
  EXPECT_EQ((*family)->WithLabels({"a"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*family)->WithLabels({"a", "b", "c"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::string long_value(kMaxLabelValueBytes + 1, 'x');
  EXPECT_EQ((*family)->WithLabels({"a", long_value}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*family)->WithLabels({"a", "\xc3"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*family)->WithLabels({"a", "\xed\xa0\x80"}).status().code(),
            absl::StatusCode::kInvalidArgument);  // a UTF-16 surrogate
  EXPECT_TRUE((*family)->WithLabels({"a", "caf\xc3\xa9"}).ok());
  EXPECT_TRUE(
      (*family)->WithLabels({"a", std::string(kMaxLabelValueBytes, 'x')}).ok());
  EXPECT_EQ((*family)->size(), 2u);
}

TEST(CounterTest, AddsFractionsAndIgnoresNegativeAndNonFinite) {
  Registry registry;
  absl::StatusOr<Counter*> counter = registry.AddCounter("rev_total", "REV.");
  ASSERT_TRUE(counter.ok());
  (*counter)->Inc(2);
  (*counter)->Add(0.5);
  (*counter)->Add(-1);
  (*counter)->Add(std::nan(""));
  (*counter)->Add(std::numeric_limits<double>::infinity());
  EXPECT_EQ((*counter)->Value(), 2.5);
  EXPECT_THAT(registry.Render(), HasSubstr("\nrev_total 2.5\n"));
}

TEST(CounterTest, LargeIntegralCountRendersExactly) {
  Registry registry;
  absl::StatusOr<Counter*> counter = registry.AddCounter("big_total", "Big.");
  ASSERT_TRUE(counter.ok());
  (*counter)->Inc(18446744073709551615u);
  EXPECT_THAT(registry.Render(),
              HasSubstr("\nbig_total 18446744073709551615\n"));
}

TEST(HistogramTest, BoundsAreInclusiveAndNanIsIgnored) {
  Registry registry;
  absl::StatusOr<Histogram*> histogram =
      registry.AddHistogram("size_bytes", "Size.", std::vector<double>{1, 2});
  ASSERT_TRUE(histogram.ok());
  (*histogram)->Observe(1);
  (*histogram)->Observe(std::nan(""));
  (*histogram)->Observe(std::numeric_limits<double>::infinity());
  (*histogram)->Observe(-5);
  EXPECT_EQ((*histogram)->Count(), 3u);
  EXPECT_EQ(registry.Render(),
            "# HELP size_bytes Size.\n"
            "# TYPE size_bytes histogram\n"
            "size_bytes_bucket{le=\"1\"} 2\n"
            "size_bytes_bucket{le=\"2\"} 2\n"
            "size_bytes_bucket{le=\"+Inf\"} 3\n"
            "size_bytes_sum +Inf\n"
            "size_bytes_count 3\n");
}

TEST(HistogramTest, RejectsBadBounds) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> too_many;
  for (size_t i = 0; i <= kMaxBuckets; ++i) too_many.push_back(i);
  const std::vector<std::vector<double>> kBad = {
      {1, 1}, {2, 1}, {1, inf}, {std::nan("")}, too_many};
  for (const auto& bounds : kBad) {
    Registry registry;
    EXPECT_EQ(registry.AddHistogram("h_seconds", "H.", bounds).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bounds.size() << " bounds";
  }
  Registry registry;
  EXPECT_TRUE(
      registry.AddHistogram("h_seconds", "H.", kLatencySecondsBuckets).ok());
  EXPECT_TRUE(registry.AddHistogram("empty_seconds", "H.", {}).ok());
}

TEST(HistogramTest, ExponentialBuckets) {
  absl::StatusOr<std::vector<double>> bounds = ExponentialBuckets(1, 2, 4);
  ASSERT_TRUE(bounds.ok()) << bounds.status();
  EXPECT_EQ(*bounds, (std::vector<double>{1, 2, 4, 8}));
  EXPECT_EQ(ExponentialBuckets(0, 2, 4).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExponentialBuckets(1, 1, 4).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExponentialBuckets(1, 2, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExponentialBuckets(1, 2, kMaxBuckets + 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExponentialBuckets(1e300, 1e10, 4).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ConcurrencyTest, IncrementsFromManyThreadsSumExactly) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 100000;
  Registry registry;
  absl::StatusOr<Family<Counter>*> family =
      registry.AddCounterFamily("events_total", "Events.", {"kind"});
  absl::StatusOr<Gauge*> gauge = registry.AddGauge("level", "Level.");
  absl::StatusOr<Histogram*> histogram = registry.AddHistogram(
      "work_seconds", "Work.", std::vector<double>{0.5, 1.5});
  ASSERT_TRUE(family.ok() && gauge.ok() && histogram.ok());

  std::vector<std::thread> threads;
  threads.reserve(kThreads + 1);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      absl::StatusOr<Counter*> counter =
          (*family)->WithLabels({t % 2 == 0 ? "even" : "odd"});
      ASSERT_TRUE(counter.ok());
      for (int i = 0; i < kPerThread; ++i) {
        (*counter)->Inc();
        (*gauge)->Add(1);
        (*histogram)->Observe(i % 2);
      }
    });
  }
  // Renders concurrently with the updates (for the tsan preset).
  threads.emplace_back([&] {
    for (int i = 0; i < 20; ++i) EXPECT_FALSE(registry.Render().empty());
  });
  for (std::thread& thread : threads) thread.join();

  EXPECT_EQ((*(*family)->WithLabels({"even"}))->Value(), 2.0 * kPerThread);
  EXPECT_EQ((*(*family)->WithLabels({"odd"}))->Value(), 2.0 * kPerThread);
  EXPECT_EQ((*gauge)->Value(), 1.0 * kThreads * kPerThread);
  EXPECT_EQ((*histogram)->Count(), uint64_t{kThreads} * kPerThread);
  EXPECT_EQ((*histogram)->Sum(), kThreads * kPerThread / 2.0);
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("work_seconds_bucket{le=\"0.5\"} 200000\n"));
  EXPECT_THAT(text, HasSubstr("work_seconds_bucket{le=\"+Inf\"} 400000\n"));
}

TEST(CallbackTest, GaugeIsEvaluatedAtRender) {
  Registry registry;
  double height = 10;
  ASSERT_TRUE(registry
                  .AddCallbackGauge("last_finalized_height", "Height.",
                                    [&height] { return height; })
                  .ok());
  ASSERT_TRUE(
      registry.AddCallbackGauge("constant", "Constant.", [] { return 3; })
          .ok());
  EXPECT_THAT(registry.Render(), HasSubstr("\nlast_finalized_height 10\n"));
  height = 11.5;
  EXPECT_THAT(registry.Render(), HasSubstr("\nlast_finalized_height 11.5\n"));
  EXPECT_THAT(registry.Render(), HasSubstr("\nconstant 3\n"));
}

TEST(CallbackTest, ErrorOmitsTheSample) {
  Registry registry;
  ASSERT_TRUE(registry
                  .AddCallbackGauge("broken", "Broken.",
                                    []() -> absl::StatusOr<double> {
                                      return absl::UnavailableError("no");
                                    })
                  .ok());
  EXPECT_EQ(registry.Render(), "# HELP broken Broken.\n# TYPE broken gauge\n");
  EXPECT_EQ(registry.AddCallbackGauge("empty", "Empty.", nullptr).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ProcessTest, RssAndCpuAreReadable) {
  absl::StatusOr<uint64_t> rss = ProcessRssBytes();
  ASSERT_TRUE(rss.ok()) << rss.status();
  EXPECT_GT(*rss, 0u);
  absl::StatusOr<double> cpu = ProcessCpuSeconds();
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_GE(*cpu, 0);
}

TEST(ProcessTest, RegisterProcessMetricsExposesStandardNames) {
  Registry registry;
  ASSERT_TRUE(RegisterProcessMetrics(registry).ok());
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("# TYPE process_resident_memory_bytes gauge\n"
                              "process_resident_memory_bytes "));
  EXPECT_THAT(text, HasSubstr("# TYPE process_cpu_seconds_total counter\n"
                              "process_cpu_seconds_total "));
  EXPECT_EQ(RegisterProcessMetrics(registry).code(),
            absl::StatusCode::kAlreadyExists);
}

// The allocator's figures appear exactly when the allocator is jemalloc,
// and count live allocations.
TEST(ProcessTest, HeapMetricsFollowTheAllocator) {
  Registry registry;
  ASSERT_TRUE(RegisterProcessMetrics(registry).ok());
  auto allocated = [&registry]() -> double {
    const std::string text = registry.Render();
    const std::string name = "\nprocess_heap_allocated_bytes ";
    const size_t at = text.find(name);
    if (at == std::string::npos) return -1;
    return std::strtod(text.c_str() + at + name.size(), nullptr);
  };
#if RNODE_JEMALLOC
  const double before = allocated();
  ASSERT_GT(before, 0);
  constexpr size_t kBlock = size_t{64} << 20;
  std::unique_ptr<char[]> block(new char[kBlock]);
  block[0] = 1;
  EXPECT_GE(allocated(), before + static_cast<double>(kBlock) / 2);
  EXPECT_THAT(registry.Render(),
              HasSubstr("# TYPE process_heap_resident_bytes gauge\n"));
#else
  EXPECT_EQ(allocated(), -1) << "no jemalloc, no heap metrics";
#endif
}

// A registry with every kind of metric, label escaping and odd values.
std::string RenderEverything() {
  Registry registry;
  EXPECT_TRUE(RegisterProcessMetrics(registry).ok());
  absl::StatusOr<Counter*> counter =
      registry.AddCounter("rnode_blocks_received_total", "Blocks received.");
  (*counter)->Inc(12);
  absl::StatusOr<Counter*> fractional =
      registry.AddCounter("rnode_phlo_spent_total", "Phlo \"spent\".\\");
  (*fractional)->Add(0.25);
  absl::StatusOr<Family<Counter>*> verdicts = registry.AddCounterFamily(
      "rnode_blocks_validated_total", "Blocks validated.", {"verdict"});
  (*(*verdicts)->WithLabels({"valid"}))->Inc();
  (*(*verdicts)->WithLabels({"in\"va\\lid\nx"}))->Inc();
  (*(*verdicts)->WithLabels({"caf\xc3\xa9"}))->Inc();
  absl::StatusOr<Gauge*> gauge =
      registry.AddGauge("rnode_queue_depth", "Queue\ndepth.");
  (*gauge)->Set(std::nan(""));
  absl::StatusOr<Family<Gauge>*> gauges =
      registry.AddGaugeFamily("rnode_peer_rtt_seconds", "RTT.", {"peer"});
  (*(*gauges)->WithLabels({"a"}))
      ->Set(-std::numeric_limits<double>::infinity());
  (*(*gauges)->WithLabels({"b"}))->Set(1e-9);
  (*(*gauges)->WithLabels({"c"}))->Set(1e20);
  EXPECT_TRUE(
      registry.AddGaugeFamily("rnode_empty_bytes", "Nothing yet.", {"x"}).ok());
  absl::StatusOr<Histogram*> latency = registry.AddHistogram(
      "rnode_validation_seconds", "Validation.", kLatencySecondsBuckets);
  for (double v : {0.0001, 0.003, 0.2, 100.0}) (*latency)->Observe(v);
  absl::StatusOr<Family<Histogram>*> rpc =
      registry.AddHistogramFamily("rnode_rpc_seconds", "RPC.", {"method"},
                                  *ExponentialBuckets(0.001, 4, 6));
  (*(*rpc)->WithLabels({"deploy"}))->Observe(0.5);
  EXPECT_TRUE(registry
                  .AddCallbackGauge("rnode_last_finalized_height",
                                    "Finalized height.", [] { return 1234; })
                  .ok());
  return registry.Render();
}

TEST(PromtoolTest, CheckMetricsAcceptsTheRendering) {
  ASSERT_EQ(access(kPromtool, X_OK), 0)
      << kPromtool << " is missing: run scripts/setup (it installs the "
      << "prometheus package listed in scripts/packages.txt)";
  const std::string text = RenderEverything();
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/metrics_test_", getpid(), ".txt");
  {
    std::ofstream file(path);
    file << text;
    ASSERT_TRUE(file.good());
  }
  const std::string command =
      absl::StrCat(kPromtool, " check metrics < '", path, "' 2>&1");
  std::FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[512];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) output.append(buf, n);
  const int status = pclose(pipe);
  std::remove(path.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "status " << status << "; output:\n"
      << output << "\nexposition:\n"
      << text;
  EXPECT_EQ(output, "") << "exposition:\n" << text;
}

}  // namespace
}  // namespace rnode::node::metrics

// The run's pure parts: validAfterBlockNumber, the scrape plan, the deploy
// term and the verdict.
#include "integration/loadgen/runner.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/loadgen/sender.h"

namespace rnode::loadgen {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ValidAfterTest, IsLatestMinusOneNotBelowZero) {
  EXPECT_EQ(ValidAfter(-1), 0);
  EXPECT_EQ(ValidAfter(0), 0);
  EXPECT_EQ(ValidAfter(1), 0);
  EXPECT_EQ(ValidAfter(1234), 1233);
}

TEST(DeployTermTest, RunsFromOneHundredThousand) {
  EXPECT_EQ(DeployTerm(0), "@100000!(100000)");
  EXPECT_EQ(DeployTerm(41), "@100041!(100041)");
}

TEST(PlanScrapesTest, FollowedNodeAmongTheMetricsPorts) {
  const ScrapeTargets s = PlanScrapes(
      {{"127.0.0.1", 40403}, {"127.0.0.1", 40413}, {"10.213.4.13", 40423}},
      {"127.0.0.1", 40413});
  EXPECT_EQ(s.nodes.size(), 3u);
  EXPECT_EQ(s.lfb_node, 1u);
  EXPECT_EQ(s.names,
            (std::vector<std::string>{"127.0.0.1:40403", "127.0.0.1:40413",
                                      "10.213.4.13:40423"}));
}

TEST(PlanScrapesTest, FollowedNodeIsAddedWhenMissing) {
  const ScrapeTargets s =
      PlanScrapes({{"127.0.0.1", 40403}}, {"127.0.0.1", 40500});
  EXPECT_EQ(s.names,
            (std::vector<std::string>{"127.0.0.1:40403", "127.0.0.1:40500"}));
  EXPECT_EQ(s.lfb_node, 1u);
  // The same port on another host is another node.
  const ScrapeTargets other =
      PlanScrapes({{"10.213.4.11", 40403}}, {"10.213.4.12", 40403});
  EXPECT_EQ(other.nodes.size(), 2u);
  EXPECT_EQ(other.lfb_node, 1u);
  const ScrapeTargets only = PlanScrapes({}, {"127.0.0.1", 40500});
  EXPECT_EQ(only.names, (std::vector<std::string>{"127.0.0.1:40500"}));
  EXPECT_EQ(only.lfb_node, 0u);
}

TEST(ParseHttpEndpointTest, TakesHostAndPortOrAPortOnTheDefaultHost) {
  EXPECT_EQ(*ParseHttpEndpoint("40403", "127.0.0.1"),
            (HttpEndpoint{"127.0.0.1", 40403}));
  EXPECT_EQ(*ParseHttpEndpoint("10.213.4.12:40413", "127.0.0.1"),
            (HttpEndpoint{"10.213.4.12", 40413}));
  for (const char* bad : {"", "x", "0", "65536", ":40403", "host:", "a:b"}) {
    EXPECT_FALSE(ParseHttpEndpoint(bad, "127.0.0.1").ok()) << bad;
  }
}

RunOutcome Clean() {
  RunOutcome o;
  o.totals.submitted = 500;
  o.totals.acknowledged = 500;
  o.totals.included = 500;
  o.totals.finalized = 500;
  o.drain_seconds = 60;
  return o;
}

TEST(JudgeTest, PassesWhenEveryAcknowledgedDeployFinalized) {
  const Verdict v = Judge(Clean());
  EXPECT_TRUE(v.passed);
  EXPECT_THAT(v.text, StartsWith("passed: all 500 acknowledged"));
}

TEST(JudgeTest, FailedDeploysFailTheRunWithTheirReasons) {
  RunOutcome o = Clean();
  o.totals.failed = 3;
  o.failure_reasons = {{"gRPC DEADLINE_EXCEEDED: deadline", 2},
                       {"refused: pool full", 1}};
  const Verdict v = Judge(o);
  EXPECT_FALSE(v.passed);
  EXPECT_THAT(v.text, StartsWith("failed:"));
  EXPECT_THAT(v.text, HasSubstr("3 deploys failed"));
  EXPECT_THAT(v.text, HasSubstr("2 x gRPC DEADLINE_EXCEEDED: deadline"));
  EXPECT_THAT(v.text, HasSubstr("1 x refused: pool full"));
}

TEST(JudgeTest, ToleratedFailuresAreReportedAndPass) {
  RunOutcome o = Clean();
  o.totals.failed = 3;
  o.tolerated_failures = 3;
  o.failure_reasons = {{"refused: catching up", 3}};
  Verdict v = Judge(o);
  EXPECT_TRUE(v.passed);
  EXPECT_THAT(v.text, HasSubstr("all 500 acknowledged deploys finalized; 3 "
                                "deploys failed, tolerated:\n    3 x "
                                "refused: catching up"));
  // One more than tolerated fails the run.
  o.totals.failed = 4;
  v = Judge(o);
  EXPECT_FALSE(v.passed);
  EXPECT_THAT(v.text, HasSubstr("4 deploys failed"));
}

TEST(JudgeTest, PendingDeploysFailTheRun) {
  RunOutcome o = Clean();
  o.totals.pending = 7;
  PendingDeploy p;
  p.id = "0123456789abcdef0123";
  p.target = 2;
  p.submitted_at = 12.5;
  p.acknowledged_at = 12.75;
  o.pending_sample.push_back(p);
  p.included_at = 14;
  o.pending_sample.push_back(p);
  const Verdict v = Judge(o);
  EXPECT_FALSE(v.passed);
  EXPECT_THAT(
      v.text,
      HasSubstr("7 acknowledged deploys not finalized within the "
                "drain of 60 s\n    0123456789abcdef0123 to node 2, sent "
                "at 12.5 s, acknowledged at 12.75 s, in no block\n"
                "    0123456789abcdef0123 to node 2, sent at 12.5 s, "
                "acknowledged at 12.75 s, included at 14 s"));
}

TEST(JudgeTest, EachOtherProblemFailsTheRun) {
  RunOutcome local = Clean();
  local.local_failures = 1;
  local.first_local_failure = absl::ResourceExhaustedError("tracker full");
  EXPECT_THAT(Judge(local).text, HasSubstr("1 deploys could not be sent: "
                                           "tracker full"));

  RunOutcome stream = Clean();
  stream.event_stream = absl::UnavailableError("event stream closed");
  EXPECT_THAT(Judge(stream).text, HasSubstr("event stream closed"));

  RunOutcome interrupted = Clean();
  interrupted.interrupted = true;
  EXPECT_THAT(Judge(interrupted).text, HasSubstr("interrupted"));

  EXPECT_THAT(Judge(RunOutcome{}).text, HasSubstr("no deploy was sent"));
  for (const RunOutcome& o : {local, stream, interrupted, RunOutcome{}}) {
    EXPECT_FALSE(Judge(o).passed);
  }
}

}  // namespace
}  // namespace rnode::loadgen

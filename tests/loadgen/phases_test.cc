// Phase specs, the public and ramp sequences, and exact pacing offsets.
#include "integration/loadgen/phases.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rnode::loadgen {
namespace {

using ::testing::HasSubstr;

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(ParsePhasesTest, ParsesThePublicSpec) {
  absl::StatusOr<std::vector<Phase>> phases =
      ParsePhases("1/s:30s,5/s:20s,10/s:15s,burst:32,4/s:300s");
  ASSERT_TRUE(phases.ok()) << phases.status();
  ASSERT_EQ(phases->size(), 5u);
  EXPECT_EQ((*phases)[0].name, "1/s:30s");
  EXPECT_EQ((*phases)[0].kind, PhaseKind::kPaced);
  EXPECT_EQ((*phases)[0].rate_per_second, 1);
  EXPECT_EQ((*phases)[0].duration_seconds, 30);
  EXPECT_EQ((*phases)[2].rate_per_second, 10);
  EXPECT_EQ((*phases)[2].duration_seconds, 15);
  EXPECT_EQ((*phases)[3].name, "burst:32");
  EXPECT_EQ((*phases)[3].kind, PhaseKind::kBurst);
  EXPECT_EQ((*phases)[3].burst_count, 32);
  EXPECT_EQ((*phases)[4].duration_seconds, 300);
  EXPECT_EQ(*phases, PublicPhases(/*quick=*/false));
}

TEST(ParsePhasesTest, AcceptsFractionsMinutesAndSpaces) {
  absl::StatusOr<std::vector<Phase>> phases =
      ParsePhases(" 2.5/s:1m , burst:1 ");
  ASSERT_TRUE(phases.ok()) << phases.status();
  ASSERT_EQ(phases->size(), 2u);
  EXPECT_EQ((*phases)[0].name, "2.5/s:1m");
  EXPECT_EQ((*phases)[0].rate_per_second, 2.5);
  EXPECT_EQ((*phases)[0].duration_seconds, 60);
  EXPECT_EQ((*phases)[1].burst_count, 1);
}

TEST(ParsePhasesTest, AcceptsTheBounds) {
  EXPECT_TRUE(ParsePhases("100000/s:20s").ok());
  EXPECT_TRUE(ParsePhases("0.001/s:86400s").ok());
  EXPECT_TRUE(ParsePhases("burst:100000").ok());
}

TEST(ParsePhasesTest, EmptySpecIsInvalid) {
  for (const char* spec : {"", "  "}) {
    absl::StatusOr<std::vector<Phase>> phases = ParsePhases(spec);
    ASSERT_FALSE(phases.ok()) << spec;
    EXPECT_EQ(phases.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(Message(phases.status()), HasSubstr("empty phase spec"));
  }
}

TEST(ParsePhasesTest, EmptyItemNamesItsPosition) {
  absl::StatusOr<std::vector<Phase>> phases = ParsePhases("5/s:20s,,burst:3");
  ASSERT_FALSE(phases.ok());
  EXPECT_EQ(phases.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(phases.status()), HasSubstr("phase 2 of the spec"));
}

struct BadItem {
  const char* item;
  const char* problem;
};

TEST(ParsePhasesTest, BadItemIsInvalidArgumentNamingIt) {
  const BadItem cases[] = {
      {"5/x:20s", "expected RATE/s:DURATION or burst:COUNT"},
      {"fast", "expected RATE/s:DURATION or burst:COUNT"},
      {"abc/s:20s", "RATE is not a number"},
      {"/s:20s", "RATE is not a number"},
      {"0/s:20s", "rate 0/s is not in (0, 100000]"},
      {"-5/s:20s", "rate -5/s is not in (0, 100000]"},
      {"100001/s:1s", "rate 100001/s is not in (0, 100000]"},
      {"5/s:0s", "duration 0 s is not in (0, 86400]"},
      {"5/s:86401s", "duration 86401 s is not in (0, 86400]"},
      {"5/s:1441m", "duration 86460 s is not in (0, 86400]"},
      {"5/s:20", "DURATION needs a unit: s or m"},
      {"5/s:20h", "DURATION needs a unit: s or m"},
      {"5/s:xs", "DURATION is not a number"},
      {"burst:0", "count 0 is not in [1, 100000]"},
      {"burst:100001", "count 100001 is not in [1, 100000]"},
      {"burst:3.5", "expected burst:COUNT with an integer COUNT"},
      {"burst:", "expected burst:COUNT with an integer COUNT"},
      {"100000/s:86400s", "8640000000 deploys; at most 2000000 per phase"},
  };
  for (const BadItem& c : cases) {
    const std::string spec = std::string("1/s:1s,") + c.item;
    absl::StatusOr<std::vector<Phase>> phases = ParsePhases(spec);
    ASSERT_FALSE(phases.ok()) << spec;
    EXPECT_EQ(phases.status().code(), absl::StatusCode::kInvalidArgument)
        << spec;
    EXPECT_THAT(Message(phases.status()),
                HasSubstr(std::string("phase \"") + c.item + "\""))
        << spec;
    EXPECT_THAT(Message(phases.status()), HasSubstr(c.problem)) << spec;
  }
}

TEST(DeployCountTest, CountsOffsetsBelowTheDuration) {
  EXPECT_EQ(DeployCount(ParsePhases("1/s:30s")->front()), 30);
  EXPECT_EQ(DeployCount(ParsePhases("2.5/s:1s")->front()), 3);
  // 0.3 * 10 is 3.0000000000000004 in binary floating point.
  EXPECT_EQ(DeployCount(ParsePhases("0.3/s:10s")->front()), 3);
  EXPECT_EQ(DeployCount(ParsePhases("burst:32")->front()), 32);
  EXPECT_EQ(TotalDeploys(PublicPhases(false)), 30 + 100 + 150 + 32 + 1200);
  EXPECT_EQ(TotalDeploys(PublicPhases(true)), 30 + 100 + 150 + 32 + 120);
}

TEST(DueTimesTest, PacesDeployIAtIOverRate) {
  const std::vector<double> four = DueTimes(ParsePhases("4/s:1s")->front());
  EXPECT_EQ(four, (std::vector<double>{0, 0.25, 0.5, 0.75}));

  const std::vector<double> third = DueTimes(ParsePhases("3/s:1s")->front());
  ASSERT_EQ(third.size(), 3u);
  EXPECT_EQ(third[0], 0);
  EXPECT_EQ(third[1], 1.0 / 3);
  EXPECT_EQ(third[2], 2.0 / 3);

  // Computed from i, so the last offset has no accumulated error.
  const std::vector<double> many =
      DueTimes(ParsePhases("1000/s:300s")->front());
  ASSERT_EQ(many.size(), 300000u);
  EXPECT_EQ(many.back(), 299999.0 / 1000);
}

TEST(DueTimesTest, BurstSendsEverythingAtZero) {
  EXPECT_EQ(DueTimes(ParsePhases("burst:5")->front()),
            std::vector<double>(5, 0.0));
}

TEST(PublicPhasesTest, FollowsThePublicMethodology) {
  const std::vector<Phase> full = PublicPhases(false);
  ASSERT_EQ(full.size(), 5u);
  std::vector<std::string> names;
  for (const Phase& p : full) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"1/s:30s", "5/s:20s", "10/s:15s",
                                             "burst:32", "4/s:300s"}));
  const std::vector<Phase> quick = PublicPhases(true);
  ASSERT_EQ(quick.size(), 5u);
  EXPECT_EQ(quick.back().name, "4/s:30s");
  EXPECT_EQ(quick.back().rate_per_second, 4);
  EXPECT_EQ(quick.back().duration_seconds, 30);
}

TEST(SmokePhasesTest, IsFivePerSecondThenTwenty) {
  EXPECT_EQ(SmokePhases(), *ParsePhases("5/s:20s,20/s:20s"));
}

std::vector<double> Rates(const std::vector<Phase>& phases) {
  std::vector<double> out;
  for (const Phase& p : phases) {
    EXPECT_EQ(p.kind, PhaseKind::kPaced);
    EXPECT_EQ(p.duration_seconds, 30);
    out.push_back(p.rate_per_second);
  }
  return out;
}

TEST(RampPhasesTest, DoublesFromTwentyFiveAndEndsAtTheCap) {
  absl::StatusOr<std::vector<Phase>> ramp = RampPhases(1000);
  ASSERT_TRUE(ramp.ok()) << ramp.status();
  EXPECT_EQ(Rates(*ramp),
            (std::vector<double>{25, 50, 100, 200, 400, 800, 1000}));
  EXPECT_EQ(ramp->front().name, "25/s:30s");
  EXPECT_EQ(ramp->back().name, "1000/s:30s");
}

TEST(RampPhasesTest, CapOnTheSequenceAddsNoExtraStep) {
  EXPECT_EQ(Rates(*RampPhases(800)),
            (std::vector<double>{25, 50, 100, 200, 400, 800}));
  EXPECT_EQ(Rates(*RampPhases(25)), (std::vector<double>{25}));
}

TEST(RampPhasesTest, HonoursFirstFactorAndStep) {
  absl::StatusOr<std::vector<Phase>> ramp = RampPhases(90, 10, 3, 5);
  ASSERT_TRUE(ramp.ok()) << ramp.status();
  ASSERT_EQ(ramp->size(), 3u);
  EXPECT_EQ((*ramp)[1].rate_per_second, 30);
  EXPECT_EQ((*ramp)[2].rate_per_second, 90);
  EXPECT_EQ((*ramp)[2].duration_seconds, 5);
}

TEST(RampPhasesTest, RefusesBadParameters) {
  EXPECT_EQ(RampPhases(10).status().code(),
            absl::StatusCode::kInvalidArgument);  // Below the first rate.
  EXPECT_EQ(RampPhases(200000).status().code(),
            absl::StatusCode::kInvalidArgument);  // Past kMaxRatePerSecond.
  EXPECT_EQ(RampPhases(100, 25, 1).status().code(),
            absl::StatusCode::kInvalidArgument);  // No growth.
  EXPECT_EQ(RampPhases(100, 25, 2, 0).status().code(),
            absl::StatusCode::kInvalidArgument);  // No step time.
  // 100,000/s for 30 s is more than one phase may send.
  absl::StatusOr<std::vector<Phase>> huge = RampPhases(100000);
  ASSERT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(huge.status()), HasSubstr("at most 2000000 per phase"));
}

}  // namespace
}  // namespace rnode::loadgen

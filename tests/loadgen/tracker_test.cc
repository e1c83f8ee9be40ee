// DeployTracker: nearest-rank percentiles, first-time-only events, bounds,
// pending counts and the per-second series.
#include "integration/loadgen/tracker.h"

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace rnode::loadgen {
namespace {

std::string Id(int i) { return absl::StrCat("d", i); }

TEST(PercentileTest, NearestRankOnOneToHundred) {
  std::vector<double> samples;
  for (int i = 1; i <= 100; ++i) samples.push_back(i);
  EXPECT_EQ(Percentile(samples, 50), 50);
  EXPECT_EQ(Percentile(samples, 95), 95);
  EXPECT_EQ(Percentile(samples, 99), 99);
  EXPECT_EQ(Percentile(samples, 100), 100);
}

TEST(PercentileTest, IsAlwaysOneOfTheSamples) {
  const std::vector<double> four = {1, 2, 3, 4};
  EXPECT_EQ(Percentile(four, 50), 2);  // ceil(0.5 * 4) = 2nd.
  EXPECT_EQ(Percentile(four, 95), 4);  // ceil(3.8) = 4th.
  EXPECT_EQ(Percentile({7}, 50), 7);
  EXPECT_EQ(Percentile({7}, 99), 7);
  EXPECT_EQ(NearestRank(50, 0), 0u);
  EXPECT_EQ(NearestRank(1, 10), 1u);
}

TEST(PercentileTest, EmptyIsNullopt) {
  EXPECT_EQ(Percentile({}, 50), std::nullopt);
}

TEST(DeployTrackerTest, SummarizesLatenciesFromSubmission) {
  DeployTracker tracker;
  // Deploy i submitted at 10, acknowledged i/100 s later, included i
  // seconds later, finalized 2i later.
  for (int i = 1; i <= 100; ++i) {
    ASSERT_TRUE(tracker.Submitted(Id(i), 0, 10).ok());
    ASSERT_TRUE(tracker.Acknowledged(Id(i), 10 + i / 100.0));
    ASSERT_TRUE(tracker.Included(Id(i), 10 + i));
    ASSERT_TRUE(tracker.Finalized(Id(i), 10 + 2 * i));
  }
  const PhaseStats s = tracker.Summarize(0, 50);
  EXPECT_EQ(s.submitted, 100);
  EXPECT_EQ(s.acknowledged, 100);
  EXPECT_EQ(s.failed, 0);
  EXPECT_EQ(s.included, 100);
  EXPECT_EQ(s.finalized, 100);
  EXPECT_EQ(s.not_finalized, 0);
  EXPECT_EQ(s.achieved_rate, 2.0);
  EXPECT_NEAR(*s.acknowledgement_p50, 0.50, 1e-9);
  EXPECT_NEAR(*s.acknowledgement_p99, 0.99, 1e-9);
  EXPECT_EQ(s.inclusion_p50, 50);
  EXPECT_EQ(s.inclusion_p95, 95);
  EXPECT_EQ(s.inclusion_p99, 99);
  EXPECT_EQ(s.finalization_p50, 100);
  EXPECT_EQ(s.finalization_p95, 190);
  EXPECT_EQ(s.finalization_p99, 198);
}

TEST(DeployTrackerTest, FinalizedUnseenSettlesWithoutALatencySample) {
  DeployTracker tracker;
  ASSERT_TRUE(tracker.Submitted("seen", 0, 10).ok());
  ASSERT_TRUE(tracker.Submitted("unseen", 0, 10).ok());
  ASSERT_TRUE(tracker.Submitted("failed", 0, 10).ok());
  ASSERT_TRUE(tracker.Submitted("refused", 0, 10).ok());
  for (const char* id : {"seen", "unseen", "failed"}) {
    ASSERT_TRUE(tracker.Acknowledged(id, 11));
  }
  ASSERT_TRUE(tracker.Failed("refused", "no"));
  ASSERT_TRUE(tracker.Finalized("seen", 13));
  EXPECT_EQ(tracker.Pending(), 2);
  EXPECT_TRUE(tracker.FinalizedUnseen("unseen", false));
  EXPECT_TRUE(tracker.FinalizedUnseen("failed", true));
  EXPECT_FALSE(tracker.FinalizedUnseen("unseen", false));   // Once.
  EXPECT_FALSE(tracker.FinalizedUnseen("seen", false));     // An event did.
  EXPECT_FALSE(tracker.FinalizedUnseen("refused", false));  // Never acked.
  EXPECT_FALSE(tracker.Finalized("unseen", 20));  // A late event: no change.
  EXPECT_EQ(tracker.Pending(), 0);
  EXPECT_TRUE(tracker.PendingDeploys(10).empty());
  const TrackerTotals t = tracker.Totals();
  EXPECT_EQ(t.finalized, 3);
  EXPECT_EQ(t.finalized_unseen, 2);
  const PhaseStats s = tracker.Summarize(0, 1);
  EXPECT_EQ(s.finalized, 3);
  EXPECT_EQ(s.finalized_with_effect, 2);
  EXPECT_EQ(s.finalized_failed, 1);
  EXPECT_EQ(s.not_finalized, 0);
  EXPECT_EQ(s.finalization_p50, 3);  // Only the event's sample: 13 - 10.
  EXPECT_EQ(s.finalization_p99, 3);
}

TEST(DeployTrackerTest, ResignedMovesAnUnansweredRecordToItsNewId) {
  DeployTracker tracker;
  ASSERT_TRUE(tracker.Submitted("old", 0, 10).ok());
  ASSERT_TRUE(tracker.Resigned("old", "new").ok());
  EXPECT_FALSE(tracker.Acknowledged("old", 11));  // No longer tracked.
  EXPECT_TRUE(tracker.Acknowledged("new", 12));
  EXPECT_TRUE(tracker.Finalized("new", 14));
  const PhaseStats s = tracker.Summarize(0, 1);
  EXPECT_EQ(s.submitted, 1);
  EXPECT_EQ(s.acknowledged, 1);
  EXPECT_EQ(s.finalized, 1);
  // Latencies run from the first submission.
  EXPECT_EQ(s.finalization_p50, 4);

  EXPECT_EQ(tracker.Resigned("unknown", "x").code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(tracker.Resigned("new", "newer").code(),
            absl::StatusCode::kFailedPrecondition);  // Acknowledged.
  ASSERT_TRUE(tracker.Submitted("a", 0, 20).ok());
  ASSERT_TRUE(tracker.Submitted("b", 0, 20).ok());
  EXPECT_EQ(tracker.Resigned("a", "b").code(),
            absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(tracker.Failed("a", "refused"));
  EXPECT_EQ(tracker.Resigned("a", "c").code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(DeployTrackerTest, SummaryIsPerPhaseAndEmptyPhaseHasNoLatencies) {
  DeployTracker tracker;
  ASSERT_TRUE(tracker.Submitted("a", 0, 0).ok());
  ASSERT_TRUE(tracker.Submitted("b", 1, 0).ok());
  tracker.Acknowledged("b", 0.1);
  EXPECT_EQ(tracker.Summarize(0, 1).submitted, 1);
  EXPECT_EQ(tracker.Summarize(0, 1).acknowledged, 0);
  EXPECT_EQ(tracker.Summarize(1, 1).acknowledged, 1);
  EXPECT_EQ(tracker.Summarize(1, 1).not_finalized, 1);
  const PhaseStats none = tracker.Summarize(7, 0);
  EXPECT_EQ(none.submitted, 0);
  EXPECT_EQ(none.achieved_rate, std::nullopt);
  EXPECT_EQ(none.acknowledgement_p99, std::nullopt);
  EXPECT_EQ(none.inclusion_p50, std::nullopt);
  EXPECT_EQ(none.finalization_p99, std::nullopt);
}

TEST(DeployTrackerTest, InclusionAndFinalizationCountTheFirstTimeOnly) {
  DeployTracker tracker;
  ASSERT_TRUE(tracker.Submitted("a", 0, 0).ok());
  EXPECT_TRUE(tracker.Included("a", 1));
  EXPECT_FALSE(tracker.Included("a", 5));  // Another validator's block.
  EXPECT_TRUE(tracker.Finalized("a", 3));
  EXPECT_FALSE(tracker.Finalized("a", 9));
  const PhaseStats s = tracker.Summarize(0, 1);
  EXPECT_EQ(s.included, 1);
  EXPECT_EQ(s.finalized, 1);
  EXPECT_EQ(s.inclusion_p50, 1);
  EXPECT_EQ(s.finalization_p50, 3);
}

TEST(DeployTrackerTest, FinalizationWithoutInclusionMarksItIncluded) {
  DeployTracker tracker;
  ASSERT_TRUE(tracker.Submitted("a", 0, 1).ok());
  EXPECT_TRUE(tracker.Finalized("a", 4));
  EXPECT_FALSE(tracker.Included("a", 5));
  const PhaseStats s = tracker.Summarize(0, 1);
  EXPECT_EQ(s.included, 1);
  EXPECT_EQ(s.inclusion_p50, 3);
  EXPECT_EQ(tracker.Totals().included, 1);
}

TEST(DeployTrackerTest, ErroredInclusionIsCounted) {
  DeployTracker tracker;
  ASSERT_TRUE(tracker.Submitted("a", 0, 0).ok());
  EXPECT_TRUE(tracker.Included("a", 1, /*errored=*/true));
  EXPECT_EQ(tracker.Summarize(0, 1).errored, 1);
}

TEST(DeployTrackerTest, AcknowledgedAndFailedAreExclusive) {
  DeployTracker tracker;
  ASSERT_TRUE(tracker.Submitted("a", 0, 0).ok());
  ASSERT_TRUE(tracker.Submitted("b", 0, 0).ok());
  EXPECT_TRUE(tracker.Acknowledged("a", 1));
  EXPECT_FALSE(tracker.Failed("a", "late error"));
  EXPECT_FALSE(tracker.Acknowledged("a", 2));
  EXPECT_TRUE(tracker.Failed("b", "refused: low phlo price"));
  EXPECT_FALSE(tracker.Acknowledged("b", 2));
  const TrackerTotals t = tracker.Totals();
  EXPECT_EQ(t.acknowledged, 1);
  EXPECT_EQ(t.failed, 1);
  EXPECT_EQ(tracker.FailureReasons(),
            (std::map<std::string, int64_t>{{"refused: low phlo price", 1}}));
}

TEST(DeployTrackerTest, EventsOfUnknownDeploysAreIgnored) {
  DeployTracker tracker;
  EXPECT_FALSE(tracker.Acknowledged("x", 1));
  EXPECT_FALSE(tracker.Failed("x", "r"));
  EXPECT_FALSE(tracker.Included("x", 1));
  EXPECT_FALSE(tracker.Finalized("x", 1));
  EXPECT_EQ(tracker.Totals().included, 0);
  EXPECT_TRUE(tracker.FailureReasons().empty());
}

TEST(DeployTrackerTest, RefusesBeyondItsBoundDuplicatesAndNegativePhases) {
  DeployTracker tracker(2);
  EXPECT_TRUE(tracker.Submitted("a", 0, 0).ok());
  EXPECT_EQ(tracker.Submitted("a", 0, 0).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(tracker.Submitted("b", 0, 0).ok());
  EXPECT_EQ(tracker.Submitted("c", 0, 0).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(tracker.Submitted("d", -1, 0).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tracker.Totals().submitted, 2);
}

TEST(DeployTrackerTest, PendingIsAcknowledgedAndNotFinalized) {
  DeployTracker tracker;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(tracker.Submitted(Id(i), 0, 0).ok());
  tracker.Acknowledged(Id(0), 1);
  tracker.Acknowledged(Id(1), 1);
  EXPECT_EQ(tracker.Pending(), 2);
  tracker.Finalized(Id(0), 2);
  EXPECT_EQ(tracker.Pending(), 1);
  // Finalized before its reply was seen: never pending.
  tracker.Finalized(Id(2), 2);
  tracker.Acknowledged(Id(2), 3);
  EXPECT_EQ(tracker.Pending(), 1);
  EXPECT_EQ(tracker.Totals().pending, 1);
}

TEST(DeployTrackerTest, AwaitNoPendingReturnsWhenTheLastFinalizes) {
  DeployTracker tracker;
  const auto now = std::chrono::steady_clock::now();
  EXPECT_TRUE(tracker.AwaitNoPending(now));
  ASSERT_TRUE(tracker.Submitted("a", 0, 0).ok());
  tracker.Acknowledged("a", 0);
  EXPECT_FALSE(tracker.AwaitNoPending(now));
  std::thread finalizer([&tracker] { tracker.Finalized("a", 1); });
  EXPECT_TRUE(tracker.AwaitNoPending(std::chrono::steady_clock::now() +
                                     std::chrono::seconds(30)));
  finalizer.join();
}

TEST(DeployTrackerTest, FinalizationMedianCountsUnfinalizedAsLate) {
  DeployTracker tracker;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(tracker.Submitted(Id(i), 0, 0).ok());
    tracker.Acknowledged(Id(i), 0);
  }
  EXPECT_TRUE(tracker.FinalizationMedianExceeds(0, 5));
  tracker.Finalized(Id(0), 1);
  tracker.Finalized(Id(1), 6);  // Past the limit.
  EXPECT_TRUE(tracker.FinalizationMedianExceeds(0, 5));
  tracker.Finalized(Id(2), 5);  // 2 of 4 within: the p50 is within.
  EXPECT_FALSE(tracker.FinalizationMedianExceeds(0, 5));
  EXPECT_FALSE(tracker.FinalizationMedianExceeds(3, 5));  // Nothing acked.
}

TEST(DeployTrackerTest, FailureReasonsAreBoundedAndCut) {
  DeployTracker tracker;
  const int kDistinct = static_cast<int>(kMaxFailureReasons) + 4;
  for (int i = 0; i < kDistinct; ++i) {
    ASSERT_TRUE(tracker.Submitted(Id(i), 0, 0).ok());
    tracker.Failed(Id(i), absl::StrCat("reason ", i));
  }
  ASSERT_TRUE(tracker.Submitted("long", 0, 0).ok());
  tracker.Failed("long", std::string(1000, 'x'));
  const std::map<std::string, int64_t> reasons = tracker.FailureReasons();
  EXPECT_EQ(reasons.size(), kMaxFailureReasons + 1);
  EXPECT_EQ(reasons.at(std::string(kOtherFailureReasons)), 5);
  for (const auto& entry : reasons) {
    EXPECT_LE(entry.first.size(), kMaxFailureReasonBytes);
  }
}

TEST(DeployTrackerTest, SeriesCountsEventsBeforeEachSecond) {
  DeployTracker tracker;
  ASSERT_TRUE(tracker.Submitted("a", 0, 0.5).ok());
  tracker.Acknowledged("a", 1.2);
  tracker.Included("a", 2.5);
  tracker.Finalized("a", 3.1);
  ASSERT_TRUE(tracker.Submitted("b", 0, 1.5).ok());
  tracker.Acknowledged("b", 1.6);
  const std::vector<SeriesPoint> s = tracker.Series(4.5);
  ASSERT_EQ(s.size(), 6u);  // t = 0..5.
  auto row = [](const SeriesPoint& p) {
    return std::vector<int64_t>{p.t,        p.submitted, p.acknowledged,
                                p.included, p.finalized, p.pending};
  };
  EXPECT_EQ(row(s[0]), (std::vector<int64_t>{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(row(s[1]), (std::vector<int64_t>{1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(row(s[2]), (std::vector<int64_t>{2, 2, 2, 0, 0, 2}));
  EXPECT_EQ(row(s[3]), (std::vector<int64_t>{3, 2, 2, 1, 0, 2}));
  EXPECT_EQ(row(s[4]), (std::vector<int64_t>{4, 2, 2, 1, 1, 1}));
  EXPECT_EQ(row(s[5]), (std::vector<int64_t>{5, 2, 2, 1, 1, 1}));
}

TEST(DeployTrackerTest, PendingDeploysAreTheAcknowledgedNotFinalized) {
  DeployTracker tracker;
  ASSERT_TRUE(tracker.Submitted("final", 0, 1.0, 0).ok());
  tracker.Acknowledged("final", 1.1);
  tracker.Finalized("final", 2.0);
  ASSERT_TRUE(tracker.Submitted("failed", 0, 1.5, 1).ok());
  tracker.Failed("failed", "refused");
  ASSERT_TRUE(tracker.Submitted("late", 1, 3.0, 2).ok());
  tracker.Acknowledged("late", 3.2);
  tracker.Included("late", 4.0);
  ASSERT_TRUE(tracker.Submitted("early", 0, 0.5).ok());
  tracker.Acknowledged("early", 0.7);

  const std::vector<PendingDeploy> all = tracker.PendingDeploys(10);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, "early");  // By submission time.
  EXPECT_EQ(all[0].target, -1);
  EXPECT_EQ(all[0].acknowledged_at, 0.7);
  EXPECT_EQ(all[0].included_at, std::nullopt);
  EXPECT_EQ(all[1].id, "late");
  EXPECT_EQ(all[1].phase, 1);
  EXPECT_EQ(all[1].target, 2);
  EXPECT_EQ(all[1].submitted_at, 3.0);
  EXPECT_EQ(all[1].included_at, 4.0);
  ASSERT_EQ(tracker.PendingDeploys(1).size(), 1u);
  EXPECT_EQ(tracker.PendingDeploys(1)[0].id, "early");
}

TEST(DeployTrackerTest, SeriesLatenciesAreBySecondOfSubmission) {
  DeployTracker tracker;
  // Second [0, 1): three deploys, included after 1, 2 and 3 s; two of them
  // finalized after 4 and 6 s.
  for (int i = 0; i < 3; ++i) {
    const std::string id = Id(i);
    ASSERT_TRUE(tracker.Submitted(id, 0, 0.25 * i).ok());
    tracker.Acknowledged(id, 0.25 * i);
    tracker.Included(id, 0.25 * i + 1 + i);
  }
  tracker.Finalized(Id(0), 4);
  tracker.Finalized(Id(2), 0.5 + 6);
  // Second [1, 2): one deploy, never included.
  ASSERT_TRUE(tracker.Submitted("late", 0, 1.5).ok());
  tracker.Acknowledged("late", 1.6);
  const std::vector<SeriesPoint> s = tracker.Series(3);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].inclusion_p50, std::nullopt);
  EXPECT_EQ(s[1].inclusion_p50, 2);
  EXPECT_EQ(s[1].inclusion_p95, 3);
  EXPECT_EQ(s[1].finalization_p50, 4);
  EXPECT_EQ(s[1].finalization_p95, 6);
  EXPECT_EQ(s[2].inclusion_p50, std::nullopt);
  EXPECT_EQ(s[2].finalization_p95, std::nullopt);
}

// Finalized with effect or FAILED by the kept copy's outcome; rejections
// and proposals again counted per deploy; the effective rate counts what
// did something.
TEST(DeployTrackerTest, CountsEffectFailuresRejectionsAndProposalsAgain) {
  DeployTracker tracker;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(tracker.Submitted(Id(i), 0, 0).ok());
    ASSERT_TRUE(tracker.Acknowledged(Id(i), 0.1));
  }
  EXPECT_TRUE(tracker.Rejected(Id(0)));
  EXPECT_TRUE(tracker.Rejected(Id(0)));  // a second merge
  EXPECT_TRUE(tracker.Reproposed(Id(0)));
  EXPECT_FALSE(tracker.Reproposed(Id(0)));  // counted once
  EXPECT_FALSE(tracker.Rejected("unknown"));
  EXPECT_TRUE(tracker.Finalized(Id(0), 3));
  EXPECT_TRUE(tracker.Finalized(Id(1), 2, /*errored=*/true));
  EXPECT_TRUE(tracker.Finalized(Id(2), 2));
  const PhaseStats s = tracker.Summarize(0, 2);
  EXPECT_EQ(s.finalized, 3);
  EXPECT_EQ(s.finalized_with_effect, 2);
  EXPECT_EQ(s.finalized_failed, 1);
  EXPECT_EQ(s.rejected, 1);
  EXPECT_EQ(s.reproposed, 1);
  EXPECT_EQ(s.not_finalized, 1);
  EXPECT_EQ(s.effective_rate, 1.0);
  EXPECT_EQ(s.achieved_rate, 2.0);
}

}  // namespace
}  // namespace rnode::loadgen

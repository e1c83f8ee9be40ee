// Tracks each sent deploy from submission through the node's reply to
// inclusion in a block and finalization, and summarizes latencies by phase.
#ifndef RNODE_INTEGRATION_LOADGEN_TRACKER_H_
#define RNODE_INTEGRATION_LOADGEN_TRACKER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "util/mutex.h"

namespace rnode::loadgen {

// Most deploys one tracker holds. A record costs about 250 bytes with its
// hex id, so the bound is about 500 MB: past any planned run (the public
// load test sends about 2,000 deploys, a ramp to 3,200/s about 190,000) and
// still short of exhausting a test machine's memory.
inline constexpr size_t kMaxTrackedDeploys = 2'000'000;

// Distinct failure reasons kept; the rest are counted under
// kOtherFailureReasons. A node's refusals come in a handful of kinds, and
// the reason text of each is printed in the report.
inline constexpr size_t kMaxFailureReasons = 16;
inline constexpr std::string_view kOtherFailureReasons = "(other reasons)";
// Longest failure reason kept; longer ones are cut. A node's messages are a
// line; 200 bytes keeps the report readable.
inline constexpr size_t kMaxFailureReasonBytes = 200;

// Most points of a time series: one a second, so 11.5 days of run.
inline constexpr size_t kMaxSeriesPoints = 1'000'000;

// The rank of the nearest-rank percentile `p` (in (0, 100]) of `n` sorted
// samples, 1-based: ceil(p / 100 * n), at least 1. 0 when n is 0.
size_t NearestRank(double p, size_t n);

// The nearest-rank percentile `p` of `samples` (sorted ascending): the
// sample at NearestRank(p, n). nullopt when empty. For 1..100 the p50 is
// 50, the p95 95 and the p99 99; it is always one of the samples.
std::optional<double> Percentile(const std::vector<double>& sorted_samples,
                                 double p);

// Counts and latencies of the deploys of one phase. Latencies are seconds
// from submission (the deploy's scheduled send time) and cover the deploys
// that got there; a percentile of no samples is nullopt.
struct PhaseStats {
  int64_t submitted = 0;     // Handed to the node (Submitted).
  int64_t acknowledged = 0;  // The node accepted it.
  int64_t failed = 0;        // The node refused it or the call failed.
  int64_t included = 0;      // Seen in a block.
  int64_t finalized = 0;     // Seen in a finalized block.
  int64_t errored = 0;       // Included, but its execution errored.
  // Finalized, and its kept copy ran without an error (its effect is in
  // the finalized state) / with one (FAILED: only its charge is).
  int64_t finalized_with_effect = 0;
  int64_t finalized_failed = 0;
  // A merge rejected a copy at least once / a block held it again.
  int64_t rejected = 0;
  int64_t reproposed = 0;
  // Acknowledged and not finalized (yet).
  int64_t not_finalized = 0;
  // acknowledged / the phase's wall time; nullopt for a wall time <= 0.
  std::optional<double> achieved_rate;
  // finalized_with_effect / the phase's wall time (the deploys that did
  // something, per second); nullopt for a wall time <= 0.
  std::optional<double> effective_rate;
  // Submission to the node's acknowledgement (the admission path).
  std::optional<double> acknowledgement_p50, acknowledgement_p99;
  std::optional<double> inclusion_p50, inclusion_p95, inclusion_p99;
  std::optional<double> finalization_p50, finalization_p95, finalization_p99;
};

// Counts over all phases.
struct TrackerTotals {
  int64_t submitted = 0;
  int64_t acknowledged = 0;
  int64_t failed = 0;
  int64_t included = 0;
  int64_t finalized = 0;
  int64_t pending = 0;  // Acknowledged and not finalized.
  // Of `finalized`, those a node's status answer settled (FinalizedUnseen).
  int64_t finalized_unseen = 0;
};

// Cumulative counts at the end of second `t` (events with time < t), and
// the latencies of the deploys submitted in the second before it
// ([t - 1, t)): a latency-over-time plot by when the deploy was sent.
struct SeriesPoint {
  int64_t t = 0;
  int64_t submitted = 0;
  int64_t acknowledged = 0;
  int64_t included = 0;
  int64_t finalized = 0;
  int64_t pending = 0;  // Acknowledged by then and not finalized by then.
  // Nearest-rank percentiles over the second's deploys that got there;
  // nullopt when none did (yet).
  std::optional<double> inclusion_p50, inclusion_p95;
  std::optional<double> finalization_p50, finalization_p95;
};

// An acknowledged deploy not finalized (yet), for the report: which one,
// where it went and how far it got.
struct PendingDeploy {
  std::string id;
  int phase = 0;
  int target = -1;  // Index of the node it was sent to; -1 when not given.
  double submitted_at = 0;
  double acknowledged_at = 0;
  std::optional<double> included_at;
};

// Deploys by id (the lower-case hex of the deploy signature). Times are
// seconds since the run's start (RunClock), given by the caller.
//
// A deploy is submitted once, then either acknowledged or failed (the first
// of the two wins); inclusion and finalization are recorded the first time
// only, whatever the reply, since a node may put a deploy in a block before
// its reply arrives. Events for ids never submitted are ignored (other
// clients' deploys).
//
// Thread-safe: every method may be called from any thread.
class DeployTracker {
 public:
  explicit DeployTracker(size_t max_deploys = kMaxTrackedDeploys);
  DeployTracker(const DeployTracker&) = delete;
  DeployTracker& operator=(const DeployTracker&) = delete;

  // Starts tracking `id` for phase `phase_index` (>= 0), submitted at `t`
  // to node `target` (an index the caller chooses, for PendingDeploys).
  // AlreadyExists for an id already tracked, ResourceExhausted beyond
  // max_deploys, InvalidArgument for a negative phase.
  absl::Status Submitted(std::string id, int phase_index, double t,
                         int target = -1);

  // Each returns true if it changed the record: false for an unknown id or
  // a repeated event.
  bool Acknowledged(std::string_view id, double t);
  // `reason` is kept (cut to kMaxFailureReasonBytes) for FailureReasons.
  bool Failed(std::string_view id, std::string_view reason);
  // The deploy tracked as `old_id` was refused before it was acknowledged
  // and is sent again, re-signed, as `new_id`: the record moves to the new
  // id and keeps its submission time, so the delay stays in its latencies.
  // NotFound for an unknown old id, FailedPrecondition for one already
  // acknowledged or failed, AlreadyExists for a new id already tracked.
  absl::Status Resigned(std::string_view old_id, std::string new_id);
  // `errored`: the block says the deploy's execution errored.
  bool Included(std::string_view id, double t, bool errored = false);
  // The copy the finalized state holds (the caller skips a finalized block's
  // copies a merge rejected); `errored`: that copy's execution errored.
  // Also records the inclusion at `t` if none was seen.
  bool Finalized(std::string_view id, double t, bool errored = false);
  // A node says the acknowledged deploy `id`, whose finalization no event
  // showed (the event stream closed or fell behind), is final: FAILED when
  // `errored`. It counts as finalized without a latency sample. False for
  // an unknown id, one not acknowledged or already finalized.
  bool FinalizedUnseen(std::string_view id, bool errored);
  // A merge rejected a copy of `id` / a block holds it again after one did.
  bool Rejected(std::string_view id);
  bool Reproposed(std::string_view id);

  // The phase's counts and latencies; `phase_wall_seconds` gives the
  // achieved rate.
  PhaseStats Summarize(int phase_index, double phase_wall_seconds) const;

  // Whether the phase's median finalization latency exceeds
  // `limit_seconds`, counting a deploy not finalized as infinitely late:
  // true while fewer than NearestRank(50, acknowledged) of its acknowledged
  // deploys finalized within the limit. Once false it stays false; once
  // `limit_seconds` have passed since the phase's last submission it is
  // final. False for a phase with nothing acknowledged.
  bool FinalizationMedianExceeds(int phase_index, double limit_seconds) const;

  // Acknowledged and not finalized, over all phases.
  int64_t Pending() const;
  // The first `max` of them by submission time.
  std::vector<PendingDeploy> PendingDeploys(size_t max) const;
  TrackerTotals Totals() const;

  // Waits until Pending() is 0 or `deadline` passes; true if none pending.
  bool AwaitNoPending(std::chrono::steady_clock::time_point deadline);

  // Failure reasons and how many deploys failed with each, at most
  // kMaxFailureReasons + 1 entries.
  std::map<std::string, int64_t> FailureReasons() const;

  // One point per second of [0, end_seconds], rounded up, at most
  // kMaxSeriesPoints (the run's tail is dropped beyond).
  std::vector<SeriesPoint> Series(double end_seconds) const;

 private:
  // Times are kNever until the event happens.
  static constexpr double kNever = -1;
  struct Record {
    int phase = 0;
    int target = -1;
    bool acknowledged = false;
    bool failed = false;
    bool errored = false;
    bool reproposed = false;
    bool finalized_unseen = false;  // No finalized_at: see FinalizedUnseen.
    uint32_t rejections = 0;
    double submitted_at = 0;
    double acknowledged_at = kNever;
    double included_at = kNever;
    double finalized_at = kNever;
  };

  const size_t max_deploys_;
  mutable Mutex mu_;
  CondVar no_pending_;  // Signalled when pending_ drops to 0.
  absl::flat_hash_map<std::string, Record> records_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> failure_reasons_ ABSL_GUARDED_BY(mu_);
  TrackerTotals totals_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rnode::loadgen

#endif  // RNODE_INTEGRATION_LOADGEN_TRACKER_H_

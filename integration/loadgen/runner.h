// The load run itself: open-loop pacing of each phase into the sender pool,
// per-phase measurements, the ramp's stop rule, the drain, the progress
// line and the run's verdict.
#ifndef RNODE_INTEGRATION_LOADGEN_RUNNER_H_
#define RNODE_INTEGRATION_LOADGEN_RUNNER_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "integration/loadgen/events_client.h"
#include "integration/loadgen/metrics_scrape.h"
#include "integration/loadgen/phases.h"
#include "integration/loadgen/report.h"
#include "integration/loadgen/run_clock.h"
#include "integration/loadgen/sender.h"
#include "integration/loadgen/tracker.h"
#include "util/mutex.h"

namespace rnode::loadgen {

// A ramp stops after the step whose median finalization (a deploy not
// finalized counting as infinitely late) exceeds this: the public test's
// bound for a usable shard.
inline constexpr double kRampFinalizationLimitSeconds = 5;

// A deploy handed to a sender more than this after its due time counts as
// late. 25 ms is a quarter of the spacing at 10/s and well above the
// pacing thread's wake-up jitter on an idle machine.
inline constexpr double kLateToleranceSeconds = 0.025;

// How often validAfterBlockNumber is refreshed from the event stream.
// Blocks come about ten a second and a deploy lives 50 blocks past its
// validAfterBlockNumber (casper::kDeployLifespanBlocks), so a number even
// a few seconds stale expires deploys before they can be included.
inline constexpr std::chrono::milliseconds kBlockNumberRefresh{250};

// validAfterBlockNumber for new deploys: the latest block seen minus one,
// not below 0.
int64_t ValidAfter(int64_t latest_block_number);

// Stderr output: a progress line rewritten in place (`\r`) on a terminal,
// one line per update otherwise (a log), and notes that keep their own
// lines. Thread-safe.
class Console {
 public:
  Console();
  void Progress(const std::string& line);
  void Note(const std::string& line);
  // Ends a progress line, if one is shown.
  void EndProgress();

 private:
  const bool interactive_;  // Stderr is a terminal.
  Mutex mu_;
  bool progress_shown_ ABSL_GUARDED_BY(mu_) = false;
};

// On a thread of its own until Stop: every kBlockNumberRefresh stores
// ValidAfter(latest block) into *valid_after, and once a second prints the
// progress line (phase, sent, acked, failed, included, finalized, pending,
// late). The pointees must outlive it. Thread-safe.
class Monitor {
 public:
  Monitor(Console* console, const DeployTracker* tracker,
          const EventsClient* events, std::atomic<int64_t>* valid_after);
  // Stops.
  ~Monitor();
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

  void Start();
  // Joins the thread within one refresh. Idempotent.
  void Stop();
  void SetPhase(std::string label);
  void AddLate(int64_t n);

 private:
  void Loop();

  Console* const console_;
  const DeployTracker* const tracker_;
  const EventsClient* const events_;
  std::atomic<int64_t>* const valid_after_;
  std::atomic<int64_t> late_{0};
  std::thread thread_;
  Mutex mu_;
  CondVar wake_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::string phase_ ABSL_GUARDED_BY(mu_) = "starting";
};

// A node's HTTP API: the host (an IPv4 address) and port.
struct HttpEndpoint {
  std::string host;
  int port = 0;
  bool operator==(const HttpEndpoint&) const = default;
  std::string Name() const;  // "host:port"
};

// "HOST:PORT", or "PORT" alone on `default_host`; InvalidArgument for
// anything else (no port, a port outside [1, 65535], an empty host).
absl::StatusOr<HttpEndpoint> ParseHttpEndpoint(const std::string& text,
                                               const std::string& default_host);

// The nodes whose /metrics are scraped around each phase; `lfb_node`
// indexes the followed node, whose LFB number gives the LFB rate.
struct ScrapeTargets {
  std::vector<HttpEndpoint> nodes;
  std::vector<std::string> names;  // each node's Name(), for the report
  size_t lfb_node = 0;
};

// `metrics`, plus `followed` if it is not among them.
ScrapeTargets PlanScrapes(const std::vector<HttpEndpoint>& metrics,
                          const HttpEndpoint& followed);

// Scrapes every target in order; a failed scrape is nullopt and a warning
// on the console.
std::vector<std::optional<MetricSamples>> ScrapeAll(const ScrapeTargets& s,
                                                    Console& console);

// What the phase loop works with; all references outlive the run.
struct RunContext {
  const RunClock& clock;
  DeployTracker& tracker;
  DeploySender& sender;
  EventsClient& events;
  Monitor& monitor;
  Console& console;
  const std::atomic<int64_t>& valid_after;
  const ScrapeTargets& scrapes;
  // Set (e.g. by a signal handler) to stop the run early.
  const std::atomic<bool>& interrupted;
  int64_t next_sequence = 0;  // Of the next deploy, over the run.
};

// Runs `phases` in order, each: scrape, send its deploys on schedule
// (open loop: deploy i of a phase is dispatched at phase start + its due
// time, whatever the nodes do), wait for its calls to end, scrape. With
// `ramp`, stops after a step with failed deploys or whose median
// finalization exceeds kRampFinalizationLimitSeconds (waiting up to that
// limit after the step for the verdict). Stops early when interrupted.
// Returns the measurements of the phases run, phase i at index i.
std::vector<PhaseMeasurement> RunPhases(const std::vector<Phase>& phases,
                                        bool ramp, RunContext& ctx);

// Waits up to `seconds` for every acknowledged deploy to finalize; returns
// early when interrupted or when the event stream has ended.
void Drain(double seconds, RunContext& ctx);

// For the acknowledged deploys no event showed final (the observer closes
// a stream that falls behind, as at overload): asks the node each was sent
// to (DeploySender::QueryState), settling those it calls FINALIZED or
// FAILED (DeployTracker::FinalizedUnseen); again once a second while some
// are pending, until `seconds` pass (one pass at least). Returns how many
// of those still pending the nodes called EXPIRED at the last pass:
// acknowledged and never to be included.
int64_t SettleByQuery(double seconds, RunContext& ctx);

// What the verdict is made of.
struct RunOutcome {
  TrackerTotals totals;
  // Failed deploys that do not fail the run, reported all the same: a
  // ramp's last step (the ramp stopped there because of them: the ceiling
  // it looks for), or every failure with --allow-failures (a fault
  // campaign refuses deploys on purpose). Acknowledged deploys must still
  // finalize.
  int64_t tolerated_failures = 0;
  // Some of the acknowledged deploys not finalized, for the verdict.
  std::vector<PendingDeploy> pending_sample;
  std::map<std::string, int64_t> failure_reasons;
  int64_t local_failures = 0;
  absl::Status first_local_failure;
  // Deploys re-signed after a stale-window refusal (DeploySender::resigned).
  int64_t resigned = 0;
  // Acknowledged deploys a node called EXPIRED (SettleByQuery).
  int64_t expired = 0;
  absl::Status event_stream;  // OK if it was open until the end.
  bool interrupted = false;
  double drain_seconds = 0;
};

struct Verdict {
  bool passed = false;
  // "passed: ..." or "failed:" and one "- reason" line per problem.
  std::string text;
};

// Passed when something was sent, every acknowledged deploy finalized,
// none failed (other than tolerated_failures) or could not be
// sent, the event stream stayed open and the run was not interrupted.
Verdict Judge(const RunOutcome& outcome);

}  // namespace rnode::loadgen

#endif  // RNODE_INTEGRATION_LOADGEN_RUNNER_H_

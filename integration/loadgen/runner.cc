// The load run: pacing, phases, ramp rule, drain, progress and verdict.
#include "integration/loadgen/runner.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace rnode::loadgen {
namespace {

// Refreshes per progress line: one line a second.
constexpr int kRefreshesPerProgressLine = 4;

// How often the ramp's verdict on a step is re-checked while finalizations
// come in.
constexpr std::chrono::milliseconds kRampPollInterval{100};

// Longest single sleep of the pacing thread, so an interrupt is seen
// promptly even at very low rates.
constexpr std::chrono::milliseconds kMaxSleepSlice{100};

// Sleeps until `when`, in slices so that an interrupt cuts it short.
void SleepUntil(RunClock::Clock::time_point when,
                const std::atomic<bool>& interrupted) {
  while (!interrupted.load()) {
    const auto now = RunClock::Clock::now();
    if (now >= when) return;
    std::this_thread::sleep_until(std::min(when, now + kMaxSleepSlice));
  }
}

// Sends the phase's deploys on schedule from `start`; returns how many were
// late. Stops early when interrupted or the sender stops.
int64_t RunSchedule(const Phase& phase, int phase_index, double start,
                    RunContext& ctx) {
  int64_t late = 0;
  for (double offset : DueTimes(phase)) {
    const double due = start + offset;
    SleepUntil(ctx.clock.ToTimePoint(due), ctx.interrupted);
    if (ctx.interrupted.load()) break;
    DeployJob job;
    job.sequence = ctx.next_sequence++;
    job.phase_index = phase_index;
    job.due_seconds = due;
    job.valid_after_block_number = ctx.valid_after.load();
    const DispatchResult result = ctx.sender.Dispatch(job);
    if (result == DispatchResult::kStopped) break;
    if (result == DispatchResult::kWaited ||
        ctx.clock.Now() - due > kLateToleranceSeconds) {
      ++late;
      ctx.monitor.AddLate(1);
    }
  }
  return late;
}

PhaseMeasurement RunPhase(const Phase& phase, int phase_index,
                          size_t phase_count, RunContext& ctx) {
  PhaseMeasurement m;
  m.phase = phase;
  m.node_names = ctx.scrapes.names;
  m.lfb_node = ctx.scrapes.lfb_node;
  m.before = ScrapeAll(ctx.scrapes, ctx.console);
  m.events_before = ctx.events.Counts();
  ctx.monitor.SetPhase(absl::StrCat("phase ", phase_index + 1, "/", phase_count,
                                    " ", phase.name));
  const double start = ctx.clock.Now();
  m.late = RunSchedule(phase, phase_index, start, ctx);
  ctx.sender.WaitIdle();
  m.wall_seconds = ctx.clock.Now() - start;
  m.events_after = ctx.events.Counts();
  m.after = ScrapeAll(ctx.scrapes, ctx.console);
  return m;
}

// Whether a ramp goes on after step `phase_index`, whose last deploy was
// sent by `step_end`; notes why not.
bool RampContinues(int phase_index, double step_end, RunContext& ctx) {
  const PhaseStats stats = ctx.tracker.Summarize(phase_index, 0);
  if (stats.failed > 0) {
    ctx.console.Note(absl::StrCat("ramp: stopping, the step had ", stats.failed,
                                  " failed deploys"));
    return false;
  }
  // The answer is final once every deploy of the step has had the limit's
  // time to finalize.
  while (!ctx.interrupted.load()) {
    if (!ctx.tracker.FinalizationMedianExceeds(phase_index,
                                               kRampFinalizationLimitSeconds)) {
      return true;
    }
    if (ctx.clock.Now() >= step_end + kRampFinalizationLimitSeconds) {
      ctx.console.Note(absl::StrCat(
          "ramp: stopping, the step's median finalization exceeds ",
          kRampFinalizationLimitSeconds, " s"));
      return false;
    }
    std::this_thread::sleep_for(kRampPollInterval);
  }
  return false;
}

}  // namespace

int64_t ValidAfter(int64_t latest_block_number) {
  return std::max<int64_t>(latest_block_number - 1, 0);
}

Console::Console() : interactive_(::isatty(STDERR_FILENO) == 1) {}

void Console::Progress(const std::string& line) {
  MutexLock lock(&mu_);
  if (!interactive_) {
    std::fprintf(stderr, "%s\n", line.c_str());
    return;
  }
  // \x1b[K clears what a longer previous line left.
  std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
  std::fflush(stderr);
  progress_shown_ = true;
}

void Console::Note(const std::string& line) {
  MutexLock lock(&mu_);
  std::fprintf(stderr, "%s%s\n", progress_shown_ ? "\r\x1b[K" : "",
               line.c_str());
  std::fflush(stderr);
  progress_shown_ = false;
}

void Console::EndProgress() {
  MutexLock lock(&mu_);
  if (progress_shown_) std::fprintf(stderr, "\n");
  progress_shown_ = false;
}

Monitor::Monitor(Console* console, const DeployTracker* tracker,
                 const EventsClient* events, std::atomic<int64_t>* valid_after)
    : console_(console),
      tracker_(tracker),
      events_(events),
      valid_after_(valid_after) {}

Monitor::~Monitor() { Stop(); }

void Monitor::Start() { thread_ = std::thread(&Monitor::Loop, this); }

void Monitor::Stop() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
    wake_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
}

void Monitor::SetPhase(std::string label) {
  MutexLock lock(&mu_);
  phase_ = std::move(label);
}

void Monitor::AddLate(int64_t n) { late_.fetch_add(n); }

void Monitor::Loop() {
  for (int tick = 0;; ++tick) {
    const EventCounts counts = events_->Counts();
    if (counts.latest_block_number >= 0) {
      valid_after_->store(ValidAfter(counts.latest_block_number));
    }
    std::string phase;
    {
      MutexLock lock(&mu_);
      if (stop_) return;
      phase = phase_;
    }
    if (tick % kRefreshesPerProgressLine == 0) {
      const TrackerTotals t = tracker_->Totals();
      console_->Progress(absl::StrCat(
          phase, " | sent ", t.submitted, " acked ", t.acknowledged, " failed ",
          t.failed, " | included ", t.included, " finalized ", t.finalized,
          " pending ", t.pending, " | late ", late_.load(), " | block ",
          counts.latest_block_number));
    }
    MutexLock lock(&mu_);
    const auto until = std::chrono::steady_clock::now() + kBlockNumberRefresh;
    while (!stop_) {
      if (wake_.WaitUntil(&mu_, until)) break;
    }
    if (stop_) return;
  }
}

std::string HttpEndpoint::Name() const { return absl::StrCat(host, ":", port); }

absl::StatusOr<HttpEndpoint> ParseHttpEndpoint(
    const std::string& text, const std::string& default_host) {
  const size_t colon = text.rfind(':');
  HttpEndpoint e;
  e.host = colon == std::string::npos ? default_host : text.substr(0, colon);
  const std::string port =
      colon == std::string::npos ? text : text.substr(colon + 1);
  if (e.host.empty() || !absl::SimpleAtoi(port, &e.port) || e.port < 1 ||
      e.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not HOST:PORT or PORT"));
  }
  return e;
}

ScrapeTargets PlanScrapes(const std::vector<HttpEndpoint>& metrics,
                          const HttpEndpoint& followed) {
  ScrapeTargets s;
  s.nodes = metrics;
  auto it = std::find(s.nodes.begin(), s.nodes.end(), followed);
  if (it == s.nodes.end()) {
    s.nodes.push_back(followed);
    it = s.nodes.end() - 1;
  }
  s.lfb_node = static_cast<size_t>(it - s.nodes.begin());
  for (const HttpEndpoint& e : s.nodes) s.names.push_back(e.Name());
  return s;
}

std::vector<std::optional<MetricSamples>> ScrapeAll(const ScrapeTargets& s,
                                                    Console& console) {
  std::vector<std::optional<MetricSamples>> out;
  for (const HttpEndpoint& e : s.nodes) {
    absl::StatusOr<MetricSamples> samples =
        ScrapeMetrics(e.host, static_cast<uint16_t>(e.port));
    if (samples.ok()) {
      out.push_back(*std::move(samples));
    } else {
      console.Note(
          absl::StrCat("warning: ", std::string(samples.status().message())));
      out.push_back(std::nullopt);
    }
  }
  return out;
}

std::vector<PhaseMeasurement> RunPhases(const std::vector<Phase>& phases,
                                        bool ramp, RunContext& ctx) {
  std::vector<PhaseMeasurement> measured;
  for (size_t i = 0; i < phases.size() && !ctx.interrupted.load(); ++i) {
    const int index = static_cast<int>(i);
    measured.push_back(RunPhase(phases[i], index, phases.size(), ctx));
    if (ramp && i + 1 < phases.size() &&
        !RampContinues(index, ctx.clock.Now(), ctx)) {
      break;
    }
  }
  return measured;
}

void Drain(double seconds, RunContext& ctx) {
  ctx.monitor.SetPhase("drain");
  const auto deadline = ctx.clock.ToTimePoint(ctx.clock.Now() + seconds);
  while (!ctx.interrupted.load() && ctx.events.status().ok()) {
    const auto slice =
        std::min(deadline, RunClock::Clock::now() + kBlockNumberRefresh);
    if (ctx.tracker.AwaitNoPending(slice)) return;
    if (RunClock::Clock::now() >= deadline) return;
  }
}

int64_t SettleByQuery(double seconds, RunContext& ctx) {
  const double deadline = ctx.clock.Now() + seconds;
  int64_t expired = 0;
  while (!ctx.interrupted.load()) {
    const std::vector<PendingDeploy> pending =
        ctx.tracker.PendingDeploys(kMaxTrackedDeploys);
    if (pending.empty()) return 0;
    expired = 0;
    for (const PendingDeploy& p : pending) {
      const absl::StatusOr<NodeDeployState> s =
          ctx.sender.QueryState(p.id, p.target);
      if (!s.ok()) continue;
      if (*s == NodeDeployState::kFinalized || *s == NodeDeployState::kFailed) {
        ctx.tracker.FinalizedUnseen(p.id, *s == NodeDeployState::kFailed);
      } else if (*s == NodeDeployState::kExpired) {
        ++expired;
      }
    }
    if (ctx.clock.Now() >= deadline) break;
    SleepUntil(RunClock::Clock::now() + std::chrono::seconds(1),
               ctx.interrupted);
  }
  return expired;
}

Verdict Judge(const RunOutcome& o) {
  const TrackerTotals& t = o.totals;
  std::vector<std::string> problems;
  if (o.interrupted) problems.push_back("interrupted");
  if (t.submitted == 0 && o.local_failures == 0) {
    problems.push_back("no deploy was sent");
  }
  std::string reasons;
  for (const auto& entry : o.failure_reasons) {
    absl::StrAppend(&reasons, "\n    ", entry.second, " x ", entry.first);
  }
  if (t.failed > o.tolerated_failures) {
    problems.push_back(absl::StrCat(t.failed, " deploys failed:", reasons));
  }
  if (o.local_failures > 0) {
    problems.push_back(
        absl::StrCat(o.local_failures, " deploys could not be sent: ",
                     std::string(o.first_local_failure.message())));
  }
  if (t.pending > 0) {
    std::string which;
    for (const PendingDeploy& p : o.pending_sample) {
      // The whole id: what /api/deploy/{id} on any node looks it up by.
      absl::StrAppend(&which, "\n    ", p.id, " to node ", p.target,
                      ", sent at ", absl::SixDigits(p.submitted_at),
                      " s, acknowledged at ",
                      absl::SixDigits(p.acknowledged_at), " s, ",
                      p.included_at.has_value()
                          ? absl::StrCat("included at ",
                                         absl::SixDigits(*p.included_at), " s")
                          : std::string("in no block"));
    }
    problems.push_back(absl::StrCat(
        t.pending, " acknowledged deploys not finalized within the drain of ",
        o.drain_seconds, " s",
        o.expired > 0 ? absl::StrCat(" (", o.expired, " EXPIRED)") : "",
        which));
  }
  if (!o.event_stream.ok()) {
    problems.push_back(std::string(o.event_stream.message()));
  }
  Verdict v;
  v.passed = problems.empty();
  if (v.passed && t.failed > 0) {
    v.text = absl::StrCat("passed: all ", t.acknowledged,
                          " acknowledged deploys finalized; ", t.failed,
                          " deploys failed, tolerated:", reasons);
  } else if (v.passed) {
    v.text = absl::StrCat("passed: all ", t.acknowledged,
                          " acknowledged deploys finalized, none failed");
  } else {
    v.text = "failed:";
    for (const std::string& p : problems) absl::StrAppend(&v.text, "\n- ", p);
  }
  return v;
}

}  // namespace rnode::loadgen

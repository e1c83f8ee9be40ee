#include "node/core/catch_up.h"

#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "util/logging.h"

namespace rnode::node {
namespace {

using Clock = std::chrono::steady_clock;

// A validator is behind its peers (and refuses deploys, whose validity
// window it cannot judge) while this many blocks wait for their parents
// or for the consensus thread, or while a block asked for is missing this
// long. A shard at tens of blocks a second has a few of each in passing
// (measured: 4 refused 1.4 % of a 50 deploys/s stream), so only a backlog
// counts.
constexpr size_t kBehindBuffered = 16;
constexpr size_t kBehindQueued = kMaxBlocksWaiting / 2;
constexpr auto kBehindWanted = std::chrono::milliseconds(2000);

// How often the pause watch wakes, and how long after a pause a validator
// still counts as catching up (its peers' tips arrive in milliseconds on a
// live network; blocks it then asks for keep it catching up by the
// queues).
constexpr auto kPauseWatchInterval = std::chrono::milliseconds(100);
constexpr auto kResumeGrace = std::chrono::seconds(2);
// How often the pause watch logs the time the node spent behind (nothing
// when it was not): one line, so that a validator that stays behind says
// why without flooding its log.
constexpr int64_t kBehindReportMs = 10'000;

constexpr int64_t kPauseNoticedMs =
    std::chrono::duration_cast<std::chrono::milliseconds>(kPauseNoticed)
        .count();
constexpr int64_t kResumeGraceMs =
    std::chrono::duration_cast<std::chrono::milliseconds>(kResumeGrace).count();
constexpr int64_t kNoResume = std::numeric_limits<int64_t>::min();

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             Clock::now().time_since_epoch())
      .count();
}

}  // namespace

bool HeldFor::Update(bool holds, Clock::time_point now) {
  if (!holds) {
    since_.reset();
    return false;
  }
  if (!since_.has_value()) since_ = now;
  if (fired_ || now - *since_ < after_) return false;
  fired_ = true;
  return true;
}

const char* BehindName(Behind b) {
  switch (b) {
    case Behind::kNo:
      return "none";
    case Behind::kPaused:
      return "paused";
    case Behind::kResuming:
      return "resuming";
    case Behind::kStarting:
      return "starting";
    case Behind::kFarBehind:
      return "far_behind";
    case Behind::kParents:
      return "parents";
    case Behind::kMissing:
      return "missing";
    case Behind::kQueue:
      return "queue";
    case Behind::kSyncing:
      return "syncing";
    case Behind::kBeyondHistory:
      return "beyond_history";
  }
  return "?";
}

CatchUpMonitor::CatchUpMonitor(const CasperNetwork* network,
                               const ConsensusScheduler* scheduler,
                               const ChainSync* sync)
    : network_(network),
      scheduler_(scheduler),
      sync_(sync),
      resumed_ms_(kNoResume) {}

CatchUpMonitor::~CatchUpMonitor() { Stop(); }

void CatchUpMonitor::Start(metrics::Family<metrics::Counter>* behind_seconds) {
  behind_seconds_ = behind_seconds;
  watch_tick_ms_.store(SteadyMs());
  thread_ = std::thread([this] { WatchLoop(); });
}

void CatchUpMonitor::SetBeyondHistoryListener(std::chrono::milliseconds after,
                                              std::function<void()> fn) {
  beyond_history_.emplace(after);
  on_beyond_history_ = std::move(fn);
}

void CatchUpMonitor::Stop() {
  stop_.Stop();
  if (thread_.joinable()) thread_.join();
}

Behind CatchUpMonitor::Reason() const {
  if (network_ == nullptr) return Behind::kNo;
  if (syncing_.load()) return Behind::kSyncing;
  const int64_t now = SteadyMs();
  const int64_t resumed = resumed_ms_.load();
  if (now - watch_tick_ms_.load() > kPauseNoticedMs) return Behind::kPaused;
  if (resumed != kNoResume && now - resumed < kResumeGraceMs) {
    return Behind::kResuming;
  }
  if (sync_ != nullptr) {
    switch (sync_->Progress().state) {
      case SyncState::kStarting:
        return Behind::kStarting;
      case SyncState::kBehind:
        return Behind::kFarBehind;
      case SyncState::kBeyondHistory:
        return Behind::kBeyondHistory;
      case SyncState::kCaughtUp:
        break;
    }
  }
  if (engine_buffered_.load(std::memory_order_relaxed) >= kBehindBuffered) {
    return Behind::kParents;
  }
  if (network_->oldest_wanted_age() >= kBehindWanted) return Behind::kMissing;
  return scheduler_->queued_blocks() >= kBehindQueued ? Behind::kQueue
                                                      : Behind::kNo;
}

void CatchUpMonitor::WatchLoop() {
  // Time behind in the current report window, by reason.
  std::array<int64_t, kBehindReasons> behind_ms{};
  int64_t report_from = SteadyMs();
  while (!stop_.WaitFor(kPauseWatchInterval)) {
    const int64_t now = SteadyMs();
    const int64_t gap = now - watch_tick_ms_.load();
    if (gap > kPauseNoticedMs) {
      resumed_ms_.store(now);
      Log("p2p")->info(
          "the process was paused for {} ms; refusing deploys while it "
          "catches up",
          gap);
    }
    watch_tick_ms_.store(now);
    const Behind reason = gap > kPauseNoticedMs ? Behind::kPaused : Reason();
    if (reason != Behind::kNo) {
      behind_ms[static_cast<size_t>(reason)] += gap;
      if (behind_seconds_ != nullptr) {
        absl::StatusOr<metrics::Counter*> c =
            behind_seconds_->WithLabels({BehindName(reason)});
        if (c.ok()) (*c)->Add(static_cast<double>(gap) / 1000.0);
      }
    }
    if (beyond_history_.has_value() &&
        beyond_history_->Update(reason == Behind::kBeyondHistory,
                                Clock::now())) {
      on_beyond_history_();
    }
    if (now - report_from >= kBehindReportMs) {
      Report(behind_ms, now - report_from);
      behind_ms.fill(0);
      report_from = now;
    }
  }
}

void CatchUpMonitor::Report(
    const std::array<int64_t, kBehindReasons>& behind_ms,
    int64_t window_ms) const {
  int64_t total = 0;
  std::string split;
  for (size_t i = 1; i < behind_ms.size(); ++i) {
    if (behind_ms[i] == 0) continue;
    total += behind_ms[i];
    absl::StrAppend(&split, split.empty() ? "" : ", ",
                    BehindName(static_cast<Behind>(i)), " ",
                    absl::StrFormat("%.1f", behind_ms[i] / 1000.0), " s");
  }
  if (total == 0) return;
  Log("casper")->info(
      "behind its peers {:.1f} s of the last {:.0f} s ({}); now {} blocks "
      "queued, {} waiting for parents, {} asked for (oldest {} ms)",
      total / 1000.0, window_ms / 1000.0, split, scheduler_->queued_blocks(),
      engine_buffered_.load(std::memory_order_relaxed), network_->wanted(),
      network_->oldest_wanted_age().count());
}

}  // namespace rnode::node

// Whether this validator is behind its peers (docs/p2p.md "Catching
// up"): its view of the chain is stale until their news arrives, so it
// refuses deploys (it cannot judge their validity window) and takes over
// no gossiped deploy. A pause watch thread notices when the whole process
// was paused (SIGSTOP, a frozen VM: a thread that only sleeps wakes long
// after it should have), counts the time spent behind by reason and logs
// it now and then.
#ifndef RNODE_NODE_CORE_CATCH_UP_H_
#define RNODE_NODE_CORE_CATCH_UP_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <thread>

#include "node/core/chain_sync.h"
#include "node/core/network.h"
#include "node/core/scheduler.h"
#include "node/metrics/metrics.h"
#include "util/stop_signal.h"

namespace rnode::node {

// A gap this long between two looks of a thread that wakes every second
// or faster means the process was paused.
inline constexpr auto kPauseNoticed = std::chrono::seconds(3);

// Why this validator is behind its peers, or kNo: the process was paused
// (or is, as far as the pause watch has seen) or resumed within the grace
// time, no peer has told its height yet (ChainSync), the peers' height is
// far above this node's, blocks wait for their parents, a block asked for
// is long missing, or blocks wait for the consensus thread.
enum class Behind {
  kNo,
  kPaused,
  kResuming,
  kStarting,
  kFarBehind,
  kParents,
  kMissing,
  kQueue,
  kSyncing,  // joining from the shard's last finalized state (StateJoin)
  // Further behind than the peers keep blocks (SyncState::kBeyondHistory):
  // it must join again from the shard's state.
  kBeyondHistory
};
inline constexpr size_t kBehindReasons = 10;
// The reason's metric label.
const char* BehindName(Behind b);

// Whether a condition has held without a break for a while: Update is
// told, now and then, whether it holds; it answers true once, at the
// first look at which the condition has held for `after` since the look
// that first saw it, and false before and ever after. Not thread-safe.
class HeldFor {
 public:
  using Clock = std::chrono::steady_clock;
  explicit HeldFor(std::chrono::milliseconds after) : after_(after) {}
  bool Update(bool holds, Clock::time_point now);

 private:
  const std::chrono::milliseconds after_;
  std::optional<Clock::time_point> since_;
  bool fired_ = false;
};

// Thread-safe.
class CatchUpMonitor {
 public:
  // `network` (null in standalone mode: never behind), `scheduler` (its
  // queue of peer blocks) and `sync` (the peers' height; null with no
  // network) are not owned and outlive this.
  CatchUpMonitor(const CasperNetwork* network,
                 const ConsensusScheduler* scheduler, const ChainSync* sync);
  ~CatchUpMonitor();  // Stop().
  CatchUpMonitor(const CatchUpMonitor&) = delete;
  CatchUpMonitor& operator=(const CatchUpMonitor&) = delete;

  // Starts the pause watch; `behind_seconds` (not owned; may be null)
  // counts the time behind by BehindName.
  void Start(metrics::Family<metrics::Counter>* behind_seconds);
  // Stops and joins the pause watch. Idempotent.
  void Stop();

  Behind Reason() const;
  bool CatchingUp() const { return Reason() != Behind::kNo; }
  // Blocks the engine holds for missing parents (the consensus thread
  // mirrors them here for the API threads).
  void set_engine_buffered(size_t n) {
    engine_buffered_.store(n, std::memory_order_relaxed);
  }
  // Whether the node is joining from state (before anything else counts).
  void set_syncing(bool syncing) { syncing_.store(syncing); }
  // Before Start: `fn` is called once, on the pause watch's thread, when
  // the node has been beyond_history (Behind::kBeyondHistory) for `after`
  // without a break (a rejoin: node/core/rejoin.h). It may write a small file,
  // but must not wait on the node or call Stop.
  void SetBeyondHistoryListener(std::chrono::milliseconds after,
                                std::function<void()> fn);

 private:
  void WatchLoop();
  // Logs the time spent behind in the last `window_ms`, by reason, with
  // the queues' state now (nothing if it was never behind).
  void Report(const std::array<int64_t, kBehindReasons>& behind_ms,
              int64_t window_ms) const;

  const CasperNetwork* const network_;
  const ConsensusScheduler* const scheduler_;
  const ChainSync* const sync_;
  metrics::Family<metrics::Counter>* behind_seconds_ = nullptr;
  StopSignal stop_;
  std::thread thread_;
  // Steady-clock milliseconds of the pause watch's last wake-up and of the
  // end of the last pause it saw (INT64_MIN: none).
  std::atomic<int64_t> watch_tick_ms_{0};
  std::atomic<int64_t> resumed_ms_;
  std::atomic<size_t> engine_buffered_{0};
  std::atomic<bool> syncing_{false};
  // Set before Start, then the pause watch's own.
  std::optional<HeldFor> beyond_history_;
  std::function<void()> on_beyond_history_;
};

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_CATCH_UP_H_

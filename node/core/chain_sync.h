// Catching up by height (docs/p2p.md "Catching up"): asks the peers how far
// their chains go and, while this node is below them, fetches the missing
// blocks in order of number, a window at a time, from the peers that have
// them. Following a far tip down by its parents held the whole gap in the
// engine's buffer, and a gap larger than the buffer wedged the node for
// good (issue 48). Also answers the peers' height and range requests.
//
// Thread-safe: the transport's dispatchers call OnPacket and OnConnected,
// the API threads read Progress, and its own thread ticks.
#ifndef RNODE_NODE_CORE_CHAIN_SYNC_H_
#define RNODE_NODE_CORE_CHAIN_SYNC_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "casper/dag/dag_store.h"
#include "node/p2p/transport.h"
#include "util/bytes.h"
#include "util/logging.h"
#include "util/mutex.h"
#include "util/stop_signal.h"

namespace rnode::node {

// This node's packet type names for catching up (proto/rnode_sync.proto).
namespace packet {
inline constexpr char kChainHeightRequest[] = "ChainHeightRequest";
inline constexpr char kChainHeight[] = "ChainHeight";
inline constexpr char kBlockRangeRequest[] = "BlockRangeRequest";
inline constexpr char kBlockRangeEnd[] = "BlockRangeEnd";
}  // namespace packet

struct ChainSyncOptions {
  // This node is behind (not ready; deploys refused as catching up) and
  // fetches by range while the peers' height is more than this many
  // numbers above its highest stored block (`near_numbers` until it has
  // first caught up since it started), until the gap is at most
  // `near_numbers`. A shard under load makes a few numbers a second and a
  // peer's height is a snapshot from up to `ask_interval` ago, which errs
  // low: a node that keeps up is rarely more than one or two numbers below
  // it. The last numbers come from the peers' tips (ForkChoiceTipRequest,
  // asked while the gap is not zero).
  int64_t behind_numbers = 8;
  int64_t near_numbers = 2;
  // Numbers asked for per range request. The serving side clamps it to
  // kMaxRangeNumbers and stops after max_range_blocks blocks (at a number's
  // end) or when its stream budget is spent.
  uint32_t window = 32;
  size_t max_range_blocks = 128;
  // Requests start at most this many numbers above the highest stored
  // block, so the blocks a request brings never wait in the engine's
  // buffer beyond its max_ahead (casper::engine::EngineOptions): ahead +
  // window stays below it.
  int64_t ahead = 64;
  // A range answer that has not ended this long is asked of another peer.
  std::chrono::milliseconds request_timeout{5000};
  // The highest stored block unchanged this long while behind, with
  // requests already past it: they start again from it (a block of the
  // window was lost on the way).
  std::chrono::milliseconds stall_timeout{10000};
  // How often every peer is asked for its height: while starting or behind,
  // and otherwise.
  std::chrono::milliseconds ask_interval_behind{1000};
  std::chrono::milliseconds ask_interval{5000};
  // A peer's height older than this no longer counts.
  std::chrono::milliseconds height_ttl{30000};
  // A node with a bootstrap is not ready until a peer has told it its
  // height. One without may be the first node of its shard: a new one (only
  // genesis stored) is ready at once, one with history after this long
  // without a peer's height.
  bool has_bootstrap = false;
  std::chrono::milliseconds alone_grace{3000};
  // True: only heights told by peers the transport proves to run a bonded
  // validator (p2p::Transport::BondedValidatorOf) count, so a node anyone
  // can run cannot hold this one behind. False: every peer's counts (tests
  // of the packet machinery; the node sets it).
  bool bonded_only = false;
  // How often the thread looks.
  std::chrono::milliseconds tick{250};
};

// The most numbers one range answer covers, whatever was asked.
inline constexpr uint32_t kMaxRangeNumbers = 256;
// Peers' heights remembered at once; beyond it a new peer's is not (peers
// are bounded by the transport's slots; this bounds churn).
inline constexpr size_t kMaxPeerHeights = 1024;

enum class SyncState : uint8_t {
  kStarting,  // no peer has told its height yet
  kBehind,    // more than behind_numbers below the peers' height
  kCaughtUp,
  // Behind, and the blocks it needs next are below the floor of every
  // peer above it (deleted by their retention): it cannot catch up by
  // height and fetches nothing; it must join again from the shard's last
  // finalized state (docs/p2p.md "Joining").
  kBeyondHistory,
};
const char* SyncStateName(SyncState s);

struct SyncProgress {
  SyncState state = SyncState::kStarting;
  // The highest stored block's number.
  int64_t local = 0;
  // The peers' height (ChainSync::Target); -1 when none is known.
  int64_t target = -1;
  // kBeyondHistory: the lowest floor among the peers above this node
  // (ChainHeight.floor); -1 otherwise.
  int64_t peers_floor = -1;
  int64_t behind() const { return target > local ? target - local : 0; }
};

// A peer's last finalized block as it told it (ChainHeight).
struct PeerFinalized {
  Bytes peer;
  int64_t number = -1;
  Hash32 hash{};
};

struct SyncCounters {
  uint64_t heights_heard = 0;
  // Heights from peers not proven to run a bonded validator (bonded_only).
  uint64_t heights_ignored = 0;
  uint64_t ranges_asked = 0;
  uint64_t range_timeouts = 0;
  uint64_t ranges_served = 0;
  uint64_t range_blocks_served = 0;
  // Range answers cut short by the stream budget.
  uint64_t serve_busy = 0;
  uint64_t malformed = 0;
  // Gaps closed (behind, then caught up), the numbers they spanned, and
  // how long the last one took.
  uint64_t catch_ups = 0;
  uint64_t caught_up_numbers = 0;
  double last_catch_up_seconds = 0;
};

class ChainSync {
 public:
  // `dag` (not owned) outlives this.
  ChainSync(casper::dag::DagStore* dag, const ChainSyncOptions& options);
  ~ChainSync();  // Stop()
  ChainSync(const ChainSync&) = delete;
  ChainSync& operator=(const ChainSync&) = delete;

  // The transport to send on (not owned; must outlive this until Stop).
  // Starts the thread.
  void Attach(p2p::Transport* transport);
  // Stops and joins the thread; later packets are ignored. Idempotent.
  void Stop();

  // Whether `type_id` is one of the packets above.
  static bool Handles(std::string_view type_id);
  // One of those packets (Handles); undecodable content is punished.
  void OnPacket(const p2p::PeerNode& from, std::string_view type_id,
                const std::string& content);
  // A newly connected peer is asked for its height.
  void OnConnected(const p2p::PeerNode& peer);

  SyncProgress Progress() const;
  SyncCounters counters() const;

  // --- For a joining node (StateJoin; docs/p2p.md "Joining") ----------
  // The last finalized blocks the peers whose heights count told, fresh
  // ones only, by peer.
  std::vector<PeerFinalized> PeersFinalized() const;
  // While held, the node fetches no ranges and counts as starting (its
  // DAG is about to be anchored); heights are still asked and ranges
  // served. Starts the fetching from the DAG's height when released.
  void Hold(bool held);
  // Told each BlockRangeEnd a peer sends (after ChainSync's own use of
  // it), on the dispatcher's thread. Set before Attach.
  using RangeEndListener = std::function<void(
      const p2p::PeerNode& from, int64_t from_number, int64_t next_number)>;
  void SetRangeEndListener(RangeEndListener listener);

  // The peers' height from `heights` (the fresh ones, any order): the
  // second highest when there are two or more, so that one peer alone
  // cannot hold this node behind with a made-up height; the only one
  // otherwise; -1 for none. Exposed for tests.
  static int64_t Target(std::vector<int64_t> heights);

 private:
  using Clock = std::chrono::steady_clock;
  struct PeerHeight {
    int64_t max_number = -1;
    int64_t floor = 0;  // its DAG's floor (0: none)
    Clock::time_point heard{};
    int64_t finalized_number = -1;
    Hash32 finalized_hash{};
  };
  struct Outstanding {
    Bytes peer;
    int64_t from = 0;
    Clock::time_point asked{};
  };

  void Loop();
  void Tick(Clock::time_point now);
  p2p::Transport* CurrentTransport() const;
  void SendHeight(const p2p::PeerNode& to);
  void ServeRange(const p2p::PeerNode& to, int64_t from, uint32_t numbers);
  void OnHeight(const p2p::PeerNode& from, const PeerHeight& told);
  void OnRangeEnd(const p2p::PeerNode& from, int64_t from_number,
                  int64_t next_number, int64_t max_number);
  void Malformed(const p2p::PeerNode& from, std::string_view what);
  // The state for `local` and `target` now (updates behind_/since_).
  SyncState StateLocked(int64_t local, int64_t target, Clock::time_point now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int64_t TargetLocked(Clock::time_point now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Among the fresh peers whose chain reaches `from`: nullopt when one of
  // them keeps `from` (its floor is at most `from`) or there is none; the
  // lowest of their floors otherwise.
  std::optional<int64_t> FloorAboveLocked(int64_t from,
                                          Clock::time_point now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // With no peer's height heard yet, whether this node counts as the
  // first of its shard (ChainSyncOptions::has_bootstrap, alone_grace).
  bool AloneLocked(Clock::time_point now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The gap (numbers) beyond which this node counts as behind: until it
  // has first caught up, near_numbers (a restarted node is not ready while
  // it lacks even a few numbers), then behind_numbers.
  int64_t EnterBehindLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sends the next range request if one is due (under mu_; Send never
  // blocks).
  void RequestLocked(p2p::Transport* t, int64_t local, int64_t target,
                     Clock::time_point now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  casper::dag::DagStore* const dag_;
  const ChainSyncOptions options_;
  const Clock::time_point created_ = Clock::now();
  // Stored blocks above genesis when this started: a node with history
  // has something to be stale about.
  const bool had_history_;
  StopSignal stop_;
  std::thread thread_;

  mutable Mutex mu_;
  p2p::Transport* transport_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::map<Bytes, PeerHeight> heights_ ABSL_GUARDED_BY(mu_);
  bool heard_ ABSL_GUARDED_BY(mu_) = false;
  bool said_alone_ ABSL_GUARDED_BY(mu_) = false;
  // Caught up at least once since this node started.
  bool synced_once_ ABSL_GUARDED_BY(mu_) = false;
  // Just caught up: the next tick asks the peers for their tips.
  bool tips_due_ ABSL_GUARDED_BY(mu_) = false;
  // Behind (state kBehind), since when, and from which number.
  bool behind_ ABSL_GUARDED_BY(mu_) = false;
  // Behind beyond the peers' history (kBeyondHistory): their lowest floor;
  // -1 when not.
  int64_t beyond_floor_ ABSL_GUARDED_BY(mu_) = -1;
  Clock::time_point behind_since_ ABSL_GUARDED_BY(mu_){};
  int64_t behind_from_ ABSL_GUARDED_BY(mu_) = 0;
  // The next number to ask for, and the request whose answer has not
  // ended.
  int64_t next_from_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<Outstanding> outstanding_ ABSL_GUARDED_BY(mu_);
  // A peer whose request timed out is asked last next time.
  Bytes slow_peer_ ABSL_GUARDED_BY(mu_);
  // The highest stored block as the thread last saw it, and since when.
  int64_t last_local_ ABSL_GUARDED_BY(mu_) = -1;
  Clock::time_point local_moved_ ABSL_GUARDED_BY(mu_){};
  Clock::time_point last_ask_ ABSL_GUARDED_BY(mu_){};
  SyncCounters counters_ ABSL_GUARDED_BY(mu_);
  bool held_ ABSL_GUARDED_BY(mu_) = false;
  RangeEndListener range_end_listener_;  // set before the transport runs
  // Lines a peer's packets cause.
  RateLimitedLog peer_log_{"p2p", kPeerLogLinesPerSecond};
};

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_CHAIN_SYNC_H_

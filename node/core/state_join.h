// Joining a running shard from its last finalized state (issue 45;
// docs/p2p.md "Joining"): a node whose DAG holds its genesis alone asks
// its bonded peers for their last finalized block, fetches the blocks of
// the window below it (kMaxMergeDepth numbers: every block a merge to come
// can read) and the ones above it, fetches the state tries the next blocks
// are played on (StateFetcher), then anchors its DAG there
// (DagStore::Anchor) and hands the blocks above to the engine, which
// validates them as usual. Nothing below the anchor is replayed.
//
// While it runs the node is not ready and refuses deploys as syncing;
// catching up by height (ChainSync) is held. What it stores survives a
// kill: the trie nodes (the next start walks them and fetches the rest);
// the blocks are fetched again (the window is small).
//
// Trust: the genesis is this node's own (made from the shard's files); the
// anchor is the last finalized block its bonded peers name (the second
// highest of their numbers, as for heights, so that one peer alone cannot
// choose it); every block's seal is checked, its sender must be bonded,
// and the window is closed under parents and justifications above its
// floor. The state tries are checked node by node against the roots the
// blocks name. Once anchored, the join verifies: the node validates the
// blocks above the anchor as usual, and is ready only when they make the
// anchor final by the fault-tolerance rule over the bonds (the clique
// oracle over its own latest messages, AnchorIsFinal): a supermajority of
// stake signed blocks that build on it, checked by this node. Until then it
// refuses deploys as syncing; a restart before it is verified verifies
// again (DagStore::UnverifiedAnchor). What is not checked yet
// (docs/p2p.md "Joining", "Not yet"): the chain below the floor down to
// the genesis.
//
// Thread-safe: the transport's dispatchers call OnBlock, OnRangeEnd and
// OnTrieNodes; its own thread drives the join.
#ifndef RNODE_NODE_CORE_STATE_JOIN_H_
#define RNODE_NODE_CORE_STATE_JOIN_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "casper/dag/dag_store.h"
#include "node/core/chain_sync.h"
#include "node/core/state_sync.h"
#include "node/p2p/transport.h"
#include "rspace/history/history.h"
#include "rspace/storage/kv_store.h"
#include "util/bytes.h"
#include "util/logging.h"
#include "util/mutex.h"
#include "util/stop_signal.h"

namespace rnode::node {

struct StateJoinOptions {
  // The peers' last finalized block must be numbered at least this for a
  // join from state; below it the node replays from its genesis (as quick
  // for a young shard, and it checks everything).
  int64_t min_finalized_number = 2 * casper::dag::kMaxMergeDepth;
  // Blocks of this many numbers below the anchor are fetched: the merge
  // depth rule's bound, so every merge to come reads blocks held here.
  int64_t window_numbers = casper::dag::kMaxMergeDepth;
  // Blocks whose pre- and post-state tries are fetched too, besides the
  // anchor's post-state: those numbered at least this far below the
  // anchor (a merge to come may start from one's post-state, its base, or
  // replay one on its pre-state).
  int64_t replayable_numbers = 64;
  // Once a bonded peer has told its last finalized block, how long to wait
  // for a second one (the anchor is the second highest when there are two).
  std::chrono::milliseconds choose_grace{2000};
  // Blocks held at once (the window and above it): beyond it the join
  // fails rather than grow (a window of kMaxMergeDepth numbers at a few
  // blocks a number is far below).
  size_t max_blocks = 32768;
  // A range or block request unanswered this long is asked of another
  // peer.
  std::chrono::milliseconds request_timeout{5000};
  std::chrono::milliseconds tick{20};
  // Once anchored, how often the anchor's finality is checked, and how
  // long it may take before the progress says it is overdue (the join
  // keeps checking: a shard that stalled may go on).
  std::chrono::milliseconds verify_interval{250};
  std::chrono::milliseconds verify_overdue{120'000};
  // The trie fetches: a trie's levels come a round trip apart and a join
  // fetches dozens of nearby roots one after another, so the fetcher
  // looks often.
  StateFetchOptions fetch = {.tick = std::chrono::milliseconds(2)};
};

enum class JoinPhase : uint8_t {
  kChoosing,   // waiting for the bonded peers' last finalized blocks
  kBlocks,     // fetching the window's blocks and their dependencies
  kStates,     // fetching state tries
  kVerifying,  // anchored, following the shard; the anchor not yet final
               // by the blocks above it
  kDone,       // anchored and verified; the node follows the shard
  kNotNeeded,  // the shard is young: replaying from genesis instead
  kFailed,     // a fault (see error): starts over after a pause
};
const char* JoinPhaseName(JoinPhase p);

struct JoinProgress {
  JoinPhase phase = JoinPhase::kChoosing;
  int64_t anchor_number = -1;
  Hash32 anchor{};
  int64_t floor = -1;
  uint64_t blocks = 0;       // held (window, below it, above the anchor)
  uint64_t bad_blocks = 0;   // seals or senders that did not check
  uint64_t roots_total = 0;  // tries to fetch
  uint64_t roots_done = 0;
  uint64_t trie_nodes = 0;  // fetched (all tries so far)
  uint64_t trie_bytes = 0;
  // Trie nodes found stored when a fetch began (by an earlier run of the
  // join, before a kill, or by an earlier root), not fetched again.
  uint64_t trie_nodes_found = 0;
  // Trie answers with a node that did not check (their senders punished).
  uint64_t bad_trie_answers = 0;
  double seconds = 0;  // since Start, or the join's length once done
  std::string error;
};

class StateJoin {
 public:
  struct Deps {
    casper::dag::DagStore* dag = nullptr;
    // The history's store (the trie goes in there).
    rspace::KeyValueStore* store = nullptr;
    rspace::HistoryColumns columns;
    ChainSync* sync = nullptr;
    // Whether the store holds the trie at `root` already.
    std::function<absl::StatusOr<bool>(const Hash32&)> has_root;
    // Whether the DAG's blocks above the anchor (validated by this node)
    // make it final: AnchorIsFinal with the shard's threshold. Null: the
    // anchor is taken as final at once (tests of the other phases).
    std::function<absl::StatusOr<bool>(const Hash32&)> anchor_final;
    // Once anchored (or not needed), each block the join holds above the
    // anchor (all, when not needed), in number order, to `hand_on` (the
    // engine). Once the anchor is verified (or not needed), `done`.
    std::function<void(casper::block::Block)> hand_on;
    std::function<void()> done;
  };
  // The deps (not owned) outlive this.
  StateJoin(Deps deps, StateJoinOptions options = {});
  ~StateJoin();  // Stop()
  StateJoin(const StateJoin&) = delete;
  StateJoin& operator=(const StateJoin&) = delete;

  // Holds ChainSync and starts the thread on `t` (not owned; outlives this
  // until Stop; null: nothing is sent, and what comes is taken, for tests).
  // On a DAG anchored before a restart whose anchor is not verified yet,
  // only verifies (nothing held, blocks go to the engine).
  void Start(p2p::Transport* t);
  // Stops and joins the thread (and a trie fetch). Idempotent.
  void Stop();

  // Whether blocks from peers come here (OnBlock) rather than go to the
  // engine: from construction until anchored (or not needed).
  bool active() const { return active_.load(); }
  // Whether the join is over: anchored and verified, or not needed. Until
  // then the node is not ready.
  bool settled() const { return settled_.load(); }
  // A block from a peer. False when not active: the caller hands it on.
  // True: taken, held or dropped (a bad seal, unasked history below the
  // floor, past max_blocks); the network no longer waits for it.
  bool OnBlock(const p2p::PeerNode& from, casper::block::Block& block);
  // ChainSync's range ends (its listener).
  void OnRangeEnd(const p2p::PeerNode& from, int64_t from_number,
                  int64_t next_number);
  // A TrieNodes packet.
  void OnTrieNodes(const p2p::PeerNode& from, const std::string& content);

  JoinProgress Progress() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Asked {
    Bytes peer;
    Clock::time_point at{};
  };

  void Loop();
  // Each phase's step; they return the next phase.
  JoinPhase Choose(Clock::time_point now);
  JoinPhase FetchBlocks(Clock::time_point now);
  JoinPhase FetchStates();
  JoinPhase Verify(Clock::time_point now);
  // The blocks to anchor, the roots to fetch; with `stale`, the window's
  // latest messages at or below the floor there too (StaleLatestLocked).
  // (Pointers into blocks_, valid while mu_ is held.)
  std::vector<const casper::block::Block*> WindowLocked(
      std::vector<const casper::block::Block*>* stale = nullptr) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<Hash32> RootsLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The dependencies of the window that are neither held nor stored: the
  // parents and justified blocks of its blocks above the floor, and the
  // blocks justified by the latest messages at or below it (a validator
  // silent since before the floor: the peers' retention keeps its latest
  // block and what that justifies, and validating its next block reads
  // them).
  std::vector<Hash32> MissingLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Of `window`, each sender's newest block (by sequence number) when it
  // is numbered at or below the floor.
  std::vector<const casper::block::Block*> StaleLatestLocked(
      const std::vector<const casper::block::Block*>& window) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A peer to ask (round robin over those that told the anchor's number or
  // more), avoiding `not_this` when another is there.
  std::optional<Bytes> PeerLocked(const Bytes& not_this)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records a failure (the loop starts over after a pause).
  void Fail(std::string error);
  // Forgets the attempt, but for its error.
  void Reset();
  // Hands the blocks held on to the engine; from here blocks go there.
  void Finish(JoinPhase phase);
  // The join is over: `done`.
  void Settle(JoinPhase phase);

  const Deps d_;
  const StateJoinOptions options_;
  std::atomic<bool> active_{true};
  std::atomic<bool> settled_{false};
  // The DAG was anchored before a restart and its anchor is not verified
  // yet (DagStore::UnverifiedAnchor): the join only verifies.
  bool resumed_ = false;
  StopSignal stop_;
  std::thread thread_;
  Clock::time_point started_{};
  // Verifying: when it was anchored and last checked.
  Clock::time_point anchored_at_{};
  Clock::time_point checked_at_{};
  RateLimitedLog peer_log_{"p2p", kPeerLogLinesPerSecond};

  mutable Mutex mu_;
  p2p::Transport* transport_ ABSL_GUARDED_BY(mu_) = nullptr;
  JoinProgress progress_ ABSL_GUARDED_BY(mu_);
  std::optional<Clock::time_point> first_told_ ABSL_GUARDED_BY(mu_);
  // Peers that told the anchor's number or more, and the next to ask.
  std::vector<Bytes> peers_ ABSL_GUARDED_BY(mu_);
  size_t next_peer_ ABSL_GUARDED_BY(mu_) = 0;
  // Blocks held, by hash, while taking them (until Finish hands them on).
  std::map<Hash32, casper::block::Block> blocks_ ABSL_GUARDED_BY(mu_);
  bool taking_ ABSL_GUARDED_BY(mu_) = true;
  // The next number to ask for and the range request in flight.
  int64_t next_number_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<std::pair<int64_t, Asked>> range_ ABSL_GUARDED_BY(mu_);
  // Dependencies asked for by hash.
  std::map<Hash32, Asked> asked_ ABSL_GUARDED_BY(mu_);
  // The trie fetch under way (its own thread), and the roots left.
  std::unique_ptr<StateFetcher> fetcher_ ABSL_GUARDED_BY(mu_);
  // What the fetches so far found complete: the next root's walk stops
  // there (the tries of nearby blocks share all but a few paths). Used by
  // one fetch at a time, and between fetches by the join's thread.
  rspace::CompleteNodes complete_;
};

// Whether the blocks `dag` holds make `anchor` (stored) final for
// `threshold_ppm`: the clique oracle over the DAG's latest messages
// (casper/consensus/finality.h) exceeds it. The oracle's errors.
absl::StatusOr<bool> AnchorIsFinal(const casper::dag::DagStore& dag,
                                   const Hash32& anchor, int64_t threshold_ppm);

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_STATE_JOIN_H_

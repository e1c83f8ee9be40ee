// The running validator (docs/node.md): one store, one worker pool, the
// execution core and Casper composed, a consensus thread that owns
// everything that plays on the tuple space, and the operations the API
// servers call.
//
// Threads: the consensus thread runs the engine (propose, admit blocks),
// exploratory deploys and the proposer's batching; the API threads call
// the operations below, which read the DAG and the history (both
// thread-safe) directly and hand anything that plays on the space to the
// consensus thread through a bounded task queue.
#ifndef RNODE_NODE_CORE_NODE_H_
#define RNODE_NODE_CORE_NODE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "casper/dag/dag_store.h"
#include "casper/deploy.h"
#include "crypto/secp256k1.h"
#include "node/config/config.h"
#include "node/metrics/metrics.h"
#include "node/p2p/peer.h"
#include "rholang/ir.h"
#include "util/bytes.h"

namespace rnode::node {

// What the node tells the API layer (events stream). Called on the
// consensus thread after the fact is durable; must not block or call back
// into the node.
struct NodeHooks {
  std::function<void(const casper::block::Block&)> block_created;
  std::function<void(const casper::block::Block&)> block_added;
  std::function<void(const casper::block::Block&)> block_finalized;
};

// Where a deploy stands (the public deployFinalizationStatus states).
struct DeployStatus {
  enum class State : uint8_t { kPending, kFinalized, kFailed, kExpired };
  State state = State::kPending;
  // The newest block that holds it, if any.
  std::optional<Hash32> block;
  uint32_t rejection_count = 0;
};

// The result of an exploratory deploy.
struct Exploration {
  std::vector<rholang::ir::ParPtr> data;  // on the term's first new name
  int64_t cost = 0;
  Hash32 block{};  // the block whose state it ran on
};

// A peer as the status API shows it.
struct PeerStatus {
  p2p::PeerNode node;
  bool connected = false;
};

// Most tasks waiting for the consensus thread (propose requests,
// exploratory deploys); more are answered "busy". Each is a client
// request already holding one of the API servers' in-flight permits, so
// the bound only matters when several servers push at once.
inline constexpr size_t kMaxConsensusTasks = 256;

class Node {
 public:
  // Opens (or creates) the node's state in the data dir: the store, the
  // genesis of a new standalone shard (with a generated dev key, bonds and
  // wallets when none are given, announced on `out`), the DAG and the
  // deploy pool; then starts the consensus thread. `metrics` (not owned,
  // must outlive the node) receives the node's metrics. InvalidArgument
  // for a bad key or genesis file, FailedPrecondition for a setting the
  // stored state contradicts, the store's errors otherwise.
  static absl::StatusOr<std::unique_ptr<Node>> Open(const NodeConfig& config,
                                                    NodeHooks hooks,
                                                    metrics::Registry* metrics,
                                                    std::ostream& out);
  ~Node();  // Stop().

  // Stops the consensus thread after its current task; later operations
  // that need it answer Unavailable. Idempotent.
  void Stop();

  // --- Deploys -------------------------------------------------------
  // Admits a client's deploy: signature, shard, phlo price, validity
  // window, duplicates, pool space; durable in the pool on OK. Returns the
  // deploy id (its signature). Errors carry the client's message:
  // InvalidArgument (bad deploy), AlreadyExists (duplicate),
  // ResourceExhausted (pool full), FailedPrecondition (read-only node).
  absl::StatusOr<Bytes> Deploy(const ::casper::DeployDataProto& proto);

  // Makes a block now (on the consensus thread; waits for it). Returns its
  // hash; FailedPrecondition "No new deploys to propose." when there is
  // nothing to include, "read-only node" without a key; Unavailable when
  // stopping or when the consensus queue is full.
  absl::StatusOr<Hash32> Propose();

  // Runs `term` on the post-state of `block` (the last finalized block
  // when nullopt) and throws the changes away. FailedPrecondition on a
  // validator outside dev mode; InvalidArgument for a term that does not
  // compile; NotFound for an unknown block.
  absl::StatusOr<Exploration> Explore(std::string term,
                                      std::optional<Hash32> block,
                                      bool use_pre_state);

  // --- Reads (any thread) ---------------------------------------------
  casper::dag::DagStore& dag() { return *dag_; }
  const NodeConfig& config() const { return config_; }
  bool is_validator() const { return key_.has_value(); }
  // This node's public key (zero when read-only).
  const crypto::Secp256k1PublicKey& public_key() const { return public_key_; }
  // False until the consensus thread runs (then true until Stop).
  bool ready() const;
  int64_t last_finalized_number() const;

  // The stored block with this hash, or the only one whose hex starts
  // with `prefix` (at least 6 hex digits). InvalidArgument for a malformed
  // prefix, NotFound when no or several blocks match.
  absl::StatusOr<casper::block::Block> FindBlock(std::string_view hex);
  absl::StatusOr<casper::block::Block> GetBlock(const Hash32& hash);
  // Blocks of numbers [from, to] (clamped to max-blocks-limit from `to`),
  // newest first.
  absl::StatusOr<std::vector<casper::block::Block>> BlocksByHeight(int64_t from,
                                                                   int64_t to);
  // The main-parent chain from the fork-choice tip, `depth` blocks.
  absl::StatusOr<std::vector<casper::block::Block>> MainChain(int64_t depth);
  absl::StatusOr<casper::block::Block> LastFinalizedBlock();

  // Where the deploy `sig` stands; NotFound if the node never saw it (or
  // has forgotten an expired one).
  absl::StatusOr<DeployStatus> FindDeploy(ByteView sig);

  // The values sent to `channel` that wait under `block`'s post-state (or
  // pre-state), each datum's values in order, data in insertion order.
  absl::StatusOr<std::vector<rholang::ir::ParPtr>> DataAtName(
      const rholang::ir::ParPtr& channel, const Hash32& block,
      bool use_pre_state);

  // Whether `key` has stake in the last finalized block's bonds.
  absl::StatusOr<bool> IsBonded(ByteView public_key) const;

  size_t pending_deploys() const;

  // This node's rnode:// address ("" in standalone mode) and the peers it
  // knows.
  std::string address() const;
  std::vector<PeerStatus> peers() const;

  // Fault injection (--fault-injection; docs/reliability.md): cuts this
  // node off from its peers, or heals it (p2p::Transport::SetIsolated).
  // PermissionDenied when fault injection is off, FailedPrecondition in
  // standalone mode.
  absl::Status SetIsolated(bool isolated);
  bool isolated() const;
  // Fault injection: makes the store's disk full (every write fails with
  // rspace::NoSpaceError; deploys are refused with it) or gives the space
  // back (rspace::RocksDbStore::InjectNoSpace). PermissionDenied when fault
  // injection is off.
  absl::Status SetDiskFull(bool full);
  bool disk_full_injected() const;

 private:
  struct Impl;
  explicit Node(NodeConfig config);
  // The consensus thread's body.
  void ConsensusLoop();
  // A write failed for want of disk space (`s`) / a write succeeded: said
  // once per change, at error then warning level.
  void DiskFull(const absl::Status& s);
  void DiskOk();
  // False while the store's disk is full: after a write failed for want of
  // space, until a probe write succeeds.
  bool DiskWritable();
  // Makes, validates, stores and announces a block (an empty one only
  // with `allow_empty`). On the consensus thread.
  absl::StatusOr<Hash32> ProposeNow(bool allow_empty);

  // --- Shard (docs/p2p.md) --------------------------------------------
  // Starts the transport, discovery and the network's timer.
  absl::Status StartNetwork(metrics::Registry* registry, std::ostream& out);
  void DiscoveryLoop();
  // Notes when the whole process was paused (SIGSTOP, a frozen VM): a
  // thread that only sleeps wakes long after it should have.
  void PauseWatchLoop();
  // A block from a peer for the consensus thread; waits while
  // kMaxBlocksWaiting wait (the transport's stream dispatcher).
  void QueuePeerBlock(casper::block::Block block);
  // On the consensus thread.
  void HandlePeerBlock(const casper::block::Block& block);
  // Whether finality waits for a block of this validator: blocks with
  // deploys are not final and another validator's latest block is not
  // below this validator's latest.
  bool NeedsOwnBlock() const;
  // Every second on the consensus thread: the heartbeat and the takeover
  // of gossiped deploys.
  void Housekeeping();
  // Why this validator is behind its peers, or kNo: the process was
  // paused (or is, as far as the pause watch has seen) or resumed within
  // kResumeGrace, blocks wait for their parents, a block asked for is long
  // missing, or blocks wait for the consensus thread. Its view of the
  // chain is stale until its peers' news arrives. Any thread.
  enum class Behind { kNo, kPaused, kResuming, kParents, kMissing, kQueue };
  static constexpr size_t kBehindReasons = 6;
  static const char* BehindName(Behind b);
  // Logs the time spent behind in the last `window_ms`, by reason, with
  // the queues' state now (nothing if it was never behind).
  void ReportBehind(const std::array<int64_t, kBehindReasons>& behind_ms,
                    int64_t window_ms) const;
  Behind BehindReason() const;
  bool CatchingUp() const { return BehindReason() != Behind::kNo; }
  // Whether this node's own key has stake in the last finalized block.
  bool SelfBonded() const;
  // Whether the synchrony constraint lets this validator propose: since
  // its last block it has seen new blocks from validators holding at least
  // synchrony-constraint-threshold of the other validators' stake.
  bool SynchronyAllows() const;
  // A deploy another validator admitted, held as backup. OK when it is
  // held (or already pooled here, or in a block); FailedPrecondition when
  // this node could never propose it (an observer, a validator without
  // stake), InvalidArgument for a deploy that does not verify or is of
  // another shard, ResourceExhausted when the backup is full. The sender
  // counts only OK answers as copies (docs/p2p.md "Deploy gossip").
  absl::Status HoldGossipedDeploy(const ::casper::DeployDataProto& proto);

  NodeConfig config_;
  std::optional<crypto::Secp256k1PrivateKey> key_;
  crypto::Secp256k1PublicKey public_key_{};
  std::unique_ptr<Impl> impl_;
  casper::dag::DagStore* dag_ = nullptr;  // owned by impl_
};

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_NODE_H_

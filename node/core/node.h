// The running validator (docs/node.md): one store, one worker pool, the
// execution core and Casper composed, a consensus thread that owns
// everything that plays on the tuple space, and the operations the API
// servers call. A facade: the work is done in node/core's rooms
// (docs/architecture.md "node/core").
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
#include "node/core/chain_sync.h"
#include "node/core/identity.h"
#include "node/core/state_join.h"
#include "node/metrics/metrics.h"
#include "node/p2p/peer.h"
#include "rholang/frontend/ir.h"
#include "util/bytes.h"

namespace rnode::node {

// What the node tells the API layer (events stream). Called on the
// consensus thread after the fact is durable; must not block or call back
// into the node.
struct NodeHooks {
  std::function<void(const casper::block::Block&)> block_created;
  std::function<void(const casper::block::Block&)> block_added;
  // A finalized block, with the signatures of its deploys whose copy there
  // a merge rejected (the finalized state does not hold it; the deploy
  // may go in a block again).
  std::function<void(const casper::block::Block&,
                     std::span<const Bytes> rejected)>
      block_finalized;
  // An added block that holds deploys a merge had rejected before (they
  // are proposed again), by signature.
  std::function<void(const casper::block::Block&, std::span<const Bytes>)>
      deploys_again;
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
  // window, duplicates, pool space; durable in the pool, and in a shard
  // held by another validator, on OK (DeployAdmission). Returns the
  // deploy id (its signature). Errors carry the client's message:
  // InvalidArgument (bad deploy), AlreadyExists (duplicate),
  // ResourceExhausted (pool full; rspace::NoSpaceError when the disk is
  // full), FailedPrecondition (read-only or unbonded node), Unavailable
  // (catching up with its peers, or no peer took a copy).
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
  bool is_validator() const { return identity_.is_validator(); }
  // This node's public key (zero when read-only).
  const crypto::Secp256k1PublicKey& public_key() const {
    return identity_.public_key;
  }
  // False until the consensus thread runs (then true until Stop), and in
  // a shard while the node has not heard its peers' height or is far
  // below it (ChainSync: it is catching up).
  bool ready() const;
  // Where catching up stands; nullopt in standalone mode.
  std::optional<SyncProgress> sync_progress() const;
  // Where joining from state stands; nullopt unless this node started new
  // in a shard (docs/p2p.md "Joining").
  std::optional<JoinProgress> join_progress() const;
  int64_t last_finalized_number() const;
  // Whether the node, further behind than its peers keep blocks for
  // sync.rejoin-after-seconds, marked its data dir to join the shard again
  // (node/core/rejoin.h): its owner should Stop it and Open it again,
  // which forgets the chain and joins from the peers' last finalized
  // state. Never for an archive node or one without a bootstrap.
  bool rejoin_requested() const;

  // The stored block with this hash, or the only one whose hex starts
  // with `prefix` (at least 6 hex digits). InvalidArgument for a malformed
  // prefix, NotFound when no or several blocks match.
  absl::StatusOr<casper::block::Block> FindBlock(std::string_view hex);
  absl::StatusOr<casper::block::Block> GetBlock(const Hash32& hash);
  // Blocks of numbers [from, to] (clamped to max-blocks-limit from `to`),
  // newest first; InvalidArgument when they hold more than
  // api-server.max-blocks-bytes stored (so does MainChain).
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
  // Fault injection: this node serves joining peers altered or truncated
  // trie nodes (a byzantine peer; TrieServer::SetCorrupt), or stops.
  // PermissionDenied when fault injection is off, FailedPrecondition in
  // standalone mode.
  absl::Status SetCorruptTrie(bool corrupt);
  bool corrupt_trie_injected() const;

 private:
  struct Impl;
  explicit Node(NodeConfig config);
  // Node::Open's steps after the store: the rooms of the running node
  // (scheduler, admission, consensus driver, queries) and, in a shard, the
  // network; then the consensus thread.
  absl::Status Assemble(const casper::block::Block& genesis,
                        metrics::Registry* registry, std::ostream& out);
  absl::Status StartShard(metrics::Registry* registry, std::ostream& out);
  // Before the transport starts: the trie server's and, for a new node
  // with a bootstrap, the join's hooks into the network.
  void PrepareStateSync();
  absl::Status RegisterStateSyncMetrics(metrics::Registry* registry);
  // History retention (storage.retain-blocks > 0): its thread, collecting
  // old states once the node is ready, and its metrics.
  absl::Status StartRetention(metrics::Registry* registry);
  // Deploys a crash left in the pool after their block was finalized.
  absl::Status DropFinalizedFromPool();

  NodeConfig config_;
  NodeIdentity identity_;
  std::unique_ptr<Impl> impl_;
  casper::dag::DagStore* dag_ = nullptr;  // owned by impl_
};

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_NODE_H_

// What the consensus thread does (ConsensusWork): peer blocks through the
// engine, housekeeping (the heartbeat, a pause noticed, the takeover of
// gossiped deploys) and this validator's proposals with their
// preconditions (caught up once, bonded, the synchrony constraint).
#ifndef RNODE_NODE_CORE_CONSENSUS_DRIVER_H_
#define RNODE_NODE_CORE_CONSENSUS_DRIVER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <span>

#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "casper/dag/dag_store.h"
#include "casper/engine/engine.h"
#include "casper/pool/deploy_pool.h"
#include "casper/pool/left_deploys.h"
#include "casper/prestate/awaiting.h"
#include "casper/proposer/block_creator.h"
#include "node/config/config.h"
#include "node/core/catch_up.h"
#include "node/core/deploy_admission.h"
#include "node/core/disk_guard.h"
#include "node/core/identity.h"
#include "node/core/network.h"
#include "node/core/node_metrics.h"
#include "node/core/scheduler.h"
#include "node/p2p/transport.h"
#include "util/bytes.h"
#include "util/logging.h"

namespace rnode::node {

using casper::pool::DeployLeft;
using casper::pool::LeftDeploys;

// None owned; all outlive the driver. `network` is null in standalone
// mode.
struct DriverDeps {
  const NodeConfig* config = nullptr;
  const NodeIdentity* identity = nullptr;
  casper::dag::DagStore* dag = nullptr;
  casper::pool::DeployPool* pool = nullptr;
  casper::engine::Engine* engine = nullptr;
  CasperNetwork* network = nullptr;
  ConsensusScheduler* scheduler = nullptr;
  CatchUpMonitor* catch_up = nullptr;
  DeployAdmission* admission = nullptr;
  DiskGuard* disk = nullptr;
  NodeMetrics* metrics = nullptr;
  LeftDeploys* left = nullptr;
  // Tells which deploys a block it made left out (they could not pay).
  casper::proposer::BlockCreator* creator = nullptr;
};

// Consensus thread only, except pooled().
class ConsensusDriver final : public ConsensusWork {
 public:
  // `unfinalized`: blocks with user deploys or a slash not yet final (a
  // restart continues finalizing them).
  ConsensusDriver(const DriverDeps& deps, std::span<const Hash32> unfinalized);

  void OnPeerBlock(const casper::block::Block& block) override;
  // At start: the deploys the finalized merges of the last
  // kDeployLifespanBlocks block numbers rejected that the finalized state
  // does not hold are awaited again (one rejected further down has its
  // window closed), so a restart of every node does not bring back the
  // stall `awaited_` prevents. Errors: the DAG's.
  absl::Status ResumeAwaited();
  void Housekeeping() override;
  absl::StatusOr<Hash32> ProposeScheduled(bool empty) override;
  size_t pooled() const override { return d_.pool->size(); }

  // The started transport (not owned), before the consensus thread starts;
  // with a bootstrap, proposing waits for a connected peer.
  void AttachTransport(p2p::Transport* transport, bool has_bootstrap) {
    transport_ = transport;
    has_bootstrap_ = has_bootstrap;
  }

  // Makes, validates, stores and announces a block (an empty one only with
  // `allow_empty`). FailedPrecondition for a read-only or unbonded node
  // and "No new deploys to propose." when there is nothing to include;
  // Unavailable while catching up or held by the synchrony constraint;
  // the engine's errors otherwise.
  absl::StatusOr<Hash32> ProposeNow(bool allow_empty);

  // The engine's news (its listener): a block was added / blocks were
  // finalized.
  void NoteAdded(const casper::block::Block& block);
  void NoteFinalized(std::span<const Hash32> blocks);

 private:
  // Whether finality waits for a block of this validator: blocks with
  // deploys are not final and another validator's latest block is not
  // below this validator's latest.
  bool NeedsOwnBlock() const;
  // Whether the synchrony constraint lets this validator propose: since
  // its last block it has seen new blocks from validators holding at least
  // synchrony-constraint-threshold of the other validators' stake.
  bool SynchronyAllows() const;
  // Proposing's preconditions (role, stake, caught up, synchrony).
  absl::Status CheckCanPropose();
  // The heartbeat: finality has not moved for a while although blocks with
  // deploys wait for it.
  void Heartbeat(std::chrono::steady_clock::time_point now);
  void PruneExpired(int64_t now_ms);
  // After proposing: the deploys the block left out and the pool dropped,
  // remembered as failed for clients.
  void NoteLeftOut();
  // After the engine's buffer may have changed: the catch-up monitor's
  // count and the expired blocks' metric.
  void NoteBuffer();
  // After finalizing `blocks`: each deploy their merges rejected that the
  // finalized state does not hold is awaited (`awaited_`) while its window
  // is open, and goes back in the pool if a block of this validator held
  // it. The pool keeps a deploy until the finalized state holds it, but a
  // merge whose base is below a finalized block can reject a copy the
  // finalized state held when the pool let it go (docs/validation.md "A
  // deploy again"). Awaited deploys the new finalized state holds leave
  // the pool. Returns how many went back.
  absl::StatusOr<size_t> RecoverRejected(std::span<const Hash32> blocks);
  // Whether anything waits for finality: blocks with work, or deploys a
  // finalized merge rejected that the finalized state does not hold.
  bool HasUnfinalizedWork() const {
    return !unfinalized_work_.empty() || !awaited_.empty();
  }

  using Clock = std::chrono::steady_clock;
  const DriverDeps d_;
  p2p::Transport* transport_ = nullptr;  // null in standalone mode
  bool has_bootstrap_ = false;
  // Blocks with user deploys or a slash not yet final.
  std::set<Hash32> unfinalized_work_;
  // Deploys a finalized merge rejected, until the finalized state holds
  // them or their window closes: work for every validator, so that blocks
  // are made (empty if the merge of the tips already holds a copy) and
  // finalized. In memory; rebuilt from the DAG at start (ResumeAwaited).
  casper::prestate::AwaitedDeploys awaited_;
  // Empty blocks this node made in a row for finality without finality
  // moving; at kMaxEmptyStreak it waits for the heartbeat instead (no
  // empty-block churn when finality is stuck).
  int empty_streak_ = 0;
  Clock::time_point last_housekeeping_ = Clock::now();
  // A node that joins a shard proposes only after it has caught up once:
  // connected to a peer, and not catching up.
  bool caught_up_ = false;
  // Said once: the state a block would build on gives this validator no
  // stake (slashed, or unbonded before it is final).
  bool said_no_stake_ = false;
  // The last finalized block as housekeeping last saw it, and since when.
  std::optional<Hash32> last_lfb_;
  Clock::time_point lfb_moved_ = Clock::now();
  // The engine's expired counter as last reported.
  uint64_t expired_seen_ = 0;
  // Lines about peers' blocks (a peer can send any number).
  RateLimitedLog peer_log_{"casper", kPeerLogLinesPerSecond};
};

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_CONSENSUS_DRIVER_H_

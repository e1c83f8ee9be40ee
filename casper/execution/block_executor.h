// Plays and replays whole blocks on one space: the user deploys in order,
// then the slashes, then the close-block system deploy, then one checkpoint
// whose root is the block's post-state (docs/casper.md "Blocks").
//
// Playing is what a proposer does; replaying is what a validator does with
// a peer's block: every deploy against the events the block recorded, its
// cost and failure flags compared, and the post-state compared. A replay
// that does not reproduce the block is a verdict about the block; a local
// fault (storage, a broken invariant) is an internal error, never the
// block's fault.
//
// Parallel replay (with ExecutorLanes): a block's user deploys are split
// into groups by the channels their recorded event logs write and read
// (deploys that write a channel, or one writes and another reads it, share
// a group); the groups replay at once, each on a lane, a group's deploys in
// block order; then, in block order, each deploy's fee is deposited into
// the PoS vault (the one channel every paying deploy writes, so it is left
// out of the grouping) and its verdict taken. The result is serial
// replay's when no deploy saw another group's writes, which is checked
// after the run against what the deploys did (their scopes' written and
// touched channels, unrecorded reads included), not against what the block
// claims. When that check fails, or anything in the parallel run is not a
// clean success (a divergence, a failed signature, a cost that differs),
// the block is replayed serially from its pre-state, and that replay's
// verdict is the verdict. So the verdict and the post-state never depend on
// the thread count (docs/validation.md "Parallel replay").
//
// Not thread-safe: one block at a time on the space.
#ifndef RNODE_CASPER_EXECUTION_BLOCK_EXECUTOR_H_
#define RNODE_CASPER_EXECUTION_BLOCK_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "casper/contracts/pos.h"
#include "casper/deploy.h"
#include "casper/execution/deploy_executor.h"
#include "casper/execution/executor_lanes.h"
#include "rspace/space.h"

namespace rnode::casper {

// What a block records of a played user deploy: cost, and its failure as
// the wire's two flags (errored: the program ran and failed; system deploy
// error: the precharge failed and nothing ran).
block::ProcessedDeploy RecordDeploy(const SignedDeploy& deploy,
                                    const DeployOutcome& outcome);

// The bonds a block records for a state: those with stake, ascending by key.
std::vector<block::Bond> BlockBonds(const contracts::Validators& validators);

// The block-level facts deploys run with.
struct BlockEnv {
  int64_t number = 0;
  int64_t timestamp = 0;
  crypto::Secp256k1PublicKey sender{};
};

struct PlayedBlock {
  Hash32 post_state{};
  std::vector<block::ProcessedDeploy> deploys;
  std::vector<block::ProcessedSystemDeploy> system_deploys;
  // Per user deploy, then per system deploy: the outcomes (state changes
  // and number diffs are the merger's input).
  std::vector<DeployOutcome> outcomes;
};

// A slash the block carries: the record and the key it slashes (the
// sender of the invalid block, which the caller finds in its DAG).
struct SlashToRun {
  block::SlashDeploy record;
  Bytes validator;
};

struct BlockReplayVerdict {
  enum class Kind : uint8_t {
    kOk,
    // The block does not replay: `reason` says where (which deploy, what
    // differed). Validation's InvalidTransaction.
    kInvalid,
    kInternalError,
  };
  Kind kind = Kind::kOk;
  std::string reason;
  absl::Status error;                   // kInternalError
  std::vector<DeployOutcome> outcomes;  // kOk: as PlayedBlock::outcomes
  bool ok() const { return kind == Kind::kOk; }
};

// How the last BlockExecutor::Replay ran (tests, metrics).
struct ReplayInfo {
  // Independent groups the user deploys formed (0: not computed: no lanes,
  // fewer than two deploys, or too little work per deploy).
  size_t groups = 0;
  bool parallel = false;   // the parallel run's result was used
  bool fell_back = false;  // a parallel run was dropped for a serial one
};

// Fewest recorded events per user deploy, on average over a block, for
// which replay runs on lanes: below it the per-deploy cost of running apart
// (the deposits in block order, the scopes' check) exceeds what the lanes
// save. Measured on a 2-core VM (bench_casper BM_ReplayBlock): 100 deploys
// of one send each (about 8 events) replay in 2.5 ms serially and 2.9 ms
// on 2 lanes; 100 deploys of a 20-round recursive contract (hundreds of
// events) in 29-41 ms serially and 22-27 ms on 2 lanes.
inline constexpr size_t kMinParallelEventsPerDeploy = 32;

struct BlockExecutorOptions {
  // Tests set 0 to put every block of two or more groups on the lanes.
  size_t min_parallel_events_per_deploy = kMinParallelEventsPerDeploy;
};

class BlockExecutor {
 public:
  // None owned; `executor` must run on `space`, and so must `lanes` (may
  // be null: replay is serial).
  BlockExecutor(rspace::Space* space, DeployExecutor* executor,
                ExecutorLanes* lanes = nullptr,
                BlockExecutorOptions options = {})
      : space_(space), executor_(executor), lanes_(lanes), options_(options) {}

  // Resets the space to `pre_state` and plays `deploys` (verified, in this
  // order), `slashes` and the close-block deploy; checkpoints. Errors are
  // internal: a deploy's own failure is in its record.
  absl::StatusOr<PlayedBlock> Play(const Hash32& pre_state,
                                   std::span<const SignedDeploy> deploys,
                                   std::span<const SlashToRun> slashes,
                                   const BlockEnv& env);

  // Replays `block` from its pre-state. `deploys` are its user deploys,
  // verified (the caller checked their signatures), in block order;
  // `slash_validators` the keys its slash system deploys slash, in order.
  BlockReplayVerdict Replay(const block::Block& block,
                            std::span<const SignedDeploy> deploys,
                            std::span<const Bytes> slash_validators);

  // The user deploy at a block index, verified; null when its signature
  // does not verify, which stops the replay with kInvalid. Asked for just
  // before the deploy replays, so its work (a signature check) can be left
  // to it: parallel replay asks from the lanes' threads at once, in any
  // order, and with lanes serial replay asks in block order while the
  // pool's other threads ask ahead (their answers unused). So it must be
  // thread-safe and give the same answer whenever asked for one index.
  using DeploySource = std::function<const SignedDeploy*(size_t index)>;
  BlockReplayVerdict Replay(const block::Block& block,
                            const DeploySource& deploys,
                            std::span<const Bytes> slash_validators);

  const ReplayInfo& last_replay() const { return last_replay_; }

 private:
  // Replays the user deploys from the current state into `outcomes`,
  // serially. An error verdict is the block's (or a local fault).
  std::optional<BlockReplayVerdict> ReplaySerially(
      const block::Block& block, const DeploySource& deploys,
      const rholang::interp::BlockInfo& info,
      std::vector<DeployOutcome>& outcomes);
  // The same on the lanes: true when every deploy replayed cleanly and
  // independently (then `outcomes` are serial replay's); false when the
  // caller must reset to the pre-state and replay serially. Errors are
  // local faults.
  absl::StatusOr<bool> ReplayInParallel(const block::Block& block,
                                        const DeploySource& deploys,
                                        const rholang::interp::BlockInfo& info,
                                        std::vector<DeployOutcome>& outcomes);
  // The lanes' groups by the block's event logs: per deploy of `block`, the
  // index of its group's first deploy. Deploys that write a channel, or
  // write and read it, share a group (the PoS vault's balance aside).
  // `pos` is the PoS vault's balance channel.
  void GroupDeploys(const block::Block& block, const Hash32& pos,
                    std::vector<uint32_t>& group);
  absl::StatusOr<Hash32> PosVaultChannel();

  rspace::Space* space_;
  DeployExecutor* executor_;
  ExecutorLanes* lanes_;
  const BlockExecutorOptions options_;
  std::optional<Hash32> pos_vault_channel_;
  ReplayInfo last_replay_;
};

}  // namespace rnode::casper

#endif  // RNODE_CASPER_EXECUTION_BLOCK_EXECUTOR_H_

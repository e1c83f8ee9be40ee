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
// Not thread-safe: one block at a time on the space.
#ifndef RNODE_CASPER_EXECUTION_BLOCK_EXECUTOR_H_
#define RNODE_CASPER_EXECUTION_BLOCK_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "casper/deploy.h"
#include "casper/execution/deploy_executor.h"
#include "rspace/space.h"

namespace rnode::casper {

// What a block records of a played user deploy: cost, and its failure as
// the wire's two flags (errored: the program ran and failed; system deploy
// error: the precharge failed and nothing ran).
block::ProcessedDeploy RecordDeploy(const SignedDeploy& deploy,
                                    const DeployOutcome& outcome);

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

class BlockExecutor {
 public:
  // Neither owned; `executor` must run on `space`.
  BlockExecutor(rspace::Space* space, DeployExecutor* executor)
      : space_(space), executor_(executor) {}

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

  // The user deploy at a block index, verified, asked for in block order
  // just before it replays (so signature checks can still be running on
  // other threads); null when its signature does not verify, which stops
  // the replay with kInvalid.
  using DeploySource = std::function<const SignedDeploy*(size_t index)>;
  BlockReplayVerdict Replay(const block::Block& block,
                            const DeploySource& deploys,
                            std::span<const Bytes> slash_validators);

 private:
  rspace::Space* space_;
  DeployExecutor* executor_;
};

}  // namespace rnode::casper

#endif  // RNODE_CASPER_EXECUTION_BLOCK_EXECUTOR_H_

// Block validation: the checks a block from a peer passes before it enters
// the DAG, in a documented order, with a typed verdict
// (docs/validation.md).
//
//   valid               every check passed (the replay's outcomes are in
//                       the verdict for the merger's index);
//   invalid(reason)     the block breaks a rule; slashable reasons are
//                       stored in the DAG marked invalid, as evidence;
//   missing dependency  a parent, a justification's block or a slashed
//                       block is not stored yet: the caller buffers the
//                       block and fetches them; never a judgement;
//   internal error      a local fault; never the block's fault;
//   stale               the block reaches below this node's floor (its
//                       number, a parent or its merge scope): the blocks
//                       and states it needs were deleted (retention) or
//                       never held (a joined node); dropped, never
//                       judged, never fetched again for it.
//
// Not thread-safe (it replays on the node's space). The block's deploy
// signatures are checked as the replay asks for the deploys (spread over
// the pool of the executor's lanes, when it has lanes); those the replay
// did not ask for are checked on the given pool.
#ifndef RNODE_CASPER_VALIDATION_VALIDATOR_H_
#define RNODE_CASPER_VALIDATION_VALIDATOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "casper/block/block.h"
#include "casper/contracts/pos.h"
#include "casper/dag/dag_store.h"
#include "casper/deploy.h"
#include "casper/deploy_rules.h"
#include "casper/execution/block_executor.h"
#include "casper/prestate/pre_state.h"
#include "util/limits.h"
#include "util/worker_pool.h"

namespace rnode::casper::validation {

// Why a block is invalid, in the order the checks run.
enum class InvalidReason : uint8_t {
  kInvalidBlockHash,           // The hash is not the rule's.
  kInvalidSignature,           // Unknown algorithm or bad signature.
  kInvalidFormat,              // No sender, or not the shard's version.
  kBlockTooLarge,              // Encoded above the shard's max-block-bytes.
  kInvalidShardId,             // Not this shard (the block or a deploy).
  kInvalidParents,             // None, repeated, too many, an invalid one,
                               // or main chains meeting too far down.
  kInvalidSender,              // Not bonded in the main parent's state.
  kInvalidFollows,             // Justifications: repeated, or not exactly
                               // the main parent's bonded validators.
  kInvalidBlockNumber,         // Not max(parent numbers) + 1.
  kInvalidSequenceNumber,      // Not the sender's justified block's + 1.
  kJustificationRegression,    // Justifies an older block of a validator
                               // than the sender's previous block did.
  kInvalidTimestamp,           // Before a parent's, or too far ahead.
  kContainsFutureDeploy,       // validAfterBlockNumber >= block number.
  kContainsExpiredDeploy,      // Past its lifespan.
  kContainsTimeExpiredDeploy,  // Expiration timestamp before the block's.
  kLowDeployCost,              // A deploy's phlo price is below the
                               // shard's minimum (DeployRules).
  kDeployAboveLimits,          // A deploy's phlo limit or term size is
                               // outside the shard's (DeployRules).
  kUnpaidDeploy,               // A deploy recorded as unable to pay its
                               // precharge (a creator leaves those out).
  kInvalidRepeatDeploy,        // Twice in the block, or already in its
                               // ancestry within the lifespan.
  kUnauthorizedSlash,          // Slashes for a block not known invalid.
  kNeglectedInvalidBlock,      // Justifies an invalid block without slashing
                               // its sender.
  kInvalidPreState,            // Pre-state is not what the parents give.
  kInvalidRejectedDeploy,      // Merge base or rejected deploys are not the
                               // merge's.
  kDeployNotSigned,            // A deploy's signature does not verify.
  kInvalidTransaction,         // Replay does not reproduce the block.
  kInvalidBondsCache,          // Bonds are not the post-state's.
  kEquivocation,               // The sender already has another block with
                               // this sequence number.
};
std::string_view InvalidReasonName(InvalidReason reason);
// Whether a block invalid for `reason` is evidence against its sender
// (stored marked invalid, its sender slashed); the others are dropped.
bool IsSlashable(InvalidReason reason);

struct Verdict {
  enum class Kind : uint8_t {
    kValid,
    kInvalid,
    kMissingDependency,
    kInternal,
    kStale
  };
  Kind kind = Kind::kValid;
  InvalidReason reason = InvalidReason::kInvalidBlockHash;  // kInvalid
  std::string detail;                   // kInvalid, kStale: what exactly
  std::vector<Hash32> missing;          // kMissingDependency, ascending
  absl::Status error;                   // kInternal
  std::vector<DeployOutcome> outcomes;  // kValid: per deploy and system deploy

  bool valid() const { return kind == Kind::kValid; }
};

struct ValidatorOptions {
  std::string shard_id = "root";
  // A block may be at most this far ahead of the local clock (the public
  // node's DRIFT).
  int64_t max_clock_drift_ms = 15'000;
  size_t max_parents = 100;
  int64_t deploy_lifespan = kDeployLifespanBlocks;
  // The rules every user deploy of a block keeps; their shard_id should be
  // shard_id.
  DeployRules deploy_rules;
  // The shard's largest block, encoded (casper.max-block-bytes).
  size_t max_block_bytes = limits::kMaxBlockBytes;
  // A consensus rule (dag::kMaxMergeDepth); other values are for tests.
  int64_t max_merge_depth = dag::kMaxMergeDepth;
};

class BlockValidator {
 public:
  // None owned; all must outlive the validator. `pool` (the node's) may be
  // null (serial signature checks after the replay); `pre_states` may be
  // null (then a block with several parents is an internal error, never a
  // judgement).
  BlockValidator(dag::DagStore* dag, BlockExecutor* executor,
                 contracts::ValidatorsCache* validators, WorkerPool* pool,
                 ValidatorOptions options,
                 prestate::PreStateBuilder* pre_states = nullptr)
      : dag_(dag),
        executor_(executor),
        validators_(validators),
        pool_(pool),
        pre_states_(pre_states),
        options_(std::move(options)) {}

  // Runs the checks on `block` (not yet in the DAG) at local time `now_ms`,
  // in the order of docs/validation.md's table (CheckSeal to
  // CheckEquivocation in validator.cc); the first that fails gives the
  // verdict. Leaves the space at the block's post-state when valid.
  Verdict Validate(const block::Block& block, int64_t now_ms);

 private:
  dag::DagStore* dag_;
  BlockExecutor* executor_;
  contracts::ValidatorsCache* validators_;
  WorkerPool* pool_;
  prestate::PreStateBuilder* pre_states_;
  const ValidatorOptions options_;
};

}  // namespace rnode::casper::validation

#endif  // RNODE_CASPER_VALIDATION_VALIDATOR_H_

// Block creation (docs/validation.md "Creating a block"): parents from fork
// choice, the pre-state of the main parent, deploys from the pool that fit
// the block and are not in its ancestry, play (leaving out the deploys
// whose deployer cannot pay), close block, one checkpoint, the post-state's
// bonds, justifications of every bonded validator, seal.
//
// With max_parents above 1 and a pre-state builder, a block has fork
// choice's first parents and the merge of their scope as its pre-state.
//
// Not thread-safe (it plays on the node's space).
#ifndef RNODE_CASPER_PROPOSER_BLOCK_CREATOR_H_
#define RNODE_CASPER_PROPOSER_BLOCK_CREATOR_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "casper/contracts/pos.h"
#include "casper/dag/dag_store.h"
#include "casper/deploy_rules.h"
#include "casper/execution/block_executor.h"
#include "casper/pool/deploy_pool.h"
#include "casper/prestate/pre_state.h"
#include "util/limits.h"

namespace rnode::casper::proposer {

struct CreatorOptions {
  std::string shard_id = "root";
  // The public node's cap on user deploys per block.
  size_t max_deploys = 128;
  int64_t deploy_lifespan = pool::kDeployLifespanBlocks;
  // Parents a block may have (fork choice's first ones); more than one
  // needs a pre-state builder (the merge).
  size_t max_parents = 1;
  // A pooled deploy that breaks these stays out of the block (the pool
  // refuses such deploys; this covers a pool from before a rule).
  DeployRules deploy_rules;
  // The shard's largest block, encoded (casper.max-block-bytes): the
  // creator takes fewer deploys rather than make a larger one.
  size_t max_block_bytes = limits::kMaxBlockBytes;
  // A consensus rule (dag::kMaxMergeDepth): parents whose main chain meets
  // the main parent's further down are left out. Other values are for
  // tests.
  int64_t max_merge_depth = dag::kMaxMergeDepth;
};

class BlockCreator {
 public:
  // None owned; all must outlive the creator.
  BlockCreator(dag::DagStore* dag, pool::DeployPool* pool,
               BlockExecutor* executor, contracts::ValidatorsCache* validators,
               CreatorOptions options,
               prestate::PreStateBuilder* pre_states = nullptr)
      : dag_(dag),
        pool_(pool),
        executor_(executor),
        validators_(validators),
        pre_states_(pre_states),
        options_(std::move(options)) {}

  // Makes and seals a block by `key` at `now_ms`. nullopt when there is no
  // deploy to include and `allow_empty` is false. FailedPrecondition when
  // the key is not bonded in the parent's state; errors otherwise are
  // internal. The block is not inserted: the caller stores and announces it.
  absl::StatusOr<std::optional<block::Block>> Create(
      const crypto::Secp256k1PrivateKey& key, int64_t now_ms,
      bool allow_empty = false);

  // A deploy Create left out of its block and dropped from the pool: it
  // can never go in a block made here.
  struct LeftOut {
    enum class Why : uint8_t {
      kUnpaid,    // its deployer could not pay its precharge
      kTooLarge,  // a block with it alone is over max_block_bytes
    };
    Bytes sig;
    Why why = Why::kUnpaid;
  };
  // The deploys left out since the last call, oldest first; at most
  // kLeftOutKept, the oldest forgotten first.
  std::vector<LeftOut> TakeLeftOut();
  static constexpr size_t kLeftOutKept = 4096;

 private:
  absl::StatusOr<PlayedBlock> PlayPaid(const Hash32& pre_state,
                                       std::vector<SignedDeploy>& deploys,
                                       std::span<const SlashToRun> slashes,
                                       const BlockEnv& env);
  absl::Status Shrink(const block::Block& b, size_t bytes,
                      std::vector<SignedDeploy>& deploys);
  void Leave(const Bytes& sig, LeftOut::Why why);

  dag::DagStore* dag_;
  pool::DeployPool* pool_;
  BlockExecutor* executor_;
  contracts::ValidatorsCache* validators_;
  prestate::PreStateBuilder* pre_states_;
  const CreatorOptions options_;
  std::deque<LeftOut> left_out_;
};

}  // namespace rnode::casper::proposer

#endif  // RNODE_CASPER_PROPOSER_BLOCK_CREATOR_H_

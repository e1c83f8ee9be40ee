// The pre-state of a block from its parents (docs/validation.md
// "Multi-parent blocks"): one parent's post-state, or the merge of the
// parents' scope over their merge base.
//
// The merge base is the highest block on the main parent's main chain that
// every parent descends from (dag::MergeBaseOf); the scope is every block
// that is an ancestor of (or is) a parent but not an ancestor of the base.
// The merger (casper/merge) combines the scope's deploys over the base's
// post-state and rejects conflicting branches, preferring the branches of
// deploys the main parent's state holds (so a merge never undoes what its
// main parent kept); the result is the same on every node that holds the
// same blocks.
//
// The merger reads each scope block's index (built once, when the block is
// admitted or created, from its deploys' outcomes); the builder keeps them
// in a bounded cache, and rebuilds one it does not hold (evicted, or the
// block was admitted before a restart) by replaying the stored block on
// the replayer it was given. Not thread-safe.
#ifndef RNODE_CASPER_PRESTATE_PRE_STATE_H_
#define RNODE_CASPER_PRESTATE_PRE_STATE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "casper/dag/dag_store.h"
#include "casper/execution/block_executor.h"
#include "casper/execution/deploy_executor.h"
#include "casper/merge/block_index.h"
#include "casper/merge/merge_context.h"
#include "casper/merge/merger.h"
#include "casper/merge/number_channel.h"
#include "rspace/history/history.h"
#include "util/bounded_cache.h"
#include "util/logging.h"

namespace rnode::casper::prestate {

struct PreState {
  Hash32 root{};
  // nullopt for a single parent (the pre-state is its post-state).
  std::optional<Hash32> merge_base;
  // The scope's user deploys the merge rejected, ascending by signature.
  std::vector<block::RejectedDeploy> rejected;
};

class PreStateBuilder {
 public:
  // Indexes of the scope blocks a node keeps: blocks above the last
  // finalized one, with room to spare.
  static constexpr size_t kDefaultIndexCapacity = 4096;

  // None owned; all must outlive the builder.
  PreStateBuilder(dag::DagStore* dag, rspace::History* history,
                  const merge::NumberChannelCodec* codec,
                  rspace::TermFactory term_factory,
                  merge::MergeContext* context,
                  size_t index_capacity = kDefaultIndexCapacity)
      : dag_(dag),
        history_(history),
        codec_(codec),
        term_factory_(std::move(term_factory)),
        context_(context),
        indexes_(index_capacity) {}

  // Builds and keeps the merger's index of an admitted or created block,
  // from its deploys' outcomes (per user deploy, then per system deploy, as
  // BlockExecutor gives them). InvalidArgument if the counts differ.
  absl::Status Remember(const block::Block& block,
                        std::span<const DeployOutcome> outcomes);

  // The pre-state of a block on `parents` (stored). Errors are internal
  // (a scope block's index neither kept nor rebuilt, the merger's faults).
  // Rebuilding an index replays on the replayer's space: the caller resets
  // the space before using it again (validation and creation do).
  absl::StatusOr<PreState> Compute(std::span<const Hash32> parents);

  // Scope blocks whose index is not kept are replayed on `replayer` (not
  // owned; may be null: then Compute fails for them, FailedPrecondition).
  void set_replayer(BlockExecutor* replayer) { replayer_ = replayer; }

  // Indexes rebuilt by replay so far (tests, metrics).
  uint64_t rebuilt() const { return rebuilt_; }

  // Called after every merge Compute runs, with its step timings and
  // counts (the node's metrics). Runs on the caller's thread.
  using MergeObserver = std::function<void(const merge::MergeMetrics&)>;
  void set_merge_observer(MergeObserver observer) {
    merge_observer_ = std::move(observer);
  }

 private:
  dag::DagStore* dag_;
  rspace::History* history_;
  const merge::NumberChannelCodec* codec_;
  rspace::TermFactory term_factory_;
  merge::MergeContext* context_;
  // What a merge needs of a scope block: its index, and its user deploys'
  // signatures (to tell them from its system deploys among the rejected).
  struct Kept {
    std::shared_ptr<const merge::BlockIndex> index;
    std::vector<Bytes> user_sigs;
  };
  // Builds and keeps the index of `block` (Remember's work).
  absl::StatusOr<std::shared_ptr<const Kept>> Keep(
      const block::Block& block, std::span<const DeployOutcome> outcomes);
  // The kept index of `hash`, rebuilt by replay when not kept.
  absl::StatusOr<std::shared_ptr<const Kept>> KeptOf(const Hash32& hash);

  BoundedCache<Hash32, std::shared_ptr<const Kept>, Hash32Hasher> indexes_;
  BlockExecutor* replayer_ = nullptr;
  // A merge rejecting a copy finalized here: a peer's block can cause it,
  // so its lines are rate-limited.
  RateLimitedLog finalized_log_{"casper", kPeerLogLinesPerSecond};
  MergeObserver merge_observer_;
  uint64_t rebuilt_ = 0;
};

}  // namespace rnode::casper::prestate

#endif  // RNODE_CASPER_PRESTATE_PRE_STATE_H_

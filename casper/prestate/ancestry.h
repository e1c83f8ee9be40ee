// Whether a deploy's effect is already in the state a block is built on:
// what the proposer leaves out and the validator refuses as a repeat, and
// what a deploy's status is read from (docs/validation.md "A deploy
// again").
//
// A state of the DAG holds the effect of at most one copy of a deploy
// (a copy: a block that includes it). The post-state of block X holds X's
// own copies and whatever its pre-state holds; the pre-state of
//   - a block without parents holds nothing;
//   - a block of one parent P holds what P's post-state holds;
//   - a block of several parents, merged over base M (the block records
//     M and the deploys its merge rejected), holds what M's post-state
//     holds, and the copies in its merge scope (ancestors of a parent that
//     are not ancestors of M) of every deploy the merge did not reject.
// A deploy may go in a block whose pre-state does not hold it: once more
// after a merge rejected it, never twice. The merger rejects a scope copy
// whose deploy the base already holds, so no state applies a deploy twice.
#ifndef RNODE_CASPER_PRESTATE_ANCESTRY_H_
#define RNODE_CASPER_PRESTATE_ANCESTRY_H_

#include <cstdint>
#include <optional>
#include <span>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "casper/dag/dag_store.h"
#include "util/bytes.h"

namespace rnode::casper::prestate {

// The pre-state of a block as the block records it (or as its creator
// computed it): its parents, and for two or more parents the merge base
// and the deploys the merge rejected.
struct PreStateRecord {
  std::span<const Hash32> parents;
  std::optional<Hash32> merge_base;
  std::span<const block::RejectedDeploy> rejected;
};

// The block whose copy of the deploy `sig` has its effect in the pre-state
// `pre` (parents stored); nullopt when the pre-state does not hold it.
// Copies in blocks numbered below `min_number` are not looked for (a copy
// that old is outside the window of any block the caller asks about).
// When several scope copies are in play and the merge kept the deploy, the
// copy answered is the highest-numbered one (then the smallest hash): the
// block does not record which copy the merge kept.
// Errors: the DAG's; DataLoss for a multi-parent block on the way that
// does not record its merge base.
absl::StatusOr<std::optional<Hash32>> CopyInPreState(dag::DagStore& dag,
                                                     const PreStateRecord& pre,
                                                     ByteView sig,
                                                     int64_t min_number);

// The same for the post-state of the stored block `block`.
absl::StatusOr<std::optional<Hash32>> CopyInPostState(dag::DagStore& dag,
                                                      const Hash32& block,
                                                      ByteView sig,
                                                      int64_t min_number);

// A deploy and the block whose copy of it a state holds.
struct HeldCopy {
  Bytes sig;
  Hash32 block{};
  bool operator==(const HeldCopy&) const = default;
};

// For each of `sigs`, the copy CopyInPostState(dag, main, sig, 0) answers
// when that copy is a block `in_scope` accepts; the others are left out.
// In the order of `sigs`.
// `in_scope` must accept a set closed upwards within main's ancestry: an
// ancestor of `main` it refuses has no ancestor it accepts. The scope of a
// merge (ancestors of its parents that are not ancestors of its base) is
// such a set. Cost: one walk of main's path through the set (single
// parents and merge bases) and of the set's blocks under it, then per
// deploy its copies; a copy outside the set costs a few ancestry walks.
// CopyInPostState per deploy walks the DAG once per deploy instead.
// Errors: CopyInPostState's.
absl::StatusOr<std::vector<HeldCopy>> ScopeCopiesInPostState(
    dag::DagStore& dag, const Hash32& main,
    absl::FunctionRef<bool(const Hash32&)> in_scope,
    std::span<const Bytes> sigs);

// The deploy `sig` as the first valid stored block holding it records it
// (deploy index order), of a block by `sender` when given; nullopt when
// there is none. Errors: the DAG's.
absl::StatusOr<std::optional<block::ProcessedDeploy>> StoredCopy(
    dag::DagStore& dag, ByteView sig,
    const crypto::Secp256k1PublicKey* sender = nullptr);

// Whether `rejected` (a block's record, ascending by signature) names
// `sig`.
bool NamesRejected(std::span<const block::RejectedDeploy> rejected,
                   ByteView sig);

}  // namespace rnode::casper::prestate

#endif  // RNODE_CASPER_PRESTATE_ANCESTRY_H_

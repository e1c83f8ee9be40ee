// Fork choice: LMD-GHOST over the validators' latest messages, weighted by
// stake, with deterministic tie-breaks (docs/consensus.md).
//
//   1. Latest messages of validators without weight are dropped, and so
//      are those numbered below the last finalized block: finality is not
//      undone, so they vote for nothing still open, and the blocks under
//      a long-silent validator's message may be deleted (retention keeps
//      the message itself, not its chain). With none left, the result is
//      the last finalized block.
//   2. The base is the highest block on the main-parent chain of every
//      remaining latest message.
//   3. Each validator's weight is added to every block on its latest
//      message's main-parent chain, from the message down to the base.
//   4. From the base, every tip is replaced by its scored children (score
//      descending, then hash ascending) until nothing changes; the result's
//      first block is the main parent, the rest are secondary parents.
//   5. At most `max_parents` are kept (the main parent always), and
//      secondary parents more than `max_parent_depth` below the main parent
//      are dropped.
#ifndef RNODE_CASPER_CONSENSUS_FORK_CHOICE_H_
#define RNODE_CASPER_CONSENSUS_FORK_CHOICE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "casper/dag/dag_store.h"
#include "util/bytes.h"

namespace rnode::casper::consensus {

using LatestMessages = std::map<crypto::Secp256k1PublicKey, Hash32>;

// Stake by validator; validators absent or with stake 0 have no weight.
using Weights = std::map<crypto::Secp256k1PublicKey, int64_t>;
Weights WeightsOf(const std::vector<block::Bond>& bonds);

struct ForkChoiceOptions {
  // The public node's defaults (max-number-of-parents, max-parent-depth).
  size_t max_parents = 100;
  int64_t max_parent_depth = 15;
};

struct ForkChoice {
  std::vector<Hash32> parents;  // Main parent first; never empty.
  Hash32 base{};                // Step 2's block.
};

// Fork choice over `dag` for `latest` (every hash a stored block) weighted
// by `weights`. With no weighted latest message at or above the last
// finalized block's number, the result is the last finalized block, or the
// DAG's lowest block when none is finalized.
// FailedPrecondition for an empty DAG or a latest message that is not
// stored; OutOfRange if a block's score overflows int64.
absl::StatusOr<ForkChoice> ChooseParents(const dag::DagStore& dag,
                                         const LatestMessages& latest,
                                         const Weights& weights,
                                         const ForkChoiceOptions& options = {});

// The main-parent chain of `hash` from it down to (and including) the
// first block of number <= `floor` on it, or to the DAG's root. The DAG's
// error (NotFound for a block not stored) when one cannot be read.
absl::StatusOr<std::vector<Hash32>> MainChain(const dag::DagStore& dag,
                                              const Hash32& hash,
                                              int64_t floor = 0);

}  // namespace rnode::casper::consensus

#endif  // RNODE_CASPER_CONSENSUS_FORK_CHOICE_H_

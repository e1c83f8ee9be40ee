// Finality: the clique oracle's fault tolerance of a block and the search
// for a new last finalized block (docs/consensus.md).
//
// For a target block T and the validators' latest messages, weighted by the
// bonds of T's main parent (T's own for a root):
//   - a validator agrees with T when T is on its latest message's
//     main-parent chain (not merely an ancestor: in a merging DAG both
//     sides of a conflict are ancestors of later blocks);
//   - two agreeing validators a and b are joined when neither can yet see
//     the other disagree: every block b made after the one a's latest
//     message justifies for b (and vice versa) agrees with T;
//   - q is the largest total weight of a set of pairwise joined validators,
//     S the total weight; the fault tolerance is (2q - S) / S, in [-1, 1],
//     and -1 when the agreeing weight is not more than half of S.
// T is final for a threshold t (parts per million) when its fault
// tolerance exceeds t, decided in exact integer arithmetic.
#ifndef RNODE_CASPER_CONSENSUS_FINALITY_H_
#define RNODE_CASPER_CONSENSUS_FINALITY_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "casper/consensus/fork_choice.h"
#include "casper/dag/dag_store.h"

namespace rnode::casper::consensus {

struct FaultTolerance {
  int64_t clique_weight = 0;  // q; 0 when the agreeing weight is <= S/2.
  int64_t total_weight = 0;   // S
  // (2q - S) * 10^6 > S * threshold_ppm (false when S is 0).
  bool Exceeds(int64_t threshold_ppm) const;
  // (2q - S) / S for display; -1 when S is 0.
  double value() const;
};

// The clique oracle for `target` (a stored block). FailedPrecondition if
// it or a latest message is not stored.
absl::StatusOr<FaultTolerance> CliqueOracle(const dag::DagStore& dag,
                                            const Hash32& target,
                                            const LatestMessages& latest);

// Largest total weight of a set of pairwise joined vertices; `joined` is
// symmetric, indexed like `weights`. Bron-Kerbosch with pivoting.
int64_t MaxWeightClique(const std::vector<int64_t>& weights,
                        const std::vector<std::vector<bool>>& joined);

struct FinalizerOptions {
  // The public node's default fault-tolerance-threshold (0.1).
  int64_t threshold_ppm = 100'000;
  // Candidates examined per call, highest first.
  size_t max_candidates = 128;
};

// The highest block on a latest message's main chain, above and descending
// from the current last finalized block, whose fault tolerance exceeds the
// threshold; nullopt when there is none.
absl::StatusOr<std::optional<Hash32>> FindNewLastFinalized(
    const dag::DagStore& dag, const LatestMessages& latest,
    const FinalizerOptions& options = {});

}  // namespace rnode::casper::consensus

#endif  // RNODE_CASPER_CONSENSUS_FINALITY_H_

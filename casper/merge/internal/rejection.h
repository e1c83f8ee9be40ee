// The cost-optimal rejected set over branches (docs/merge.md §5.2-5.3).
#ifndef RNODE_CASPER_MERGE_INTERNAL_REJECTION_H_
#define RNODE_CASPER_MERGE_INTERNAL_REJECTION_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "casper/merge/merger.h"

namespace rnode::casper::merge::internal {

struct RejectionProblem {
  std::vector<uint64_t> cost;                            // Per branch.
  std::vector<std::optional<RejectReason>> prerejected;  // Per branch.
  std::vector<bool> base_join;                           // Per branch.
  std::vector<ConflictGroup> groups;                     // Groups with an edge.
  std::vector<__int128> base_values;                     // Per number channel.
  // Per branch: (number channel index, diff), ascending channel index.
  std::vector<std::vector<std::pair<uint32_t, __int128>>> diffs;
};

struct RejectionSolution {
  std::vector<bool> rejected;        // Per branch.
  std::vector<RejectReason> reason;  // Per branch, meaningful if rejected.
  size_t components = 0;
  size_t exact_components = 0;
  size_t greedy_components = 0;
};

RejectionSolution SolveRejection(const RejectionProblem& problem);

}  // namespace rnode::casper::merge::internal

#endif  // RNODE_CASPER_MERGE_INTERNAL_REJECTION_H_

// The cost-optimal rejected set over branches (docs/merge.md §5.2-5.3).
#ifndef RNODE_CASPER_MERGE_INTERNAL_REJECTION_H_
#define RNODE_CASPER_MERGE_INTERNAL_REJECTION_H_

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "casper/merge/merger.h"

namespace rnode::casper::merge::internal {

// Per-branch lists of (number channel index, diff) in one flat array.
class BranchDiffs {
 public:
  using Entry = std::pair<uint32_t, __int128>;

  // Appends the list of the next branch.
  void Append(std::span<const Entry> entries) {
    items_.insert(items_.end(), entries.begin(), entries.end());
    end_.push_back(static_cast<uint32_t>(items_.size()));
  }
  std::span<const Entry> operator[](size_t branch) const {
    const uint32_t begin = branch == 0 ? 0 : end_[branch - 1];
    return {items_.data() + begin, end_[branch] - begin};
  }
  size_t size() const { return end_.size(); }

 private:
  std::vector<Entry> items_;
  std::vector<uint32_t> end_;  // Per branch, one past its last entry.
};

// The inputs of SolveRejection; the spans and `diffs` are borrowed from the
// merge's steps (no copy per merge) and must outlive the call.
struct RejectionProblem {
  // Per branch: its phlo cost, plus, for a preferred branch (Decide), a
  // weight above the sum of every other branch's cost.
  std::vector<unsigned __int128> cost;
  std::span<const std::optional<RejectReason>> prerejected;  // Per branch.
  std::vector<bool> base_join;                               // Per branch.
  std::span<const ConflictGroup> groups;  // Groups with an edge.
  std::span<const __int128> base_values;  // Per number channel.
  // Per branch: (number channel index, diff), ascending channel index. Not
  // null.
  const BranchDiffs* diffs = nullptr;
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

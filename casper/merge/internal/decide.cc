// Step 5: the base values of number channels, the branches' number diffs,
// and the rejected set with the rejected deploys.
#include <algorithm>

#include "casper/merge/internal/hash_key.h"
#include "casper/merge/internal/steps.h"
#include "util/status_macros.h"

namespace rnode::casper::merge::internal {

absl::StatusOr<NumberBases> ReadNumberBases(const ScopeIndex& index,
                                            const Branches& branches,
                                            const BaseSnapshot& base,
                                            const NumberChannelCodec* codec) {
  RETURN_IF_ERROR(CheckPlanFits(base.plan, index));
  NumberBases out;
  const std::vector<Hash32>& numbers = index.numbers;
  for (uint32_t i = 0; i < numbers.size(); ++i) {
    if (codec == nullptr) {
      return absl::InvalidArgumentError("merge: number diffs without a codec");
    }
    const BaseLeaf& leaf = base.At(base.plan.number_leaf[i]);
    ASSIGN_OR_RETURN(int64_t v, codec->Read(leaf.state));
    if (v < 0) {
      return absl::FailedPreconditionError(
          "merge: base value of number channel " + HexEncode(numbers[i]) +
          " is negative");
    }
    out.values.push_back(v);
  }
  std::vector<BranchDiffs::Entry> sums;
  for (uint32_t b = 0; b < branches.count; ++b) {
    sums.clear();
    for (uint32_t g : branches.chains_of(b)) {
      for (const auto& [ch, d] :
           index.flat_of(g).number_diffs.of(index.local_of(g))) {
        uint32_t idx = static_cast<uint32_t>(
            std::lower_bound(numbers.begin(), numbers.end(), ch, Hash32Less()) -
            numbers.begin());
        sums.emplace_back(idx, d);
      }
    }
    if (sums.size() > 1) {
      std::sort(sums.begin(), sums.end(),
                [](const auto& x, const auto& y) { return x.first < y.first; });
      size_t w = 0;
      for (size_t r = 1; r < sums.size(); ++r) {
        if (sums[r].first == sums[w].first) {
          sums[w].second += sums[r].second;
        } else {
          sums[++w] = sums[r];
        }
      }
      sums.resize(w + 1);
    }
    out.diffs.Append(sums);
  }
  return out;
}

Decision Decide(const Branches& branches, const Conflicts& conflicts,
                const BaseChecks& checks, const NumberBases& numbers) {
  const uint32_t nb = branches.count;
  RejectionProblem problem;
  problem.cost.resize(nb);
  // A preferred branch weighs more than all the others together: rejecting
  // one is worse than rejecting every other branch (docs/merge.md §5.2).
  unsigned __int128 weight = 1;
  const std::vector<bool>& preferred = conflicts.preferred;
  for (uint32_t b = 0; b < nb; ++b) {
    problem.cost[b] = branches.info[b].cost;
    if (preferred.empty() || !preferred[b]) weight += problem.cost[b];
  }
  for (uint32_t b = 0; b < nb && !preferred.empty(); ++b) {
    if (preferred[b]) problem.cost[b] += weight;
  }
  problem.prerejected = checks.prerejected;
  problem.base_join = checks.base_join;
  problem.groups = conflicts.groups;
  problem.base_values = numbers.values;
  problem.diffs = &numbers.diffs;
  RejectionSolution solution = SolveRejection(problem);
  Decision d;
  d.components = solution.components;
  d.exact_components = solution.exact_components;
  d.greedy_components = solution.greedy_components;
  d.rejected = std::move(solution.rejected);
  d.reason = std::move(solution.reason);
  for (uint32_t b = 0; b < nb; ++b) d.rejected_branches += d.rejected[b];
  if (d.rejected_branches == 0) return d;
  const std::vector<DeployRef>& ids = conflicts.ids;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i + 1;
    bool kept = !d.rejected[ids[i].branch];
    while (j < ids.size() && ids[j].prefix == ids[i].prefix &&
           *ids[j].id == *ids[i].id) {
      kept |= !d.rejected[ids[j].branch];
      ++j;
    }
    if (!kept)
      d.rejected_deploys.push_back({*ids[i].id, d.reason[ids[i].branch]});
    i = j;
  }
  return d;
}

}  // namespace rnode::casper::merge::internal

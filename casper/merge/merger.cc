// The merge as a sequence of named steps (casper/merge/internal/steps.h):
// scope index, base prefetch, branches, conflicts, base checks, rejection,
// combine, trie actions, apply.
#include "casper/merge/merger.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <utility>

#include "casper/merge/internal/steps.h"
#include "util/status_macros.h"

namespace rnode::casper::merge {
namespace {

using Clock = std::chrono::steady_clock;

int64_t SinceNs(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0)
      .count();
}

}  // namespace

const char* RejectReasonName(RejectReason reason) {
  switch (reason) {
    case RejectReason::kConflict:
      return "conflict";
    case RejectReason::kNumberChannel:
      return "number-channel";
    case RejectReason::kDuplicateInBranch:
      return "duplicate-in-branch";
    case RejectReason::kUnavailable:
      return "unavailable";
    case RejectReason::kSettledInBase:
      return "settled-in-base";
  }
  return "unknown";
}

absl::StatusOr<MergeResult> Merge(
    rspace::History& history, const Hash32& base_root,
    std::span<const std::shared_ptr<const BlockIndex>> scope,
    const MergeOptions& options, MergeContext& context) {
  MergeResult result;
  MergeMetrics& m = result.metrics;
  internal::MergeScratch& scratch = context.scratch();

  auto t0 = Clock::now();
  ASSIGN_OR_RETURN(internal::ScopeIndex index,
                   internal::IndexScope(scope, options.number_codec));
  m.blocks = index.blocks.size();
  m.chains = index.chains();
  m.deploys = index.deploys;
  // Every base channel the merge may read, planned from the index and read
  // in one batch; with a helper thread that overlaps the next two steps.
  // Declared after `index`, which it reads: destroyed (joined) first.
  internal::PendingBase pending = internal::StartReadBase(
      context, index,
      [&history, root = base_root](std::span<const Hash32> channels) {
        return history.ReadLeaves(root, channels);
      },
      options.term_factory);
  m.index_ns = SinceNs(t0);

  t0 = Clock::now();
  ASSIGN_OR_RETURN(internal::Branches branches,
                   internal::BuildBranches(index, scratch));
  m.branches = branches.count;
  m.branches_ns = SinceNs(t0);

  t0 = Clock::now();
  internal::Conflicts conflicts =
      internal::CollectConflicts(index, branches, scratch);
  internal::MarkSettled(conflicts, options.settled);
  internal::MarkPreferred(conflicts, index, branches, options.preferred);
  const auto wait0 = Clock::now();
  ASSIGN_OR_RETURN(std::unique_ptr<internal::BaseSnapshot> base,
                   pending.Wait());
  m.base_wait_ns = SinceNs(wait0);
  m.base_read_ns = base->read_ns;
  m.base_plan_ns = base->plan_ns;
  m.channels_read = base->leaves.size();
  ASSIGN_OR_RETURN(internal::BaseChecks checks,
                   internal::CheckBase(index, branches, conflicts, *base));
  for (uint32_t b = 0; b < branches.count; ++b) {
    if (checks.base_join[b]) result.base_join_branches.push_back(b);
  }
  m.conflict_groups = conflicts.groups.size();
  m.base_join_branches = result.base_join_branches.size();
  m.conflicts_ns = SinceNs(t0);

  t0 = Clock::now();
  ASSIGN_OR_RETURN(
      internal::NumberBases numbers,
      internal::ReadNumberBases(index, branches, *base, options.number_codec));
  internal::Decision decision =
      internal::Decide(branches, conflicts, checks, numbers);
  m.components = decision.components;
  m.exact_components = decision.exact_components;
  m.greedy_components = decision.greedy_components;
  m.rejected_branches = decision.rejected_branches;
  m.rejected_deploys = decision.rejected_deploys.size();
  m.rejection_ns = SinceNs(t0);

  t0 = Clock::now();
  ASSIGN_OR_RETURN(internal::CombinedState combined,
                   internal::Combine(index, branches, decision, numbers, *base,
                                     options.number_codec, context.pool(),
                                     context.options().parallel_grain));
  m.combine_ns = SinceNs(t0);

  t0 = Clock::now();
  std::vector<rspace::LeafUpdate> updates = internal::TrieActions(
      combined, context.pool(), context.options().parallel_grain);
  m.leaves_written = updates.size();
  m.trie_actions_ns = SinceNs(t0);

  t0 = Clock::now();
  ASSIGN_OR_RETURN(result.root,
                   internal::ApplyUpdates(history, base_root,
                                          std::move(updates), context.pool()));
  m.apply_ns = SinceNs(t0);

  result.branches = std::move(branches.info);
  for (uint32_t b = 0; b < result.branches.size(); ++b) {
    if (!decision.rejected[b]) continue;
    result.branches[b].rejected = true;
    result.branches[b].reason = decision.reason[b];
  }
  result.rejected = std::move(decision.rejected_deploys);
  result.conflicts = std::move(conflicts.groups);
  context.TrimScratch();
  // Freeing the decoded base states is the bulk of the merge's teardown;
  // with a helper thread it overlaps the caller's next steps.
  std::shared_ptr<internal::BaseSnapshot> done(std::move(base));
  context.Release([done = std::move(done)]() mutable { done.reset(); });
  return result;
}

absl::StatusOr<MergeResult> Merge(
    rspace::History& history, const Hash32& base_root,
    std::span<const std::shared_ptr<const BlockIndex>> scope,
    const MergeOptions& options) {
  MergeContext context;
  return Merge(history, base_root, scope, options, context);
}

std::vector<std::pair<uint32_t, uint32_t>> ExpandConflictPairs(
    const MergeResult& result) {
  std::set<std::pair<uint32_t, uint32_t>> pairs;
  auto add = [&](uint32_t x, uint32_t y) {
    if (x != y) pairs.emplace(std::min(x, y), std::max(x, y));
  };
  for (const ConflictGroup& g : result.conflicts) {
    if (g.a_clique) {
      for (uint32_t x : g.a) {
        for (uint32_t y : g.a) add(x, y);
      }
    }
    for (uint32_t x : g.a) {
      for (uint32_t y : g.b) add(x, y);
    }
  }
  const uint32_t n = static_cast<uint32_t>(result.branches.size());
  for (uint32_t j : result.base_join_branches) {
    for (uint32_t y = 0; y < n; ++y) add(j, y);
  }
  return {pairs.begin(), pairs.end()};
}

}  // namespace rnode::casper::merge

// LMD-GHOST fork choice.
#include "casper/consensus/fork_choice.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "util/status_macros.h"

namespace rnode::casper::consensus {

Weights WeightsOf(const std::vector<block::Bond>& bonds) {
  Weights out;
  for (const auto& b : bonds) {
    if (b.stake > 0) out[b.validator] = b.stake;
  }
  return out;
}

absl::StatusOr<std::vector<Hash32>> MainChain(const dag::DagStore& dag,
                                              const Hash32& hash,
                                              int64_t floor) {
  std::vector<Hash32> out;
  ASSIGN_OR_RETURN(auto meta, dag.Meta(hash));
  while (true) {
    out.push_back(meta->hash);
    if (meta->block_number <= floor || meta->parents.empty()) break;
    ASSIGN_OR_RETURN(meta, dag.Meta(meta->parents.front()));
  }
  return out;
}

absl::StatusOr<ForkChoice> ChooseParents(const dag::DagStore& dag,
                                         const LatestMessages& latest,
                                         const Weights& weights,
                                         const ForkChoiceOptions& options) {
  // Step 1: weighted latest messages, from the last finalized number up.
  ASSIGN_OR_RETURN(const int64_t lowest_number, dag::LastFinalizedNumber(dag));
  std::vector<std::pair<std::shared_ptr<const dag::BlockMeta>, int64_t>>
      messages;
  for (const auto& [validator, hash] : latest) {
    auto w = weights.find(validator);
    if (w == weights.end() || w->second <= 0) continue;
    absl::StatusOr<std::shared_ptr<const dag::BlockMeta>> meta = dag.Meta(hash);
    if (absl::IsNotFound(meta.status())) {
      return absl::FailedPreconditionError("latest message " + HexEncode(hash) +
                                           " is not stored");
    }
    RETURN_IF_ERROR(meta.status());
    if ((*meta)->block_number < lowest_number) continue;
    messages.emplace_back(*std::move(meta), w->second);
  }
  if (messages.empty()) {
    ForkChoice out;
    if (auto lfb = dag.LastFinalized(); lfb.has_value()) {
      out.base = *lfb;
    } else {
      const int64_t top = dag.MaxHeight();
      std::vector<Hash32> lowest;
      for (int64_t n = 0; n <= top && lowest.empty(); ++n) {
        lowest = dag.AtHeight(n);
      }
      if (lowest.empty()) return absl::FailedPreconditionError("empty DAG");
      out.base = lowest.front();
    }
    out.parents = {out.base};
    return out;
  }

  // Step 2: walk cursors down their main chains, always the highest ones,
  // until they meet.
  std::vector<std::shared_ptr<const dag::BlockMeta>> cursors;
  cursors.reserve(messages.size());
  for (const auto& [meta, w] : messages) cursors.push_back(meta);
  ASSIGN_OR_RETURN(const std::shared_ptr<const dag::BlockMeta> base,
                   dag::MainChainMeet(dag, std::move(cursors)));

  // Step 3: scores on each message's main chain above the base.
  absl::flat_hash_map<Hash32, int64_t, Hash32Hasher> score;
  for (const auto& [meta, w] : messages) {
    ASSIGN_OR_RETURN(const std::vector<Hash32> chain,
                     MainChain(dag, meta->hash, base->block_number));
    for (const Hash32& h : chain) {
      int64_t& s = score[h];
      if (__builtin_add_overflow(s, w, &s)) {
        return absl::OutOfRangeError("fork-choice score overflows at " +
                                     HexEncode(h));
      }
    }
  }

  // Step 4: replace tips by their scored children until a fixpoint.
  std::vector<Hash32> tips{base->hash};
  while (true) {
    std::vector<Hash32> next;
    absl::flat_hash_set<Hash32, Hash32Hasher> seen;
    bool changed = false;
    for (const Hash32& t : tips) {
      std::vector<std::pair<int64_t, Hash32>> kids;
      for (const Hash32& c : dag.Children(t)) {
        auto it = score.find(c);
        if (it != score.end()) kids.emplace_back(it->second, c);
      }
      if (kids.empty()) {
        if (seen.insert(t).second) next.push_back(t);
        continue;
      }
      changed = true;
      std::sort(kids.begin(), kids.end(), [](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first > b.first;
        return a.second < b.second;
      });
      for (const auto& [s, c] : kids) {
        if (seen.insert(c).second) next.push_back(c);
      }
    }
    tips = std::move(next);
    if (!changed) break;
  }

  // Step 5: bound the parents.
  ForkChoice out;
  out.base = base->hash;
  ASSIGN_OR_RETURN(const auto main_meta, dag.Meta(tips.front()));
  const int64_t main_number = main_meta->block_number;
  for (const Hash32& t : tips) {
    if (out.parents.size() >= std::max<size_t>(options.max_parents, 1)) break;
    if (!out.parents.empty() && options.max_parent_depth >= 0) {
      ASSIGN_OR_RETURN(const auto tip_meta, dag.Meta(t));
      if (tip_meta->block_number < main_number - options.max_parent_depth) {
        continue;
      }
    }
    out.parents.push_back(t);
  }
  return out;
}

}  // namespace rnode::casper::consensus

// Clique oracle and finalizer.
#include "casper/consensus/finality.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "util/status_macros.h"

namespace rnode::casper::consensus {
namespace {

using MetaPtr = std::shared_ptr<const dag::BlockMeta>;

// Whether blocks have the target on their main-parent chain, remembered
// for every block a walk passes: each block of the DAG is visited at most
// once per oracle call, however many validator pairs ask.
class Agreement {
 public:
  Agreement(const dag::DagStore& dag, const dag::BlockMeta& target)
      : dag_(dag), target_(target.hash), number_(target.block_number) {}

  // The DAG's error when a block on the walk cannot be read.
  absl::StatusOr<bool> Agrees(MetaPtr from) {
    std::vector<Hash32> path;
    bool result = false;
    while (true) {
      if (from->block_number < number_) break;
      if (auto it = memo_.find(from->hash); it != memo_.end()) {
        result = it->second;
        break;
      }
      path.push_back(from->hash);
      if (from->hash == target_) {
        result = true;
        break;
      }
      if (from->parents.empty()) break;
      ASSIGN_OR_RETURN(from, dag_.Meta(from->parents.front()));
    }
    for (const Hash32& h : path) memo_.emplace(h, result);
    return result;
  }

 private:
  const dag::DagStore& dag_;
  const Hash32 target_;
  const int64_t number_;
  absl::flat_hash_map<Hash32, bool, Hash32Hasher> memo_;
};

// The block `meta` justifies for `validator`; null when it names none.
absl::StatusOr<MetaPtr> JustifiedFor(
    const dag::DagStore& dag, const dag::BlockMeta& meta,
    const crypto::Secp256k1PublicKey& validator) {
  for (const auto& j : meta.justifications) {
    if (j.validator == validator) return dag.Meta(j.latest_block);
  }
  return MetaPtr();
}

// True when every block b made after a's view of b agrees with the target.
absl::StatusOr<bool> NeverSeesDisagreement(const dag::DagStore& dag,
                                           const dag::BlockMeta& a,
                                           const MetaPtr& b_latest,
                                           Agreement& agreement) {
  ASSIGN_OR_RETURN(const MetaPtr view, JustifiedFor(dag, a, b_latest->sender));
  MetaPtr cur = b_latest;
  while (cur != nullptr) {
    if (view != nullptr &&
        (cur->hash == view->hash || cur->seq_num <= view->seq_num)) {
      return true;
    }
    ASSIGN_OR_RETURN(const bool agrees, agreement.Agrees(cur));
    if (!agrees) return false;
    ASSIGN_OR_RETURN(cur, JustifiedFor(dag, *cur, cur->sender));
  }
  return true;
}

// A latest message's metadata: FailedPrecondition when it is not stored,
// the DAG's error when it cannot be read.
absl::StatusOr<MetaPtr> LatestMessageMeta(const dag::DagStore& dag,
                                          const Hash32& hash) {
  absl::StatusOr<MetaPtr> m = dag.Meta(hash);
  if (absl::IsNotFound(m.status())) {
    return absl::FailedPreconditionError("latest message " + HexEncode(hash) +
                                         " is not stored");
  }
  return m;
}

void BronKerbosch(const std::vector<int64_t>& w,
                  const std::vector<std::vector<bool>>& joined,
                  int64_t r_weight, std::vector<int> p, std::vector<int> x,
                  int64_t& best) {
  if (p.empty()) {
    if (x.empty()) best = std::max(best, r_weight);
    return;
  }
  // Even taking all of p cannot beat the best: prune.
  int64_t bound = r_weight;
  for (int v : p) bound += w[v];
  if (bound <= best) return;
  // Pivot: the vertex of p or x with most neighbours in p.
  int pivot = p.front();
  size_t most = 0;
  for (const auto* set : {&p, &x}) {
    for (int u : *set) {
      size_t n = 0;
      for (int v : p) n += joined[u][v] ? 1 : 0;
      if (n >= most) {
        most = n;
        pivot = u;
      }
    }
  }
  const std::vector<int> candidates = p;
  for (int v : candidates) {
    if (joined[pivot][v]) continue;
    std::vector<int> p2, x2;
    for (int u : p) {
      if (joined[v][u]) p2.push_back(u);
    }
    for (int u : x) {
      if (joined[v][u]) x2.push_back(u);
    }
    BronKerbosch(w, joined, r_weight + w[v], std::move(p2), std::move(x2),
                 best);
    p.erase(std::find(p.begin(), p.end(), v));
    x.push_back(v);
  }
}

}  // namespace

bool FaultTolerance::Exceeds(int64_t threshold_ppm) const {
  if (total_weight <= 0) return false;
  const __int128 lhs =
      (static_cast<__int128>(2) * clique_weight - total_weight) * 1'000'000;
  const __int128 rhs = static_cast<__int128>(total_weight) * threshold_ppm;
  return lhs > rhs;
}

double FaultTolerance::value() const {
  if (total_weight <= 0) return -1.0;
  return static_cast<double>(2 * static_cast<__int128>(clique_weight) -
                             total_weight) /
         static_cast<double>(total_weight);
}

int64_t MaxWeightClique(const std::vector<int64_t>& weights,
                        const std::vector<std::vector<bool>>& joined) {
  std::vector<int> all(weights.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  int64_t best = 0;
  BronKerbosch(weights, joined, 0, all, {}, best);
  return best;
}

absl::StatusOr<FaultTolerance> CliqueOracle(const dag::DagStore& dag,
                                            const Hash32& target,
                                            const LatestMessages& latest) {
  absl::StatusOr<MetaPtr> target_meta = dag.Meta(target);
  if (absl::IsNotFound(target_meta.status())) {
    return absl::FailedPreconditionError("block " + HexEncode(target) +
                                         " is not stored");
  }
  RETURN_IF_ERROR(target_meta.status());
  const MetaPtr t = *std::move(target_meta);
  // Weights: the bonds of the main parent (a root's own).
  MetaPtr weight_source = t;
  if (!t->parents.empty()) {
    ASSIGN_OR_RETURN(weight_source, dag.Meta(t->parents[0]));
  }
  const Weights weights = WeightsOf(weight_source->bonds);
  FaultTolerance ft;
  for (const auto& [v, w] : weights) ft.total_weight += w;
  Agreement agreement(dag, *t);
  std::vector<MetaPtr> agreeing;
  std::vector<int64_t> agreeing_weights;
  int64_t agreeing_weight = 0;
  for (const auto& [v, w] : weights) {
    auto it = latest.find(v);
    if (it == latest.end()) continue;
    ASSIGN_OR_RETURN(MetaPtr m, LatestMessageMeta(dag, it->second));
    ASSIGN_OR_RETURN(const bool agrees, agreement.Agrees(m));
    if (!agrees) continue;
    agreeing.push_back(std::move(m));
    agreeing_weights.push_back(w);
    agreeing_weight += w;
  }
  if (2 * static_cast<__int128>(agreeing_weight) <= ft.total_weight) {
    return ft;  // May still be orphaned: q = 0, fault tolerance -1.
  }
  const size_t n = agreeing.size();
  std::vector<std::vector<bool>> joined(n, std::vector<bool>(n, false));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      ASSIGN_OR_RETURN(
          const bool i_with_j,
          NeverSeesDisagreement(dag, *agreeing[i], agreeing[j], agreement));
      ASSIGN_OR_RETURN(
          const bool j_with_i,
          NeverSeesDisagreement(dag, *agreeing[j], agreeing[i], agreement));
      joined[i][j] = joined[j][i] = i_with_j && j_with_i;
    }
  }
  ft.clique_weight = MaxWeightClique(agreeing_weights, joined);
  return ft;
}

absl::StatusOr<std::optional<Hash32>> FindNewLastFinalized(
    const dag::DagStore& dag, const LatestMessages& latest,
    const FinalizerOptions& options) {
  const std::optional<Hash32> lfb = dag.LastFinalized();
  int64_t floor = -1;
  if (lfb.has_value()) {
    ASSIGN_OR_RETURN(const MetaPtr lfb_meta, dag.Meta(*lfb));
    floor = lfb_meta->block_number;
  }
  // Candidates: blocks above the floor on the latest messages' main chains.
  absl::flat_hash_set<Hash32, Hash32Hasher> seen;
  std::vector<MetaPtr> candidates;
  for (const auto& [v, hash] : latest) {
    ASSIGN_OR_RETURN(MetaPtr m, LatestMessageMeta(dag, hash));
    // Main chains merge: a walk stops where an earlier one passed.
    while (m != nullptr && m->block_number > floor &&
           seen.insert(m->hash).second) {
      MetaPtr next;
      if (!m->parents.empty()) {
        ASSIGN_OR_RETURN(next, dag.Meta(m->parents.front()));
      }
      candidates.push_back(std::move(m));
      m = std::move(next);
    }
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const MetaPtr& a, const MetaPtr& b) {
              if (a->block_number != b->block_number) {
                return a->block_number > b->block_number;
              }
              return a->hash < b->hash;
            });
  if (candidates.size() > options.max_candidates) {
    candidates.resize(options.max_candidates);
  }
  for (const MetaPtr& c : candidates) {
    if (lfb.has_value() && !dag.IsAncestor(*lfb, c->hash)) continue;
    auto ft = CliqueOracle(dag, c->hash, latest);
    if (!ft.ok()) return ft.status();
    if (ft->Exceeds(options.threshold_ppm)) {
      return std::optional<Hash32>(c->hash);
    }
  }
  return std::optional<Hash32>();
}

}  // namespace rnode::casper::consensus

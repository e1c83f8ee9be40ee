// Cost-optimal rejection: base-join options, risky number channels,
// components, exact search or the greedy fallback.
#include "casper/merge/internal/rejection.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include "util/union_find.h"

namespace rnode::casper::merge::internal {
namespace {

using u128 = unsigned __int128;
constexpr __int128 kMaxValue = INT64_MAX;

bool InRange(__int128 v) { return v >= 0 && v <= kMaxValue; }

struct Membership {
  uint32_t group;
  bool in_a;
  bool in_b;
};

class Solver {
 public:
  explicit Solver(const RejectionProblem& p)
      : p_(p), diffs_(*p.diffs), n_(p.cost.size()) {
    in_play_.resize(n_);
    for (uint32_t i = 0; i < n_; ++i)
      in_play_[i] = !p.prerejected[i].has_value();
    members_.resize(n_);
    for (uint32_t g = 0; g < p.groups.size(); ++g) {
      const ConflictGroup& grp = p.groups[g];
      for (uint32_t x : grp.a) {
        if (in_play_[x]) members_[x].push_back({g, true, false});
      }
      for (uint32_t x : grp.b) {
        if (!in_play_[x]) continue;
        auto& m = members_[x];
        if (!m.empty() && m.back().group == g) {
          m.back().in_b = true;
        } else {
          m.push_back({g, false, true});
        }
      }
    }
  }

  RejectionSolution Run() {
    RejectionSolution out;
    std::vector<uint32_t> play;
    for (uint32_t i = 0; i < n_; ++i) {
      if (in_play_[i]) play.push_back(i);
    }
    std::vector<bool> joins(n_, false);
    bool any_join = false;
    if (play.size() >= 2) {
      for (uint32_t i : play) {
        joins[i] = p_.base_join[i];
        any_join |= joins[i];
      }
    }
    std::vector<bool> active(n_);
    for (uint32_t i = 0; i < n_; ++i) active[i] = in_play_[i] && !joins[i];
    std::vector<bool> kept = SolveRest(active, out);
    if (any_join) {
      std::optional<uint32_t> best;
      for (uint32_t j : play) {
        if (!joins[j] || !FeasibleAlone(j)) continue;
        if (!best.has_value() || p_.cost[j] > p_.cost[*best]) best = j;
      }
      if (best.has_value()) {
        std::vector<bool> only(n_, false);
        only[*best] = true;
        if (Better(only, kept)) kept = std::move(only);
      }
    }
    out.rejected.assign(n_, true);
    out.reason.assign(n_, RejectReason::kConflict);
    size_t kept_count = 0;
    bool kept_join = false;
    for (uint32_t i = 0; i < n_; ++i) {
      if (kept[i]) {
        out.rejected[i] = false;
        ++kept_count;
        kept_join |= joins[i];
      }
    }
    std::vector<uint32_t> kept_a(p_.groups.size(), 0),
        kept_b(p_.groups.size(), 0);
    for (uint32_t i = 0; i < n_; ++i) {
      if (!kept[i]) continue;
      for (const Membership& m : members_[i]) {
        kept_a[m.group] += m.in_a;
        kept_b[m.group] += m.in_b;
      }
    }
    for (uint32_t i = 0; i < n_; ++i) {
      if (p_.prerejected[i].has_value()) {
        out.reason[i] = *p_.prerejected[i];
        continue;
      }
      if (kept[i]) continue;
      bool conflict = kept_join || (joins[i] && kept_count > 0) ||
                      Conflicts(i, kept_a, kept_b);
      out.reason[i] =
          conflict ? RejectReason::kConflict : RejectReason::kNumberChannel;
    }
    return out;
  }

 private:
  // Whether `x` (not kept) conflicts with a kept branch, given per-group kept
  // counts.
  bool Conflicts(uint32_t x, const std::vector<uint32_t>& kept_a,
                 const std::vector<uint32_t>& kept_b) const {
    for (const Membership& m : members_[x]) {
      const bool clique = p_.groups[m.group].a_clique;
      if (m.in_a && ((clique && kept_a[m.group] > 0) || kept_b[m.group] > 0)) {
        return true;
      }
      if (m.in_b && kept_a[m.group] > 0) return true;
    }
    return false;
  }

  bool FeasibleAlone(uint32_t x) const {
    for (const auto& [c, d] : diffs_[x]) {
      if (!InRange(p_.base_values[c] + d)) return false;
    }
    return true;
  }

  u128 RejectedCost(const std::vector<bool>& kept) const {
    u128 sum = 0;
    for (uint32_t i = 0; i < n_; ++i) {
      if (in_play_[i] && !kept[i]) sum += p_.cost[i];
    }
    return sum;
  }

  // The §5.2 order: lower rejected cost, then the first differing branch is
  // kept in the better one.
  bool Better(const std::vector<bool>& x, const std::vector<bool>& y) const {
    u128 cx = RejectedCost(x), cy = RejectedCost(y);
    if (cx != cy) return cx < cy;
    for (uint32_t i = 0; i < n_; ++i) {
      if (x[i] != y[i]) return x[i];
    }
    return false;
  }

  std::vector<bool> SolveRest(const std::vector<bool>& active,
                              RejectionSolution& stats) {
    std::vector<bool> kept(n_, false);
    // Risky channels.
    const size_t channels = p_.base_values.size();
    std::vector<__int128> neg(channels, 0), pos(channels, 0);
    for (uint32_t i = 0; i < n_; ++i) {
      if (!active[i]) continue;
      for (const auto& [c, d] : diffs_[i]) (d < 0 ? neg : pos)[c] += d;
    }
    risky_.assign(channels, false);
    for (size_t c = 0; c < channels; ++c) {
      risky_[c] = p_.base_values[c] + neg[c] < 0 ||
                  p_.base_values[c] + pos[c] > kMaxValue;
    }
    UnionFind uf(static_cast<uint32_t>(n_));
    for (const ConflictGroup& g : p_.groups) {
      std::vector<uint32_t> all;
      size_t na = 0, nb = 0;
      for (uint32_t x : g.a) {
        if (active[x]) {
          all.push_back(x);
          ++na;
        }
      }
      for (uint32_t x : g.b) {
        if (active[x]) {
          all.push_back(x);
          ++nb;
        }
      }
      bool distinct = false;
      for (uint32_t x : all) distinct |= x != all.front();
      bool edge = (g.a_clique && na >= 2) || (na >= 1 && nb >= 1 && distinct);
      if (!edge) continue;
      for (uint32_t x : all) uf.Union(all.front(), x);
    }
    std::vector<int64_t> first_of_channel(channels, -1);
    for (uint32_t i = 0; i < n_; ++i) {
      if (!active[i]) continue;
      for (const auto& [c, d] : diffs_[i]) {
        if (!risky_[c] || d == 0) continue;
        if (first_of_channel[c] < 0) {
          first_of_channel[c] = i;
        } else {
          uf.Union(static_cast<uint32_t>(first_of_channel[c]), i);
        }
      }
    }
    // Members of each component in ascending order: sort (root, branch).
    std::vector<std::pair<uint32_t, uint32_t>> by_root;
    for (uint32_t i = 0; i < n_; ++i) {
      if (active[i]) by_root.emplace_back(uf.Find(i), i);
    }
    std::sort(by_root.begin(), by_root.end());
    std::vector<uint32_t> members;
    for (size_t i = 0; i < by_root.size();) {
      size_t j = i;
      members.clear();
      for (; j < by_root.size() && by_root[j].first == by_root[i].first; ++j) {
        members.push_back(by_root[j].second);
      }
      i = j;
      ++stats.components;
      if (members.size() == 1) {
        ++stats.exact_components;
        kept[members[0]] = FeasibleAlone(members[0]);
      } else if (members.size() <= kMaxExactComponentBranches) {
        ++stats.exact_components;
        Exact(members, active, kept);
      } else {
        ++stats.greedy_components;
        Greedy(members, active, kept);
      }
    }
    return kept;
  }

  void Exact(const std::vector<uint32_t>& members,
             const std::vector<bool>& active, std::vector<bool>& kept) {
    const size_t k = members.size();
    std::map<uint32_t, uint32_t> local;
    for (uint32_t i = 0; i < k; ++i) local[members[i]] = i;
    std::vector<uint32_t> adj(k, 0);
    std::vector<uint32_t> seen_groups;
    for (uint32_t x : members) {
      for (const Membership& m : members_[x]) seen_groups.push_back(m.group);
    }
    std::sort(seen_groups.begin(), seen_groups.end());
    seen_groups.erase(std::unique(seen_groups.begin(), seen_groups.end()),
                      seen_groups.end());
    for (uint32_t gi : seen_groups) {
      const ConflictGroup& g = p_.groups[gi];
      std::vector<uint32_t> a, b;
      for (uint32_t x : g.a) {
        if (active[x] && local.count(x)) a.push_back(local[x]);
      }
      for (uint32_t x : g.b) {
        if (active[x] && local.count(x)) b.push_back(local[x]);
      }
      auto edge = [&](uint32_t u, uint32_t v) {
        if (u == v) return;
        adj[u] |= 1u << v;
        adj[v] |= 1u << u;
      };
      if (g.a_clique) {
        for (uint32_t u : a) {
          for (uint32_t v : a) edge(u, v);
        }
      }
      for (uint32_t u : a) {
        for (uint32_t v : b) edge(u, v);
      }
    }
    // Risky channels of the component: base and per-member diffs.
    std::map<uint32_t, std::vector<__int128>> chan;
    for (uint32_t i = 0; i < k; ++i) {
      for (const auto& [c, d] : diffs_[members[i]]) {
        if (!risky_[c]) continue;
        auto& v = chan[c];
        if (v.empty()) v.assign(k, 0);
        v[i] += d;
      }
    }
    search_.k = k;
    search_.adj = std::move(adj);
    search_.cost.assign(k, 0);
    for (uint32_t i = 0; i < k; ++i) search_.cost[i] = p_.cost[members[i]];
    search_.channels.clear();
    for (const auto& [c, diffs] : chan) {
      SearchChannel sc;
      sc.base = p_.base_values[c];
      sc.diff = diffs;
      sc.suffix_pos.assign(k + 1, 0);
      sc.suffix_neg.assign(k + 1, 0);
      for (size_t i = k; i-- > 0;) {
        sc.suffix_pos[i] = sc.suffix_pos[i + 1] + (diffs[i] > 0 ? diffs[i] : 0);
        sc.suffix_neg[i] = sc.suffix_neg[i + 1] + (diffs[i] < 0 ? diffs[i] : 0);
      }
      search_.channels.push_back(std::move(sc));
    }
    search_.sums.assign(search_.channels.size(), 0);
    search_.found = false;
    search_.best_mask = 0;
    search_.best_cost = 0;
    Dfs(0, 0, 0);
    for (uint32_t i = 0; i < k; ++i) {
      if (search_.best_mask & (1u << i)) kept[members[i]] = true;
    }
  }

  struct SearchChannel {
    __int128 base = 0;
    std::vector<__int128> diff;
    std::vector<__int128> suffix_pos, suffix_neg;
  };
  struct Search {
    size_t k = 0;
    std::vector<uint32_t> adj;
    std::vector<u128> cost;
    std::vector<SearchChannel> channels;
    std::vector<__int128> sums;  // Sum of kept diffs so far, per channel.
    bool found = false;
    uint32_t best_mask = 0;
    u128 best_cost = 0;
  };

  // Whether some completion of the first `i` decisions could put every
  // channel in range (necessary condition).
  bool Reachable(size_t i) const {
    for (size_t c = 0; c < search_.channels.size(); ++c) {
      const SearchChannel& sc = search_.channels[c];
      __int128 v = sc.base + search_.sums[c];
      if (v + sc.suffix_pos[i] < 0 || v + sc.suffix_neg[i] > kMaxValue)
        return false;
    }
    return true;
  }

  void Dfs(size_t i, uint32_t mask, u128 rejected_cost) {
    if (search_.found && rejected_cost >= search_.best_cost) return;
    if (!Reachable(i)) return;
    if (i == search_.k) {
      for (size_t c = 0; c < search_.channels.size(); ++c) {
        if (!InRange(search_.channels[c].base + search_.sums[c])) return;
      }
      search_.found = true;
      search_.best_mask = mask;
      search_.best_cost = rejected_cost;
      return;
    }
    if ((search_.adj[i] & mask) == 0) {
      for (size_t c = 0; c < search_.channels.size(); ++c) {
        search_.sums[c] += search_.channels[c].diff[i];
      }
      Dfs(i + 1, mask | (1u << i), rejected_cost);
      for (size_t c = 0; c < search_.channels.size(); ++c) {
        search_.sums[c] -= search_.channels[c].diff[i];
      }
    }
    Dfs(i + 1, mask, rejected_cost + search_.cost[i]);
  }

  void Greedy(std::vector<uint32_t> members, const std::vector<bool>& active,
              std::vector<bool>& kept) {
    std::stable_sort(
        members.begin(), members.end(),
        [&](uint32_t x, uint32_t y) { return p_.cost[x] > p_.cost[y]; });
    std::vector<uint32_t> kept_a(p_.groups.size(), 0),
        kept_b(p_.groups.size(), 0);
    std::map<uint32_t, __int128> sums;
    for (uint32_t x : members) {
      if (Conflicts(x, kept_a, kept_b)) continue;
      bool ok = true;
      for (const auto& [c, d] : diffs_[x]) {
        if (!risky_[c]) continue;
        auto it = sums.find(c);
        __int128 v = (it == sums.end() ? p_.base_values[c] : it->second) + d;
        if (!InRange(v)) ok = false;
      }
      if (!ok) continue;
      for (const auto& [c, d] : diffs_[x]) {
        if (!risky_[c]) continue;
        auto it = sums.find(c);
        if (it == sums.end()) it = sums.emplace(c, p_.base_values[c]).first;
        it->second += d;
      }
      for (const Membership& m : members_[x]) {
        kept_a[m.group] += m.in_a;
        kept_b[m.group] += m.in_b;
      }
      kept[x] = true;
    }
  }

  const RejectionProblem& p_;
  const BranchDiffs& diffs_;
  const size_t n_;
  std::vector<bool> in_play_;
  std::vector<std::vector<Membership>> members_;
  std::vector<bool> risky_;
  Search search_;
};

}  // namespace

RejectionSolution SolveRejection(const RejectionProblem& problem) {
  return Solver(problem).Run();
}

}  // namespace rnode::casper::merge::internal

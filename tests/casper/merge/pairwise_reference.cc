// Plain pairwise merge: every relation by comparing every pair.
#include "tests/casper/merge/pairwise_reference.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "crypto/hash.h"
#include "rspace/channel_codec.h"
#include "util/status_macros.h"

namespace rnode::casper::merge::testing {
namespace {

using rspace::ChannelState;

struct Sets {
  std::set<Hash32> prod_linear, prod_persist, prod_mergeable;
  std::map<Hash32, Hash32> prod_channel;
  std::map<Hash32, bool> consumed;  // -> persistent datum
  std::set<Hash32> consumed_mergeable;
  std::set<Hash32> cons_created, cons_persist;
  std::map<Hash32, std::set<Hash32>> cons_channels;
  std::map<Hash32, bool> fired;  // -> persistent consume
  std::set<Hash32> fired_mergeable;

  void Add(const Sets& o) {
    prod_linear.insert(o.prod_linear.begin(), o.prod_linear.end());
    prod_persist.insert(o.prod_persist.begin(), o.prod_persist.end());
    prod_mergeable.insert(o.prod_mergeable.begin(), o.prod_mergeable.end());
    prod_channel.insert(o.prod_channel.begin(), o.prod_channel.end());
    for (const auto& [k, v] : o.consumed) consumed[k] = consumed[k] || v;
    consumed_mergeable.insert(o.consumed_mergeable.begin(),
                              o.consumed_mergeable.end());
    cons_created.insert(o.cons_created.begin(), o.cons_created.end());
    cons_persist.insert(o.cons_persist.begin(), o.cons_persist.end());
    cons_channels.insert(o.cons_channels.begin(), o.cons_channels.end());
    for (const auto& [k, v] : o.fired) fired[k] = fired[k] || v;
    fired_mergeable.insert(o.fired_mergeable.begin(), o.fired_mergeable.end());
  }

  std::set<Hash32> Pcnd() const {
    std::set<Hash32> out = prod_persist;
    for (const auto& p : prod_linear) {
      if (!consumed.count(p)) out.insert(p);
    }
    return out;
  }
  std::set<Hash32> Ccnd() const {
    std::set<Hash32> out = cons_persist;
    for (const auto& k : cons_created) {
      if (!fired.count(k)) out.insert(k);
    }
    return out;
  }
};

Sets FromDeploy(const DeployInput& d) {
  auto num = [&](const Hash32& c) { return d.number_diffs.count(c) > 0; };
  Sets s;
  for (const auto& e : d.events) {
    if (const auto* p = std::get_if<rspace::ProduceEvent>(&e)) {
      (p->persist ? s.prod_persist : s.prod_linear).insert(p->hash);
      s.prod_channel[p->hash] = p->channel;
      if (num(p->channel)) s.prod_mergeable.insert(p->hash);
    } else if (const auto* c = std::get_if<rspace::ConsumeEvent>(&e)) {
      (c->persist ? s.cons_persist : s.cons_created).insert(c->hash);
      s.cons_channels[c->hash].insert(c->channels.begin(), c->channels.end());
    } else {
      const auto& m = std::get<rspace::CommEvent>(e);
      s.fired[m.consume] = s.fired[m.consume] || m.consume_persist;
      bool all = true;
      for (const auto& b : m.binds) all = all && num(b.channel);
      if (all) s.fired_mergeable.insert(m.consume);
      if (m.peek) continue;
      for (const auto& b : m.binds) {
        s.consumed[b.produce] = s.consumed[b.produce] || b.persist;
        if (num(b.channel)) s.consumed_mergeable.insert(b.produce);
      }
    }
  }
  return s;
}

bool Depends(const Sets& t, const Sets& s) {
  for (const auto& p : s.Pcnd()) {
    if (!s.prod_mergeable.count(p) && t.consumed.count(p)) return true;
  }
  for (const auto& k : s.Ccnd()) {
    if (t.fired.count(k)) return true;
  }
  return false;
}

// Component label (smallest member) per node of an adjacency matrix.
std::vector<size_t> Components(const std::vector<std::vector<bool>>& adj) {
  const size_t n = adj.size();
  std::vector<size_t> label(n, n);
  for (size_t i = 0; i < n; ++i) {
    if (label[i] != n) continue;
    std::vector<size_t> stack{i};
    label[i] = i;
    while (!stack.empty()) {
      size_t x = stack.back();
      stack.pop_back();
      for (size_t y = 0; y < n; ++y) {
        if (adj[x][y] && label[y] == n) {
          label[y] = i;
          stack.push_back(y);
        }
      }
    }
  }
  return label;
}

bool HasJoin(const ChannelState& s) {
  for (const auto& g : s.joins) {
    if (g.size() > 1) return true;
  }
  return false;
}

using DataId = std::tuple<Hash32, bool, Hash32>;

constexpr __int128 kMax = INT64_MAX;
bool Ok(__int128 v) { return v >= 0 && v <= kMax; }

}  // namespace

absl::StatusOr<ReferenceResult> ReferenceMerge(
    rspace::History& history, const Hash32& base_root,
    std::vector<BlockInput> blocks, const NumberChannelCodec& codec) {
  std::sort(
      blocks.begin(), blocks.end(),
      [](const BlockInput& a, const BlockInput& b) { return a.hash < b.hash; });
  std::map<Hash32, ChannelState> base_cache;
  std::map<Hash32, std::optional<Bytes>> base_blob;
  auto base = [&](const Hash32& ch) -> absl::StatusOr<ChannelState> {
    if (!base_cache.count(ch)) {
      ASSIGN_OR_RETURN(std::optional<Bytes> blob,
                       history.ReadLeaf(base_root, ch));
      ChannelState s;
      if (blob.has_value()) {
        ASSIGN_OR_RETURN(s, rspace::DecodeChannelState(*blob, [](Bytes b) {
                           return absl::StatusOr<rspace::TermPtr>(
                               rspace::Term::Make(std::move(b)));
                         }));
      }
      base_cache[ch] = s;
      base_blob[ch] = blob;
    }
    return base_cache[ch];
  };

  // Chains: (block, deploy indices), key order.
  struct Chain {
    const BlockInput* block;
    std::vector<size_t> deploys;
    Sets sets;
  };
  std::vector<Chain> chains;
  for (const BlockInput& b : blocks) {
    const size_t n = b.deploys.size();
    std::vector<Sets> ds;
    for (const auto& d : b.deploys) ds.push_back(FromDeploy(d));
    std::vector<std::vector<bool>> adj(n, std::vector<bool>(n, false));
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) {
        if (i != j && (Depends(ds[i], ds[j]) || Depends(ds[j], ds[i])))
          adj[i][j] = true;
      }
    }
    std::vector<size_t> label = Components(adj);
    for (size_t i = 0; i < n; ++i) {
      if (label[i] != i) continue;
      Chain c{&b, {}, {}};
      for (size_t j = 0; j < n; ++j) {
        if (label[j] == i) {
          c.deploys.push_back(j);
          c.sets.Add(ds[j]);
        }
      }
      chains.push_back(std::move(c));
    }
  }
  const size_t nc = chains.size();
  std::vector<std::vector<bool>> cadj(nc, std::vector<bool>(nc, false));
  for (size_t i = 0; i < nc; ++i) {
    for (size_t j = 0; j < nc; ++j) {
      if (i != j && (Depends(chains[i].sets, chains[j].sets) ||
                     Depends(chains[j].sets, chains[i].sets))) {
        cadj[i][j] = true;
      }
    }
  }
  std::vector<size_t> clabel = Components(cadj);
  struct Branch {
    std::vector<size_t> chains;
    Sets sets;
    uint64_t cost = 0;
    std::vector<const DeployInput*> deploys;
    std::map<Hash32, __int128> diffs;
  };
  std::vector<Branch> br;
  std::map<size_t, size_t> branch_of;
  for (size_t i = 0; i < nc; ++i) {
    if (!branch_of.count(clabel[i])) {
      branch_of[clabel[i]] = br.size();
      br.emplace_back();
    }
    Branch& b = br[branch_of[clabel[i]]];
    b.chains.push_back(i);
    b.sets.Add(chains[i].sets);
    for (size_t d : chains[i].deploys) {
      const DeployInput& dep = chains[i].block->deploys[d];
      b.deploys.push_back(&dep);
      b.cost += dep.cost;
      for (const auto& [ch, v] : dep.number_diffs) b.diffs[ch] += v;
    }
  }
  const size_t nb = br.size();
  ReferenceResult out;

  // Base joins.
  std::vector<bool> joinb(nb, false);
  for (size_t i = 0; i < nb; ++i) {
    for (const auto& [p, ch] : br[i].sets.prod_channel) {
      ASSIGN_OR_RETURN(ChannelState s, base(ch));
      if (HasJoin(s)) joinb[i] = true;
    }
    if (joinb[i]) out.base_join_branches.push_back(static_cast<uint32_t>(i));
  }
  // Pairwise conflicts.
  auto conflicts = [&](size_t x, size_t y) {
    const Sets& a = br[x].sets;
    const Sets& b = br[y].sets;
    for (const auto& [p, pa] : a.consumed) {
      auto it = b.consumed.find(p);
      if (it == b.consumed.end() || pa || it->second) continue;
      if (a.consumed_mergeable.count(p) && b.consumed_mergeable.count(p))
        continue;
      return true;
    }
    for (const auto& [k, pa] : a.fired) {
      auto it = b.fired.find(k);
      if (it == b.fired.end() || pa || it->second) continue;
      if (a.fired_mergeable.count(k) && b.fired_mergeable.count(k)) continue;
      return true;
    }
    auto comm = [](const Sets& s, const Sets& t) {
      std::set<Hash32> produced_on;
      for (const auto& p : s.Pcnd()) produced_on.insert(s.prod_channel.at(p));
      for (const auto& k : t.Ccnd()) {
        for (const auto& ch : t.cons_channels.at(k)) {
          if (produced_on.count(ch)) return true;
        }
      }
      return false;
    };
    if (comm(a, b) || comm(b, a)) return true;
    if (joinb[x] || joinb[y]) return true;
    for (const auto* d : br[x].deploys) {
      for (const auto* e : br[y].deploys) {
        if (d->id == e->id) return true;
      }
    }
    return false;
  };
  std::vector<std::vector<bool>> conf(nb, std::vector<bool>(nb, false));
  for (size_t i = 0; i < nb; ++i) {
    for (size_t j = i + 1; j < nb; ++j) {
      if (conflicts(i, j)) {
        conf[i][j] = conf[j][i] = true;
        out.conflicts.emplace_back(i, j);
      }
    }
  }
  // Pre-rejections.
  std::vector<std::optional<RejectReason>> pre(nb);
  for (size_t i = 0; i < nb; ++i) {
    std::multiset<Bytes> ids;
    for (const auto* d : br[i].deploys) ids.insert(d->id);
    for (const auto& id : ids) {
      if (ids.count(id) > 1) pre[i] = RejectReason::kDuplicateInBranch;
    }
    if (pre[i]) continue;
    std::map<std::tuple<Hash32, bool, Hash32, bool, Hash32>, int64_t> net;
    for (const auto* d : br[i].deploys) {
      for (const auto& c : d->changes.channels) {
        if (d->number_diffs.count(c.channel)) continue;
        for (const auto& x : c.added_data)
          ++net[{c.channel, false, x.source, x.persist, x.value->hash()}];
        for (const auto& x : c.removed_data)
          --net[{c.channel, false, x.source, x.persist, x.value->hash()}];
        for (const auto& k : c.added_continuations)
          ++net[{c.channel, true, k.source, k.persist, Hash32{}}];
        for (const auto& k : c.removed_continuations)
          --net[{c.channel, true, k.source, k.persist, Hash32{}}];
      }
    }
    for (const auto& [key, n] : net) {
      if (n >= 0) continue;
      const auto& [ch, is_k, source, persist, value] = key;
      ASSIGN_OR_RETURN(ChannelState s, base(ch));
      int64_t have = 0;
      if (is_k) {
        for (const auto& k : s.continuations) have += k.source == source;
      } else {
        for (const auto& d : s.data) {
          have += d.source == source && d.persist == persist &&
                  d.value->hash() == value;
        }
      }
      if (have + n < 0) pre[i] = RejectReason::kUnavailable;
    }
  }
  // Number channels.
  std::map<Hash32, __int128> basev;
  for (const auto& b : br) {
    for (const auto& [ch, v] : b.diffs) {
      if (basev.count(ch)) continue;
      ASSIGN_OR_RETURN(ChannelState s, base(ch));
      ASSIGN_OR_RETURN(int64_t x, codec.Read(s));
      if (x < 0) return absl::FailedPreconditionError("negative base");
      basev[ch] = x;
    }
  }
  // Rejection.
  std::vector<size_t> play;
  for (size_t i = 0; i < nb; ++i) {
    if (!pre[i]) play.push_back(i);
  }
  std::vector<bool> jn(nb, false);
  if (play.size() >= 2) {
    for (size_t i : play) jn[i] = joinb[i];
  }
  std::vector<bool> active(nb, false);
  for (size_t i : play) active[i] = !jn[i];
  std::set<Hash32> risky;
  for (const auto& [ch, bv] : basev) {
    __int128 lo = bv, hi = bv;
    for (size_t i = 0; i < nb; ++i) {
      if (!active[i] || !br[i].diffs.count(ch)) continue;
      __int128 d = br[i].diffs.at(ch);
      (d < 0 ? lo : hi) += d;
    }
    if (lo < 0 || hi > kMax) risky.insert(ch);
  }
  std::vector<std::vector<bool>> radj(nb, std::vector<bool>(nb, false));
  for (size_t i = 0; i < nb; ++i) {
    for (size_t j = 0; j < nb; ++j) {
      if (i == j || !active[i] || !active[j]) continue;
      bool e = conf[i][j];
      for (const auto& ch : risky) {
        auto a = br[i].diffs.find(ch), b = br[j].diffs.find(ch);
        if (a != br[i].diffs.end() && b != br[j].diffs.end() &&
            a->second != 0 && b->second != 0) {
          e = true;
        }
      }
      radj[i][j] = e;
    }
  }
  std::vector<size_t> rl = Components(radj);
  std::vector<bool> kept(nb, false);
  auto value_ok = [&](const std::vector<size_t>& keep) {
    std::map<Hash32, __int128> v;
    for (size_t i : keep) {
      for (const auto& [ch, d] : br[i].diffs) {
        if (!v.count(ch)) v[ch] = basev[ch];
        v[ch] += d;
      }
    }
    for (const auto& [ch, x] : v) {
      if (!Ok(x)) return false;
    }
    return true;
  };
  for (size_t r = 0; r < nb; ++r) {
    std::vector<size_t> mem;
    for (size_t i = 0; i < nb; ++i) {
      if (active[i] && rl[i] == r) mem.push_back(i);
    }
    if (mem.empty()) continue;
    const size_t k = mem.size();
    if (k <= kMaxExactComponentBranches) {
      std::optional<std::pair<unsigned __int128, std::vector<bool>>> best;
      for (uint32_t mask = 0; mask < (1u << k); ++mask) {
        std::vector<size_t> keep;
        std::vector<bool> rej(k);
        unsigned __int128 cost = 0;
        for (size_t i = 0; i < k; ++i) {
          if (mask & (1u << i)) {
            keep.push_back(mem[i]);
          } else {
            rej[i] = true;
            cost += br[mem[i]].cost;
          }
        }
        bool indep = true;
        for (size_t x : keep) {
          for (size_t y : keep) indep = indep && !conf[x][y];
        }
        if (!indep || !value_ok(keep)) continue;
        if (!best || cost < best->first ||
            (cost == best->first && rej < best->second)) {
          best = std::make_pair(cost, rej);
        }
      }
      for (size_t i = 0; i < k; ++i) kept[mem[i]] = !best->second[i];
    } else {
      std::vector<size_t> order = mem;
      std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        return br[x].cost > br[y].cost;
      });
      std::vector<size_t> keep;
      for (size_t x : order) {
        bool ok = true;
        for (size_t y : keep) ok = ok && !conf[x][y];
        if (!ok) continue;
        std::vector<size_t> trial = keep;
        trial.push_back(x);
        std::map<Hash32, __int128> v;
        for (size_t i : trial) {
          for (const auto& [ch, d] : br[i].diffs) {
            if (!risky.count(ch)) continue;
            if (!v.count(ch)) v[ch] = basev[ch];
            v[ch] += d;
          }
        }
        for (const auto& [ch, x2] : v) ok = ok && Ok(x2);
        if (ok) keep.push_back(x);
      }
      for (size_t x : keep) kept[x] = true;
    }
  }
  auto rejected_cost = [&](const std::vector<bool>& kp) {
    unsigned __int128 c = 0;
    for (size_t i : play) {
      if (!kp[i]) c += br[i].cost;
    }
    return c;
  };
  std::optional<size_t> bj;
  for (size_t j : play) {
    if (!jn[j] || !value_ok({j})) continue;
    if (!bj || br[j].cost > br[*bj].cost) bj = j;
  }
  if (bj) {
    std::vector<bool> only(nb, false);
    only[*bj] = true;
    unsigned __int128 ca = rejected_cost(kept), cb = rejected_cost(only);
    std::vector<bool> ra(nb), rb(nb);
    for (size_t i = 0; i < nb; ++i) {
      ra[i] = !kept[i];
      rb[i] = !only[i];
    }
    if (cb < ca || (cb == ca && rb < ra)) kept = only;
  }
  out.branches.resize(nb);
  for (size_t i = 0; i < nb; ++i) {
    BranchInfo& info = out.branches[i];
    for (size_t c : br[i].chains) {
      info.chains.push_back(
          ChainKey{chains[c].block->hash,
                   static_cast<uint32_t>(chains[c].deploys.front())});
    }
    info.cost = br[i].cost;
    info.rejected = !kept[i];
    if (pre[i]) {
      info.reason = *pre[i];
    } else if (!kept[i]) {
      bool c = false;
      for (size_t y = 0; y < nb; ++y)
        c = c || (kept[y] && y != i && conf[i][y]);
      info.reason = c ? RejectReason::kConflict : RejectReason::kNumberChannel;
    }
  }
  std::set<Bytes> kept_ids;
  for (size_t i = 0; i < nb; ++i) {
    if (!kept[i]) continue;
    for (const auto* d : br[i].deploys) kept_ids.insert(d->id);
  }
  std::map<Bytes, RejectReason> rej;
  for (size_t i = 0; i < nb; ++i) {
    if (kept[i]) continue;
    for (const auto* d : br[i].deploys) {
      if (!kept_ids.count(d->id) && !rej.count(d->id))
        rej[d->id] = out.branches[i].reason;
    }
  }
  for (const auto& [id, r] : rej) out.rejected.push_back(RejectedDeploy{id, r});

  // Combine.
  std::map<Hash32, std::map<DataId, std::pair<int64_t, rspace::Datum>>> data;
  std::map<Hash32,
           std::map<Hash32, std::pair<int64_t, rspace::WaitingContinuation>>>
      conts;
  std::set<Hash32> touched;
  std::set<rspace::JoinGroup> groups;
  auto load = [&](const Hash32& ch) -> absl::Status {
    if (touched.count(ch)) return absl::OkStatus();
    touched.insert(ch);
    ASSIGN_OR_RETURN(ChannelState s, base(ch));
    for (const auto& d : s.data) {
      auto& e = data[ch][{d.source, d.persist, d.value->hash()}];
      e.first++;
      e.second = d;
    }
    for (const auto& k : s.continuations) {
      auto& e = conts[ch][k.source];
      e.first++;
      e.second = k;
    }
    return absl::OkStatus();
  };
  std::map<Hash32, __int128> nsum;
  for (size_t i = 0; i < nb; ++i) {
    if (!kept[i]) continue;
    for (const auto& [ch, d] : br[i].diffs) nsum[ch] += d;
    for (const auto* d : br[i].deploys) {
      for (const auto& c : d->changes.channels) {
        if (d->number_diffs.count(c.channel)) continue;
        RETURN_IF_ERROR(load(c.channel));
        for (const auto& x : c.added_data) {
          auto& e = data[c.channel][{x.source, x.persist, x.value->hash()}];
          e.first++;
          e.second = x;
        }
        for (const auto& k : c.added_continuations) {
          auto& e = conts[c.channel][k.source];
          e.first++;
          e.second = k;
          groups.insert(k.group);
        }
        for (const auto& k : c.removed_continuations) groups.insert(k.group);
      }
    }
  }
  for (size_t i = 0; i < nb; ++i) {
    if (!kept[i]) continue;
    for (const auto* d : br[i].deploys) {
      for (const auto& c : d->changes.channels) {
        if (d->number_diffs.count(c.channel)) continue;
        for (const auto& x : c.removed_data) {
          auto& e = data[c.channel][{x.source, x.persist, x.value->hash()}];
          if (--e.first < 0)
            return absl::InternalError("reference: absent datum");
        }
        for (const auto& k : c.removed_continuations) {
          if (--conts[c.channel][k.source].first < 0) {
            return absl::InternalError("reference: absent continuation");
          }
        }
      }
    }
  }
  std::map<Hash32, ChannelState> fin;
  auto build = [&](const Hash32& ch) -> absl::StatusOr<ChannelState*> {
    if (fin.count(ch)) return &fin[ch];
    RETURN_IF_ERROR(load(ch));
    ASSIGN_OR_RETURN(ChannelState b, base(ch));
    ChannelState s;
    s.joins = b.joins;
    for (const auto& [id, e] : data[ch]) {
      for (int64_t i = 0; i < e.first; ++i) s.data.push_back(e.second);
    }
    for (const auto& [id, e] : conts[ch]) {
      for (int64_t i = 0; i < e.first; ++i) s.continuations.push_back(e.second);
    }
    fin[ch] = s;
    return &fin[ch];
  };
  for (const Hash32& ch : std::set<Hash32>(touched))
    RETURN_IF_ERROR(build(ch).status());
  for (const auto& g : groups) {
    ASSIGN_OR_RETURN(ChannelState * owner, build(g.front()));
    bool present = false;
    for (const auto& k : owner->continuations)
      present = present || k.group == g;
    for (const auto& ch : std::set<Hash32>(g.begin(), g.end())) {
      ASSIGN_OR_RETURN(ChannelState * s, build(ch));
      auto it = std::find(s->joins.begin(), s->joins.end(), g);
      if (present && it == s->joins.end()) s->joins.push_back(g);
      if (!present && it != s->joins.end()) s->joins.erase(it);
    }
  }
  for (const auto& [ch, sum] : nsum) {
    if (sum == 0) continue;
    ASSIGN_OR_RETURN(fin[ch],
                     codec.Write(ch, static_cast<int64_t>(basev[ch] + sum)));
    RETURN_IF_ERROR(base(ch).status());
  }
  std::vector<rspace::LeafUpdate> updates;
  for (auto& [ch, s] : fin) {
    std::sort(s.data.begin(), s.data.end(), [](const auto& a, const auto& b) {
      return std::make_tuple(a.source, a.persist, a.value->hash()) <
             std::make_tuple(b.source, b.persist, b.value->hash());
    });
    std::sort(s.continuations.begin(), s.continuations.end(),
              [](const auto& a, const auto& b) { return a.source < b.source; });
    std::sort(s.joins.begin(), s.joins.end());
    s.joins.erase(std::unique(s.joins.begin(), s.joins.end()), s.joins.end());
    const auto& old = base_blob[ch];
    if (s.empty()) {
      if (old.has_value()) updates.push_back(rspace::LeafUpdate{ch, {}, {}});
      continue;
    }
    Bytes blob = rspace::EncodeChannelState(s);
    if (old.has_value() && *old == blob) continue;
    Hash32 h = crypto::Blake2b256(blob);
    updates.push_back(rspace::LeafUpdate{ch, std::move(blob), h});
  }
  if (updates.empty()) {
    out.root = base_root;
  } else {
    ASSIGN_OR_RETURN(out.root, history.Commit(base_root, updates));
  }
  return out;
}

}  // namespace rnode::casper::merge::testing

// Step 6: the combined state of the kept branches: base + kept changes per
// channel, join derivation and the new values of number channels.
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "casper/merge/internal/hash_key.h"
#include "casper/merge/internal/steps.h"
#include "util/status_macros.h"
#include "util/worker_pool.h"

namespace rnode::casper::merge::internal {
namespace {

using rspace::ChannelState;
using rspace::Datum;
using rspace::JoinGroup;
using rspace::WaitingContinuation;

// An item with its multiplicity change: +1 for a base or added item, -1 for
// a removed one.
template <typename T>
struct Counted {
  const T* item;
  int64_t delta;
};

struct ChannelAcc {
  std::vector<const Datum*> added_data;
  std::vector<const Datum*> removed_data;
  std::vector<const WaitingContinuation*> added_k;
  std::vector<const WaitingContinuation*> removed_k;
  // Scratch of ApplyAcc, kept across channels to reuse its capacity.
  std::vector<Counted<Datum>> data_entries;
  std::vector<Counted<WaitingContinuation>> cont_entries;

  void Clear() {
    added_data.clear();
    removed_data.clear();
    added_k.clear();
    removed_k.clear();
  }
};

// Appends base + added - removed of one item kind (as multisets: `less`
// orders them, `same` tells identical items) to `pool`, in `less` order;
// false if a removal finds nothing. `entries` is scratch.
template <typename T, typename Less, typename Same>
bool NetItems(const std::vector<T>& base, const std::vector<const T*>& added,
              const std::vector<const T*>& removed,
              std::vector<Counted<T>>& entries, std::vector<const T*>& pool,
              Less less, Same same) {
  entries.clear();
  entries.reserve(base.size() + added.size() + removed.size());
  for (const T& x : base) entries.push_back({&x, 1});
  for (const T* x : added) entries.push_back({x, 1});
  for (const T* x : removed) entries.push_back({x, -1});
  std::sort(entries.begin(), entries.end(),
            [&](const Counted<T>& x, const Counted<T>& y) {
              return less(*x.item, *y.item);
            });
  for (size_t i = 0; i < entries.size();) {
    size_t j = i;
    int64_t n = 0;
    const T* item = nullptr;
    for (; j < entries.size() && same(*entries[j].item, *entries[i].item);
         ++j) {
      n += entries[j].delta;
      if (entries[j].delta > 0) item = entries[j].item;
    }
    if (n < 0) return false;
    for (int64_t r = 0; r < n; ++r) pool.push_back(item);
    i = j;
  }
  return true;
}

// Appends base + added - removed (as multisets) to the pools as the items of
// `out`; Internal if a removal finds nothing. Additions are counted before
// removals, so the result is a function of the three multisets; with a
// removal, items come out in key order.
absl::Status ApplyAcc(const ChannelState& base, ChannelAcc& acc, NewState& out,
                      ItemPools& pools) {
  out.joins.clear();
  for (const JoinGroup& g : base.joins) out.joins.push_back(&g);
  out.data_begin = static_cast<uint32_t>(pools.data.size());
  out.k_begin = static_cast<uint32_t>(pools.conts.size());
  auto finish = [&] {
    out.data_end = static_cast<uint32_t>(pools.data.size());
    out.k_end = static_cast<uint32_t>(pools.conts.size());
  };
  if (acc.removed_data.empty() && acc.removed_k.empty()) {
    for (const Datum& d : base.data) pools.data.push_back(&d);
    pools.data.insert(pools.data.end(), acc.added_data.begin(),
                      acc.added_data.end());
    for (const WaitingContinuation& k : base.continuations)
      pools.conts.push_back(&k);
    pools.conts.insert(pools.conts.end(), acc.added_k.begin(),
                       acc.added_k.end());
    finish();
    return absl::OkStatus();
  }
  auto same_datum = [](const Datum& x, const Datum& y) {
    return x.source == y.source && x.persist == y.persist &&
           x.value->hash() == y.value->hash();
  };
  if (!NetItems(base.data, acc.added_data, acc.removed_data, acc.data_entries,
                pools.data, DatumLess, same_datum)) {
    return absl::InternalError(
        "merge: removal of a datum absent from the base");
  }
  auto k_less = [](const WaitingContinuation& x, const WaitingContinuation& y) {
    return Hash32Less()(x.source, y.source);
  };
  auto same_k = [](const WaitingContinuation& x, const WaitingContinuation& y) {
    return x.source == y.source;
  };
  if (!NetItems(base.continuations, acc.added_k, acc.removed_k,
                acc.cont_entries, pools.conts, k_less, same_k)) {
    return absl::InternalError(
        "merge: removal of a continuation absent from the base");
  }
  finish();
  return absl::OkStatus();
}

}  // namespace

bool DatumLess(const Datum& a, const Datum& b) {
  Hash32Eq eq;
  Hash32Less less;
  if (!eq(a.source, b.source)) return less(a.source, b.source);
  if (a.persist != b.persist) return b.persist;
  return less(a.value->hash(), b.value->hash());
}

void ItemPools::Assign(NewState& s, const ChannelState& state) {
  s.data_begin = static_cast<uint32_t>(data.size());
  for (const Datum& d : state.data) data.push_back(&d);
  s.data_end = static_cast<uint32_t>(data.size());
  s.k_begin = static_cast<uint32_t>(conts.size());
  for (const WaitingContinuation& k : state.continuations) conts.push_back(&k);
  s.k_end = static_cast<uint32_t>(conts.size());
  s.joins.clear();
  for (const JoinGroup& g : state.joins) s.joins.push_back(&g);
}

namespace {

// No new state for the leaf yet.
constexpr uint32_t kNoState = UINT32_MAX;

// What the parts of Combine read.
struct CombineInput {
  const ScopeIndex& index;
  const Branches& branches;
  const Decision& decision;
  const BaseSnapshot& base;
};

// Calls fn(change, leaf) for each raw change of a kept branch, in scope
// order, with its planned leaf.
template <typename Fn>
void ForEachKept(const CombineInput& in, Fn&& fn) {
  const BasePlan& plan = in.base.plan;
  uint32_t pos = 0;  // Scope-order index of the chain's first raw change.
  for (uint32_t bl = 0; bl < in.index.blocks.size(); ++bl) {
    const BlockFlat& f = in.index.blocks[bl]->flat;
    for (uint32_t c = 0; c < f.first_deploy.size(); ++c) {
      const auto changes = f.raw_changes.of(c);
      const uint32_t b =
          in.branches.chain_branch[in.index.chain_offset[bl] + c];
      if (!in.decision.rejected[b]) {
        for (uint32_t k = 0; k < changes.size(); ++k)
          fn(changes[k], plan.change_leaf[pos + k]);
      }
      pos += static_cast<uint32_t>(changes.size());
    }
  }
}

// The kept changes grouped by planned leaf, in leaf order (the plan's
// leaves are in channel order): leaf l's are [start[l], start[l + 1]).
struct KeptByLeaf {
  std::vector<uint32_t> start;  // Leaves + 1 entries.
  std::vector<const RawChange*> changes;
};

// A counting sort on the planned leaf; the order of one channel's changes
// does not matter (ApplyAcc and Canonicalize depend only on the
// multisets). Adds the join groups the kept changes add or remove to
// `groups`.
KeptByLeaf GroupKeptChanges(const CombineInput& in,
                            std::set<JoinGroup>& groups) {
  const uint32_t leaves = static_cast<uint32_t>(in.base.plan.keys.size());
  KeptByLeaf kept;
  std::vector<uint32_t>& start = kept.start;
  start.assign(leaves + 1, 0);
  size_t count = 0;
  ForEachKept(in, [&](const RawChange&, uint32_t leaf) {
    ++start[leaf + 1];
    ++count;
  });
  for (uint32_t l = 0; l < leaves; ++l) start[l + 1] += start[l];
  kept.changes.resize(count);
  std::vector<uint32_t> fill(start.begin(), start.end() - 1);
  ForEachKept(in, [&](const RawChange& r, uint32_t leaf) {
    kept.changes[fill[leaf]++] = &r;
    for (const auto& k : r.added_k) groups.insert(k.group);
    for (const auto& k : r.removed_k) groups.insert(k.group);
  });
  return kept;
}

// A range of leaves netted on its own (NetPart) into its own states and
// pools.
struct Part {
  uint32_t begin = 0, end = 0;  // Leaves.
  std::vector<NewState> states;
  ItemPools pools;
  absl::Status status;
};

// `count` parts of consecutive leaves with about the same number of kept
// changes each.
std::vector<Part> SplitParts(const KeptByLeaf& kept, size_t count) {
  const size_t total = kept.changes.size();
  const size_t leaves = kept.start.size() - 1;
  std::vector<Part> parts(count);
  for (size_t p = 0, l = 0; p < count; ++p) {
    const size_t target = total * (p + 1) / count;
    parts[p].begin = static_cast<uint32_t>(l);
    while (l < leaves && (p + 1 == count || kept.start[l] < target)) ++l;
    parts[p].end = static_cast<uint32_t>(l);
  }
  return parts;
}

// Base + kept changes of each touched leaf of `part`, into the part's
// states and pools; sets state_of_leaf of those leaves to their index in
// the part. Stops at the first error, in part.status. Parts touch disjoint
// entries of `state_of_leaf`, so they may run at once.
void NetPart(const CombineInput& in, const KeptByLeaf& kept, Part& part,
             std::vector<uint32_t>& state_of_leaf) {
  const BasePlan& plan = in.base.plan;
  const std::vector<uint32_t>& start = kept.start;
  ChannelAcc a;
  for (uint32_t l = part.begin; l < part.end; ++l) {
    if (start[l] == start[l + 1]) continue;
    a.Clear();
    for (uint32_t i = start[l]; i < start[l + 1]; ++i) {
      const RawChange& r = *kept.changes[i];
      for (const auto& x : r.added_data) a.added_data.push_back(&x);
      for (const auto& x : r.removed_data) a.removed_data.push_back(&x);
      for (const auto& k : r.added_k) a.added_k.push_back(&k);
      for (const auto& k : r.removed_k) a.removed_k.push_back(&k);
    }
    state_of_leaf[l] = static_cast<uint32_t>(part.states.size());
    NewState& ns = part.states.emplace_back();
    ns.channel = KeyOf(plan.keys[l]);
    ns.leaf = &in.base.At(l);
    part.status = ApplyAcc(ns.leaf->state, a, ns, part.pools);
    if (!part.status.ok()) return;
  }
}

// Appends the parts' states and pools to `out` in leaf order, their item
// ranges and state_of_leaf shifted: the same as netting in one pass. The
// first part's error, if any.
absl::Status AppendParts(std::vector<Part>& parts, CombinedState& out,
                         std::vector<uint32_t>& state_of_leaf) {
  std::vector<NewState>& next = out.states;
  ItemPools& pools = out.pools;
  for (Part& part : parts) {
    RETURN_IF_ERROR(part.status);
    const uint32_t data_shift = static_cast<uint32_t>(pools.data.size());
    const uint32_t k_shift = static_cast<uint32_t>(pools.conts.size());
    const uint32_t state_shift = static_cast<uint32_t>(next.size());
    for (NewState& ns : part.states) {
      ns.data_begin += data_shift;
      ns.data_end += data_shift;
      ns.k_begin += k_shift;
      ns.k_end += k_shift;
      next.push_back(std::move(ns));
    }
    pools.data.insert(pools.data.end(), part.pools.data.begin(),
                      part.pools.data.end());
    pools.conts.insert(pools.conts.end(), part.pools.conts.begin(),
                       part.pools.conts.end());
    for (uint32_t l = part.begin; l < part.end; ++l) {
      if (state_of_leaf[l] != kNoState) state_of_leaf[l] += state_shift;
    }
  }
  return absl::OkStatus();
}

// The state of leaf `l` in `out`, made from `state` if the merge has none
// yet.
NewState& StateAt(const BaseSnapshot& base, uint32_t l,
                  const ChannelState& state, CombinedState& out,
                  std::vector<uint32_t>& state_of_leaf) {
  std::vector<NewState>& next = out.states;
  if (state_of_leaf[l] != kNoState) return next[state_of_leaf[l]];
  state_of_leaf[l] = static_cast<uint32_t>(next.size());
  NewState& ns = next.emplace_back();
  ns.channel = KeyOf(base.plan.keys[l]);
  ns.leaf = &base.At(l);
  out.pools.Assign(ns, state);
  return ns;
}

// Join derivation: each group the changes touch is on every one of its
// channels exactly when its owner (first channel) holds a continuation of
// it.
absl::Status DeriveJoins(const BaseSnapshot& base, CombinedState& out,
                         std::vector<uint32_t>& state_of_leaf) {
  for (const JoinGroup& g : out.groups) {
    if (g.empty()) return absl::InvalidArgumentError("merge: empty join group");
    bool present = false;
    ASSIGN_OR_RETURN(uint32_t owner, base.IndexOf(g.front()));
    if (state_of_leaf[owner] != kNoState) {
      for (const WaitingContinuation* k :
           out.pools.Conts(out.states[state_of_leaf[owner]]))
        present |= k->group == g;
    } else {
      for (const auto& k : base.At(owner).state.continuations)
        present |= k.group == g;
    }
    for (size_t i = 0; i < g.size(); ++i) {
      if (i > 0 && g[i] == g[i - 1]) continue;
      ASSIGN_OR_RETURN(uint32_t l, base.IndexOf(g[i]));
      NewState& target = StateAt(base, l, base.At(l).state, out, state_of_leaf);
      auto& joins = target.joins;
      auto jit = std::find_if(joins.begin(), joins.end(),
                              [&](const JoinGroup* x) { return *x == g; });
      if (present && jit == joins.end()) joins.push_back(&g);
      if (!present && jit != joins.end()) joins.erase(jit);
    }
  }
  return absl::OkStatus();
}

// The new value of each number channel the kept branches change: its base
// value plus their diffs, written by `codec`.
absl::Status WriteNumbers(const CombineInput& in, const NumberBases& numbers,
                          const NumberChannelCodec* codec, CombinedState& out,
                          std::vector<uint32_t>& state_of_leaf) {
  std::map<uint32_t, __int128> number_sums;
  for (uint32_t b = 0; b < in.branches.count; ++b) {
    if (in.decision.rejected[b]) continue;
    for (const auto& [idx, d] : numbers.diffs[b]) number_sums[idx] += d;
  }
  for (const auto& [idx, sum] : number_sums) {
    if (sum == 0) continue;
    if (codec == nullptr) {
      return absl::InvalidArgumentError("merge: number diffs without a codec");
    }
    const __int128 value = numbers.values[idx] + sum;
    ASSIGN_OR_RETURN(ChannelState s, codec->Write(in.index.numbers[idx],
                                                  static_cast<int64_t>(value)));
    const ChannelState& owned = out.number_states.emplace_back(std::move(s));
    const uint32_t l = in.base.plan.number_leaf[idx];
    if (state_of_leaf[l] != kNoState) {
      out.pools.Assign(out.states[state_of_leaf[l]], owned);
    } else {
      StateAt(in.base, l, owned, out, state_of_leaf);
    }
  }
  return absl::OkStatus();
}

// out.order: the states in channel order; the first `sorted_prefix` are in
// channel order already.
void OrderStates(CombinedState& out, size_t sorted_prefix) {
  const std::vector<NewState>& next = out.states;
  std::vector<uint32_t>& order = out.order;
  order.resize(next.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  auto order_less = [&](uint32_t x, uint32_t y) {
    return Hash32Less()(next[x].channel, next[y].channel);
  };
  const auto mid = order.begin() + static_cast<ptrdiff_t>(sorted_prefix);
  std::sort(mid, order.end(), order_less);
  std::inplace_merge(order.begin(), mid, order.end(), order_less);
}

}  // namespace

absl::StatusOr<CombinedState> Combine(
    const ScopeIndex& index, const Branches& branches, const Decision& decision,
    const NumberBases& numbers, const BaseSnapshot& base,
    const NumberChannelCodec* codec, WorkerPool* pool, size_t grain) {
  RETURN_IF_ERROR(CheckPlanFits(base.plan, index));
  const CombineInput in{index, branches, decision, base};
  CombinedState out;
  const KeptByLeaf kept = GroupKeptChanges(in, out.groups);
  // New states: the touched channels in channel order first, then the
  // states added by join derivation and number channels. The touched
  // channels are independent: with a pool, each part nets its channels on
  // its own.
  std::vector<uint32_t> state_of_leaf(base.plan.keys.size(), kNoState);
  const size_t part_count = pool != nullptr && kept.changes.size() >= grain
                                ? static_cast<size_t>(pool->threads())
                                : 1;
  std::vector<Part> parts = SplitParts(kept, part_count);
  if (part_count == 1) {
    NetPart(in, kept, parts[0], state_of_leaf);
  } else {
    pool->ParallelFor(part_count, [&](size_t p) {
      NetPart(in, kept, parts[p], state_of_leaf);
    });
  }
  RETURN_IF_ERROR(AppendParts(parts, out, state_of_leaf));
  const size_t sorted_prefix = out.states.size();
  RETURN_IF_ERROR(DeriveJoins(base, out, state_of_leaf));
  RETURN_IF_ERROR(WriteNumbers(in, numbers, codec, out, state_of_leaf));
  OrderStates(out, sorted_prefix);
  return out;
}

}  // namespace rnode::casper::merge::internal

// Step 4: conflict groups of deploy ids and event keys, and the checks of
// the branches against the base (availability, base joins).
#include <algorithm>
#include <cstring>
#include <map>

#include "casper/merge/internal/depends.h"
#include "casper/merge/internal/steps.h"
#include "util/status_macros.h"

namespace rnode::casper::merge::internal {
namespace {

int CompareBytes(const Bytes& x, const Bytes& y) {
  const size_t n = std::min(x.size(), y.size());
  int c = n == 0 ? 0 : std::memcmp(x.data(), y.data(), n);
  if (c != 0) return c;
  return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
}

// The conflict groups of sorted key records (AppendConflictRecords tags:
// kind * 2 + side): per (key, kind), side A and side B branches ascending;
// a group has an edge with two in `a` (races are cliques), or one in `a`
// and one in `b` that are distinct branches.
void CollectGroups(const std::vector<KeyRecord>& records,
                   std::vector<ConflictGroup>& out) {
  for (size_t i = 0; i < records.size();) {
    const KeyRecord& first = records[i];
    const uint32_t kind = first.tag >> 1;
    const bool clique =
        kind != static_cast<uint32_t>(ConflictKeyKind::kChannel);
    // Records are ordered by side, then branch: count distinct branches per
    // side without building lists (nearly every key has no edge).
    size_t j = i;
    size_t count_a = 0, count_b = 0;
    bool distinct = false;
    for (; j < records.size() && (records[j].tag >> 1) == kind &&
           SameKey(records[j], first);
         ++j) {
      distinct |= records[j].item != first.item;
      const bool new_branch = j == i || records[j].tag != records[j - 1].tag ||
                              records[j].item != records[j - 1].item;
      if (new_branch) ++((records[j].tag & 1) ? count_b : count_a);
    }
    const bool edge =
        (clique && count_a >= 2) || (count_a >= 1 && count_b >= 1 && distinct);
    if (edge) {
      ConflictGroup g;
      g.a_clique = clique;
      g.a.reserve(count_a);
      g.b.reserve(count_b);
      for (size_t k = i; k < j; ++k) {
        std::vector<uint32_t>& v = (records[k].tag & 1) ? g.b : g.a;
        if (v.empty() || v.back() != records[k].item)
          v.push_back(records[k].item);
      }
      out.push_back(std::move(g));
    }
    i = j;
  }
}

int64_t BaseCount(const rspace::ChannelState& s, const ItemKey& item) {
  int64_t n = 0;
  if (item.continuation) {
    for (const auto& k : s.continuations) n += k.source == item.source;
  } else {
    for (const auto& d : s.data) {
      n += d.source == item.source && d.persist == item.persist &&
           d.value->hash() == item.value;
    }
  }
  return n;
}

bool HasMultiJoin(const rspace::ChannelState& s) {
  for (const rspace::JoinGroup& g : s.joins) {
    if (g.size() >= 2) return true;
  }
  return false;
}

}  // namespace

Conflicts CollectConflicts(const ScopeIndex& index, const Branches& branches,
                           MergeScratch& scratch) {
  Conflicts cf;
  const std::vector<const BlockIndex*>& blocks = index.blocks;
  cf.duplicate.resize(branches.count);
  // Deploy ids: the same id in two branches is a clique, twice in one
  // branch a pre-rejection.
  std::vector<DeployRef>& ids = cf.ids;
  ids.reserve(index.deploys);
  for (uint32_t bl = 0; bl < blocks.size(); ++bl) {
    const BlockIndex& block = *blocks[bl];
    for (uint32_t c = 0; c < block.chains.size(); ++c) {
      const uint32_t b = branches.chain_branch[index.chain_offset[bl] + c];
      for (uint32_t d : block.flat.deploys.of(c)) {
        ids.push_back(
            DeployRef{block.flat.id_prefix[d], &block.deploys[d].id, b, bl});
      }
    }
  }
  std::sort(ids.begin(), ids.end(), [](const DeployRef& x, const DeployRef& y) {
    if (x.prefix != y.prefix) return x.prefix < y.prefix;
    int cmp = CompareBytes(*x.id, *y.id);
    return cmp != 0 ? cmp < 0 : x.branch < y.branch;
  });
  for (size_t i = 0; i < ids.size();) {
    size_t j = i + 1;
    while (j < ids.size() && ids[j].prefix == ids[i].prefix &&
           *ids[j].id == *ids[i].id)
      ++j;
    if (j - i >= 2) {
      ConflictGroup g{{}, {}, true};
      for (size_t k = i; k < j; ++k) {
        const uint32_t b = ids[k].branch;
        if (!g.a.empty() && g.a.back() == b) {
          cf.duplicate[b] = RejectReason::kDuplicateInBranch;
        } else {
          g.a.push_back(b);
        }
      }
      if (g.a.size() >= 2) cf.groups.push_back(std::move(g));
    }
    i = j;
  }
  // Event keys: single-chain branches use their chain's records from the
  // block index, the others the records of their united facts.
  std::vector<KeyRecord>& key_records = scratch.keys;
  key_records.clear();
  {
    size_t keys = 0;
    for (const BlockIndex* b : blocks)
      keys += b->flat.conflict_keys.all().size();
    for (const EventFacts& f : branches.multi_facts) {
      keys += f.consumed_produces.size() + f.fired_consumes.size() +
              f.pcnd.size() + f.ccnd.size();
    }
    key_records.reserve(keys);
  }
  for (uint32_t bl = 0; bl < blocks.size(); ++bl) {
    // Copied in bulk; records of branches of several chains are dropped.
    const uint32_t* branch =
        branches.chain_branch.data() + index.chain_offset[bl];
    size_t out = key_records.size();
    const auto all = blocks[bl]->flat.conflict_keys.all();
    key_records.insert(key_records.end(), all.begin(), all.end());
    for (size_t i = out; i < key_records.size(); ++i) {
      const uint32_t b = branch[key_records[i].item];
      if (!branches.single(b)) continue;
      key_records[out] = key_records[i];
      key_records[out++].item = b;
    }
    key_records.resize(out);
  }
  for (size_t i = 0; i < branches.multi.size(); ++i) {
    AppendConflictRecords(branches.multi_facts[i], branches.multi[i],
                          key_records);
  }
  SortKeyRecords(key_records, scratch.sort);
  CollectGroups(key_records, cf.groups);
  std::sort(cf.groups.begin(), cf.groups.end());
  cf.groups.erase(std::unique(cf.groups.begin(), cf.groups.end()),
                  cf.groups.end());
  return cf;
}

void MarkSettled(Conflicts& conflicts, std::span<const Bytes> settled) {
  if (settled.empty()) return;
  for (const DeployRef& r : conflicts.ids) {
    std::optional<RejectReason>& mark = conflicts.duplicate[r.branch];
    if (mark.has_value()) continue;
    if (std::binary_search(settled.begin(), settled.end(), *r.id)) {
      mark = RejectReason::kSettledInBase;
    }
  }
}

void MarkPreferred(Conflicts& conflicts, const ScopeIndex& index,
                   const Branches& branches,
                   std::span<const DeployCopy> preferred) {
  if (preferred.empty()) return;
  conflicts.preferred.assign(branches.count, false);
  for (const DeployRef& r : conflicts.ids) {
    // The preferred copies of this id (ascending by block): this one?
    auto it = std::lower_bound(
        preferred.begin(), preferred.end(), *r.id,
        [](const DeployCopy& c, const Bytes& id) { return c.id < id; });
    const Hash32& block = index.blocks[r.block]->hash;
    for (; it != preferred.end() && it->id == *r.id; ++it) {
      if (it->block == block) conflicts.preferred[r.branch] = true;
    }
  }
}

absl::StatusOr<BaseChecks> CheckBase(const ScopeIndex& index,
                                     const Branches& branches,
                                     const Conflicts& conflicts,
                                     const BaseSnapshot& base) {
  RETURN_IF_ERROR(CheckPlanFits(base.plan, index));
  const uint32_t nb = branches.count;
  BaseChecks out;
  out.prerejected = conflicts.duplicate;
  out.prerejected.resize(nb);
  out.base_join.assign(nb, false);
  std::vector<std::optional<RejectReason>>& prerejected = out.prerejected;
  const BasePlan& plan = base.plan;
  // Chains of one-chain branches, in scope order over the flat arrays and
  // the plan's leaf maps.
  uint32_t removed_pos = 0, produce_pos = 0;
  for (uint32_t bl = 0; bl < index.blocks.size(); ++bl) {
    const BlockFlat& f = index.blocks[bl]->flat;
    for (uint32_t c = 0; c < f.first_deploy.size(); ++c) {
      const uint32_t b = branches.chain_branch[index.chain_offset[bl] + c];
      const auto removed = f.removed.of(c);
      const uint32_t produced =
          static_cast<uint32_t>(f.produced_on.of(c).size());
      if (branches.single(b)) {
        for (size_t k = 0; k < removed.size(); ++k) {
          if (prerejected[b].has_value()) break;
          const BaseLeaf& leaf = base.At(plan.removed_leaf[removed_pos + k]);
          if (BaseCount(leaf.state, removed[k].first) + removed[k].second < 0)
            prerejected[b] = RejectReason::kUnavailable;
        }
        for (uint32_t k = 0; k < produced; ++k) {
          if (HasMultiJoin(base.At(plan.produce_leaf[produce_pos + k]).state)) {
            out.base_join[b] = true;
            break;
          }
        }
      }
      removed_pos += static_cast<uint32_t>(removed.size());
      produce_pos += produced;
    }
  }
  // Branches of several chains: their merged item nets and united facts.
  for (size_t i = 0; i < branches.multi.size(); ++i) {
    const uint32_t b = branches.multi[i];
    if (!prerejected[b].has_value()) {
      std::map<ItemKey, int64_t> merged;
      for (uint32_t g : branches.chains_of(b)) {
        for (const auto& [k, n] : index.chain(g).item_nets) merged[k] += n;
      }
      for (const auto& [item, net] : merged) {
        if (net >= 0) continue;
        ASSIGN_OR_RETURN(const BaseLeaf* leaf, base.Find(item.channel));
        if (BaseCount(leaf->state, item) + net < 0) {
          prerejected[b] = RejectReason::kUnavailable;
          break;
        }
      }
    }
    const Hash32* last = nullptr;
    for (const auto& p : branches.multi_facts[i].created_produces) {
      if (last != nullptr && *last == p.channel) continue;
      last = &p.channel;
      ASSIGN_OR_RETURN(const BaseLeaf* leaf, base.Find(p.channel));
      if (HasMultiJoin(leaf->state)) {
        out.base_join[b] = true;
        break;
      }
    }
  }
  return out;
}

}  // namespace rnode::casper::merge::internal

// Per-block index: event facts per deploy, deploy chains, chain summaries.
#include "casper/merge/block_index.h"

#include <algorithm>
#include <string>

#include "casper/merge/internal/depends.h"
#include "util/status_macros.h"

namespace rnode::casper::merge {
namespace {

template <typename T, typename Merge>
void SortUnique(std::vector<T>& v, Merge merge) {
  std::sort(v.begin(), v.end(),
            [](const T& a, const T& b) { return a.hash < b.hash; });
  size_t out = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (out > 0 && v[out - 1].hash == v[i].hash) {
      merge(v[out - 1], v[i]);
    } else {
      if (out != i) v[out] = std::move(v[i]);
      ++out;
    }
  }
  v.resize(out);
}

template <typename T>
bool ContainsHash(const std::vector<T>& sorted, const Hash32& h) {
  auto it = std::lower_bound(
      sorted.begin(), sorted.end(), h,
      [](const T& x, const Hash32& key) { return x.hash < key; });
  return it != sorted.end() && it->hash == h;
}

void Normalize(EventFacts& f) {
  SortUnique(f.created_produces,
             [](CreatedProduce& a, const CreatedProduce& b) {
               a.mergeable |= b.mergeable;
             });
  SortUnique(f.consumed_produces,
             [](ConsumedProduce& a, const ConsumedProduce& b) {
               a.mergeable |= b.mergeable;
               a.persist |= b.persist;
             });
  SortUnique(f.created_consumes, [](CreatedConsume&, const CreatedConsume&) {});
  SortUnique(f.fired_consumes, [](FiredConsume& a, const FiredConsume& b) {
    a.mergeable |= b.mergeable;
    a.persist |= b.persist;
  });
  f.pcnd.clear();
  f.ccnd.clear();
  for (const auto& p : f.created_produces) {
    if (p.persist || !ContainsHash(f.consumed_produces, p.hash))
      f.pcnd.push_back(p);
  }
  for (const auto& k : f.created_consumes) {
    if (k.persist || !ContainsHash(f.fired_consumes, k.hash))
      f.ccnd.push_back(k);
  }
}

bool CheckedAdd(uint64_t a, uint64_t b, uint64_t& out) {
  return !__builtin_add_overflow(a, b, &out);
}

// BlockFlat::base_keys and the entries' indices into it.
void BuildBaseKeys(BlockFlat& f) {
  enum : uint32_t { kRemoved = 0, kProduce = 1, kChange = 2, kJoin = 3 };
  using internal::KeyRecord;
  std::vector<KeyRecord> notes;
  notes.reserve(f.removed.all().size() + f.produced_on.all().size() +
                f.raw_changes.all().size());
  uint32_t n = 0;
  for (const auto& [item, net] : f.removed.all())
    notes.push_back(KeyRecord::Make(item.channel, n++, kRemoved));
  n = 0;
  for (KeyRecord r : f.produced_on.all()) {
    r.item = n++;
    r.tag = kProduce;
    notes.push_back(r);
  }
  n = 0;
  for (const RawChange& c : f.raw_changes.all()) {
    KeyRecord r = c.key;
    r.item = n++;
    r.tag = kChange;
    notes.push_back(r);
    for (const auto* ks : {&c.added_k, &c.removed_k}) {
      for (const rspace::WaitingContinuation& k : *ks) {
        for (const Hash32& ch : k.group)
          notes.push_back(KeyRecord::Make(ch, 0, kJoin));
      }
    }
  }
  std::sort(notes.begin(), notes.end(), internal::KeyRecordLess);
  f.removed_base.resize(f.removed.all().size());
  f.produce_base.resize(f.produced_on.all().size());
  f.change_base.resize(f.raw_changes.all().size());
  internal::DistinctKeys(notes, f.base_keys,
                         [&](const KeyRecord& r, uint32_t index) {
                           switch (r.tag) {
                             case kRemoved:
                               f.removed_base[r.item] = index;
                               break;
                             case kProduce:
                               f.produce_base[r.item] = index;
                               break;
                             case kChange:
                               f.change_base[r.item] = index;
                               break;
                             default:
                               break;
                           }
                         });
}

// The flat per-chain arrays of a built index (BlockFlat).
void BuildFlat(BlockIndex& index) {
  BlockFlat& f = index.flat;
  for (const DeployInput& d : index.deploys) {
    f.id_prefix.push_back(internal::PrefixKey(d.id.data(), d.id.size()));
  }
  for (uint32_t i = 0; i < index.chains.size(); ++i) {
    const ChainIndex& c = index.chains[i];
    f.first_deploy.push_back(c.first_deploy);
    f.cost.push_back(c.cost);
    f.deploys.items().insert(f.deploys.items().end(), c.deploys.begin(),
                             c.deploys.end());
    f.deploys.Close();
    internal::AppendDependRecords(c.facts, i, f.depend_keys.items());
    f.depend_keys.Close();
    internal::AppendConflictRecords(c.facts, i, f.conflict_keys.items());
    f.conflict_keys.Close();
    for (const auto& entry : c.item_nets) {
      if (entry.second < 0) f.removed.items().push_back(entry);
    }
    f.removed.Close();
    const Hash32* last = nullptr;
    for (const auto& p : c.facts.created_produces) {
      if (last != nullptr && *last == p.channel) continue;
      last = &p.channel;
      f.produced_on.items().push_back(
          internal::KeyRecord::Make(p.channel, 0, 0));
    }
    f.produced_on.Close();
    for (const auto& [ch, diff] : c.number_diffs)
      f.number_diffs.items().push_back(NumberDiff{ch, diff});
    f.number_diffs.Close();
    for (uint32_t d : c.deploys) {
      const DeployInput& dep = index.deploys[d];
      for (const rspace::ChannelChange& cc : dep.changes.channels) {
        if (dep.number_diffs.count(cc.channel) > 0) continue;
        f.raw_changes.items().push_back(RawChange{
            internal::KeyRecord::Make(cc.channel, 0, 0), cc.added_data,
            cc.removed_data, cc.added_continuations, cc.removed_continuations});
      }
    }
    f.raw_changes.Close();
  }
  BuildBaseKeys(f);
}

}  // namespace

absl::StatusOr<EventFacts> BuildEventFacts(
    std::span<const rspace::Event> events,
    const std::map<Hash32, int64_t>& number_channels) {
  auto is_number = [&](const Hash32& c) {
    return number_channels.count(c) > 0;
  };
  EventFacts f;
  for (const rspace::Event& e : events) {
    if (const auto* p = std::get_if<rspace::ProduceEvent>(&e)) {
      f.created_produces.push_back(CreatedProduce{
          p->hash, p->channel, p->persist, is_number(p->channel)});
    } else if (const auto* c = std::get_if<rspace::ConsumeEvent>(&e)) {
      if (c->channels.empty()) {
        return absl::InvalidArgumentError(
            "merge: consume event without channels");
      }
      CreatedConsume k{c->hash, c->channels, c->persist};
      std::sort(k.channels.begin(), k.channels.end());
      k.channels.erase(std::unique(k.channels.begin(), k.channels.end()),
                       k.channels.end());
      f.created_consumes.push_back(std::move(k));
    } else {
      const auto& m = std::get<rspace::CommEvent>(e);
      if (m.binds.empty()) {
        return absl::InvalidArgumentError("merge: COMM event without binds");
      }
      bool all_number = true;
      for (const auto& b : m.binds) all_number &= is_number(b.channel);
      f.fired_consumes.push_back(
          FiredConsume{m.consume, m.consume_persist, all_number});
      if (!m.peek) {
        for (const auto& b : m.binds) {
          f.consumed_produces.push_back(
              ConsumedProduce{b.produce, b.persist, is_number(b.channel)});
        }
      }
    }
  }
  Normalize(f);
  return f;
}

EventFacts UnionFacts(std::span<const EventFacts* const> parts) {
  EventFacts f;
  for (const EventFacts* p : parts) {
    f.created_produces.insert(f.created_produces.end(),
                              p->created_produces.begin(),
                              p->created_produces.end());
    f.consumed_produces.insert(f.consumed_produces.end(),
                               p->consumed_produces.begin(),
                               p->consumed_produces.end());
    f.created_consumes.insert(f.created_consumes.end(),
                              p->created_consumes.begin(),
                              p->created_consumes.end());
    f.fired_consumes.insert(f.fired_consumes.end(), p->fired_consumes.begin(),
                            p->fired_consumes.end());
  }
  Normalize(f);
  return f;
}

absl::StatusOr<std::shared_ptr<const BlockIndex>> BuildBlockIndex(
    BlockInput block) {
  if (block.deploys.size() > kMaxDeploysPerBlock) {
    return absl::ResourceExhaustedError("merge: too many deploys in block");
  }
  auto index = std::make_shared<BlockIndex>();
  index->hash = block.hash;
  index->number = block.number;
  index->deploys = std::move(block.deploys);
  const auto& deploys = index->deploys;
  std::vector<EventFacts> facts;
  facts.reserve(deploys.size());
  for (const DeployInput& d : deploys) {
    if (d.id.empty())
      return absl::InvalidArgumentError("merge: deploy without id");
    ASSIGN_OR_RETURN(EventFacts f, BuildEventFacts(d.events, d.number_diffs));
    facts.push_back(std::move(f));
  }
  std::vector<const EventFacts*> ptrs;
  for (const auto& f : facts) ptrs.push_back(&f);
  std::vector<uint32_t> labels = internal::RelatedComponents(ptrs);

  std::map<uint32_t, size_t> chain_of_label;
  for (uint32_t i = 0; i < labels.size(); ++i) {
    auto [it, inserted] =
        chain_of_label.emplace(labels[i], index->chains.size());
    if (inserted) {
      ChainIndex c;
      c.block = index->hash;
      c.block_number = index->number;
      c.first_deploy = i;
      index->chains.push_back(std::move(c));
    }
    index->chains[it->second].deploys.push_back(i);
  }
  for (ChainIndex& c : index->chains) {
    std::vector<const EventFacts*> parts;
    std::map<ItemKey, int64_t> nets;
    for (uint32_t i : c.deploys) {
      const DeployInput& d = deploys[i];
      parts.push_back(&facts[i]);
      if (!CheckedAdd(c.cost, d.cost, c.cost)) {
        return absl::InvalidArgumentError("merge: chain cost overflows");
      }
      for (const auto& [ch, diff] : d.number_diffs) c.number_diffs[ch] += diff;
      for (const rspace::ChannelChange& cc : d.changes.channels) {
        if (d.number_diffs.count(cc.channel) > 0) continue;
        for (const auto* list : {&cc.added_data, &cc.removed_data}) {
          for (const auto& x : *list) {
            if (x.value == nullptr) {
              return absl::InvalidArgumentError("merge: datum without value");
            }
          }
        }
        for (const auto& x : cc.added_data) {
          ++nets[ItemKey{cc.channel, false, x.source, x.persist,
                         x.value->hash()}];
        }
        for (const auto& x : cc.removed_data) {
          --nets[ItemKey{cc.channel, false, x.source, x.persist,
                         x.value->hash()}];
        }
        for (const auto& k : cc.added_continuations) {
          ++nets[ItemKey{cc.channel, true, k.source, k.persist, Hash32{}}];
        }
        for (const auto& k : cc.removed_continuations) {
          --nets[ItemKey{cc.channel, true, k.source, k.persist, Hash32{}}];
        }
      }
    }
    c.facts =
        c.deploys.size() == 1 ? facts[c.deploys.front()] : UnionFacts(parts);
    for (const auto& [key, net] : nets) {
      if (net != 0) c.item_nets.emplace_back(key, net);
    }
  }
  BuildFlat(*index);
  return std::shared_ptr<const BlockIndex>(std::move(index));
}

}  // namespace rnode::casper::merge

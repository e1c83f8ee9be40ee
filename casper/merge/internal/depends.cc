// Related components by shared event keys; the key records of fact sets.
#include "casper/merge/internal/depends.h"

#include "rspace/term.h"
#include "util/union_find.h"

namespace rnode::casper::merge::internal {

void AppendDependRecords(const EventFacts& f, uint32_t item,
                         std::vector<KeyRecord>& out) {
  constexpr uint32_t kProduce = 0, kConsume = 2, kSource = 1;
  for (const auto& p : f.pcnd) {
    if (!p.mergeable)
      out.push_back(KeyRecord::Make(p.hash, item, kProduce | kSource));
  }
  for (const auto& p : f.consumed_produces)
    out.push_back(KeyRecord::Make(p.hash, item, kProduce));
  for (const auto& k : f.ccnd)
    out.push_back(KeyRecord::Make(k.hash, item, kConsume | kSource));
  for (const auto& k : f.fired_consumes)
    out.push_back(KeyRecord::Make(k.hash, item, kConsume));
}

void AppendConflictRecords(const EventFacts& f, uint32_t item,
                           std::vector<KeyRecord>& out) {
  auto add = [&](const Hash32& key, ConflictKeyKind kind, bool side_b) {
    out.push_back(KeyRecord::Make(
        key, item, static_cast<uint32_t>(kind) * 2 + (side_b ? 1u : 0u)));
  };
  for (const auto& p : f.consumed_produces) {
    if (!p.persist) add(p.hash, ConflictKeyKind::kProduceRace, p.mergeable);
  }
  for (const auto& k : f.fired_consumes) {
    if (!k.persist) add(k.hash, ConflictKeyKind::kConsumeRace, k.mergeable);
  }
  for (const auto& p : f.pcnd) add(p.channel, ConflictKeyKind::kChannel, false);
  for (const auto& k : f.ccnd) {
    for (const Hash32& ch : k.channels)
      add(ch, ConflictKeyKind::kChannel, true);
  }
}

std::vector<uint32_t> ComponentsOfRecords(uint32_t n,
                                          std::vector<KeyRecord>& records,
                                          KeySortScratch& scratch) {
  SortKeyRecords(records, scratch);
  // depends(t, s) holds for every source s and target t with s != t; when a
  // key has a source, a target and two distinct items, every item naming it
  // is connected to every other (docs/merge.md §3), so joining each item to
  // the first is exact.
  UnionFind uf(n);
  for (size_t i = 0; i < records.size();) {
    const KeyRecord& first = records[i];
    bool source = false, target = false, distinct = false;
    size_t j = i;
    for (; j < records.size() && (records[j].tag >> 1) == (first.tag >> 1) &&
           SameKey(records[j], first);
         ++j) {
      ((records[j].tag & 1) ? source : target) = true;
      distinct |= records[j].item != first.item;
    }
    if (source && target && distinct) {
      for (size_t k = i + 1; k < j; ++k) uf.Union(first.item, records[k].item);
    }
    i = j;
  }
  return uf.Labels();
}

std::vector<uint32_t> RelatedComponents(
    std::span<const EventFacts* const> items) {
  std::vector<KeyRecord> records;
  size_t keys = 0;
  for (const EventFacts* f : items) {
    keys += f->pcnd.size() + f->consumed_produces.size() + f->ccnd.size() +
            f->fired_consumes.size();
  }
  records.reserve(keys);
  for (uint32_t i = 0; i < items.size(); ++i)
    AppendDependRecords(*items[i], i, records);
  KeySortScratch scratch;
  return ComponentsOfRecords(static_cast<uint32_t>(items.size()), records,
                             scratch);
}

}  // namespace rnode::casper::merge::internal

// Related components by shared event keys.
#include "casper/merge/internal/depends.h"

#include "casper/merge/internal/key_sort.h"
#include "casper/merge/internal/union_find.h"
#include "rspace/term.h"

namespace rnode::casper::merge::internal {
namespace {

template <typename Fn>
void ForEachKey(const EventFacts& f, Fn&& fn) {
  for (const auto& p : f.pcnd) {
    if (!p.mergeable) fn(/*produce=*/true, p.hash, /*source=*/true);
  }
  for (const auto& p : f.consumed_produces) fn(true, p.hash, false);
  for (const auto& k : f.ccnd) fn(false, k.hash, true);
  for (const auto& k : f.fired_consumes) fn(false, k.hash, false);
}

}  // namespace

std::vector<uint32_t> RelatedComponents(
    std::span<const EventFacts* const> items) {
  const uint32_t n = static_cast<uint32_t>(items.size());
  size_t keys = 0;
  for (const EventFacts* f : items) {
    keys += f->pcnd.size() + f->consumed_produces.size() + f->ccnd.size() +
            f->fired_consumes.size();
  }
  // One record per (key, item, role); tag = kind * 2 + is_source, so the
  // records of one (key, kind) are adjacent after sorting.
  // Kept per thread between calls, like the sort's scratch space.
  thread_local std::vector<KeyRecord> records;
  records.clear();
  records.reserve(keys);
  for (uint32_t i = 0; i < n; ++i) {
    ForEachKey(*items[i], [&](bool produce, const Hash32& key, bool source) {
      records.push_back(
          KeyRecord::Make(key, i, (produce ? 0u : 2u) | (source ? 1u : 0u)));
    });
  }
  SortKeyRecords(records);
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

}  // namespace rnode::casper::merge::internal

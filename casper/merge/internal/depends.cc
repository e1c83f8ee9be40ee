// Related components by shared event keys.
#include "casper/merge/internal/depends.h"

#include "absl/container/flat_hash_map.h"
#include "casper/merge/internal/hash_key.h"
#include "casper/merge/internal/union_find.h"
#include "rspace/term.h"

namespace rnode::casper::merge::internal {
namespace {

// What one key has seen: its first item, whether it has a source and a
// target, and whether two distinct items name it. depends(t, s) holds for
// every source s and target t with s != t; when a key has a source, a target
// and two distinct items, every item naming it is connected to every other
// (docs/merge.md §3), so joining each item to the first is exact.
struct KeySummary {
  uint32_t first = 0;
  bool source = false;
  bool target = false;
  bool distinct = false;
  bool linked() const { return source && target && distinct; }
};

using SummaryMap = Hash32Map<KeySummary>;

void Note(SummaryMap& map, const Hash32& key, uint32_t item, bool is_source) {
  auto [it, inserted] = map.try_emplace(key);
  KeySummary& s = it->second;
  if (inserted) {
    s.first = item;
  } else if (s.first != item) {
    s.distinct = true;
  }
  (is_source ? s.source : s.target) = true;
}

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
  SummaryMap produces, consumes;
  produces.reserve(keys);
  consumes.reserve(keys / 2 + 1);
  for (uint32_t i = 0; i < n; ++i) {
    ForEachKey(*items[i], [&](bool produce, const Hash32& key, bool source) {
      Note(produce ? produces : consumes, key, i, source);
    });
  }
  UnionFind uf(n);
  for (uint32_t i = 0; i < n; ++i) {
    ForEachKey(*items[i], [&](bool produce, const Hash32& key, bool) {
      const KeySummary& s = (produce ? produces : consumes).find(key)->second;
      if (s.linked()) uf.Union(s.first, i);
    });
  }
  return uf.Labels();
}

}  // namespace rnode::casper::merge::internal

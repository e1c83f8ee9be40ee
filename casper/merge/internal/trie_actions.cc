// Steps 7 and 8: the trie actions of the combined state (canonical blobs
// and their hashes) and their commit.
#include <algorithm>
#include <optional>

#include "casper/merge/internal/hash_key.h"
#include "casper/merge/internal/steps.h"
#include "crypto/hash.h"
#include "rspace/channel_codec.h"

namespace rnode::casper::merge::internal {
namespace {

using rspace::Datum;
using rspace::JoinGroup;
using rspace::WaitingContinuation;

// Items with equal keys are identical (the key is a hash of the content),
// so an unstable sort gives one order. Touches only the ranges of `s`.
void Canonicalize(NewState& s, ItemPools& pools) {
  auto d_first = pools.data.begin() + s.data_begin;
  auto d_last = pools.data.begin() + s.data_end;
  auto data_less = [](const Datum* a, const Datum* b) {
    return DatumLess(*a, *b);
  };
  if (!std::is_sorted(d_first, d_last, data_less)) {
    // Data with equal keys encode alike, so any order consistent with
    // DatumLess gives the same blob: sort flat (source prefix, pointer)
    // records and follow the pointers only on a prefix tie.
    struct Keyed {
      uint64_t prefix;
      const Datum* d;
    };
    std::vector<Keyed> keyed;
    keyed.reserve(static_cast<size_t>(d_last - d_first));
    for (auto it = d_first; it != d_last; ++it) {
      keyed.push_back({PrefixKey((*it)->source.data(), 8), *it});
    }
    std::sort(keyed.begin(), keyed.end(), [](const Keyed& x, const Keyed& y) {
      if (x.prefix != y.prefix) return x.prefix < y.prefix;
      return DatumLess(*x.d, *y.d);
    });
    for (size_t i = 0; i < keyed.size(); ++i) d_first[i] = keyed[i].d;
  }
  auto k_first = pools.conts.begin() + s.k_begin;
  auto k_last = pools.conts.begin() + s.k_end;
  auto k_less = [](const WaitingContinuation* a, const WaitingContinuation* b) {
    return Hash32Less()(a->source, b->source);
  };
  if (!std::is_sorted(k_first, k_last, k_less)) {
    std::sort(k_first, k_last, k_less);
  }
  if (s.joins.size() > 1) {
    std::sort(s.joins.begin(), s.joins.end(),
              [](const JoinGroup* a, const JoinGroup* b) { return *a < *b; });
    s.joins.erase(std::unique(s.joins.begin(), s.joins.end(),
                              [](const JoinGroup* a, const JoinGroup* b) {
                                return *a == *b;
                              }),
                  s.joins.end());
  }
}

}  // namespace

std::vector<rspace::LeafUpdate> TrieActions(CombinedState& combined,
                                            WorkerPool* pool, size_t grain) {
  std::vector<NewState>& states = combined.states;
  ItemPools& pools = combined.pools;
  const size_t n = states.size();
  // Per state, independent (each touches only its own pool ranges): the new
  // blob and its hash, or a deletion, or nothing when it equals the base.
  std::vector<std::optional<rspace::LeafUpdate>> slots(n);
  auto one = [&](size_t i) {
    NewState& s = states[i];
    const BaseLeaf* leaf = s.leaf;
    Canonicalize(s, pools);
    if (s.data_begin == s.data_end && s.k_begin == s.k_end && s.joins.empty()) {
      if (leaf->blob.has_value())
        slots[i] = rspace::LeafUpdate{s.channel, {}, {}};
      return;
    }
    Bytes blob =
        rspace::EncodeChannelState(pools.Data(s), pools.Conts(s), s.joins);
    if (leaf->blob.has_value() && *leaf->blob == blob) return;
    Hash32 h = crypto::Blake2b256(blob);
    slots[i] = rspace::LeafUpdate{s.channel, std::move(blob), h};
  };
  grain = std::max<size_t>(grain, 1);
  if (pool == nullptr || n <= grain) {
    for (size_t i = 0; i < n; ++i) one(i);
  } else {
    const size_t chunks = (n + grain - 1) / grain;
    pool->ParallelFor(chunks, [&](size_t c) {
      const size_t end = std::min(n, (c + 1) * grain);
      for (size_t i = c * grain; i < end; ++i) one(i);
    });
  }
  std::vector<rspace::LeafUpdate> updates;
  updates.reserve(n);
  for (uint32_t i : combined.order) {
    if (slots[i].has_value()) updates.push_back(std::move(*slots[i]));
  }
  return updates;
}

absl::StatusOr<Hash32> ApplyUpdates(rspace::History& history,
                                    const Hash32& base_root,
                                    std::vector<rspace::LeafUpdate> updates,
                                    WorkerPool* pool) {
  if (updates.empty()) return base_root;
  // Pipelined: the merge needs only the root; the store makes the write
  // durable before any later write (the block's own commit or insert).
  return history.CommitOwned(base_root, std::move(updates), pool,
                             rspace::CommitWrite::kPipelined);
}

}  // namespace rnode::casper::merge::internal

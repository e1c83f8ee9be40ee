// DagStore::PruneBelow (split from dag_store.cc): history retention's side
// of the block store (docs/node.md "Retention", docs/formats/dag.md).
#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "casper/block/block_codec.h"
#include "casper/dag/dag_store.h"
#include "casper/dag/internal/state_keys.h"
#include "util/status_macros.h"

namespace rnode::casper::dag {

using internal::CountValue;
using internal::HashEndingKey;
using internal::HasPrefix;
using internal::HeightKey;
using internal::HeightOfKey;
using internal::IndexKey;
using internal::kBlockCountKey;
using internal::kChildPrefix;
using internal::kFinalizedPrefix;
using internal::kFloorKey;
using internal::kHeightPrefix;
using internal::kInvalidPrefix;
using internal::kTipPrefix;

namespace {

// A height index key: prefix, number, hash.
constexpr size_t kHeightKeySize = 1 + 8 + 32;

// What a prune step deletes of one block, read before it takes the writer
// lock: a doomed block does not change, and a child stored after its
// children's records are read names it as a parent, which pins it (then
// it is not deleted).
struct Doomed {
  Hash32 hash{};
  BlockMeta meta;
  std::optional<block::Block> body;
  std::vector<Bytes> child_keys;
  uint64_t bytes = 0;
};

absl::StatusOr<Doomed> ReadDoomed(rspace::KeyValueStore& store,
                                  const DagColumns& columns, const Hash32& h) {
  Doomed d;
  d.hash = h;
  ASSIGN_OR_RETURN(std::optional<Bytes> encoded, store.Get(columns.blocks, h));
  ASSIGN_OR_RETURN(std::optional<Bytes> record, store.Get(columns.meta, h));
  if (!record.has_value()) {
    return absl::DataLossError("the height index names block " + HexEncode(h) +
                               ", which is not stored");
  }
  ASSIGN_OR_RETURN(d.meta, DecodeBlockMeta(*record));
  d.bytes += record->size();
  if (encoded.has_value()) {
    d.bytes += encoded->size();
    absl::StatusOr<block::Block> b = block::DecodeBlock(*encoded);
    if (!b.ok()) {
      return absl::DataLossError(
          absl::StrCat("stored block ", HexEncode(h),
                       " does not decode: ", b.status().message()));
    }
    d.body = *std::move(b);
  }
  const Bytes children = IndexKey(kChildPrefix, h);
  RETURN_IF_ERROR(
      store.ScanFrom(columns.state, children, [&](ByteView key, ByteView) {
        if (!HasPrefix(key, children)) return false;
        d.child_keys.emplace_back(key.begin(), key.end());
        return true;
      }));
  return d;
}

}  // namespace

absl::StatusOr<std::vector<std::pair<int64_t, Hash32>>> DagStore::Numbered(
    int64_t from, int64_t to) const {
  std::vector<std::pair<int64_t, Hash32>> out;
  if (from > to) return out;
  RETURN_IF_ERROR(store_->ScanFrom(
      columns_.state, HeightKey(from, Hash32{}), [&](ByteView key, ByteView) {
        if (!HasPrefix(key, AsBytes(kHeightPrefix))) return false;
        if (key.size() != kHeightKeySize) return true;
        const int64_t number = HeightOfKey(key);
        if (number > to) return false;
        out.emplace_back(number, HashEndingKey(key));
        return true;
      }));
  return out;
}

absl::Status DagStore::ForEachMetaFrom(
    int64_t from,
    const std::function<absl::Status(const BlockMeta&)>& fn) const {
  ASSIGN_OR_RETURN(const auto blocks,
                   Numbered(from, std::numeric_limits<int64_t>::max()));
  for (const auto& [number, h] : blocks) {
    ASSIGN_OR_RETURN(std::shared_ptr<const BlockMeta> meta, ReadMeta(h));
    if (meta != nullptr) RETURN_IF_ERROR(fn(*meta));
  }
  return absl::OkStatus();
}

absl::StatusOr<absl::flat_hash_set<Hash32, Hash32Hasher>> DagStore::PruneKeeps(
    int64_t floor) const {
  absl::flat_hash_set<Hash32, Hash32Hasher> keep;
  // The blocks above the floor, as the walk below meets them (by number):
  // a dependency among them is not below the floor, and not kept in `keep`,
  // which then holds about as many hashes as there are old blocks kept,
  // not the blocks above the floor times their justifications.
  absl::flat_hash_set<Hash32, Hash32Hasher> above;
  auto keep_dependencies = [&](const BlockMeta& meta) {
    for (const Hash32& p : meta.parents) {
      if (!above.contains(p)) keep.insert(p);
    }
    for (const auto& j : meta.justifications) {
      if (!above.contains(j.latest_block)) keep.insert(j.latest_block);
    }
  };
  std::vector<std::shared_ptr<const BlockMeta>> latest;
  {
    MutexLock lock(&mu_);
    for (const auto& [sender, meta] : latest_) latest.push_back(meta);
  }
  for (const auto& meta : latest) {
    keep.insert(meta->hash);
    keep_dependencies(*meta);
  }
  ASSIGN_OR_RETURN(auto genesis, Numbered(0, 0));
  for (const auto& [number, h] : genesis) keep.insert(h);
  RETURN_IF_ERROR(ForEachMetaFrom(floor + 1, [&](const BlockMeta& meta) {
    keep_dependencies(meta);
    above.insert(meta.hash);
    return absl::OkStatus();
  }));
  return keep;
}

absl::StatusOr<DagStore::PruneStats> DagStore::PruneBelow(
    int64_t floor, const std::atomic<bool>* stop, size_t step) {
  PruneStats stats;
  {
    MutexLock write_lock(&write_mu_);
    bool raise = false;
    {
      MutexLock lock(&mu_);
      if (!last_finalized_.has_value()) {
        return absl::FailedPreconditionError(
            "no finalized block to prune under");
      }
      ASSIGN_OR_RETURN(std::shared_ptr<const BlockMeta> lfb,
                       FindMeta(*last_finalized_));
      const int64_t highest = lfb->block_number - options_.kept_below_finalized;
      if (floor > highest) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cannot prune below #", floor, ": the last finalized block is #",
            lfb->block_number, " and the ", options_.kept_below_finalized,
            " numbers under it stay"));
      }
      raise = !floor_.has_value() || floor > *floor_;
      floor = std::max(floor, floor_.value_or(0));
    }
    stats.floor = floor;
    if (floor <= 0) return stats;  // nothing lies under the genesis
    // The floor first, in its own write (the views' lock is not held for
    // writes): from here the blocks below it are history.
    if (raise) {
      rspace::WriteBatch batch;
      batch.Put(columns_.state, AsBytes(kFloorKey),
                CountValue(static_cast<uint64_t>(floor)));
      RETURN_IF_ERROR(store_->Write(batch));
    }
    MutexLock lock(&mu_);
    floor_ = floor;
    pruning_ = true;
    pinned_.clear();
  }
  absl::Cleanup done = [this] {
    MutexLock lock(&mu_);
    pruning_ = false;
    pinned_.clear();
  };
  ASSIGN_OR_RETURN(const auto keep, PruneKeeps(floor));
  Bytes from = HeightKey(0, Hash32{});
  while (!from.empty()) {
    if (stop != nullptr && stop->load()) break;
    RETURN_IF_ERROR(PruneStep(floor, keep, step, from, stats));
  }
  return stats;
}

absl::Status DagStore::PruneStep(
    int64_t floor, const absl::flat_hash_set<Hash32, Hash32Hasher>& keep,
    size_t step, Bytes& from, PruneStats& stats) {
  // The next blocks below the floor that are not kept.
  std::vector<Hash32> doomed;
  Bytes next;
  RETURN_IF_ERROR(
      store_->ScanFrom(columns_.state, from, [&](ByteView key, ByteView) {
        if (!HasPrefix(key, AsBytes(kHeightPrefix)) ||
            (key.size() == kHeightKeySize && HeightOfKey(key) >= floor)) {
          return false;
        }
        if (doomed.size() == step) {
          next.assign(key.begin(), key.end());
          return false;
        }
        if (key.size() != kHeightKeySize) return true;
        const Hash32 h = HashEndingKey(key);
        if (keep.contains(h)) {
          ++stats.blocks_kept;
        } else {
          doomed.push_back(h);
        }
        return true;
      }));
  from = std::move(next);
  if (doomed.empty()) return absl::OkStatus();

  // Read before taking the writer lock (see Doomed).
  std::vector<Doomed> reads;
  reads.reserve(doomed.size());
  for (const Hash32& h : doomed) {
    ASSIGN_OR_RETURN(Doomed d, ReadDoomed(*store_, columns_, h));
    reads.push_back(std::move(d));
  }

  MutexLock write_lock(&write_mu_);
  {
    MutexLock lock(&mu_);
    std::erase_if(reads, [&](const Doomed& d) {
      mu_.AssertHeld();
      if (!pinned_.contains(d.hash)) return false;
      ++stats.blocks_kept;
      return true;
    });
  }
  rspace::WriteBatch batch;
  std::vector<block::Block> bodies;
  uint64_t bytes = 0;
  const rspace::ColumnId state = columns_.state;
  for (Doomed& d : reads) {
    const Hash32& h = d.hash;
    batch.Delete(columns_.blocks, h);
    batch.Delete(columns_.meta, h);
    batch.Delete(state, HeightKey(d.meta.block_number, h));
    for (const Hash32& p : d.meta.parents) {
      Bytes key = IndexKey(kChildPrefix, p);
      key.insert(key.end(), h.begin(), h.end());
      batch.Delete(state, key);
    }
    for (const Bytes& key : d.child_keys) batch.Delete(state, key);
    batch.Delete(state, IndexKey(kFinalizedPrefix, h));
    batch.Delete(state, IndexKey(kTipPrefix, h));
    batch.Delete(state, IndexKey(kInvalidPrefix, h));
    bytes += d.bytes;
    if (d.body.has_value()) bodies.push_back(*std::move(d.body));
  }
  RETURN_IF_ERROR(StageDeployUnindex(bodies, batch));
  uint64_t count = 0;
  {
    MutexLock lock(&mu_);
    count = count_ - reads.size();
  }
  batch.Put(columns_.state, AsBytes(kBlockCountKey), CountValue(count));
  RETURN_IF_ERROR(store_->WriteOwned(std::move(batch)));
  MutexLock lock(&mu_);
  count_ = count;
  for (const Doomed& d : reads) {
    invalid_.erase(d.hash);
    tips_.erase(d.hash);
  }
  stats.blocks_deleted += reads.size();
  stats.bytes_deleted += bytes;
  return absl::OkStatus();
}

}  // namespace rnode::casper::dag

// DagStore::Anchor (split from dag_store.cc): a joining node's DAG takes a
// window of a peer's blocks anchored at its last finalized block
// (docs/formats/dag.md, docs/p2p.md "Joining from the last finalized
// state").
#include "casper/dag/dag_store.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "casper/block/block_codec.h"
#include "casper/dag/internal/state_keys.h"
#include "util/byte_reader.h"
#include "util/status_macros.h"

namespace rnode::casper::dag {

using internal::CountValue;
using internal::IndexKey;
using internal::kBlockCountKey;
using internal::kFinalizedPrefix;
using internal::kFloorKey;
using internal::kLastFinalizedKey;
using internal::kTipPrefix;
using internal::kUnverifiedAnchorKey;

std::optional<int64_t> DagStore::floor() const {
  MutexLock lock(&mu_);
  return floor_;
}

absl::Status DagStore::LoadAnchor() {
  ASSIGN_OR_RETURN(std::optional<Bytes> floor,
                   store_->Get(columns_.state, AsBytes(kFloorKey)));
  if (floor.has_value()) {
    ByteReader floor_reader(*floor);
    int64_t number = 0;
    if (!floor_reader.I64(number) || !floor_reader.done()) {
      return absl::DataLossError("the DAG's floor is malformed");
    }
    floor_ = number;
  }
  ASSIGN_OR_RETURN(std::optional<Bytes> unverified,
                   store_->Get(columns_.state, AsBytes(kUnverifiedAnchorKey)));
  if (unverified.has_value()) {
    if (unverified->size() != 32) {
      return absl::DataLossError("the DAG's unverified anchor is malformed");
    }
    Hash32 h{};
    std::copy(unverified->begin(), unverified->end(), h.begin());
    unverified_anchor_ = h;
  }
  return absl::OkStatus();
}

std::optional<Hash32> DagStore::UnverifiedAnchor() const {
  MutexLock lock(&mu_);
  return unverified_anchor_;
}

absl::Status DagStore::SetAnchorVerified() {
  MutexLock write_lock(&write_mu_);
  rspace::WriteBatch batch;
  batch.Delete(columns_.state, AsBytes(kUnverifiedAnchorKey));
  RETURN_IF_ERROR(store_->Write(batch));
  MutexLock lock(&mu_);
  unverified_anchor_.reset();
  return absl::OkStatus();
}

absl::Status DagStore::CheckAnchorable(std::span<const block::Block> blocks,
                                       const Hash32& anchor,
                                       int64_t floor) const {
  if (floor_.has_value() || count_ != 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "only a DAG holding its genesis alone can be anchored; this one ",
        floor_.has_value() ? "is anchored already"
                           : absl::StrCat("holds ", count_, " blocks")));
  }
  absl::flat_hash_set<Hash32, Hash32Hasher> given;
  const block::Block* anchor_block = nullptr;
  for (const block::Block& b : blocks) {
    if (b.hash == Hash32{}) {
      return absl::InvalidArgumentError("block has no hash (not sealed)");
    }
    if (!given.insert(b.hash).second) {
      return absl::InvalidArgumentError("block " + HexEncode(b.hash) +
                                        " is given twice");
    }
    ASSIGN_OR_RETURN(bool stored, StoredLocked(b.hash));
    if (stored) {
      return absl::FailedPreconditionError("block " + HexEncode(b.hash) +
                                           " is stored already");
    }
    if (b.hash == anchor) anchor_block = &b;
  }
  if (anchor_block == nullptr) {
    return absl::InvalidArgumentError("the anchor " + HexEncode(anchor) +
                                      " is not among the blocks");
  }
  if (anchor_block->body.state.block_number <= floor) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the anchor is numbered ", anchor_block->body.state.block_number,
        ", not above the floor ", floor));
  }
  for (const block::Block& b : blocks) {
    if (b.body.state.block_number <= floor) continue;
    std::vector<std::pair<const char*, Hash32>> needs;
    for (const Hash32& p : b.header.parents) needs.emplace_back("parent", p);
    for (const auto& j : b.justifications) {
      needs.emplace_back("justification", j.latest_block);
    }
    for (const auto& [what, h] : needs) {
      if (given.contains(h)) continue;
      ASSIGN_OR_RETURN(bool stored, StoredLocked(h));
      if (!stored) {
        return absl::FailedPreconditionError(
            absl::StrCat("block ", HexEncode(b.hash), " needs ", what, " ",
                         HexEncode(h), ", which is neither given nor stored"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status DagStore::Anchor(std::span<const block::Block> blocks,
                              const Hash32& anchor, int64_t floor) {
  MutexLock write_lock(&write_mu_);
  // Parents before children, as Insert would have seen them.
  std::vector<const block::Block*> order;
  for (const block::Block& b : blocks) order.push_back(&b);
  std::sort(order.begin(), order.end(), [](const auto* x, const auto* y) {
    return std::tie(x->body.state.block_number, x->hash) <
           std::tie(y->body.state.block_number, y->hash);
  });
  rspace::WriteBatch batch;
  {
    MutexLock lock(&mu_);
    RETURN_IF_ERROR(CheckAnchorable(blocks, anchor, floor));
  }
  RETURN_IF_ERROR(StageDeployIndexes(blocks, /*invalid=*/false, batch));
  // The anchor and its ancestors among the blocks are finalized.
  absl::flat_hash_map<Hash32, const block::Block*, Hash32Hasher> by_hash;
  for (const block::Block& b : blocks) by_hash.emplace(b.hash, &b);
  absl::flat_hash_set<Hash32, Hash32Hasher> final{anchor};
  std::deque<Hash32> queue{anchor};
  while (!queue.empty()) {
    const block::Block* b = by_hash.at(queue.front());
    queue.pop_front();
    for (const Hash32& p : b->header.parents) {
      if (by_hash.contains(p) && final.insert(p).second) queue.push_back(p);
    }
  }
  for (const Hash32& f : final) {
    batch.Put(columns_.state, IndexKey(kFinalizedPrefix, f), Bytes{});
  }
  for (const block::Block* b : order) {
    batch.Put(columns_.blocks, Bytes(b->hash.begin(), b->hash.end()),
              block::EncodeBlock(*b));
  }
  std::vector<std::shared_ptr<const BlockMeta>> metas;
  for (const block::Block* b : order) {
    metas.push_back(std::make_shared<const BlockMeta>(MetaOf(*b, false)));
    batch.Put(columns_.meta, Bytes(b->hash.begin(), b->hash.end()),
              EncodeBlockMeta(*metas.back()));
  }
  const int64_t anchor_number = by_hash.at(anchor)->body.state.block_number;
  MutexLock lock(&mu_);
  // The views as they are (the genesis alone, so small), to put back if
  // the write fails: the index records are staged from views that each
  // block changes.
  const auto saved = std::make_tuple(horizon_, metas_, children_, heights_,
                                     finalized_, latest_, tips_, invalid_);
  floor_ = floor;  // staged as history from here
  EvictBelow(anchor_number - options_.kept_below_finalized);
  // The genesis stops being a tip: it lies under the anchor, finalized.
  for (const Hash32& t : tips_) {
    batch.Delete(columns_.state, IndexKey(kTipPrefix, t));
  }
  tips_.clear();
  for (const auto& meta : metas) {
    StageIndex(*meta, batch);
    Apply(meta);
  }
  batch.Put(columns_.state, AsBytes(kLastFinalizedKey), anchor);
  batch.Put(columns_.state, AsBytes(kBlockCountKey),
            CountValue(count_ + blocks.size()));
  batch.Put(columns_.state, AsBytes(kFloorKey),
            CountValue(static_cast<uint64_t>(floor)));
  batch.Put(columns_.state, AsBytes(kUnverifiedAnchorKey), anchor);
  // The one write made under the view lock: readers wait for it, once.
  if (absl::Status s = store_->WriteOwned(std::move(batch)); !s.ok()) {
    std::tie(horizon_, metas_, children_, heights_, finalized_, latest_, tips_,
             invalid_) = saved;
    floor_.reset();
    return s;
  }
  for (const Hash32& f : final) {
    if (metas_.contains(f)) finalized_.insert(f);
  }
  last_finalized_ = anchor;
  unverified_anchor_ = anchor;
  count_ += blocks.size();
  for (const block::Block& b : blocks) KeepMergeRecord(b);
  return absl::OkStatus();
}

}  // namespace rnode::casper::dag

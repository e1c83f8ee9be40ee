// Block store and DAG on the node's key-value store.
#include "casper/dag/dag_store.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "casper/block/block_codec.h"
#include "casper/dag/internal/sorted_hashes.h"
#include "casper/dag/internal/state_keys.h"
#include "util/byte_reader.h"
#include "util/status_macros.h"

namespace rnode::casper::dag {
namespace {

using internal::CountValue;
using internal::HashEndingKey;
using internal::HasPrefix;
using internal::HeightKey;
using internal::IndexKey;
using internal::kBlockCountKey;
using internal::kChildPrefix;
using internal::kFinalizedPrefix;
using internal::kHeightPrefix;
using internal::kIndexVersion;
using internal::kIndexVersionKey;
using internal::kInvalidPrefix;
using internal::kLastFinalizedKey;
using internal::kLatestPrefix;
using internal::kTipPrefix;

constexpr uint8_t kMetaVersion = 1;
constexpr uint8_t kFlagInvalid = 1;

class Writer {
 public:
  void U8(uint8_t v) { out_.push_back(v); }
  void U32(uint32_t v) {
    for (int i = 0; i < 4; ++i)
      out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void I64(int64_t v) {
    const auto u = static_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i)
      out_.push_back(static_cast<uint8_t>(u >> (8 * i)));
  }
  template <size_t N>
  void Fixed(const std::array<uint8_t, N>& a) {
    out_.insert(out_.end(), a.begin(), a.end());
  }
  Bytes Finish() && { return std::move(out_); }

 private:
  Bytes out_;
};

absl::Status Corrupt(const char* what) {
  return absl::DataLossError(std::string("block metadata record: ") + what);
}

}  // namespace

BlockMeta MetaOf(const block::Block& b, bool invalid) {
  BlockMeta m;
  m.hash = b.hash;
  m.parents = b.header.parents;
  m.justifications = b.justifications;
  m.sender = b.sender;
  m.seq_num = b.seq_num;
  m.block_number = b.body.state.block_number;
  m.timestamp = b.header.timestamp;
  m.pre_state = b.body.state.pre_state;
  m.post_state = b.body.state.post_state;
  m.bonds = b.body.state.bonds;
  m.deploy_count = static_cast<uint32_t>(b.body.deploys.size());
  m.invalid = invalid;
  return m;
}

Bytes EncodeBlockMeta(const BlockMeta& m) {
  Writer w;
  w.U8(kMetaVersion);
  w.Fixed(m.hash);
  w.U32(static_cast<uint32_t>(m.parents.size()));
  for (const Hash32& p : m.parents) w.Fixed(p);
  w.U32(static_cast<uint32_t>(m.justifications.size()));
  for (const auto& j : m.justifications) {
    w.Fixed(j.validator);
    w.Fixed(j.latest_block);
  }
  w.Fixed(m.sender);
  w.U32(static_cast<uint32_t>(m.seq_num));
  w.I64(m.block_number);
  w.I64(m.timestamp);
  w.Fixed(m.pre_state);
  w.Fixed(m.post_state);
  w.U32(static_cast<uint32_t>(m.bonds.size()));
  for (const auto& b : m.bonds) {
    w.Fixed(b.validator);
    w.I64(b.stake);
  }
  w.U32(m.deploy_count);
  w.U8(m.invalid ? kFlagInvalid : 0);
  return std::move(w).Finish();
}

absl::StatusOr<BlockMeta> DecodeBlockMeta(ByteView bytes) {
  ByteReader r(bytes);
  BlockMeta m;
  uint8_t version = 0;
  if (!r.U8(version) || version != kMetaVersion) return Corrupt("bad version");
  uint32_t n = 0;
  if (!r.Fixed(m.hash) || !r.Count(n, 32)) return Corrupt("bad parents");
  m.parents.resize(n);
  for (Hash32& p : m.parents) r.Fixed(p);
  if (!r.Count(n, 65 + 32)) return Corrupt("bad justifications");
  m.justifications.resize(n);
  for (auto& j : m.justifications) {
    r.Fixed(j.validator);
    r.Fixed(j.latest_block);
  }
  uint32_t seq = 0;
  if (!r.Fixed(m.sender) || !r.U32(seq) || !r.I64(m.block_number) ||
      !r.I64(m.timestamp) || !r.Fixed(m.pre_state) || !r.Fixed(m.post_state) ||
      !r.Count(n, 65 + 8)) {
    return Corrupt("bad fields");
  }
  m.seq_num = static_cast<int32_t>(seq);
  m.bonds.resize(n);
  for (auto& b : m.bonds) {
    r.Fixed(b.validator);
    r.I64(b.stake);
  }
  uint8_t flags = 0;
  if (!r.U32(m.deploy_count) || !r.U8(flags) || (flags & ~kFlagInvalid) != 0 ||
      !r.done()) {
    return Corrupt("bad tail");
  }
  m.invalid = (flags & kFlagInvalid) != 0;
  return m;
}

std::vector<std::string> DagColumnNames() {
  return {"blocks", "block-meta", "deploy-index", "dag-state"};
}

DagColumns DagColumnsFrom(rspace::ColumnId first) {
  return DagColumns{first, first + 1, first + 2, first + 3};
}

DagStore::DagStore(rspace::KeyValueStore* store, DagColumns columns,
                   DagStoreOptions options)
    : store_(store), columns_(columns), options_(options) {}

absl::StatusOr<std::unique_ptr<DagStore>> DagStore::Open(
    rspace::KeyValueStore* store, DagColumns columns, DagStoreOptions options) {
  std::unique_ptr<DagStore> dag(new DagStore(store, columns, options));
  MutexLock lock(&dag->mu_);
  ASSIGN_OR_RETURN(std::optional<Bytes> version,
                   store->Get(columns.state, AsBytes(kIndexVersionKey)));
  if (!version.has_value()) {
    RETURN_IF_ERROR(dag->BuildIndexes());
  } else if (*version != Bytes{kIndexVersion}) {
    return absl::DataLossError("unknown DAG index version " +
                               HexEncode(*version));
  } else {
    RETURN_IF_ERROR(dag->LoadWindow());
  }
  if (dag->last_finalized_.has_value()) {
    dag->EvictBelow(dag->metas_.at(*dag->last_finalized_)->block_number -
                    options.kept_below_finalized);
  }
  return dag;
}

absl::StatusOr<std::optional<Hash32>> DagStore::ReadLastFinalized() const {
  ASSIGN_OR_RETURN(std::optional<Bytes> lfb,
                   store_->Get(columns_.state, AsBytes(kLastFinalizedKey)));
  if (!lfb.has_value()) return std::optional<Hash32>();
  if (lfb->size() != 32) return absl::DataLossError("bad last-finalized");
  Hash32 h;
  std::copy(lfb->begin(), lfb->end(), h.begin());
  return std::optional<Hash32>(h);
}

absl::Status DagStore::LoadWindow() {
  ASSIGN_OR_RETURN(std::optional<Bytes> count,
                   store_->Get(columns_.state, AsBytes(kBlockCountKey)));
  int64_t stored_count = 0;
  ByteReader count_reader(count.has_value() ? ByteView(*count) : ByteView());
  if (!count_reader.I64(stored_count) || !count_reader.done()) {
    return absl::DataLossError("the DAG's block count is missing or malformed");
  }
  count_ = static_cast<uint64_t>(stored_count);
  RETURN_IF_ERROR(LoadAnchor());
  ASSIGN_OR_RETURN(last_finalized_, ReadLastFinalized());
  if (last_finalized_.has_value()) {
    ASSIGN_OR_RETURN(std::shared_ptr<const BlockMeta> lfb_meta,
                     ReadMeta(*last_finalized_));
    if (lfb_meta == nullptr) {
      return absl::DataLossError("last finalized block " +
                                 HexEncode(*last_finalized_) +
                                 " is not stored");
    }
    horizon_ = std::max<int64_t>(
        0, lfb_meta->block_number - options_.kept_below_finalized);
  }
  // The window: every block numbered from the horizon, by the height index.
  std::vector<Hash32> window;
  RETURN_IF_ERROR(
      store_->ScanFrom(columns_.state, HeightKey(horizon_, Hash32{}),
                       [&](ByteView key, ByteView) {
                         if (!HasPrefix(key, AsBytes(kHeightPrefix)))
                           return false;
                         if (key.size() == 1 + 8 + 32)
                           window.push_back(HashEndingKey(key));
                         return true;
                       }));
  for (const Hash32& h : window) {
    ASSIGN_OR_RETURN(std::shared_ptr<const BlockMeta> meta, ReadMeta(h));
    if (meta == nullptr) {
      return absl::DataLossError("the height index names block " +
                                 HexEncode(h) + ", which is not stored");
    }
    metas_[h] = std::move(meta);
  }
  for (const auto& [hash, meta] : metas_) {
    for (const Hash32& p : meta->parents) {
      if (metas_.contains(p)) {
        internal::InsertSorted(children_[p], hash);
        continue;
      }
      ASSIGN_OR_RETURN(bool stored, StoredLocked(p));
      if (!stored && !IsHistory(*meta)) {
        return absl::DataLossError("block " + HexEncode(hash) +
                                   " names parent " + HexEncode(p) +
                                   " that is not stored");
      }
    }
    internal::InsertSorted(heights_[meta->block_number], hash);
    ASSIGN_OR_RETURN(bool final, StoredFinalized(hash));
    if (final) finalized_.insert(hash);
  }
  ASSIGN_OR_RETURN(std::vector<Hash32> tips,
                   IndexedHashes(AsBytes(kTipPrefix)));
  tips_.insert(tips.begin(), tips.end());
  ASSIGN_OR_RETURN(std::vector<Hash32> invalid,
                   IndexedHashes(AsBytes(kInvalidPrefix)));
  invalid_.insert(invalid.begin(), invalid.end());
  std::vector<Hash32> latest;
  RETURN_IF_ERROR(
      store_->ScanFrom(columns_.state, AsBytes(kLatestPrefix),
                       [&](ByteView key, ByteView value) {
                         if (!HasPrefix(key, AsBytes(kLatestPrefix)))
                           return false;
                         if (value.size() == 32)
                           latest.push_back(HashEndingKey(value));
                         return true;
                       }));
  for (const Hash32& h : latest) {
    ASSIGN_OR_RETURN(std::shared_ptr<const BlockMeta> meta, FindMeta(h));
    if (meta == nullptr) {
      return absl::DataLossError("latest message " + HexEncode(h) +
                                 " is not stored");
    }
    latest_[meta->sender] = std::move(meta);
  }
  if (last_finalized_.has_value() && !metas_.contains(*last_finalized_)) {
    return absl::DataLossError(
        "the height index misses the last finalized "
        "block " +
        HexEncode(*last_finalized_));
  }
  return absl::OkStatus();
}

absl::Status DagStore::BuildIndexes() {
  std::vector<std::shared_ptr<const BlockMeta>> all;
  RETURN_IF_ERROR(store_->ForEach(
      columns_.meta, [&](ByteView key, ByteView value) -> absl::Status {
        ASSIGN_OR_RETURN(BlockMeta meta, DecodeBlockMeta(value));
        if (key.size() != 32 ||
            !std::equal(key.begin(), key.end(), meta.hash.begin())) {
          return absl::DataLossError("block metadata stored under " +
                                     HexEncode(key) + " is of block " +
                                     HexEncode(meta.hash));
        }
        all.push_back(std::make_shared<const BlockMeta>(std::move(meta)));
        return absl::OkStatus();
      }));
  for (const auto& meta : all) metas_[meta->hash] = meta;
  for (const auto& meta : all) {
    for (const Hash32& p : meta->parents) {
      if (!metas_.contains(p)) {
        return absl::DataLossError("block " + HexEncode(meta->hash) +
                                   " names parent " + HexEncode(p) +
                                   " that is not stored");
      }
    }
  }
  // Parents before children, as Insert saw them.
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return std::tie(a->block_number, a->hash) <
           std::tie(b->block_number, b->hash);
  });
  rspace::WriteBatch batch;
  for (const auto& meta : all) {
    StageIndex(*meta, batch);
    Apply(meta);
  }
  ASSIGN_OR_RETURN(std::optional<Hash32> lfb, ReadLastFinalized());
  if (lfb.has_value()) {
    if (!metas_.contains(*lfb)) {
      return absl::DataLossError("last finalized block " + HexEncode(*lfb) +
                                 " is not stored");
    }
    ASSIGN_OR_RETURN(std::vector<Hash32> final, NewlyFinalized(*lfb));
    for (const Hash32& f : final) {
      batch.Put(columns_.state, IndexKey(kFinalizedPrefix, f), Bytes{});
      finalized_.insert(f);
    }
    last_finalized_ = lfb;
  }
  count_ = all.size();
  batch.Put(columns_.state, AsBytes(kBlockCountKey), CountValue(count_));
  batch.Put(columns_.state, AsBytes(kIndexVersionKey), Bytes{kIndexVersion});
  return store_->WriteOwned(std::move(batch));
}

bool DagStore::BecomesLatest(const BlockMeta& meta) const {
  if (meta.invalid) return false;
  auto it = latest_.find(meta.sender);
  if (it == latest_.end()) return true;
  const BlockMeta& latest = *it->second;
  return meta.seq_num > latest.seq_num ||
         (meta.seq_num == latest.seq_num && meta.hash < latest.hash);
}

void DagStore::StageIndex(const BlockMeta& m, rspace::WriteBatch& batch) const {
  const rspace::ColumnId state = columns_.state;
  batch.Put(state, HeightKey(m.block_number, m.hash), Bytes{});
  for (const Hash32& p : m.parents) {
    Bytes key = IndexKey(kChildPrefix, p);
    key.insert(key.end(), m.hash.begin(), m.hash.end());
    batch.Put(state, std::move(key), Bytes{});
  }
  if (m.invalid) {
    batch.Put(state, IndexKey(kInvalidPrefix, m.hash), Bytes{});
    return;
  }
  for (const Hash32& p : m.parents) {
    if (tips_.contains(p)) batch.Delete(state, IndexKey(kTipPrefix, p));
  }
  // History is never a tip: what was built on it may not be stored here.
  if (!IsHistory(m)) batch.Put(state, IndexKey(kTipPrefix, m.hash), Bytes{});
  if (BecomesLatest(m)) {
    Bytes key(kLatestPrefix.begin(), kLatestPrefix.end());
    key.insert(key.end(), m.sender.begin(), m.sender.end());
    batch.Put(state, std::move(key), Bytes(m.hash.begin(), m.hash.end()));
  }
}

void DagStore::Apply(std::shared_ptr<const BlockMeta> meta) {
  const Hash32 h = meta->hash;
  for (const Hash32& p : meta->parents) {
    if (metas_.contains(p)) internal::InsertSorted(children_[p], h);
  }
  if (meta->invalid) {
    invalid_.insert(h);
  } else {
    for (const Hash32& p : meta->parents) tips_.erase(p);
    if (!IsHistory(*meta)) tips_.insert(h);
    if (BecomesLatest(*meta)) latest_[meta->sender] = meta;
  }
  // A block below the window (a late block on an old branch) is in the
  // store's indexes only.
  if (meta->block_number < horizon_) return;
  internal::InsertSorted(heights_[meta->block_number], h);
  metas_[h] = std::move(meta);
}

void DagStore::EvictBelow(int64_t horizon) {
  if (horizon <= horizon_) return;
  horizon_ = horizon;
  while (!heights_.empty() && heights_.begin()->first < horizon) {
    for (const Hash32& h : heights_.begin()->second) {
      metas_.erase(h);
      children_.erase(h);
      finalized_.erase(h);
    }
    heights_.erase(heights_.begin());
  }
}

absl::StatusOr<std::shared_ptr<const BlockMeta>> DagStore::ReadMeta(
    const Hash32& hash) const {
  ASSIGN_OR_RETURN(std::optional<Bytes> bytes,
                   store_->Get(columns_.meta, hash));
  if (!bytes.has_value()) return nullptr;
  ASSIGN_OR_RETURN(BlockMeta meta, DecodeBlockMeta(*bytes));
  if (meta.hash != hash) {
    return absl::DataLossError("block metadata stored under " +
                               HexEncode(hash) + " is of block " +
                               HexEncode(meta.hash));
  }
  return std::make_shared<const BlockMeta>(std::move(meta));
}

absl::StatusOr<std::shared_ptr<const BlockMeta>> DagStore::FindMeta(
    const Hash32& hash) const {
  if (auto it = metas_.find(hash); it != metas_.end()) return it->second;
  // The latest messages (one per sender), whatever their number.
  for (const auto& [sender, meta] : latest_) {
    if (meta->hash == hash) return meta;
  }
  return ReadMeta(hash);
}

absl::StatusOr<bool> DagStore::StoredLocked(const Hash32& hash) const {
  if (metas_.contains(hash)) return true;
  ASSIGN_OR_RETURN(std::optional<Bytes> meta, store_->Get(columns_.meta, hash));
  return meta.has_value();
}

absl::StatusOr<bool> DagStore::FinalizedLocked(const Hash32& hash) const {
  if (metas_.contains(hash)) return finalized_.contains(hash);
  return StoredFinalized(hash);
}

absl::StatusOr<bool> DagStore::StoredFinalized(const Hash32& hash) const {
  ASSIGN_OR_RETURN(
      std::optional<Bytes> marker,
      store_->Get(columns_.state, IndexKey(kFinalizedPrefix, hash)));
  return marker.has_value();
}

absl::StatusOr<std::vector<Hash32>> DagStore::IndexedHashes(
    ByteView prefix) const {
  std::vector<Hash32> out;
  RETURN_IF_ERROR(
      store_->ScanFrom(columns_.state, prefix, [&](ByteView key, ByteView) {
        if (!HasPrefix(key, prefix)) return false;
        if (key.size() == prefix.size() + 32) out.push_back(HashEndingKey(key));
        return true;
      }));
  return out;
}

absl::StatusOr<bool> DagStore::Insert(const block::Block& block, bool invalid) {
  if (block.hash == Hash32{}) {
    return absl::InvalidArgumentError("block has no hash (not sealed)");
  }
  MutexLock write_lock(&write_mu_);
  BlockMeta meta = MetaOf(block, invalid);
  rspace::WriteBatch batch;
  {
    MutexLock lock(&mu_);
    // A stored block numbered in the window is in memory: only an old one
    // is looked for in the store (the hash covers the number).
    bool known = metas_.contains(block.hash);
    if (!known && meta.block_number < horizon_) {
      ASSIGN_OR_RETURN(known, StoredLocked(block.hash));
    }
    if (known) return false;
    auto require = [&](const Hash32& h, const char* what) -> absl::Status {
      mu_.AssertHeld();  // called below, under the lock taken above
      ASSIGN_OR_RETURN(bool there, StoredLocked(h));
      if (there) return absl::OkStatus();
      return absl::FailedPreconditionError(
          absl::StrCat("block ", HexEncode(block.hash), " needs ", what, " ",
                       HexEncode(h), ", which is not stored"));
    };
    // History (at or below an anchored DAG's floor) comes without what
    // lies under it.
    const bool history = IsHistory(meta);
    for (const Hash32& p : block.header.parents) {
      if (!history) RETURN_IF_ERROR(require(p, "parent"));
    }
    for (const auto& j : block.justifications) {
      if (!history) RETURN_IF_ERROR(require(j.latest_block, "justification"));
    }
    // A prune under way keeps what this block depends on.
    if (pruning_) {
      pinned_.insert(meta.parents.begin(), meta.parents.end());
      for (const auto& j : meta.justifications) pinned_.insert(j.latest_block);
    }
    StageIndex(meta, batch);
    batch.Put(columns_.state, AsBytes(kBlockCountKey), CountValue(count_ + 1));
  }
  batch.Put(columns_.blocks, Bytes(block.hash.begin(), block.hash.end()),
            block::EncodeBlock(block));
  batch.Put(columns_.meta, Bytes(block.hash.begin(), block.hash.end()),
            EncodeBlockMeta(meta));
  RETURN_IF_ERROR(StageDeployIndex(block, invalid, batch));
  RETURN_IF_ERROR(store_->WriteOwned(std::move(batch)));
  KeepMergeRecord(block);
  MutexLock lock(&mu_);
  Apply(std::make_shared<const BlockMeta>(std::move(meta)));
  ++count_;
  return true;
}

bool DagStore::Contains(const Hash32& hash) const {
  MutexLock lock(&mu_);
  absl::StatusOr<bool> stored = StoredLocked(hash);
  return stored.ok() && *stored;
}

absl::StatusOr<std::optional<Bytes>> DagStore::GetBlockBytes(
    const Hash32& hash) {
  return store_->Get(columns_.blocks, hash);
}

absl::StatusOr<std::optional<block::Block>> DagStore::GetBlock(
    const Hash32& hash) {
  ASSIGN_OR_RETURN(std::optional<Bytes> bytes,
                   store_->Get(columns_.blocks, hash));
  if (!bytes.has_value()) return std::optional<block::Block>();
  auto b = block::DecodeBlock(*bytes);
  if (!b.ok()) {
    return absl::DataLossError(
        "stored block " + HexEncode(hash) +
        " does not decode: " + std::string(b.status().message()));
  }
  return std::optional<block::Block>(*std::move(b));
}

absl::StatusOr<std::shared_ptr<const BlockMeta>> DagStore::Meta(
    const Hash32& hash) const {
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(std::shared_ptr<const BlockMeta> meta, FindMeta(hash));
  if (meta == nullptr) {
    return absl::NotFoundError("block " + HexEncode(hash) + " is not stored");
  }
  return meta;
}

std::vector<Hash32> DagStore::Children(const Hash32& hash) const {
  MutexLock lock(&mu_);
  if (metas_.contains(hash)) {
    auto it = children_.find(hash);
    return it == children_.end() ? std::vector<Hash32>() : it->second;
  }
  absl::StatusOr<std::vector<Hash32>> kids =
      IndexedHashes(IndexKey(kChildPrefix, hash));
  return kids.ok() ? *std::move(kids) : std::vector<Hash32>();
}

std::vector<Hash32> DagStore::AtHeight(int64_t number) const {
  MutexLock lock(&mu_);
  if (number >= horizon_) {
    auto it = heights_.find(number);
    return it == heights_.end() ? std::vector<Hash32>() : it->second;
  }
  Bytes prefix = HeightKey(number, Hash32{});
  prefix.resize(1 + 8);
  absl::StatusOr<std::vector<Hash32>> at = IndexedHashes(prefix);
  return at.ok() ? *std::move(at) : std::vector<Hash32>();
}

int64_t DagStore::MaxHeight() const {
  MutexLock lock(&mu_);
  return heights_.empty() ? -1 : heights_.rbegin()->first;
}

std::map<crypto::Secp256k1PublicKey, Hash32> DagStore::LatestMessages() const {
  MutexLock lock(&mu_);
  std::map<crypto::Secp256k1PublicKey, Hash32> out;
  for (const auto& [key, meta] : latest_) out[key] = meta->hash;
  return out;
}

std::vector<Hash32> DagStore::Tips() const {
  MutexLock lock(&mu_);
  return std::vector<Hash32>(tips_.begin(), tips_.end());
}

std::vector<Hash32> DagStore::InvalidBlocks() const {
  MutexLock lock(&mu_);
  return std::vector<Hash32>(invalid_.begin(), invalid_.end());
}

bool DagStore::IsAncestorLocked(const Hash32& ancestor,
                                const Hash32& hash) const {
  absl::StatusOr<std::shared_ptr<const BlockMeta>> target = FindMeta(ancestor);
  absl::StatusOr<std::shared_ptr<const BlockMeta>> start = FindMeta(hash);
  if (!target.ok() || *target == nullptr || !start.ok() || *start == nullptr) {
    return false;
  }
  // The finalized blocks are the last finalized one and its ancestors: one
  // of them is an ancestor of every descendant of the last finalized block,
  // found by a walk down to that block's number, not to the ancestor's
  // (which may be the genesis, under the whole chain).
  if (last_finalized_.has_value() && ancestor != *last_finalized_) {
    absl::StatusOr<bool> final = FinalizedLocked(ancestor);
    absl::StatusOr<std::shared_ptr<const BlockMeta>> lfb =
        FindMeta(*last_finalized_);
    if (final.ok() && *final && lfb.ok() && *lfb != nullptr &&
        WalkFinds(**lfb, *start)) {
      return true;
    }
  }
  return WalkFinds(**target, *std::move(start));
}

bool DagStore::WalkFinds(const BlockMeta& target,
                         std::shared_ptr<const BlockMeta> start) const {
  const Hash32& ancestor = target.hash;
  const Hash32 hash = start->hash;
  const int64_t floor = target.block_number;
  absl::flat_hash_set<Hash32, Hash32Hasher> seen{hash};
  std::deque<std::shared_ptr<const BlockMeta>> queue{std::move(start)};
  while (!queue.empty()) {
    const std::shared_ptr<const BlockMeta> m = std::move(queue.front());
    queue.pop_front();
    if (m->hash == ancestor) return true;
    for (const Hash32& p : m->parents) {
      if (!seen.insert(p).second) continue;
      absl::StatusOr<std::shared_ptr<const BlockMeta>> pm = FindMeta(p);
      if (!pm.ok()) return false;
      if (*pm == nullptr) continue;  // under an anchored DAG's floor
      // A block's number exceeds its parents', so nothing below the
      // ancestor's number can lead to it.
      if ((*pm)->block_number >= floor) queue.push_back(*std::move(pm));
    }
  }
  return false;
}

bool DagStore::IsAncestor(const Hash32& ancestor, const Hash32& hash) const {
  MutexLock lock(&mu_);
  return IsAncestorLocked(ancestor, hash);
}

absl::StatusOr<std::vector<Hash32>> DagStore::FinalizedBy(
    const Hash32& hash) const {
  MutexLock lock(&mu_);
  return NewlyFinalized(hash);
}

absl::StatusOr<std::vector<Hash32>> DagStore::NewlyFinalized(
    const Hash32& hash) const {
  std::vector<std::pair<int64_t, Hash32>> found;
  absl::flat_hash_set<Hash32, Hash32Hasher> seen;
  std::deque<Hash32> queue{hash};
  seen.insert(hash);
  while (!queue.empty()) {
    const Hash32 h = queue.front();
    queue.pop_front();
    ASSIGN_OR_RETURN(bool final, FinalizedLocked(h));
    if (final) continue;
    ASSIGN_OR_RETURN(std::shared_ptr<const BlockMeta> m, FindMeta(h));
    if (m == nullptr) {
      // A parent of history, under an anchored DAG's floor: the anchor
      // finalized everything there is of it.
      if (floor_.has_value() && h != hash) continue;
      return absl::DataLossError("block " + HexEncode(h) +
                                 " to finalize is not stored");
    }
    found.emplace_back(m->block_number, h);
    for (const Hash32& p : m->parents) {
      if (seen.insert(p).second) queue.push_back(p);
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<Hash32> out;
  out.reserve(found.size());
  for (const auto& [number, h] : found) out.push_back(h);
  return out;
}

absl::Status DagStore::SetLastFinalized(const Hash32& hash) {
  MutexLock write_lock(&write_mu_);
  rspace::WriteBatch batch;
  std::vector<Hash32> final;
  int64_t number = 0;
  {
    MutexLock lock(&mu_);
    ASSIGN_OR_RETURN(std::shared_ptr<const BlockMeta> meta, FindMeta(hash));
    if (meta == nullptr) {
      return absl::FailedPreconditionError(
          "cannot finalize " + HexEncode(hash) + ": block not stored");
    }
    if (last_finalized_.has_value() &&
        !IsAncestorLocked(*last_finalized_, hash)) {
      return absl::FailedPreconditionError(
          "cannot finalize " + HexEncode(hash) +
          ": it does not descend from the last finalized block " +
          HexEncode(*last_finalized_));
    }
    ASSIGN_OR_RETURN(final, NewlyFinalized(hash));
    number = meta->block_number;
  }
  batch.Put(columns_.state, AsBytes(kLastFinalizedKey), hash);
  for (const Hash32& f : final) {
    batch.Put(columns_.state, IndexKey(kFinalizedPrefix, f), Bytes{});
  }
  RETURN_IF_ERROR(store_->WriteOwned(std::move(batch)));
  MutexLock lock(&mu_);
  last_finalized_ = hash;
  for (const Hash32& f : final) {
    if (metas_.contains(f)) finalized_.insert(f);
  }
  EvictBelow(number - options_.kept_below_finalized);
  return absl::OkStatus();
}

std::optional<Hash32> DagStore::LastFinalized() const {
  MutexLock lock(&mu_);
  return last_finalized_;
}

bool DagStore::IsFinalized(const Hash32& hash) const {
  MutexLock lock(&mu_);
  absl::StatusOr<bool> final = FinalizedLocked(hash);
  return final.ok() && *final;
}

absl::StatusOr<std::vector<Hash32>> UnfinalizedWork(DagStore& dag) {
  int64_t from = 0;
  if (std::optional<Hash32> lfb = dag.LastFinalized(); lfb.has_value()) {
    absl::StatusOr<std::shared_ptr<const BlockMeta>> meta = dag.Meta(*lfb);
    if (!meta.ok()) {
      return absl::DataLossError("the last finalized block cannot be read: " +
                                 std::string(meta.status().message()));
    }
    from = (*meta)->block_number + 1;
  }
  std::vector<Hash32> work;
  for (int64_t number = from; number <= dag.MaxHeight(); ++number) {
    for (const Hash32& hash : dag.AtHeight(number)) {
      // Above the last finalized block's number nothing is finalized (the
      // finalized blocks are it and its ancestors).
      ASSIGN_OR_RETURN(std::shared_ptr<const BlockMeta> meta, dag.Meta(hash));
      if (meta->invalid) continue;
      bool carries = meta->deploy_count > 0;
      if (!carries) {
        ASSIGN_OR_RETURN(std::optional<block::Block> stored,
                         dag.GetBlock(hash));
        carries = stored.has_value() && block::CarriesSlash(*stored);
      }
      if (carries) work.push_back(hash);
    }
  }
  return work;
}

absl::StatusOr<int64_t> LastFinalizedNumber(const DagStore& dag) {
  const std::optional<Hash32> lfb = dag.LastFinalized();
  if (!lfb.has_value()) return -1;
  ASSIGN_OR_RETURN(const std::shared_ptr<const BlockMeta> meta, dag.Meta(*lfb));
  return meta->block_number;
}

bool LatestJustifiesOthers(const DagStore& dag,
                           const crypto::Secp256k1PublicKey& validator) {
  const std::map<crypto::Secp256k1PublicKey, Hash32> latest =
      dag.LatestMessages();
  auto mine = latest.find(validator);
  if (mine == latest.end()) return false;
  // A walk bounded by the last finalized block's number: cheap.
  if (std::optional<Hash32> lfb = dag.LastFinalized();
      lfb.has_value() && !dag.IsAncestor(*lfb, mine->second)) {
    return false;
  }
  const int64_t lfb_number = LastFinalizedNumber(dag).value_or(-1);
  // From here the latest block descends from the last finalized one, so
  // every finalized block is its ancestor: asked without a walk. One below
  // it is final, or off the chain for good, the way there maybe deleted.
  for (const auto& [other, hash] : latest) {
    if (other == validator) continue;
    absl::StatusOr<std::shared_ptr<const BlockMeta>> meta = dag.Meta(hash);
    if (meta.ok() && (*meta)->block_number < lfb_number) continue;
    if (dag.IsFinalized(hash)) continue;
    if (!dag.IsAncestor(hash, mine->second)) return false;
  }
  return true;
}

namespace {

// The main parent of `block` (which has parents); DataLoss if unreadable.
absl::StatusOr<std::shared_ptr<const BlockMeta>> MainParentOf(
    const DagStore& dag, const BlockMeta& block) {
  absl::StatusOr<std::shared_ptr<const BlockMeta>> parent =
      dag.Meta(block.parents.front());
  if (!parent.ok()) {
    return absl::DataLossError(
        "main parent of block " + HexEncode(block.hash) +
        " is not readable: " + std::string(parent.status().message()));
  }
  return *std::move(parent);
}

// The blocks reachable from `from` by parent links, itself included,
// numbered at least `floor`.
absl::StatusOr<absl::flat_hash_set<Hash32, Hash32Hasher>> AncestorsDownTo(
    const DagStore& dag, const Hash32& from, int64_t floor) {
  absl::flat_hash_set<Hash32, Hash32Hasher> seen{from};
  std::deque<Hash32> queue{from};
  while (!queue.empty()) {
    const Hash32 h = queue.front();
    queue.pop_front();
    absl::StatusOr<std::shared_ptr<const BlockMeta>> read = dag.Meta(h);
    if (!read.ok()) {
      return absl::DataLossError(
          "block " + HexEncode(h) +
          " is not readable: " + std::string(read.status().message()));
    }
    // Held here: below the DAG's window this is the record's only owner.
    const std::shared_ptr<const BlockMeta> meta = *std::move(read);
    if (meta->block_number <= floor) continue;  // its parents are lower
    for (const Hash32& p : meta->parents) {
      if (seen.insert(p).second) queue.push_back(p);
    }
  }
  return seen;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const BlockMeta>> MainChainMeet(
    const DagStore& dag,
    std::vector<std::shared_ptr<const BlockMeta>> cursors) {
  return MainChainMeetAtOrAbove(dag, std::move(cursors),
                                std::numeric_limits<int64_t>::min());
}

absl::StatusOr<std::shared_ptr<const BlockMeta>> MainChainMeetAtOrAbove(
    const DagStore& dag, std::vector<std::shared_ptr<const BlockMeta>> cursors,
    int64_t lowest) {
  if (cursors.empty()) {
    return absl::InvalidArgumentError("no blocks to meet");
  }
  while (true) {
    bool same = true;
    int64_t top = cursors.front()->block_number;
    for (const auto& c : cursors) {
      same = same && c->hash == cursors.front()->hash;
      top = std::max(top, c->block_number);
    }
    // Every cursor is below `lowest` once the highest is: so is the meet.
    if (top < lowest) return std::shared_ptr<const BlockMeta>();
    if (same) return cursors.front();
    // Apart with the highest at `lowest`: they meet below it, and the
    // parents under `lowest` are not read (below a DAG's floor they are
    // deleted).
    if (top == lowest) return std::shared_ptr<const BlockMeta>();
    for (auto& c : cursors) {
      if (c->block_number != top) continue;
      if (c->parents.empty()) {
        return absl::FailedPreconditionError(
            "main-parent chains never meet: block " + HexEncode(c->hash) +
            " is a root");
      }
      ASSIGN_OR_RETURN(c, MainParentOf(dag, *c));
    }
  }
}

absl::StatusOr<std::shared_ptr<const BlockMeta>> MergeBaseOf(
    const DagStore& dag,
    std::vector<std::shared_ptr<const BlockMeta>> parents) {
  if (parents.empty()) {
    return absl::InvalidArgumentError("no parents to merge");
  }
  ASSIGN_OR_RETURN(const std::shared_ptr<const BlockMeta> meet,
                   MainChainMeet(dag, parents));
  std::vector<absl::flat_hash_set<Hash32, Hash32Hasher>> others;
  for (size_t i = 1; i < parents.size(); ++i) {
    ASSIGN_OR_RETURN(
        auto below, AncestorsDownTo(dag, parents[i]->hash, meet->block_number));
    others.push_back(std::move(below));
  }
  std::shared_ptr<const BlockMeta> c = parents.front();
  while (c->hash != meet->hash) {
    const bool common =
        std::all_of(others.begin(), others.end(),
                    [&](const auto& below) { return below.contains(c->hash); });
    if (common) return c;
    ASSIGN_OR_RETURN(c, MainParentOf(dag, *c));
  }
  return meet;
}

size_t DagStore::size() const {
  MutexLock lock(&mu_);
  return static_cast<size_t>(count_);
}

size_t DagStore::window_size() const {
  MutexLock lock(&mu_);
  return metas_.size();
}

}  // namespace rnode::casper::dag

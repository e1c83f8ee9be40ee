// Block store and DAG on the node's key-value store.
#include "casper/dag/dag_store.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/strings/str_cat.h"
#include "casper/block/block_codec.h"
#include "util/byte_reader.h"
#include "util/status_macros.h"

namespace rnode::casper::dag {
namespace {

constexpr uint8_t kMetaVersion = 1;
constexpr uint8_t kFlagInvalid = 1;
constexpr std::string_view kLastFinalizedKey = "last-finalized";

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

// A deploy index entry: the ascending 32-byte hashes of the blocks holding
// the deploy `sig` (none when absent).
absl::StatusOr<std::vector<Hash32>> DecodeHolders(
    ByteView sig, const std::optional<Bytes>& held) {
  std::vector<Hash32> out;
  if (!held.has_value()) return out;
  if (held->size() % 32 != 0) {
    return absl::DataLossError("deploy index entry of " + HexEncode(sig) +
                               " is malformed");
  }
  out.resize(held->size() / 32);
  for (size_t i = 0; i < out.size(); ++i) {
    std::copy(held->begin() + 32 * i, held->begin() + 32 * (i + 1),
              out[i].begin());
  }
  return out;
}

void InsertSorted(std::vector<Hash32>& v, const Hash32& h) {
  auto it = std::lower_bound(v.begin(), v.end(), h);
  if (it == v.end() || *it != h) v.insert(it, h);
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

DagStore::DagStore(rspace::KeyValueStore* store, DagColumns columns)
    : store_(store), columns_(columns) {}

absl::StatusOr<std::unique_ptr<DagStore>> DagStore::Open(
    rspace::KeyValueStore* store, DagColumns columns) {
  std::unique_ptr<DagStore> dag(new DagStore(store, columns));
  MutexLock lock(&dag->mu_);
  RETURN_IF_ERROR(store->ForEach(
      columns.meta, [&](ByteView key, ByteView value) -> absl::Status {
        ASSIGN_OR_RETURN(BlockMeta meta, DecodeBlockMeta(value));
        if (key.size() != 32 ||
            !std::equal(key.begin(), key.end(), meta.hash.begin())) {
          return absl::DataLossError("block metadata stored under " +
                                     HexEncode(key) + " is of block " +
                                     HexEncode(meta.hash));
        }
        dag->Index(std::make_shared<const BlockMeta>(std::move(meta)));
        return absl::OkStatus();
      }));
  for (const auto& [hash, meta] : dag->metas_) {
    for (const Hash32& p : meta->parents) {
      if (!dag->metas_.contains(p)) {
        return absl::DataLossError("block " + HexEncode(hash) +
                                   " names parent " + HexEncode(p) +
                                   " that is not stored");
      }
    }
  }
  ASSIGN_OR_RETURN(std::optional<Bytes> lfb,
                   store->Get(columns.state, AsBytes(kLastFinalizedKey)));
  if (lfb.has_value()) {
    Hash32 h;
    if (lfb->size() != 32) return absl::DataLossError("bad last-finalized");
    std::copy(lfb->begin(), lfb->end(), h.begin());
    if (!dag->metas_.contains(h)) {
      return absl::DataLossError("last finalized block " + HexEncode(h) +
                                 " is not stored");
    }
    dag->last_finalized_ = h;
    dag->MarkFinalized(h);
  }
  return dag;
}

void DagStore::Index(std::shared_ptr<const BlockMeta> meta) {
  const Hash32 h = meta->hash;
  for (const Hash32& p : meta->parents) InsertSorted(children_[p], h);
  InsertSorted(heights_[meta->block_number], h);
  if (meta->invalid) invalid_.insert(h);
  if (!meta->invalid) {
    for (const Hash32& p : meta->parents) tips_.erase(p);
    bool has_valid_child = false;
    if (auto kids = children_.find(h); kids != children_.end()) {
      for (const Hash32& c : kids->second) {
        if (!metas_.at(c)->invalid) {
          has_valid_child = true;
          break;
        }
      }
    }
    if (!has_valid_child) tips_.insert(h);
    auto& latest = latest_[meta->sender];
    if (latest == nullptr || meta->seq_num > latest->seq_num ||
        (meta->seq_num == latest->seq_num && h < latest->hash)) {
      latest = meta;
    }
  }
  metas_[h] = std::move(meta);
}

absl::StatusOr<bool> DagStore::Insert(const block::Block& block, bool invalid) {
  if (block.hash == Hash32{}) {
    return absl::InvalidArgumentError("block has no hash (not sealed)");
  }
  MutexLock write_lock(&write_mu_);
  {
    MutexLock lock(&mu_);
    if (metas_.contains(block.hash)) return false;
    auto require = [&](const Hash32& h, const char* what) -> absl::Status {
      if (metas_.contains(h)) return absl::OkStatus();
      return absl::FailedPreconditionError(
          absl::StrCat("block ", HexEncode(block.hash), " needs ", what, " ",
                       HexEncode(h), ", which is not stored"));
    };
    for (const Hash32& p : block.header.parents) {
      RETURN_IF_ERROR(require(p, "parent"));
    }
    for (const auto& j : block.justifications) {
      RETURN_IF_ERROR(require(j.latest_block, "justification"));
    }
  }
  BlockMeta meta = MetaOf(block, invalid);
  rspace::WriteBatch batch;
  batch.Put(columns_.blocks, Bytes(block.hash.begin(), block.hash.end()),
            block::EncodeBlock(block));
  batch.Put(columns_.meta, Bytes(block.hash.begin(), block.hash.end()),
            EncodeBlockMeta(meta));
  // The deploy index: sig -> ascending hashes of the blocks holding it,
  // read for all of the block's deploys at once. Only this (serialised)
  // writer changes it, so read-modify-write is safe.
  std::vector<ByteView> sigs;
  for (const auto& d : block.body.deploys) sigs.push_back(d.sig);
  std::sort(sigs.begin(), sigs.end(), [](ByteView a, ByteView b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  });
  sigs.erase(std::unique(sigs.begin(), sigs.end(),
                         [](ByteView a, ByteView b) {
                           return std::equal(a.begin(), a.end(), b.begin(),
                                             b.end());
                         }),
             sigs.end());
  ASSIGN_OR_RETURN(std::vector<std::optional<Bytes>> held,
                   store_->MultiGet(columns_.deploys, sigs));
  for (size_t i = 0; i < sigs.size(); ++i) {
    ASSIGN_OR_RETURN(std::vector<Hash32> hashes,
                     DecodeHolders(sigs[i], held[i]));
    InsertSorted(hashes, block.hash);
    Bytes value;
    value.reserve(hashes.size() * 32);
    for (const Hash32& h : hashes) {
      value.insert(value.end(), h.begin(), h.end());
    }
    batch.Put(columns_.deploys, sigs[i], value);
  }
  RETURN_IF_ERROR(store_->WriteOwned(std::move(batch)));
  MutexLock lock(&mu_);
  Index(std::make_shared<const BlockMeta>(std::move(meta)));
  return true;
}

bool DagStore::Contains(const Hash32& hash) const {
  MutexLock lock(&mu_);
  return metas_.contains(hash);
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

std::shared_ptr<const BlockMeta> DagStore::Meta(const Hash32& hash) const {
  MutexLock lock(&mu_);
  auto it = metas_.find(hash);
  return it == metas_.end() ? nullptr : it->second;
}

std::vector<Hash32> DagStore::Children(const Hash32& hash) const {
  MutexLock lock(&mu_);
  auto it = children_.find(hash);
  return it == children_.end() ? std::vector<Hash32>() : it->second;
}

std::vector<Hash32> DagStore::AtHeight(int64_t number) const {
  MutexLock lock(&mu_);
  auto it = heights_.find(number);
  return it == heights_.end() ? std::vector<Hash32>() : it->second;
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

absl::StatusOr<std::vector<Hash32>> DagStore::BlocksWithDeploy(ByteView sig) {
  ASSIGN_OR_RETURN(std::optional<Bytes> held,
                   store_->Get(columns_.deploys, sig));
  return DecodeHolders(sig, held);
}

bool DagStore::IsAncestorLocked(const Hash32& ancestor,
                                const Hash32& hash) const {
  auto target = metas_.find(ancestor);
  if (target == metas_.end() || !metas_.contains(hash)) return false;
  const int64_t floor = target->second->block_number;
  absl::flat_hash_set<Hash32, Hash32Hasher> seen{hash};
  std::deque<Hash32> queue{hash};
  while (!queue.empty()) {
    const Hash32 h = queue.front();
    queue.pop_front();
    if (h == ancestor) return true;
    const BlockMeta& m = *metas_.at(h);
    for (const Hash32& p : m.parents) {
      // A block's number exceeds its parents', so nothing below the
      // ancestor's number can lead to it.
      if (metas_.at(p)->block_number < floor) continue;
      if (seen.insert(p).second) queue.push_back(p);
    }
  }
  return false;
}

bool DagStore::IsAncestor(const Hash32& ancestor, const Hash32& hash) const {
  MutexLock lock(&mu_);
  return IsAncestorLocked(ancestor, hash);
}

void DagStore::MarkFinalized(const Hash32& hash) {
  std::deque<Hash32> queue;
  if (finalized_.insert(hash).second) queue.push_back(hash);
  while (!queue.empty()) {
    const Hash32 h = queue.front();
    queue.pop_front();
    for (const Hash32& p : metas_.at(h)->parents) {
      if (finalized_.insert(p).second) queue.push_back(p);
    }
  }
}

absl::Status DagStore::SetLastFinalized(const Hash32& hash) {
  MutexLock write_lock(&write_mu_);
  {
    MutexLock lock(&mu_);
    if (!metas_.contains(hash)) {
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
  }
  rspace::WriteBatch batch;
  batch.Put(columns_.state, AsBytes(kLastFinalizedKey), hash);
  RETURN_IF_ERROR(store_->WriteOwned(std::move(batch)));
  MutexLock lock(&mu_);
  last_finalized_ = hash;
  MarkFinalized(hash);
  return absl::OkStatus();
}

std::optional<Hash32> DagStore::LastFinalized() const {
  MutexLock lock(&mu_);
  return last_finalized_;
}

bool DagStore::IsFinalized(const Hash32& hash) const {
  MutexLock lock(&mu_);
  return finalized_.contains(hash);
}

absl::StatusOr<std::shared_ptr<const BlockMeta>> MainChainMeet(
    const DagStore& dag,
    std::vector<std::shared_ptr<const BlockMeta>> cursors) {
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
    if (same) return cursors.front();
    for (auto& c : cursors) {
      if (c->block_number != top) continue;
      if (c->parents.empty()) {
        return absl::FailedPreconditionError(
            "main-parent chains never meet: block " + HexEncode(c->hash) +
            " is a root");
      }
      c = dag.Meta(c->parents.front());
    }
  }
}

size_t DagStore::size() const {
  MutexLock lock(&mu_);
  return metas_.size();
}

}  // namespace rnode::casper::dag

// History: trie + blobs + roots table over a KeyValueStore.
#include "rspace/history/history.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "crypto/hash.h"
#include "util/status_macros.h"

namespace rnode::rspace {
namespace {

constexpr std::string_view kLastRootKey = "last-root";

Bytes EncodeU64(uint64_t v) {
  Bytes out(8);
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
  return out;
}

uint64_t DecodeU64(ByteView b) {
  uint64_t v = 0;
  for (uint8_t x : b) v = (v << 8) | x;
  return v;
}

// The trie changes of `updates` and the puts of their out-of-line blobs
// (those longer than `inline_max`; shorter ones ride in the change to be
// stored with their leaf); blobs are moved out of non-const updates.
template <typename Update>
void CollectUpdates(std::span<Update> updates, ColumnId values,
                    size_t inline_max, std::vector<TrieChange>& changes,
                    WriteBatch& batch) {
  changes.reserve(updates.size());
  for (Update& u : updates) {
    TrieChange c;
    c.key = u.key;
    if (u.blob.has_value()) {
      c.value = u.blob_hash;
      // Moved from an owned update; from a const one, std::move yields a
      // const rvalue and this copies.
      Bytes blob = std::move(*u.blob);
      if (blob.size() <= inline_max) {
        c.blob = std::make_shared<const Bytes>(std::move(blob));
      } else {
        batch.Put(values, Bytes(u.blob_hash.begin(), u.blob_hash.end()),
                  std::move(blob));
      }
    }
    changes.push_back(std::move(c));
  }
}

}  // namespace

std::vector<std::string> DefaultHistoryColumnNames() {
  return {"rspace_nodes", "rspace_values", "rspace_roots"};
}

History::History(KeyValueStore* store, HistoryOptions options)
    : store_(store),
      options_(std::move(options)),
      trie_(store, options_.columns.nodes, options_.node_cache_entries,
            options_.node_cache_bytes),
      last_root_(kEmptyRoot) {}

absl::StatusOr<std::unique_ptr<History>> History::Open(KeyValueStore* store,
                                                       HistoryOptions options) {
  std::unique_ptr<History> h(new History(store, std::move(options)));
  const ColumnId roots = h->options_.columns.roots;
  ASSIGN_OR_RETURN(std::optional<Bytes> last,
                   store->Get(roots, AsBytes(kLastRootKey)));
  if (!last.has_value()) {
    WriteBatch batch;
    batch.Put(roots, kEmptyRoot, EncodeU64(0));
    batch.Put(roots, AsBytes(kLastRootKey), kEmptyRoot);
    RETURN_IF_ERROR(store->Write(batch));
    return h;
  }
  if (last->size() != 32) {
    return absl::DataLossError("roots table: malformed last-root");
  }
  Hash32 root;
  std::copy(last->begin(), last->end(), root.begin());
  ASSIGN_OR_RETURN(std::optional<Bytes> number, store->Get(roots, root));
  if (!number.has_value() || number->size() != 8) {
    return absl::DataLossError("roots table: last-root " + HexEncode(root) +
                               " is not recorded");
  }
  MutexLock lock(&h->mu_);
  h->last_root_ = root;
  h->checkpoint_number_ = DecodeU64(*number);
  return h;
}

Hash32 History::last_root() const {
  MutexLock lock(&mu_);
  return last_root_;
}

std::vector<Hash32> History::RecentRoots() const {
  MutexLock lock(&mu_);
  return std::vector<Hash32>(recent_.begin(), recent_.end());
}

absl::StatusOr<bool> History::HasRoot(const Hash32& root) {
  ASSIGN_OR_RETURN(std::optional<Bytes> v,
                   store_->Get(options_.columns.roots, root));
  return v.has_value();
}

absl::StatusOr<std::optional<Bytes>> History::ReadLeaf(const Hash32& root,
                                                       const Hash32& key) {
  ASSIGN_OR_RETURN(std::optional<TrieLeaf> leaf, trie_.GetLeaf(root, key));
  if (!leaf.has_value()) return std::optional<Bytes>();
  ASSIGN_OR_RETURN(Bytes blob, LeafBlob(key, *leaf));
  return std::optional<Bytes>(std::move(blob));
}

absl::StatusOr<Bytes> History::LeafBlob(const Hash32& key,
                                        const TrieLeaf& leaf) {
  if (leaf.blob != nullptr) return *leaf.blob;
  ASSIGN_OR_RETURN(std::optional<Bytes> blob,
                   store_->Get(options_.columns.values, leaf.hash));
  if (!blob.has_value()) {
    return absl::DataLossError("state blob " + HexEncode(leaf.hash) +
                               " for channel " + HexEncode(key) +
                               " is missing");
  }
  return *std::move(blob);
}

absl::StatusOr<std::vector<std::optional<Bytes>>> History::ReadLeaves(
    const Hash32& root, std::span<const Hash32> keys) {
  std::vector<std::optional<TrieLeaf>> leaves(keys.size());
  RETURN_IF_ERROR(trie_.GetManyLeaves(root, keys, std::span(leaves)));
  // Inline blobs come with the leaves; the others in one batched read.
  std::vector<std::optional<Bytes>> out(keys.size());
  std::vector<ByteView> blob_keys;
  std::vector<size_t> blob_of;  // Index into `keys` of each blob key.
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!leaves[i].has_value()) continue;
    if (leaves[i]->blob != nullptr) {
      out[i] = *leaves[i]->blob;
      continue;
    }
    blob_keys.push_back(ByteView(leaves[i]->hash));
    blob_of.push_back(i);
  }
  if (blob_keys.empty()) return out;
  ASSIGN_OR_RETURN(std::vector<std::optional<Bytes>> blobs,
                   store_->MultiGet(options_.columns.values, blob_keys));
  for (size_t j = 0; j < blob_of.size(); ++j) {
    const size_t i = blob_of[j];
    if (!blobs[j].has_value()) {
      return absl::DataLossError("state blob " + HexEncode(leaves[i]->hash) +
                                 " for channel " + HexEncode(keys[i]) +
                                 " is missing");
    }
    out[i] = std::move(blobs[j]);
  }
  return out;
}

absl::StatusOr<std::optional<Bytes>> History::ReadBlob(
    const Hash32& blob_hash) {
  return store_->Get(options_.columns.values, blob_hash);
}

absl::StatusOr<Hash32> History::Commit(const Hash32& base,
                                       std::span<const LeafUpdate> updates) {
  std::vector<TrieChange> changes;
  WriteBatch batch;
  CollectUpdates(updates, options_.columns.values, options_.inline_blob_max,
                 changes, batch);
  return CommitChanges(base, changes, std::move(batch), nullptr,
                       CommitWrite::kDurable);
}

absl::StatusOr<Hash32> History::CommitOwned(const Hash32& base,
                                            std::vector<LeafUpdate> updates,
                                            WorkerPool* pool,
                                            CommitWrite write) {
  std::vector<TrieChange> changes;
  WriteBatch batch;
  CollectUpdates(std::span<LeafUpdate>(updates), options_.columns.values,
                 options_.inline_blob_max, changes, batch);
  return CommitChanges(base, changes, std::move(batch), pool, write);
}

absl::StatusOr<Hash32> History::CommitChanges(
    const Hash32& base, std::span<const TrieChange> changes, WriteBatch batch,
    WorkerPool* pool, CommitWrite write) {
  ASSIGN_OR_RETURN(Hash32 root, trie_.Apply(base, changes, &batch, pool));
  if (options_.phase_hook) options_.phase_hook(CheckpointPhase::kTrieBuilt);
  uint64_t number;
  {
    MutexLock lock(&mu_);
    number = checkpoint_number_ + 1;
  }
  batch.Put(options_.columns.roots, root, EncodeU64(number));
  batch.Put(options_.columns.roots, AsBytes(kLastRootKey), root);
  if (options_.phase_hook) options_.phase_hook(CheckpointPhase::kBeforeWrite);
  // Held until the root is named below (TrieWriteGuard::Commit).
  std::optional<TrieWriteGuard::Commit> guarded;
  if (options_.write_guard != nullptr) {
    guarded.emplace(options_.write_guard, batch);
  }
  RETURN_IF_ERROR(write == CommitWrite::kPipelined
                      ? store_->WriteAsync(std::move(batch))
                      : store_->WriteOwned(std::move(batch)));
  if (options_.phase_hook) options_.phase_hook(CheckpointPhase::kWritten);
  trie_.Committed();
  MutexLock lock(&mu_);
  last_root_ = root;
  checkpoint_number_ = number;
  recent_.push_back(root);
  if (recent_.size() > kRecentRoots) recent_.pop_front();
  return root;
}

absl::Status History::VerifyRoot(const Hash32& root) {
  ASSIGN_OR_RETURN(bool known, HasRoot(root));
  if (!known) {
    return absl::NotFoundError("root " + HexEncode(root) + " not recorded");
  }
  return trie_.VerifyLeaves(
      root, [&](const Hash32& key, const TrieLeaf& leaf) -> absl::Status {
        ASSIGN_OR_RETURN(Bytes blob, LeafBlob(key, leaf));
        if (crypto::Blake2b256(blob) != leaf.hash) {
          return absl::DataLossError("blob " + HexEncode(leaf.hash) +
                                     " of channel " + HexEncode(key) +
                                     " does not match its hash");
        }
        return absl::OkStatus();
      });
}

absl::StatusOr<std::vector<Hash32>> History::ListRoots() {
  std::vector<Hash32> out;
  RETURN_IF_ERROR(store_->ForEach(
      options_.columns.roots, [&](ByteView key, ByteView) -> absl::Status {
        if (key.size() == 32) {
          Hash32 h;
          std::copy(key.begin(), key.end(), h.begin());
          out.push_back(h);
        }
        return absl::OkStatus();
      }));
  return out;
}

}  // namespace rnode::rspace

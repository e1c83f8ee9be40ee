// DagStore's deploy index and rejection index (split from dag_store.cc):
// records in the deploys column, keyed by deploy signature.
#include "casper/dag/dag_store.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "casper/dag/internal/sorted_hashes.h"
#include "util/status_macros.h"

namespace rnode::casper::dag {
namespace {

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

// The rejection index's key of `sig`: a prefix no DER signature starts
// with (0x30), then the signature.
Bytes RejectionKey(ByteView sig) {
  Bytes key(sig.size() + 2);
  key[0] = 0x00;
  key[1] = 'R';
  std::copy(sig.begin(), sig.end(), key.begin() + 2);
  return key;
}

// The index entries `blocks` touch: each deploy's signature, and with
// `rejections` each rejected deploy's rejection key, with the hashes of the
// blocks naming it (ascending).
std::map<Bytes, std::vector<Hash32>> EntriesOf(
    std::span<const block::Block> blocks, bool rejections) {
  std::map<Bytes, std::vector<Hash32>> entries;
  for (const block::Block& block : blocks) {
    for (const auto& d : block.body.deploys) {
      internal::InsertSorted(entries[d.sig], block.hash);
    }
    if (!rejections) continue;
    for (const auto& r : block.body.rejected) {
      internal::InsertSorted(entries[RejectionKey(r.sig)], block.hash);
    }
  }
  return entries;
}

// Stages each of `entries`' keys in `column` rewritten: its stored holders
// with the entry's hashes added (`add`) or removed; an entry left empty is
// deleted. Read with one MultiGet.
absl::Status RewriteHolders(rspace::KeyValueStore& store,
                            rspace::ColumnId column,
                            const std::map<Bytes, std::vector<Hash32>>& entries,
                            bool add, rspace::WriteBatch& batch) {
  std::vector<ByteView> views;
  views.reserve(entries.size());
  for (const auto& [key, hashes] : entries) views.emplace_back(key);
  ASSIGN_OR_RETURN(std::vector<std::optional<Bytes>> held,
                   store.MultiGet(column, views));
  size_t i = 0;
  for (const auto& [key, change] : entries) {
    ASSIGN_OR_RETURN(std::vector<Hash32> hashes, DecodeHolders(key, held[i++]));
    if (add) {
      for (const Hash32& h : change) internal::InsertSorted(hashes, h);
    } else {
      // (A structured binding is not captured: clang before 16 refuses.)
      const std::vector<Hash32>& gone = change;
      std::erase_if(hashes, [&gone](const Hash32& h) {
        return std::binary_search(gone.begin(), gone.end(), h);
      });
    }
    if (hashes.empty()) {
      batch.Delete(column, key);
      continue;
    }
    Bytes value;
    value.reserve(hashes.size() * 32);
    for (const Hash32& h : hashes) {
      value.insert(value.end(), h.begin(), h.end());
    }
    batch.Put(column, key, value);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status DagStore::StageDeployIndex(const block::Block& block, bool invalid,
                                        rspace::WriteBatch& batch) const {
  return StageDeployIndexes(std::span<const block::Block>(&block, 1), invalid,
                            batch);
}

absl::Status DagStore::StageDeployIndexes(std::span<const block::Block> blocks,
                                          bool invalid,
                                          rspace::WriteBatch& batch) const {
  // The deploy index: sig -> ascending hashes of the blocks holding it,
  // and the rejection index: the blocks whose merge rejected it (a valid
  // block's record only), read for all of the blocks' deploys at once.
  // Only the (serialised) writer changes them, so read-modify-write is
  // safe.
  return RewriteHolders(*store_, columns_.deploys,
                        EntriesOf(blocks, /*rejections=*/!invalid),
                        /*add=*/true, batch);
}

absl::Status DagStore::StageDeployUnindex(std::span<const block::Block> blocks,
                                          rspace::WriteBatch& batch) const {
  return RewriteHolders(*store_, columns_.deploys,
                        EntriesOf(blocks, /*rejections=*/true),
                        /*add=*/false, batch);
}

absl::StatusOr<std::vector<Hash32>> DagStore::BlocksWithDeploy(ByteView sig) {
  ASSIGN_OR_RETURN(std::optional<Bytes> held,
                   store_->Get(columns_.deploys, sig));
  return DecodeHolders(sig, held);
}

absl::StatusOr<std::vector<Hash32>> DagStore::BlocksRejectingDeploy(
    ByteView sig) {
  const Bytes key = RejectionKey(sig);
  ASSIGN_OR_RETURN(std::optional<Bytes> held,
                   store_->Get(columns_.deploys, key));
  return DecodeHolders(sig, held);
}

absl::StatusOr<std::shared_ptr<const MergeRecord>> DagStore::MergeRecordOf(
    const Hash32& hash) {
  if (std::optional<std::shared_ptr<const MergeRecord>> kept =
          merge_records_.Get(hash)) {
    return *std::move(kept);
  }
  ASSIGN_OR_RETURN(std::optional<block::Block> b, GetBlock(hash));
  if (!b.has_value()) {
    return absl::NotFoundError("block " + HexEncode(hash) + " is not stored");
  }
  auto record = std::make_shared<const MergeRecord>(
      MergeRecord{b->body.merge_base, std::move(b->body.rejected)});
  if (b->header.parents.size() >= 2) merge_records_.Put(hash, record);
  return record;
}

void DagStore::KeepMergeRecord(const block::Block& block) {
  if (block.header.parents.size() < 2) return;
  merge_records_.Put(
      block.hash, std::make_shared<const MergeRecord>(
                      MergeRecord{block.body.merge_base, block.body.rejected}));
}

}  // namespace rnode::casper::dag

// The persistent side of RSpace: the Merkle trie of channel states, the state
// blobs by hash and the roots table, each checkpoint one atomic write.
#ifndef RNODE_RSPACE_HISTORY_HISTORY_H_
#define RNODE_RSPACE_HISTORY_HISTORY_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "rspace/history/trie.h"
#include "rspace/history/trie_gc.h"
#include "rspace/storage/kv_store.h"
#include "util/bytes.h"
#include "util/mutex.h"

namespace rnode::rspace {

// Column families used by the history (docs/formats/rspace.md).
struct HistoryColumns {
  ColumnId nodes = 0;   // node hash -> encoded trie node
  ColumnId values = 1;  // blob hash -> encoded channel state
  ColumnId roots = 2;   // root hash -> checkpoint number; "last-root" -> root
};

// Column family names for a store that holds only RSpace, in HistoryColumns
// order.
std::vector<std::string> DefaultHistoryColumnNames();

// Points in CreateCheckpoint reported to HistoryOptions::phase_hook (crash
// tests kill the process there).
enum class CheckpointPhase { kTrieBuilt, kBeforeWrite, kWritten };

// Channel-state blobs of at most this many bytes are stored inline, with
// their trie leaf, instead of under their hash in the values column: most
// channels hold a datum or two (blobs of about 90-200 bytes), and a merge
// or checkpoint that touches thousands of them then reads and writes the
// few hundred trie nodes on their paths instead of one store key per
// channel. Larger blobs stay out of line so that rewriting a node never
// copies much more than its hashes. Inlining changes no hash or root.
inline constexpr size_t kDefaultInlineBlobMax = 256;

struct HistoryOptions {
  HistoryColumns columns;
  size_t node_cache_entries = kDefaultTrieNodeCacheEntries;
  size_t node_cache_bytes = kDefaultTrieNodeCacheBytes;
  // Blobs up to this size go inline (0: none); see kDefaultInlineBlobMax.
  // Any value reads any store: the stored form says where each blob is.
  size_t inline_blob_max = kDefaultInlineBlobMax;
  std::function<void(CheckpointPhase)> phase_hook;
  // Told every commit's batch before it is written, for a collection of
  // old states running meanwhile (not owned; null: none).
  TrieWriteGuard* write_guard = nullptr;
};

// A change of one trie leaf: the new state blob (and its hash), or nullopt
// to delete the channel.
struct LeafUpdate {
  Hash32 key{};
  std::optional<Bytes> blob;
  Hash32 blob_hash{};
};

// How a commit's batch reaches the store.
enum class CommitWrite {
  // KeyValueStore::WriteOwned: durable when the commit returns.
  kDurable,
  // KeyValueStore::WriteAsync: readable when the commit returns, durable
  // before any later write of the store lands (or at its Sync). Only a
  // PipelinedStore makes a difference; other stores write synchronously.
  kPipelined,
};

// Thread-safe for reads; Commit calls must not overlap each other.
class History {
 public:
  // `store` is not owned and must outlive the History. Records the empty
  // root on first open. Errors: the store's, DataLoss on a corrupt roots
  // table.
  static absl::StatusOr<std::unique_ptr<History>> Open(KeyValueStore* store,
                                                       HistoryOptions options);

  // The root of the last complete checkpoint (kEmptyRoot for a new store).
  Hash32 last_root() const;

  // How many of the latest commits' roots RecentRoots names.
  static constexpr size_t kRecentRoots = 1024;
  // The roots of the last kRecentRoots commits since this History opened,
  // oldest first (a root committed twice is named twice). A collection of
  // old states keeps them: a root a caller committed and still builds on
  // may not be named yet by anything it keeps (a block's post-state between
  // its commit and the block's store, a merge's result the proposer
  // holds).
  std::vector<Hash32> RecentRoots() const;

  // Whether `root` is in the roots table.
  absl::StatusOr<bool> HasRoot(const Hash32& root);

  // The state blob stored for `key` under `root`; nullopt if the key is
  // absent. DataLoss if a node or the blob is missing.
  absl::StatusOr<std::optional<Bytes>> ReadLeaf(const Hash32& root,
                                                const Hash32& key);

  // ReadLeaf for each of `keys` (ascending, unique: InvalidArgument
  // otherwise) with one trie walk; results in `keys` order.
  absl::StatusOr<std::vector<std::optional<Bytes>>> ReadLeaves(
      const Hash32& root, std::span<const Hash32> keys);

  // The state blob stored under `blob_hash` in the values column; nullopt
  // if absent (as for a blob stored inline: read those with ReadLeaf or
  // LeafBlob).
  absl::StatusOr<std::optional<Bytes>> ReadBlob(const Hash32& blob_hash);

  // The blob of `leaf` of channel `key` (from the leaf when inline, else
  // from the values column). DataLoss if it is missing.
  absl::StatusOr<Bytes> LeafBlob(const Hash32& key, const TrieLeaf& leaf);

  // Applies `updates` (sorted by key, unique) to `base` and writes the new
  // nodes, the new blobs, the root record and "last-root" in ONE atomic
  // batch. Returns the new root. On error nothing was written.
  absl::StatusOr<Hash32> Commit(const Hash32& base,
                                std::span<const LeafUpdate> updates);

  // Commit that takes the blobs of `updates` instead of copying them, and
  // rebuilds the trie on `pool` (not owned; may be null) when the commit is
  // large (MerkleTrie::Apply). The result does not depend on the pool.
  // With kPipelined the batch is written by WriteAsync: the root and its
  // nodes read from this History at once, and they become durable before
  // any later write of the store (docs/merge.md §8).
  absl::StatusOr<Hash32> CommitOwned(const Hash32& base,
                                     std::vector<LeafUpdate> updates,
                                     WorkerPool* pool = nullptr,
                                     CommitWrite write = CommitWrite::kDurable);

  // Reads every node and blob reachable from `root` and checks each
  // against its hash; DataLoss naming the first missing or altered piece.
  // For crash tests and tools.
  absl::Status VerifyRoot(const Hash32& root);

  // Every root in the roots table, ascending by hash.
  absl::StatusOr<std::vector<Hash32>> ListRoots();

  MerkleTrie& trie() { return trie_; }
  const MerkleTrie& trie() const { return trie_; }

 private:
  History(KeyValueStore* store, HistoryOptions options);
  absl::StatusOr<Hash32> CommitChanges(const Hash32& base,
                                       std::span<const TrieChange> changes,
                                       WriteBatch batch, WorkerPool* pool,
                                       CommitWrite write);

  KeyValueStore* const store_;
  const HistoryOptions options_;
  MerkleTrie trie_;
  mutable Mutex mu_;
  Hash32 last_root_ ABSL_GUARDED_BY(mu_);
  std::deque<Hash32> recent_ ABSL_GUARDED_BY(mu_);
  uint64_t checkpoint_number_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_HISTORY_HISTORY_H_

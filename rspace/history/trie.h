// Merkle radix trie over 32-byte keys with 32-byte values, nodes stored by
// their Blake2b-256 hash in a KeyValueStore column, with a bounded node cache.
#ifndef RNODE_RSPACE_HISTORY_TRIE_H_
#define RNODE_RSPACE_HISTORY_TRIE_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "rspace/storage/kv_store.h"
#include "rspace/term.h"
#include "util/bytes.h"
#include "util/mutex.h"

namespace rnode {
class WorkerPool;
}  // namespace rnode

namespace rnode::rspace {

// Fewest changes for which Apply with a pool applies the root's subtrees
// in parallel: below it the handoff costs more than the nodes it hashes.
inline constexpr size_t kParallelTrieApplyMin = 1024;

// Blake2b-256 of the empty byte string: the root of the empty trie (the
// encoding of a node without items is empty).
extern const Hash32 kEmptyRoot;

// Default bound of the decoded-node cache. The upper trie levels of a state
// with a few million channels are a few thousand nodes; 32768 keeps them and
// the recently touched paths resident (tens of MiB at most).
inline constexpr size_t kDefaultTrieNodeCacheEntries = 32768;
// And of its bytes (nodes with their inline blobs, as counted by
// TrieNodeBytes): entries alone do not bound memory, since the nodes of a
// growing state fill up (a shard node at 30 deploys/s, each deploy leaving
// a new channel, grew by about 150 MiB in 4 minutes under the entry bound
// alone, most of it cached nodes).
inline constexpr size_t kDefaultTrieNodeCacheBytes = 64u << 20;
// Shards of the node cache, each an LRU of capacity / shards entries behind
// its own mutex: every cold channel load walks the trie, so one mutex would
// serialise concurrent deploys' loads. 16 keeps collisions between a few
// dozen readers rare and each shard's LRU close to a global one.
inline constexpr size_t kTrieCacheShards = 16;

// One item of a node: the key byte it sits under, whether it points to a
// child node (else it is a leaf), the key bytes that follow the index byte
// (compressed path), and the value (leaf) or child node hash (pointer).
// The key bytes of an item after its index byte, stored inline: a prefix
// is at most 31 bytes (a key is 32 and the index byte is not part of it),
// so a node copy allocates nothing per item. REQUIRES: size() <= capacity.
class TriePrefix {
 public:
  static constexpr size_t kCapacity = 32;

  TriePrefix() = default;
  TriePrefix(std::initializer_list<uint8_t> bytes) {
    assign(bytes.begin(), bytes.end());
  }
  TriePrefix(const Bytes& bytes) {  // NOLINT: implicit, as Bytes was.
    assign(bytes.begin(), bytes.end());
  }

  template <typename It>
  void assign(It first, It last) {
    size_ = 0;
    for (; first != last; ++first) bytes_[size_++] = *first;
  }
  void push_back(uint8_t b) { bytes_[size_++] = b; }
  template <typename It>
  void append(It first, It last) {
    for (; first != last; ++first) bytes_[size_++] = *first;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const uint8_t* data() const { return bytes_; }
  const uint8_t* begin() const { return bytes_; }
  const uint8_t* end() const { return bytes_ + size_; }
  uint8_t operator[](size_t i) const { return bytes_[i]; }
  ByteView view() const { return ByteView(bytes_, size_); }

  friend bool operator==(const TriePrefix& a, const TriePrefix& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  uint8_t size_ = 0;
  uint8_t bytes_[kCapacity] = {};
};

struct TrieItem {
  uint8_t index = 0;
  bool is_ptr = false;
  TriePrefix prefix;
  Hash32 hash{};
  // A leaf's value bytes when they are stored with the node ("inline"; the
  // history does this for small channel-state blobs), else null. `hash` is
  // still the value's hash and the only part of it in the node's hash, so
  // inlining changes no root. Always null on a pointer.
  std::shared_ptr<const Bytes> blob;
};

struct TrieNode {
  std::vector<TrieItem> items;  // Strictly ascending by index.
};

// The memory a decoded node holds (its items, with their prefixes, and
// inline blobs), as the node cache counts it.
size_t TrieNodeBytes(const TrieNode& node);

// A leaf as a read finds it: the value hash and, when stored inline, the
// value bytes (else null: the caller fetches them by hash).
struct TrieLeaf {
  Hash32 hash{};
  std::shared_ptr<const Bytes> blob;
};

// Encoding and decoding (docs/formats/rspace.md). EncodeTrieNode is the
// node's hash preimage (inline values left out); EncodeStoredTrieNode is
// what the store holds (the preimage with each inline value after its
// item, flagged in the item's tag; equal to the preimage when the node has
// none). DecodeTrieNode reads either and returns DataLoss on malformed
// bytes.
Bytes EncodeTrieNode(const TrieNode& node);
Bytes EncodeStoredTrieNode(const TrieNode& node);
absl::StatusOr<TrieNode> DecodeTrieNode(ByteView bytes);

struct TrieChange {
  Hash32 key{};
  std::optional<Hash32> value;  // nullopt: delete (a missing key is fine).
  // With a value: its bytes to store inline with the leaf, or null to store
  // only the hash (the caller keeps the bytes elsewhere).
  std::shared_ptr<const Bytes> blob;
};

class MerkleTrie {
 public:
  // `store` is not owned and must outlive the trie. Thread-safe: Get and
  // ForEachLeaf may run concurrently with each other and with Apply.
  MerkleTrie(KeyValueStore* store, ColumnId nodes_column,
             size_t cache_entries = kDefaultTrieNodeCacheEntries,
             size_t cache_bytes = kDefaultTrieNodeCacheBytes);

  // Value under `key` in the trie at `root`; nullopt if absent. DataLoss if a
  // node is missing or malformed; the store's error otherwise.
  absl::StatusOr<std::optional<Hash32>> Get(const Hash32& root,
                                            const Hash32& key);
  // As Get, from an already loaded root node (a caller that walks from one
  // root many times pins its node: no cache lookup for the root).
  absl::StatusOr<std::optional<Hash32>> Get(const TrieNode& root,
                                            const Hash32& key);
  // As Get, with the leaf's inline value when it has one.
  absl::StatusOr<std::optional<TrieLeaf>> GetLeaf(const Hash32& root,
                                                  const Hash32& key);
  absl::StatusOr<std::optional<TrieLeaf>> GetLeaf(const TrieNode& root,
                                                  const Hash32& key);

  // The decoded node `hash` (through the cache); the empty node for
  // kEmptyRoot. Errors as Get.
  absl::StatusOr<std::shared_ptr<const TrieNode>> Node(const Hash32& hash) {
    return Load(hash);
  }

  // Values under each of `keys` (ascending, unique: InvalidArgument
  // otherwise) in the trie at `root`, into `out` (same size as `keys`;
  // nullopt for an absent key). One walk: every node on the paths of the
  // keys is loaded once. Errors as Get.
  absl::Status GetMany(const Hash32& root, std::span<const Hash32> keys,
                       std::span<std::optional<Hash32>> out);
  // As GetMany, with the leaves' inline values.
  absl::Status GetManyLeaves(const Hash32& root, std::span<const Hash32> keys,
                             std::span<std::optional<TrieLeaf>> out);

  // Applies `changes` (sorted by key, keys unique: InvalidArgument otherwise)
  // to the trie at `root` and returns the new root. New nodes are added to
  // `batch` (not written); call Committed() once the batch is durable so they
  // enter the cache. The result depends only on the resulting key->value set.
  // With a `pool` (not owned; may be null) of more than one thread and at
  // least kParallelTrieApplyMin changes, the subtrees under the root's items
  // are rebuilt as independent tasks on it; the root, the batch's ops and
  // their order are the same either way.
  // REQUIRES: Apply/Committed calls are not concurrent with each other.
  absl::StatusOr<Hash32> Apply(const Hash32& root,
                               std::span<const TrieChange> changes,
                               WriteBatch* batch, WorkerPool* pool = nullptr);
  void Committed();

  // Calls fn(key, value) for every leaf under `root` in key order; also
  // checks every node on the way (DataLoss if one is missing).
  absl::Status ForEachLeaf(
      const Hash32& root,
      const std::function<absl::Status(const Hash32&, const Hash32&)>& fn);
  // As ForEachLeaf, with each leaf's inline value; also checks that every
  // node's preimage hashes to the hash it was loaded by (DataLoss if not).
  absl::Status VerifyLeaves(
      const Hash32& root,
      const std::function<absl::Status(const Hash32&, const TrieLeaf&)>& fn);

  // Number of nodes in the cache, and their bytes (for tests and metrics).
  size_t CachedNodes() const;
  size_t CachedBytes() const;

  ColumnId nodes_column() const { return column_; }

 private:
  struct Ctx;
  absl::StatusOr<std::shared_ptr<const TrieNode>> Load(const Hash32& hash);
  void CachePut(const Hash32& hash, std::shared_ptr<const TrieNode> node);
  bool Cached(const Hash32& hash) const;
  // Loads into the cache, with one store MultiGet, those of `hashes` it
  // does not hold: a cold batched read then costs one store round trip per
  // trie level and key range instead of one per node. Nothing without a
  // cache. Errors as Get.
  absl::Status Prefetch(std::span<const Hash32> hashes);

  absl::Status GetRange(const Hash32& node_hash, size_t depth,
                        std::span<const Hash32> keys,
                        std::span<std::optional<TrieLeaf>> out);

  absl::StatusOr<std::optional<TrieItem>> ApplyItem(
      const std::optional<TrieItem>& existing, size_t p,
      std::span<const TrieChange> changes, Ctx& ctx);
  absl::StatusOr<TrieNode> ApplyNode(TrieNode node, size_t depth,
                                     std::span<const TrieChange> changes,
                                     Ctx& ctx);
  absl::StatusOr<TrieNode> ApplyRootInParallel(
      const TrieNode& root, std::span<const TrieChange> changes, Ctx& ctx,
      WorkerPool& pool);
  std::optional<TrieItem> Normalize(Bytes path, TrieNode node, Ctx& ctx);
  struct LeafEntry;
  TrieItem Build(std::span<const LeafEntry> set, size_t p, Ctx& ctx);
  Hash32 Store(TrieNode node, Ctx& ctx);
  absl::Status Walk(
      const Hash32& node_hash, Bytes& path, bool verify,
      const std::function<absl::Status(const Hash32&, const TrieItem&)>& fn);

  struct CacheEntry {
    Hash32 hash;
    std::shared_ptr<const TrieNode> node;
    size_t bytes;
  };
  using LruList = std::list<CacheEntry>;
  struct alignas(64) CacheShard {
    mutable Mutex mu;
    LruList lru ABSL_GUARDED_BY(mu);
    size_t bytes ABSL_GUARDED_BY(mu) = 0;
    absl::flat_hash_map<Hash32, LruList::iterator, Hash32Hasher> index
        ABSL_GUARDED_BY(mu);
  };
  // By hash byte 8: outside the first 8 bytes Hash32Hasher uses, so a
  // shard's map still probes on well-spread hashes.
  CacheShard& ShardOf(const Hash32& hash) {
    return cache_[hash[8] % shard_count_];
  }
  const CacheShard& ShardOf(const Hash32& hash) const {
    return cache_[hash[8] % shard_count_];
  }

  KeyValueStore* const store_;
  const ColumnId column_;
  // min(kTrieCacheShards, capacity) shards (1 when the cache is off) of
  // capacity / shard_count_ entries each, so the total stays within the
  // capacity.
  const size_t shard_count_;
  const size_t shard_capacity_;
  const size_t shard_bytes_;
  std::array<CacheShard, kTrieCacheShards> cache_;
  Mutex pending_mu_;
  std::vector<std::pair<Hash32, std::shared_ptr<const TrieNode>>> pending_
      ABSL_GUARDED_BY(pending_mu_);
};

}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_HISTORY_TRIE_H_

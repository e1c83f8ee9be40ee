// Key-value storage interface used by the RSpace history, with an atomic
// write batch and column families, plus an in-memory implementation.
#ifndef RNODE_RSPACE_STORAGE_KV_STORE_H_
#define RNODE_RSPACE_STORAGE_KV_STORE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "util/bytes.h"
#include "util/mutex.h"

namespace rnode::rspace {

// Index of a column family, as given to the store when it was opened.
using ColumnId = uint32_t;

// A list of puts and deletes applied all-or-nothing by KeyValueStore::Write.
// Not thread-safe; owned by the caller.
class WriteBatch {
 public:
  struct Op {
    ColumnId column;
    Bytes key;
    std::optional<Bytes> value;  // nullopt: delete.
  };

  void Put(ColumnId column, ByteView key, ByteView value);
  void Put(ColumnId column, Bytes key, Bytes value);
  void Delete(ColumnId column, ByteView key);
  // Moves the ops of `other` to the end of this batch, in their order (a
  // synced batch makes this one synced).
  void Append(WriteBatch&& other);

  const std::vector<Op>& ops() const { return ops_; }
  // For stores taking the batch by KeyValueStore::WriteOwned.
  std::vector<Op>& mutable_ops() { return ops_; }
  size_t size() const { return ops_.size(); }
  bool empty() const { return ops_.empty(); }
  // Sum of key and value sizes, for metrics and limits.
  size_t ByteSize() const { return bytes_; }

  // Asks the store to make this write durable against power loss before
  // Write returns (an fsync of RocksDB's log), not only against the death
  // of the process. For writes acknowledged to a client.
  void set_sync(bool sync) { sync_ = sync; }
  bool sync() const { return sync_; }

 private:
  std::vector<Op> ops_;
  size_t bytes_ = 0;
  bool sync_ = false;
};

// InvalidArgument if an op of `batch` names a column outside
// [0, column_count), else OK.
absl::Status CheckColumns(const WriteBatch& batch, size_t column_count);

// The error of a write refused because the store's disk is full: a
// ResourceExhausted status that IsNoSpace recognises (by a payload, so a
// caller does not read messages). The store is still readable; writes
// succeed again once space returns.
absl::Status NoSpaceError(absl::string_view message);
bool IsNoSpace(const absl::Status& status);

// The error of a read of what this node deleted on purpose (retention:
// docs/node.md "Retention"): a state whose root the history collected, or
// blocks below the DAG's floor. NotFound that IsPruned recognises (by a
// payload), for the API to answer 410 rather than 404.
absl::Status PrunedError(absl::string_view message);
bool IsPruned(const absl::Status& status);

// Storage interface. Implementations are thread-safe: Get and Write may be
// called concurrently; a Write is atomic (readers see all of it or none) and
// durable against process death once it returns OK.
class KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;

  // Number of column families; valid ColumnIds are [0, ColumnCount()).
  virtual size_t ColumnCount() const = 0;

  // Returns the value, nullopt if absent, InvalidArgument for an unknown
  // column, or the backend's error (Internal/Unavailable).
  virtual absl::StatusOr<std::optional<Bytes>> Get(ColumnId column,
                                                   ByteView key) = 0;

  // Get of every key of `keys` (in any order, repeats allowed); the values
  // in the order of `keys`. One error fails the whole call. The default
  // calls Get per key; a backend with a batched read overrides it, and then
  // the values are one snapshot (RocksDbStore, InMemoryStore).
  virtual absl::StatusOr<std::vector<std::optional<Bytes>>> MultiGet(
      ColumnId column, std::span<const ByteView> keys);

  // Applies every op of `batch` atomically. On error nothing was applied;
  // a store whose disk is full says so with NoSpaceError (IsNoSpace).
  virtual absl::Status Write(const WriteBatch& batch) = 0;

  // As Write, but the store may take the batch's keys and values instead of
  // copying them; `batch` is left valid but unspecified, also on error. The
  // default copies through Write.
  virtual absl::Status WriteOwned(WriteBatch&& batch) { return Write(batch); }

  // Accepts `batch` to be applied atomically after every write accepted
  // before it, and returns once every read of this store sees it; it may
  // become durable later (Sync). Every later write of this store is applied
  // after it. For a write whose result the caller needs at once but whose
  // durability can wait for the next write (PipelinedStore). On error
  // nothing new was accepted. The default is WriteOwned: durable on return.
  virtual absl::Status WriteAsync(WriteBatch&& batch) {
    return WriteOwned(std::move(batch));
  }

  // Returns once every batch accepted so far is durable (as a Write that
  // returned OK), or the error that keeps one from being so. The default
  // has nothing to wait for.
  virtual absl::Status Sync() { return absl::OkStatus(); }

  // Calls `fn` for every key and value of `column` in ascending key order.
  // For tests and tools; not for hot paths. Stops early on a non-OK from fn.
  virtual absl::Status ForEach(
      ColumnId column,
      const std::function<absl::Status(ByteView key, ByteView value)>& fn) = 0;

  // Calls `fn` for the keys of `column` from `from` on (those not less), in
  // ascending order, until it returns false. The keys and values a call
  // sees are valid only during it. The default filters ForEach (a full
  // pass); a backend with ordered iteration overrides it with a seek.
  virtual absl::Status ScanFrom(
      ColumnId column, ByteView from,
      const std::function<bool(ByteView key, ByteView value)>& fn);

 protected:
  // ForEach as a ScanFrom from the first key, for a backend whose scan is
  // the primitive.
  absl::Status ForEachByScan(
      ColumnId column,
      const std::function<absl::Status(ByteView key, ByteView value)>& fn);
};

// Most mutexes one InMemoryStore batch holds at once: ThreadSanitizer tracks
// at most 64 held mutexes per thread, and a writer may hold a few of its own.
inline constexpr size_t kMaxStoreBatchLocks = 48;
// Shards per column of an InMemoryStore, at most: enough that a few dozen
// readers rarely meet on one mutex.
inline constexpr size_t kMaxStoreShardsPerColumn = 16;

// In-memory store: each column's hash map is split into shards by key hash,
// each behind its own mutex (clamp(kMaxStoreBatchLocks / columns, 1,
// kMaxStoreShardsPerColumn) shards per column). A Get locks one shard; a
// Write locks every shard it touches in ascending order, so it stays atomic
// for readers. Thread-safe.
class InMemoryStore final : public KeyValueStore {
 public:
  explicit InMemoryStore(size_t column_count);

  size_t ColumnCount() const override { return column_count_; }
  absl::StatusOr<std::optional<Bytes>> Get(ColumnId column,
                                           ByteView key) override;
  // One snapshot: the shards of the keys are locked together.
  absl::StatusOr<std::vector<std::optional<Bytes>>> MultiGet(
      ColumnId column, std::span<const ByteView> keys) override;
  absl::Status Write(const WriteBatch& batch) override;
  // Moves the batch's keys and values into the maps.
  absl::Status WriteOwned(WriteBatch&& batch) override;
  absl::Status ForEach(
      ColumnId column,
      const std::function<absl::Status(ByteView key, ByteView value)>& fn)
      override;

  // Number of keys in `column` (0 for an unknown column).
  size_t KeyCount(ColumnId column) const;

 private:
  // Hash and equality of keys; transparent so lookups by ByteView allocate
  // nothing.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(ByteView k) const {
      return absl::Hash<absl::string_view>()(
          absl::string_view(reinterpret_cast<const char*>(k.data()), k.size()));
    }
  };
  struct KeyEq {
    using is_transparent = void;
    bool operator()(ByteView a, ByteView b) const {
      return a.size() == b.size() &&
             (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
    }
  };
  // Unordered: ForEach sorts a snapshot (tests and tools only).
  using Column = absl::flat_hash_map<Bytes, Bytes, KeyHash, KeyEq>;
  struct alignas(64) Shard {
    mutable Mutex mu;
    Column map ABSL_GUARDED_BY(mu);
  };

  // Index into shards_ of `key` in `column`.
  size_t ShardOf(ColumnId column, ByteView key) const;
  // The shard index of each op of `batch`, in op order (each key hashed
  // once per write).
  std::vector<size_t> ShardsOf(const WriteBatch& batch) const;
  // Locks the shards `index` names (any order, repeats allowed) in
  // ascending order and returns them (to be unlocked in reverse).
  std::vector<Shard*> LockShards(std::vector<size_t> index);
  // Locks all shards of `column` in ascending order.
  std::vector<Shard*> LockColumn(ColumnId column) const;
  static void UnlockShards(const std::vector<Shard*>& shards);

  const size_t column_count_;
  const size_t shards_per_column_;
  // column_count_ * shards_per_column_; column c's shards are
  // [c * shards_per_column_, (c + 1) * shards_per_column_).
  std::unique_ptr<Shard[]> shards_;
};

}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_STORAGE_KV_STORE_H_

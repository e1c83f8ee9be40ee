// KeyValueStore on RocksDB, one column family per ColumnId. The only file
// that includes RocksDB headers is rocksdb_store.cc.
#ifndef RNODE_RSPACE_STORAGE_ROCKSDB_STORE_H_
#define RNODE_RSPACE_STORAGE_ROCKSDB_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "rspace/storage/kv_store.h"

namespace rnode::rspace {

struct RocksDbOptions {
  // Sync the WAL on every Write. Off by default: a process crash never loses
  // an acknowledged write either way (the WAL is in the OS page cache); only
  // power loss needs it.
  bool sync_writes = false;
  // Block cache for reads, shared by all column families. 64 MiB keeps the
  // hot trie levels in memory for a test node without dominating its RSS.
  size_t block_cache_bytes = 64u << 20;
  // Total size of the write-ahead log files before RocksDB flushes the
  // column families that pin the oldest one. Without a bound, a column
  // written rarely (roots, DAG state) keeps every log file alive until
  // RocksDB's default of 4 x the sum of the write buffers (about 2 GiB for
  // the node's columns): disk use and restart (log replay) time. Bounded
  // at the memtables' total, the log holds about what they hold: at 256
  // MiB it was most of a node's disk and its sawtooth (a disk soak: the log
  // climbed 0 to 256 MiB over 11 minutes beside 60 MiB of tables).
  uint64_t max_total_wal_bytes = 64u << 20;
  // RocksDB's own text log (LOG in the database folder): rotated at this
  // size, the newest few kept, where by default one file grew for ever.
  size_t max_info_log_bytes = 4u << 20;
  size_t info_logs_kept = 3;
  // Memtable budget: each column family's write buffer, and all of them
  // together (RocksDB flushes the largest when the total is reached).
  // Without the total, nine columns of 64 MiB buffers let the memtables
  // alone grow a node's memory by up to a gigabyte under steady writes.
  size_t write_buffer_bytes = 16u << 20;
  size_t total_write_buffer_bytes = 64u << 20;
  // Opens the database on a file system whose writes can be made to fail
  // as on a full disk (RocksDbStore::InjectNoSpace), for fault-injection
  // runs (docs/reliability.md "disk-full"). Off: RocksDB's own file system.
  bool injectable_faults = false;
};

// Bytes of an open store's tables on disk (RocksDB's own figures, summed
// over the column families; the log is RocksDbStore::WalBytes).
struct RocksDbDisk {
  uint64_t tables = 0;     // Table files of every live version.
  uint64_t live_data = 0;  // Estimate of what the tables would hold after a
                           // full compaction: tables - live_data is the
                           // space compaction has yet to give back.
};

// Memory RocksDB holds for an open store, in bytes (approximate: RocksDB's
// own estimates, summed over the column families).
struct RocksDbMemory {
  uint64_t memtables = 0;      // Active and immutable write buffers.
  uint64_t table_readers = 0;  // Table readers outside the cache (small:
                               // index and filter blocks are charged to it).
  uint64_t block_cache = 0;    // Everything charged to the block cache.
  uint64_t pinned = 0;         // Of that, entries in use (not evictable).
  uint64_t block_cache_capacity = 0;  // The cache's bound.
};

class RocksDbStore final : public KeyValueStore {
 public:
  // Opens (creating if missing) the database at `path` with the given column
  // family names; ColumnId i is columns[i]. Returns InvalidArgument for an
  // empty column list, Internal with RocksDB's message on any open failure.
  static absl::StatusOr<std::unique_ptr<RocksDbStore>> Open(
      const std::string& path, const std::vector<std::string>& columns,
      const RocksDbOptions& options = {});
  ~RocksDbStore() override;

  size_t ColumnCount() const override;
  // One batched RocksDB MultiGet.
  absl::StatusOr<std::vector<std::optional<Bytes>>> MultiGet(
      ColumnId column, std::span<const ByteView> keys) override;
  absl::StatusOr<std::optional<Bytes>> Get(ColumnId column,
                                           ByteView key) override;
  // A write that fails for want of disk space returns NoSpaceError. RocksDB
  // then refuses every write (it keeps serving reads) until it recovers:
  // its own recovery polls the free space (every 5 s), and a later Write
  // asks it to resume too (at most once a second), so the store takes
  // writes again by itself within seconds of space returning.
  absl::Status Write(const WriteBatch& batch) override;
  absl::Status ForEach(
      ColumnId column,
      const std::function<absl::Status(ByteView key, ByteView value)>& fn)
      override;
  // Seeks to `from`.
  absl::Status ScanFrom(
      ColumnId column, ByteView from,
      const std::function<bool(ByteView key, ByteView value)>& fn) override;

  // What the store holds in memory now. Thread-safe.
  RocksDbMemory Memory() const;
  // What the store's tables hold on disk now. Thread-safe.
  RocksDbDisk Disk() const;
  // Bytes of the write-ahead log files alive now (lists them: for metrics,
  // not hot paths). Thread-safe.
  uint64_t WalBytes() const;

  // Fault injection: while `full`, every file write of the database (the
  // log, flushes, compactions, new files) fails as on a full disk (ENOSPC)
  // and the file system reports no free space; lifting it is space
  // returning. FailedPrecondition unless opened with injectable_faults.
  // Thread-safe.
  absl::Status InjectNoSpace(bool full);
  // Whether InjectNoSpace made the disk full (false without injectable
  // faults).
  bool no_space_injected() const;

 private:
  struct Impl;
  explicit RocksDbStore(std::unique_ptr<Impl> impl);
  // An integer property of RocksDB summed over every column family.
  uint64_t SumProperty(const std::string& property) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_STORAGE_ROCKSDB_STORE_H_

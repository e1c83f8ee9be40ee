// RocksDB adapter for KeyValueStore.
#include "rspace/storage/rocksdb_store.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <utility>

#include "rocksdb/cache.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/file_system.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/options.h"
#include "rocksdb/table.h"
#include "rocksdb/write_batch.h"
#include "util/mutex.h"

namespace rnode::rspace {
namespace {

rocksdb::Slice ToSlice(ByteView v) {
  return rocksdb::Slice(reinterpret_cast<const char*>(v.data()), v.size());
}

// RocksDB's batch layout: a 12-byte header (sequence number and count),
// then per record a tag byte, a column family id and the key and value
// lengths as varints (at most 5 bytes each), then the key and value.
constexpr size_t kBatchHeaderBytes = 12;
constexpr size_t kBatchRecordOverhead = 1 + 5 + 5 + 5;

absl::Status FromRocks(const rocksdb::Status& s, const char* what) {
  if (s.ok()) return absl::OkStatus();
  if (s.IsNoSpace()) {
    return NoSpaceError(std::string("rocksdb ") + what +
                        ": no space left on the store's disk (" + s.ToString() +
                        ")");
  }
  return absl::InternalError(std::string("rocksdb ") + what + ": " +
                             s.ToString());
}

// How often a store that RocksDB stopped after a failed write asks it to
// resume: each attempt flushes the memtables, which fails again at once
// while the disk is still full.
constexpr auto kResumeInterval = std::chrono::seconds(1);

rocksdb::IOStatus NoSpace() {
  return rocksdb::IOStatus::NoSpace("injected fault: the disk is full");
}

// A writable file that fails every write while the disk is "full".
class FullableFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  FullableFile(std::unique_ptr<rocksdb::FSWritableFile> file,
               const std::atomic<bool>* full)
      : FSWritableFileOwnerWrapper(std::move(file)), full_(full) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& o,
                           rocksdb::IODebugContext* dbg) override {
    if (full_->load()) return NoSpace();
    return FSWritableFileOwnerWrapper::Append(data, o, dbg);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& o,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override {
    if (full_->load()) return NoSpace();
    return FSWritableFileOwnerWrapper::Append(data, o, info, dbg);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data,
                                     uint64_t offset,
                                     const rocksdb::IOOptions& o,
                                     rocksdb::IODebugContext* dbg) override {
    if (full_->load()) return NoSpace();
    return FSWritableFileOwnerWrapper::PositionedAppend(data, offset, o, dbg);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data,
                                     uint64_t offset,
                                     const rocksdb::IOOptions& o,
                                     const rocksdb::DataVerificationInfo& info,
                                     rocksdb::IODebugContext* dbg) override {
    if (full_->load()) return NoSpace();
    return FSWritableFileOwnerWrapper::PositionedAppend(data, offset, o, info,
                                                        dbg);
  }
  rocksdb::IOStatus Flush(const rocksdb::IOOptions& o,
                          rocksdb::IODebugContext* dbg) override {
    if (full_->load()) return NoSpace();
    return FSWritableFileOwnerWrapper::Flush(o, dbg);
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& o,
                         rocksdb::IODebugContext* dbg) override {
    if (full_->load()) return NoSpace();
    return FSWritableFileOwnerWrapper::Sync(o, dbg);
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o,
                          rocksdb::IODebugContext* dbg) override {
    if (full_->load()) return NoSpace();
    return FSWritableFileOwnerWrapper::Fsync(o, dbg);
  }

 private:
  const std::atomic<bool>* const full_;
};

// The default file system, whose disk can be made "full": new files and
// writes to open ones fail with ENOSPC and no space is free.
class FullableFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  FullableFileSystem() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}

  const char* Name() const override { return "RnodeFullableFileSystem"; }

  void SetFull(bool full) { full_.store(full); }
  bool full() const { return full_.load(); }

  rocksdb::IOStatus NewWritableFile(const std::string& f,
                                    const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* dbg) override {
    return Wrap(target()->NewWritableFile(f, o, r, dbg), r);
  }
  rocksdb::IOStatus ReopenWritableFile(
      const std::string& f, const rocksdb::FileOptions& o,
      std::unique_ptr<rocksdb::FSWritableFile>* r,
      rocksdb::IODebugContext* dbg) override {
    return Wrap(target()->ReopenWritableFile(f, o, r, dbg), r);
  }
  rocksdb::IOStatus ReuseWritableFile(
      const std::string& f, const std::string& old,
      const rocksdb::FileOptions& o,
      std::unique_ptr<rocksdb::FSWritableFile>* r,
      rocksdb::IODebugContext* dbg) override {
    return Wrap(target()->ReuseWritableFile(f, old, o, r, dbg), r);
  }
  rocksdb::IOStatus GetFreeSpace(const std::string& path,
                                 const rocksdb::IOOptions& o, uint64_t* free,
                                 rocksdb::IODebugContext* dbg) override {
    if (full_.load()) {
      *free = 0;
      return rocksdb::IOStatus::OK();
    }
    return target()->GetFreeSpace(path, o, free, dbg);
  }

 private:
  rocksdb::IOStatus Wrap(rocksdb::IOStatus s,
                         std::unique_ptr<rocksdb::FSWritableFile>* r) {
    if (!s.ok()) return s;
    if (full_.load()) {
      r->reset();
      return NoSpace();
    }
    *r = std::make_unique<FullableFile>(std::move(*r), &full_);
    return s;
  }

  std::atomic<bool> full_{false};
};

}  // namespace

struct RocksDbStore::Impl {
  // Declared before the database, which uses them until it is closed.
  std::shared_ptr<FullableFileSystem> fullable;  // injectable_faults only.
  std::unique_ptr<rocksdb::Env> env;             // Over `fullable`.
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;  // Index = ColumnId.
  rocksdb::ColumnFamilyHandle* default_handle = nullptr;
  rocksdb::WriteOptions write_options;
  std::shared_ptr<rocksdb::Cache> block_cache;
  // A write failed, so RocksDB may refuse writes until resumed.
  std::atomic<bool> stopped{false};
  Mutex resume_mu;
  std::chrono::steady_clock::time_point last_resume ABSL_GUARDED_BY(resume_mu);

  // Asks a stopped database to resume (at most once per kResumeInterval);
  // the write that follows fails again if that did not help.
  void MaybeResume() {
    if (!stopped.load()) return;
    MutexLock lock(&resume_mu);
    const auto now = std::chrono::steady_clock::now();
    if (now - last_resume < kResumeInterval) return;
    last_resume = now;
    // Busy while RocksDB's own recovery runs (it polls the free space every
    // few seconds after a full disk); then the write below tells.
    if (db->Resume().ok()) stopped.store(false);
  }

  ~Impl() {
    if (db) {
      for (auto* h : handles) {
        rocksdb::Status s = db->DestroyColumnFamilyHandle(h);
        (void)s;
      }
      if (default_handle != nullptr) {
        rocksdb::Status s = db->DestroyColumnFamilyHandle(default_handle);
        (void)s;
      }
      rocksdb::Status s = db->Close();
      (void)s;
    }
  }
};

RocksDbStore::RocksDbStore(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

RocksDbStore::~RocksDbStore() = default;

absl::StatusOr<std::unique_ptr<RocksDbStore>> RocksDbStore::Open(
    const std::string& path, const std::vector<std::string>& columns,
    const RocksDbOptions& options) {
  if (columns.empty()) {
    return absl::InvalidArgumentError("RocksDbStore needs at least one column");
  }
  auto impl = std::make_unique<Impl>();
  rocksdb::Options db_options;
  if (options.injectable_faults) {
    impl->fullable = std::make_shared<FullableFileSystem>();
    impl->env = rocksdb::NewCompositeEnv(impl->fullable);
    db_options.env = impl->env.get();
  }
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.max_total_wal_size = options.max_total_wal_bytes;
  db_options.max_log_file_size = options.max_info_log_bytes;
  db_options.keep_log_file_num = options.info_logs_kept;
  db_options.db_write_buffer_size = options.total_write_buffer_bytes;
  // Tuned for what the history does: point reads of keys that are hashes
  // (docs/rspace.md "Storage"). A Bloom filter per table lets a read skip
  // the level-0 tables that cannot hold its key (every table's key range
  // spans the whole hash space, so without one each read searches them
  // all); a hash index inside each data block finds the key without a
  // binary search; and hash keys with mostly hash-valued contents do not
  // compress, so blocks are stored plain and reads skip the decompression.
  //
  // The tables' index and filter blocks are charged to the block cache,
  // not held beside it: held beside it they grow with the data on disk
  // (soak run 8: 1.2 to 4.9 MB in 90 minutes, some MiB an hour without
  // end), charged to it they are bounded by its capacity. Level-0 tables'
  // are pinned there (few, and probed by every read), at high priority so
  // that data blocks are evicted first.
  rocksdb::BlockBasedTableOptions table;
  std::shared_ptr<rocksdb::Cache> block_cache =
      rocksdb::NewLRUCache(options.block_cache_bytes);
  table.block_cache = block_cache;
  table.cache_index_and_filter_blocks = true;
  table.cache_index_and_filter_blocks_with_high_priority = true;
  table.pin_l0_filter_and_index_blocks_in_cache = true;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.data_block_index_type =
      rocksdb::BlockBasedTableOptions::kDataBlockBinaryAndHash;
  rocksdb::ColumnFamilyOptions cf_options;
  cf_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  cf_options.compression = rocksdb::kNoCompression;
  cf_options.write_buffer_size = options.write_buffer_bytes;

  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  descriptors.emplace_back(rocksdb::kDefaultColumnFamilyName, cf_options);
  for (const auto& name : columns) descriptors.emplace_back(name, cf_options);

  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s =
      rocksdb::DB::Open(db_options, path, descriptors, &handles, &raw);
  if (!s.ok()) return FromRocks(s, "open");
  impl->db.reset(raw);
  impl->block_cache = std::move(block_cache);
  impl->default_handle = handles[0];
  impl->handles.assign(handles.begin() + 1, handles.end());
  impl->write_options.sync = options.sync_writes;
  return std::unique_ptr<RocksDbStore>(new RocksDbStore(std::move(impl)));
}

size_t RocksDbStore::ColumnCount() const { return impl_->handles.size(); }

absl::StatusOr<std::optional<Bytes>> RocksDbStore::Get(ColumnId column,
                                                       ByteView key) {
  if (column >= impl_->handles.size()) {
    return absl::InvalidArgumentError("unknown column " +
                                      std::to_string(column));
  }
  rocksdb::PinnableSlice value;
  rocksdb::Status s = impl_->db->Get(
      rocksdb::ReadOptions(), impl_->handles[column], ToSlice(key), &value);
  if (s.IsNotFound()) return std::optional<Bytes>();
  if (!s.ok()) return FromRocks(s, "get");
  const auto* p = reinterpret_cast<const uint8_t*>(value.data());
  return std::optional<Bytes>(Bytes(p, p + value.size()));
}

absl::StatusOr<std::vector<std::optional<Bytes>>> RocksDbStore::MultiGet(
    ColumnId column, std::span<const ByteView> keys) {
  if (column >= impl_->handles.size()) {
    return absl::InvalidArgumentError("unknown column " +
                                      std::to_string(column));
  }
  std::vector<std::optional<Bytes>> out(keys.size());
  if (keys.empty()) return out;
  std::vector<rocksdb::Slice> slices;
  slices.reserve(keys.size());
  for (ByteView k : keys) slices.push_back(ToSlice(k));
  std::vector<rocksdb::PinnableSlice> values(keys.size());
  std::vector<rocksdb::Status> statuses(keys.size());
  impl_->db->MultiGet(rocksdb::ReadOptions(), impl_->handles[column],
                      keys.size(), slices.data(), values.data(),
                      statuses.data());
  for (size_t i = 0; i < keys.size(); ++i) {
    if (statuses[i].IsNotFound()) continue;
    if (!statuses[i].ok()) return FromRocks(statuses[i], "multi-get");
    const auto* p = reinterpret_cast<const uint8_t*>(values[i].data());
    out[i] = Bytes(p, p + values[i].size());
  }
  return out;
}

absl::Status RocksDbStore::Write(const WriteBatch& batch) {
  // The ops go into RocksDB's batch ordered by (column, key): the memtable
  // is a skip list whose insert reuses the previous insert's position, so
  // ascending keys insert in near-constant time where the hash-ordered keys
  // of a state commit each searched the whole list. A stable sort keeps the
  // order of ops on one key (the later still wins); the batch stays atomic.
  const std::vector<WriteBatch::Op>& ops = batch.ops();
  // A batch already in that order (a PipelinedStore's flight) is not
  // sorted again.
  std::vector<uint32_t> order(ops.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  auto less = [&](uint32_t x, uint32_t y) {
    if (ops[x].column != ops[y].column) return ops[x].column < ops[y].column;
    return ops[x].key < ops[y].key;
  };
  if (!std::is_sorted(order.begin(), order.end(), less)) {
    std::stable_sort(order.begin(), order.end(), less);
  }
  // RocksDB's batch is one string; sized up front it is written once, where
  // growing it by doubling copied a multi-megabyte state commit several
  // times and touched fresh pages each time (a quarter of a 10,000-chain
  // merge's time on RocksDB went there).
  rocksdb::WriteBatch wb(kBatchHeaderBytes + batch.ByteSize() +
                         ops.size() * kBatchRecordOverhead);
  for (uint32_t i : order) {
    const WriteBatch::Op& op = ops[i];
    if (op.column >= impl_->handles.size()) {
      return absl::InvalidArgumentError("unknown column " +
                                        std::to_string(op.column));
    }
    rocksdb::Status s =
        op.value.has_value()
            ? wb.Put(impl_->handles[op.column], ToSlice(op.key),
                     ToSlice(*op.value))
            : wb.Delete(impl_->handles[op.column], ToSlice(op.key));
    if (!s.ok()) return FromRocks(s, "batch");
  }
  rocksdb::WriteOptions options = impl_->write_options;
  if (batch.sync()) options.sync = true;
  impl_->MaybeResume();
  rocksdb::Status s = impl_->db->Write(options, &wb);
  if (!s.ok()) impl_->stopped.store(true);
  return FromRocks(s, "write");
}

absl::Status RocksDbStore::ForEach(
    ColumnId column,
    const std::function<absl::Status(ByteView key, ByteView value)>& fn) {
  return ForEachByScan(column, fn);
}

absl::Status RocksDbStore::ScanFrom(
    ColumnId column, ByteView from,
    const std::function<bool(ByteView key, ByteView value)>& fn) {
  if (column >= impl_->handles.size()) {
    return absl::InvalidArgumentError("unknown column " +
                                      std::to_string(column));
  }
  std::unique_ptr<rocksdb::Iterator> it(
      impl_->db->NewIterator(rocksdb::ReadOptions(), impl_->handles[column]));
  for (it->Seek(rocksdb::Slice(reinterpret_cast<const char*>(from.data()),
                               from.size()));
       it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key();
    rocksdb::Slice v = it->value();
    if (!fn(ByteView(reinterpret_cast<const uint8_t*>(k.data()), k.size()),
            ByteView(reinterpret_cast<const uint8_t*>(v.data()), v.size()))) {
      break;
    }
  }
  return FromRocks(it->status(), "iterate");
}

absl::Status RocksDbStore::InjectNoSpace(bool full) {
  if (impl_->fullable == nullptr) {
    return absl::FailedPreconditionError(
        "the store was opened without injectable faults");
  }
  impl_->fullable->SetFull(full);
  return absl::OkStatus();
}

bool RocksDbStore::no_space_injected() const {
  return impl_->fullable != nullptr && impl_->fullable->full();
}

uint64_t RocksDbStore::SumProperty(const std::string& property) const {
  uint64_t total = 0;
  for (rocksdb::ColumnFamilyHandle* h : impl_->handles) {
    uint64_t v = 0;
    if (impl_->db->GetIntProperty(h, property, &v)) total += v;
  }
  uint64_t v = 0;
  if (impl_->db->GetIntProperty(impl_->default_handle, property, &v)) {
    total += v;
  }
  return total;
}

RocksDbDisk RocksDbStore::Disk() const {
  RocksDbDisk out;
  out.tables = SumProperty(rocksdb::DB::Properties::kTotalSstFilesSize);
  out.live_data = SumProperty(rocksdb::DB::Properties::kEstimateLiveDataSize);
  return out;
}

uint64_t RocksDbStore::WalBytes() const {
  uint64_t bytes = 0;
  rocksdb::VectorLogPtr logs;
  if (impl_->db->GetSortedWalFiles(logs).ok()) {
    for (const auto& log : logs) {
      // Archived logs are not kept (no WAL_ttl_seconds), so every one
      // listed is alive.
      bytes += log->SizeFileBytes();
    }
  }
  return bytes;
}

RocksDbMemory RocksDbStore::Memory() const {
  RocksDbMemory out;
  out.memtables = SumProperty(rocksdb::DB::Properties::kCurSizeAllMemTables);
  out.table_readers =
      SumProperty(rocksdb::DB::Properties::kEstimateTableReadersMem);
  out.block_cache = impl_->block_cache->GetUsage();
  out.pinned = impl_->block_cache->GetPinnedUsage();
  out.block_cache_capacity = impl_->block_cache->GetCapacity();
  return out;
}

}  // namespace rnode::rspace

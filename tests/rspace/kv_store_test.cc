// KeyValueStore implementations: in-memory, RocksDB and fault injection.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "crypto/hash.h"
#include "gtest/gtest.h"
#include "rspace/history/history.h"
#include "rspace/space.h"
#include "rspace/storage/fault_store.h"
#include "rspace/storage/kv_store.h"
#include "rspace/storage/rocksdb_store.h"
#include "tests/rspace/test_util.h"

namespace rnode::rspace {
namespace {

using testing::T;

std::string TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("rspace_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

enum class Kind { kMemory, kRocks, kFaultOverMemory };
// How a batch reaches the store: Write (copies) or WriteOwned (may move).
enum class Path { kCopy, kOwned };

class KvStoreTest : public ::testing::TestWithParam<std::tuple<Kind, Path>> {
 protected:
  void SetUp() override {
    switch (std::get<0>(GetParam())) {
      case Kind::kMemory:
        store_ = std::make_unique<InMemoryStore>(2);
        break;
      case Kind::kRocks: {
        RNODE_SKIP_ROCKSDB_UNDER_TSAN();
        dir_ = TempDir("kv");
        auto s = RocksDbStore::Open(dir_, {"a", "b"});
        ASSERT_TRUE(s.ok()) << s.status();
        store_ = *std::move(s);
        break;
      }
      case Kind::kFaultOverMemory:
        base_ = std::make_unique<InMemoryStore>(2);
        store_ = std::make_unique<FaultInjectingStore>(base_.get());
        break;
    }
  }
  void TearDown() override {
    store_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  // Writes `batch` by the path under test.
  absl::Status Write(WriteBatch batch) {
    return std::get<1>(GetParam()) == Path::kOwned
               ? store_->WriteOwned(std::move(batch))
               : store_->Write(batch);
  }
  std::unique_ptr<InMemoryStore> base_;
  std::unique_ptr<KeyValueStore> store_;
  std::string dir_;
};

TEST_P(KvStoreTest, MissingKeyIsNullopt) {
  auto v = store_->Get(0, AsBytes("nope"));
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->has_value());
}

TEST_P(KvStoreTest, PutThenGet) {
  WriteBatch b;
  b.Put(0, AsBytes("k"), AsBytes("v"));
  ASSERT_TRUE(Write(b).ok());
  EXPECT_EQ(ToString(**store_->Get(0, AsBytes("k"))), "v");
}

TEST_P(KvStoreTest, ColumnsAreSeparate) {
  WriteBatch b;
  b.Put(0, AsBytes("k"), AsBytes("zero"));
  b.Put(1, AsBytes("k"), AsBytes("one"));
  ASSERT_TRUE(Write(b).ok());
  EXPECT_EQ(ToString(**store_->Get(0, AsBytes("k"))), "zero");
  EXPECT_EQ(ToString(**store_->Get(1, AsBytes("k"))), "one");
}

TEST_P(KvStoreTest, DeleteRemoves) {
  WriteBatch b;
  b.Put(0, AsBytes("k"), AsBytes("v"));
  ASSERT_TRUE(Write(b).ok());
  WriteBatch d;
  d.Delete(0, AsBytes("k"));
  ASSERT_TRUE(Write(d).ok());
  EXPECT_FALSE(store_->Get(0, AsBytes("k"))->has_value());
}

TEST_P(KvStoreTest, LaterOpInBatchWins) {
  WriteBatch b;
  b.Put(0, AsBytes("k"), AsBytes("1"));
  b.Put(0, AsBytes("k"), AsBytes("2"));
  ASSERT_TRUE(Write(b).ok());
  EXPECT_EQ(ToString(**store_->Get(0, AsBytes("k"))), "2");
}

TEST_P(KvStoreTest, UnknownColumnIsInvalidAndWritesNothing) {
  WriteBatch b;
  b.Put(0, AsBytes("k"), AsBytes("v"));
  b.Put(7, AsBytes("k"), AsBytes("v"));
  EXPECT_EQ(Write(b).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(store_->Get(0, AsBytes("k"))->has_value());
  EXPECT_EQ(store_->Get(7, AsBytes("k")).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(KvStoreTest, MultiGetReturnsValuesInKeyOrderWithAbsentAndRepeats) {
  WriteBatch b;
  b.Put(0, AsBytes("b"), AsBytes("2"));
  b.Put(0, AsBytes("a"), AsBytes("1"));
  b.Put(1, AsBytes("c"), AsBytes("other column"));
  ASSERT_TRUE(Write(b).ok());
  std::vector<ByteView> keys = {AsBytes("b"), AsBytes("c"), AsBytes("a"),
                                AsBytes("b")};
  auto values = store_->MultiGet(0, keys);
  ASSERT_TRUE(values.ok()) << values.status();
  ASSERT_EQ(values->size(), 4u);
  EXPECT_EQ(ToString(*(*values)[0]), "2");
  EXPECT_FALSE((*values)[1].has_value());  // only in column 1
  EXPECT_EQ(ToString(*(*values)[2]), "1");
  EXPECT_EQ(ToString(*(*values)[3]), "2");
  auto none = store_->MultiGet(0, {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(store_->MultiGet(7, keys).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(KvStoreTest, ForEachIsOrderedByKey) {
  WriteBatch b;
  for (const char* k : {"c", "a", "b"}) b.Put(1, AsBytes(k), AsBytes(k));
  ASSERT_TRUE(Write(b).ok());
  std::string keys;
  ASSERT_TRUE(store_
                  ->ForEach(1,
                            [&](ByteView k, ByteView) {
                              keys += ToString(k);
                              return absl::OkStatus();
                            })
                  .ok());
  EXPECT_EQ(keys, "abc");
}

TEST_P(KvStoreTest, ScanFromStartsAtTheKeyAndStopsWhenAsked) {
  WriteBatch b;
  for (const char* k : {"b1", "a2", "b3", "c", "b2", "a"}) {
    b.Put(1, AsBytes(k), AsBytes(std::string("v") + k));
  }
  b.Put(0, AsBytes("b0"), AsBytes("other column"));
  ASSERT_TRUE(Write(b).ok());
  auto scan = [&](std::string_view from, size_t most) {
    std::string seen;
    size_t calls = 0;
    EXPECT_TRUE(store_
                    ->ScanFrom(1, AsBytes(from),
                               [&](ByteView k, ByteView v) {
                                 seen += ToString(k) + "=" + ToString(v) + " ";
                                 return ++calls < most;
                               })
                    .ok());
    return seen;
  };
  EXPECT_EQ(scan("b", 99), "b1=vb1 b2=vb2 b3=vb3 c=vc ");
  EXPECT_EQ(scan("b2", 2), "b2=vb2 b3=vb3 ");
  EXPECT_EQ(scan("", 1), "a=va ");
  EXPECT_EQ(scan("d", 99), "");
  EXPECT_EQ(
      store_->ScanFrom(5, AsBytes("a"), [](ByteView, ByteView) { return true; })
          .code(),
      absl::StatusCode::kInvalidArgument);
}

TEST_P(KvStoreTest, ColumnCount) { EXPECT_EQ(store_->ColumnCount(), 2u); }

TEST_P(KvStoreTest, OverwriteReplacesTheValue) {
  WriteBatch a;
  a.Put(0, AsBytes("k"), AsBytes("old"));
  ASSERT_TRUE(Write(std::move(a)).ok());
  WriteBatch b;
  b.Put(0, AsBytes("k"), AsBytes("new"));
  b.Delete(0, AsBytes("absent"));
  ASSERT_TRUE(Write(std::move(b)).ok());
  EXPECT_EQ(ToString(**store_->Get(0, AsBytes("k"))), "new");
  EXPECT_FALSE(store_->Get(0, AsBytes("absent"))->has_value());
}

TEST_P(KvStoreTest, PutThenDeleteInOneBatchLeavesNothing) {
  WriteBatch b;
  b.Put(0, AsBytes("k"), AsBytes("v"));
  b.Delete(0, AsBytes("k"));
  ASSERT_TRUE(Write(std::move(b)).ok());
  EXPECT_FALSE(store_->Get(0, AsBytes("k"))->has_value());
}

TEST_P(KvStoreTest, KeysCompareBytewiseWithPrefixesFirst) {
  // Keys with high bytes and prefixes of each other: unsigned byte order.
  const std::vector<Bytes> keys = {{0xff},       {0x00, 0x01},       {0x00},
                                   {0x80, 0x00}, {0x7f, 0xff, 0xff}, {}};
  WriteBatch b;
  for (const Bytes& k : keys) b.Put(0, k, AsBytes("v"));
  ASSERT_TRUE(Write(std::move(b)).ok());
  std::vector<Bytes> seen;
  ASSERT_TRUE(store_
                  ->ForEach(0,
                            [&](ByteView k, ByteView) {
                              seen.emplace_back(k.begin(), k.end());
                              return absl::OkStatus();
                            })
                  .ok());
  std::vector<Bytes> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(seen, sorted);
  for (const Bytes& k : keys) EXPECT_TRUE(store_->Get(0, k)->has_value());
}

INSTANTIATE_TEST_SUITE_P(
    Stores, KvStoreTest,
    ::testing::Combine(::testing::Values(Kind::kMemory, Kind::kRocks,
                                         Kind::kFaultOverMemory),
                       ::testing::Values(Path::kCopy, Path::kOwned)),
    [](const auto& info) {
      const Kind kind = std::get<0>(info.param);
      std::string name = kind == Kind::kMemory  ? "Memory"
                         : kind == Kind::kRocks ? "RocksDb"
                                                : "FaultOverMemory";
      return name +
             (std::get<1>(info.param) == Path::kOwned ? "Owned" : "Copied");
    });

// A batch spanning every shard of both columns is seen by concurrent
// readers all or nothing: each batch writes generation g under every key,
// and a reader's snapshot (ForEach) and its Gets of two keys in different
// shards never mix generations in a way a torn batch would.
TEST(InMemoryStoreTest, MultiShardBatchIsAtomicForReaders) {
  InMemoryStore store(2);
  constexpr int kKeys = 64;  // spans every shard of a column
  constexpr int kBatches = 300;
  auto key = [](int i) { return ToBytes("key" + std::to_string(i)); };
  auto write = [&](int g) {
    WriteBatch b;
    for (int i = 0; i < kKeys; ++i) {
      b.Put(i % 2, ByteView(key(i)), ByteView(ToBytes(std::to_string(g))));
    }
    return store.Write(b);
  };
  ASSERT_TRUE(write(0).ok());
  std::atomic<bool> done{false};
  std::atomic<int> torn{0};
  std::thread reader([&] {
    while (!done.load()) {
      std::set<std::string> seen;
      absl::Status st = store.ForEach(0, [&](ByteView, ByteView v) {
        seen.insert(ToString(v));
        return absl::OkStatus();
      });
      if (!st.ok() || seen.size() != 1) torn++;
    }
  });
  for (int g = 1; g <= kBatches; ++g) ASSERT_TRUE(write(g).ok());
  done.store(true);
  reader.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(store.KeyCount(0), static_cast<size_t>(kKeys / 2));
  for (int i = 0; i < kKeys; ++i) {
    auto v = store.Get(i % 2, key(i));
    ASSERT_TRUE(v.ok() && v->has_value());
    EXPECT_EQ(ToString(**v), std::to_string(kBatches));
  }
}

TEST(RocksDbStoreTest, MemoryReportsTheBlockCacheBound) {
  RNODE_SKIP_ROCKSDB_UNDER_TSAN();
  RocksDbOptions options;
  options.block_cache_bytes = 3u << 20;
  auto s = *RocksDbStore::Open(TempDir("cache"), {"x"}, options);
  EXPECT_EQ(s->Memory().block_cache_capacity, 3u << 20);
  EXPECT_LE(s->Memory().block_cache, 3u << 20);
}

// Index and filter blocks held beside the cache grow with the database
// without bound (a soak: some MiB an hour); charged to the cache, the
// cache's capacity bounds them.
TEST(RocksDbStoreTest, IndexAndFilterBlocksAreChargedToTheBlockCache) {
  RNODE_SKIP_ROCKSDB_UNDER_TSAN();
  constexpr int kKeys = 50'000;  // A 10-bit Bloom filter: ~62 KB of them.
  auto key = [](int i) {
    return crypto::Blake2b256(ToBytes(std::to_string(i)));
  };
  const std::string dir = TempDir("index_filter");
  {
    auto s = *RocksDbStore::Open(dir, {"x"});
    WriteBatch b;
    for (int i = 0; i < kKeys; ++i) b.Put(0, key(i), AsBytes("v"));
    ASSERT_TRUE(s->Write(b).ok());
  }
  // Reopening replays the log into a table file.
  auto s = *RocksDbStore::Open(dir, {"x"});
  for (int i = 0; i < kKeys; i += 997) {
    auto v = s->Get(0, key(i));
    ASSERT_TRUE(v.ok() && v->has_value()) << i;
  }
  const RocksDbMemory m = s->Memory();
  EXPECT_GE(m.block_cache, uint64_t{kKeys} * 10 / 8) << "filter not cached";
  EXPECT_LT(m.table_readers, uint64_t{16} << 10) << "held beside the cache";
  EXPECT_LE(m.block_cache, m.block_cache_capacity);
}

// A column written once pins every later log file until RocksDB flushes
// it, which it does only when the logs reach max_total_wal_bytes: with
// RocksDB's default (4 x the write buffers) the log was most of a node's
// disk (a soak: 0 to 256 MiB and back every 11 minutes).
TEST(RocksDbStoreTest, TheLogIsBoundedWhileAColumnPinsIt) {
  RNODE_SKIP_ROCKSDB_UNDER_TSAN();
  EXPECT_LE(RocksDbOptions{}.max_total_wal_bytes,
            RocksDbOptions{}.total_write_buffer_bytes)
      << "the default log may outgrow the memtables";
  RocksDbOptions options;
  options.write_buffer_bytes = 256u << 10;
  options.total_write_buffer_bytes = 4u << 20;
  options.max_total_wal_bytes = 1u << 20;
  auto s =
      *RocksDbStore::Open(TempDir("wal_bound"), {"busy", "quiet"}, options);
  WriteBatch once;
  once.Put(1, AsBytes("k"), AsBytes("v"));
  ASSERT_TRUE(s->Write(once).ok());
  const Bytes value(1024, 7);
  uint64_t most = 0;
  for (int i = 0; i < 16'000; ++i) {  // 16 MiB through the log.
    WriteBatch b;
    b.Put(0, crypto::Blake2b256(ToBytes(std::to_string(i))), value);
    ASSERT_TRUE(s->Write(b).ok());
    if (i % 500 == 0) most = std::max(most, s->WalBytes());
  }
  // The bound, plus the log being written and one RocksDB has yet to drop.
  EXPECT_LE(most, uint64_t{3} << 20) << "the quiet column pinned the log";
  EXPECT_GT(most, 0u);
  EXPECT_GT(s->Disk().tables, 0u) << "the busy column was flushed";
  EXPECT_GT(s->Disk().live_data, 0u);
}

// RocksDB's text log is rotated and its old files dropped, where by
// default each open left one more file behind.
TEST(RocksDbStoreTest, TheInfoLogKeepsAFewFiles) {
  RNODE_SKIP_ROCKSDB_UNDER_TSAN();
  const std::string dir = TempDir("info_log");
  RocksDbOptions options;
  options.info_logs_kept = 2;
  for (int i = 0; i < 6; ++i) {
    auto s = *RocksDbStore::Open(dir, {"x"}, options);
  }
  int logs = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename().string().starts_with("LOG")) ++logs;
  }
  EXPECT_LE(logs, 2);
  EXPECT_GE(logs, 1);
}

TEST(RocksDbStoreTest, DataSurvivesReopen) {
  RNODE_SKIP_ROCKSDB_UNDER_TSAN();
  std::string dir = TempDir("reopen");
  {
    auto s = *RocksDbStore::Open(dir, {"x"});
    WriteBatch b;
    b.Put(0, AsBytes("k"), AsBytes("v"));
    ASSERT_TRUE(s->Write(b).ok());
  }
  auto s = *RocksDbStore::Open(dir, {"x"});
  EXPECT_EQ(ToString(**s->Get(0, AsBytes("k"))), "v");
  s.reset();
  std::filesystem::remove_all(dir);
}

TEST(RocksDbStoreTest, AFullDiskRefusesWritesKeepsReadsAndRecovers) {
  RNODE_SKIP_ROCKSDB_UNDER_TSAN();
  std::string dir = TempDir("full");
  RocksDbOptions options;
  options.injectable_faults = true;
  auto put = [](std::string_view k, bool sync = false) {
    WriteBatch b;
    b.Put(0, AsBytes(k), AsBytes(std::string(k) + "-value"));
    b.set_sync(sync);
    return b;
  };
  {
    auto s = *RocksDbStore::Open(dir, {"x"}, options);
    ASSERT_TRUE(s->Write(put("before")).ok());
    ASSERT_TRUE(s->InjectNoSpace(true).ok());
    const absl::Status full = s->Write(put("during"));
    EXPECT_TRUE(IsNoSpace(full)) << full;
    EXPECT_NE(full.message().find("no space left"), std::string::npos) << full;
    // RocksDB stopped: every write is refused, synced or not, while
    // reads go on.
    EXPECT_TRUE(IsNoSpace(s->Write(put("during-synced", true))));
    EXPECT_EQ(ToString(**s->Get(0, AsBytes("before"))), "before-value");
    EXPECT_FALSE(s->Get(0, AsBytes("during"))->has_value());

    ASSERT_TRUE(s->InjectNoSpace(false).ok());
    // Space returned: a write succeeds again within a few resume attempts
    // (one a second), with no reopen.
    absl::Status after = absl::UnknownError("not tried");
    for (int i = 0; i < 100 && !after.ok(); ++i) {
      after = s->Write(put("after", true));
      if (!after.ok()) {
        EXPECT_TRUE(IsNoSpace(after)) << after;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    ASSERT_TRUE(after.ok()) << after;
    EXPECT_EQ(ToString(**s->Get(0, AsBytes("after"))), "after-value");
  }
  // What was acknowledged is there after a reopen; what was refused is not.
  auto s = *RocksDbStore::Open(dir, {"x"});
  EXPECT_EQ(ToString(**s->Get(0, AsBytes("before"))), "before-value");
  EXPECT_EQ(ToString(**s->Get(0, AsBytes("after"))), "after-value");
  EXPECT_FALSE(s->Get(0, AsBytes("during"))->has_value());
  EXPECT_FALSE(s->Get(0, AsBytes("during-synced"))->has_value());
  // Without injectable faults the switch is refused.
  EXPECT_EQ(s->InjectNoSpace(true).code(),
            absl::StatusCode::kFailedPrecondition);
  s.reset();
  std::filesystem::remove_all(dir);
}

TEST(StorageErrorTest, NoSpaceIsRecognisedByItsPayloadNotItsCode) {
  EXPECT_TRUE(IsNoSpace(NoSpaceError("disk full")));
  EXPECT_EQ(NoSpaceError("disk full").code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(IsNoSpace(absl::ResourceExhaustedError("pool full")));
  EXPECT_FALSE(IsNoSpace(absl::OkStatus()));
}

TEST(RocksDbStoreTest, EmptyColumnListIsInvalid) {
  EXPECT_EQ(RocksDbStore::Open(TempDir("empty"), {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RocksDbStoreTest, SpaceCheckpointsAndReopensOnRocksDb) {
  RNODE_SKIP_ROCKSDB_UNDER_TSAN();
  std::string dir = TempDir("space");
  Hash32 root;
  testing::TestMatcher m;
  {
    auto store = *RocksDbStore::Open(dir, DefaultHistoryColumnNames());
    auto space = *Space::Open(store.get());
    EventLog log;
    OpContext ctx{&log, &m};
    for (int i = 0; i < 50; ++i) {
      ASSERT_TRUE(
          space->Produce(ctx, T("c" + std::to_string(i)), T("d"), false).ok());
    }
    ASSERT_TRUE(space
                    ->Consume(ctx, {T("j1"), T("j2")}, {T("*"), T("*")}, T("k"),
                              false, false)
                    .ok());
    root = *space->CreateCheckpoint();
  }
  auto store = *RocksDbStore::Open(dir, DefaultHistoryColumnNames());
  auto space = *Space::Open(store.get());
  EXPECT_EQ(space->root(), root);
  EXPECT_TRUE(space->history().VerifyRoot(root).ok());
  EXPECT_EQ(space->GetData(T("c7")->hash())->size(), 1u);
  EventLog log;
  OpContext ctx{&log, &m};
  ASSERT_TRUE(space->Produce(ctx, T("j1"), T("1"), false).ok());
  EXPECT_EQ(space->Produce(ctx, T("j2"), T("2"), false)->size(), 1u);
  space.reset();
  store.reset();
  std::filesystem::remove_all(dir);
}

TEST(FaultInjectingStoreTest, FailsWritesAfterN) {
  InMemoryStore base(1);
  FaultInjectingStore s(&base);
  s.FailWritesAfter(2);
  WriteBatch b;
  b.Put(0, AsBytes("k"), AsBytes("v"));
  EXPECT_TRUE(s.Write(b).ok());
  EXPECT_TRUE(s.Write(b).ok());
  EXPECT_EQ(s.Write(b).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(s.writes(), 2u);
  s.Heal();
  EXPECT_TRUE(s.Write(b).ok());
}

TEST(FaultInjectingStoreTest, FailsReadsAfterN) {
  InMemoryStore base(1);
  FaultInjectingStore s(&base);
  s.FailReadsAfter(1);
  EXPECT_TRUE(s.Get(0, AsBytes("k")).ok());
  EXPECT_EQ(s.Get(0, AsBytes("k")).status().code(),
            absl::StatusCode::kUnavailable);
}

TEST(FaultInjectingStoreTest, CrashPointRunsBeforeTheChosenWrite) {
  InMemoryStore base(1);
  FaultInjectingStore s(&base);
  int fired_at = -1;
  s.SetCrashPoint(1, [&] { fired_at = static_cast<int>(base.KeyCount(0)); });
  WriteBatch a, b;
  a.Put(0, AsBytes("a"), AsBytes("1"));
  b.Put(0, AsBytes("b"), AsBytes("1"));
  ASSERT_TRUE(s.Write(a).ok());
  EXPECT_EQ(fired_at, -1);
  ASSERT_TRUE(s.Write(b).ok());
  EXPECT_EQ(fired_at, 1);
}

TEST(FaultInjectingStoreTest, OwnedWritesFaultAndCountLikeCopiedOnes) {
  InMemoryStore base(1);
  FaultInjectingStore s(&base);
  int fired_at = -1;
  s.SetCrashPoint(1, [&] { fired_at = static_cast<int>(base.KeyCount(0)); });
  s.FailWritesAfter(2);
  WriteBatch a, b, c;
  a.Put(0, AsBytes("a"), AsBytes("1"));
  b.Put(0, AsBytes("b"), AsBytes("1"));
  c.Put(0, AsBytes("c"), AsBytes("1"));
  ASSERT_TRUE(s.WriteOwned(std::move(a)).ok());
  EXPECT_EQ(fired_at, -1);
  ASSERT_TRUE(s.WriteOwned(std::move(b)).ok());
  EXPECT_EQ(fired_at, 1);
  EXPECT_EQ(s.WriteOwned(std::move(c)).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(s.writes(), 2u);
  EXPECT_EQ(base.KeyCount(0), 2u);
}

TEST(HistoryTest, OpenRecordsEmptyRoot) {
  InMemoryStore store(3);
  auto h = *History::Open(&store, {});
  EXPECT_EQ(h->last_root(), kEmptyRoot);
  EXPECT_TRUE(*h->HasRoot(kEmptyRoot));
  EXPECT_TRUE(h->VerifyRoot(kEmptyRoot).ok());
}

TEST(HistoryTest, ReadLeafReturnsTheCommittedBlob) {
  InMemoryStore store(3);
  auto h = *History::Open(&store, {});
  LeafUpdate u{T("k")->hash(), ToBytes("blob"), T("blob")->hash()};
  Hash32 root = *h->Commit(kEmptyRoot, std::span<const LeafUpdate>(&u, 1));
  EXPECT_EQ(h->last_root(), root);
  auto leaf = h->ReadLeaf(root, T("k")->hash());
  ASSERT_TRUE(leaf.ok());
  ASSERT_TRUE(leaf->has_value());
  EXPECT_EQ(ToString(**leaf), "blob");
  EXPECT_FALSE(h->ReadLeaf(root, T("other")->hash())->has_value());
  EXPECT_FALSE(h->ReadLeaf(kEmptyRoot, T("k")->hash())->has_value());
}

TEST(HistoryTest, CorruptLastRootIsDataLoss) {
  InMemoryStore store(3);
  WriteBatch b;
  b.Put(2, AsBytes("last-root"), AsBytes("short"));
  ASSERT_TRUE(store.Write(b).ok());
  EXPECT_EQ(History::Open(&store, {}).status().code(),
            absl::StatusCode::kDataLoss);
}

// A blob longer than the inline bound, with its hash.
LeafUpdate LargeLeaf(const Hash32& key, uint8_t fill) {
  Bytes blob(kDefaultInlineBlobMax + 1, fill);
  Hash32 h = crypto::Blake2b256(blob);
  return LeafUpdate{key, std::move(blob), h};
}

TEST(HistoryTest, MissingBlobIsReportedByVerifyAndRead) {
  InMemoryStore store(3);
  auto h = *History::Open(&store, {});
  LeafUpdate u = LargeLeaf(T("k")->hash(), 7);
  const Hash32 blob_hash = u.blob_hash;
  Hash32 root = *h->Commit(kEmptyRoot, std::span<const LeafUpdate>(&u, 1));
  EXPECT_TRUE(h->VerifyRoot(root).ok());
  WriteBatch del;
  del.Delete(1, blob_hash);
  ASSERT_TRUE(store.Write(del).ok());
  EXPECT_EQ(h->VerifyRoot(root).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(h->ReadLeaf(root, T("k")->hash()).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(HistoryTest, SmallBlobsAreStoredWithTheirLeafAndLargeOnesByHash) {
  InMemoryStore store(3);
  auto h = *History::Open(&store, {});
  std::vector<LeafUpdate> updates;
  Bytes small(kDefaultInlineBlobMax, 1);
  updates.push_back(
      LeafUpdate{T("a")->hash(), small, crypto::Blake2b256(small)});
  updates.push_back(LargeLeaf(T("b")->hash(), 2));
  std::sort(updates.begin(), updates.end(),
            [](const auto& x, const auto& y) { return x.key < y.key; });
  const std::vector<LeafUpdate> copy = updates;
  Hash32 root = *h->Commit(kEmptyRoot, updates);
  // Only the large blob has a key of its own.
  EXPECT_EQ(store.KeyCount(1), 1u);
  for (const LeafUpdate& u : copy) {
    auto got = h->ReadLeaf(root, u.key);
    ASSERT_TRUE(got.ok() && got->has_value()) << got.status();
    EXPECT_EQ(**got, *u.blob);
  }
  std::vector<Hash32> keys;
  for (const LeafUpdate& u : copy) keys.push_back(u.key);
  auto many = h->ReadLeaves(root, keys);
  ASSERT_TRUE(many.ok()) << many.status();
  for (size_t i = 0; i < copy.size(); ++i)
    EXPECT_EQ(*(*many)[i], *copy[i].blob);
  EXPECT_TRUE(h->VerifyRoot(root).ok());
}

TEST(HistoryTest, InliningChangesNoRoot) {
  // The same updates with blobs inline (default) and all out of line give
  // the same root, and each history reads the other's store.
  std::vector<LeafUpdate> updates;
  size_t large = 0;  // Blobs longer than the inline bound.
  for (int i = 0; i < 200; ++i) {
    Bytes blob(static_cast<size_t>(i * 2 + 1), static_cast<uint8_t>(i));
    if (blob.size() > kDefaultInlineBlobMax) ++large;
    updates.push_back(LeafUpdate{T("c" + std::to_string(i))->hash(), blob,
                                 crypto::Blake2b256(blob)});
  }
  std::sort(updates.begin(), updates.end(),
            [](const auto& x, const auto& y) { return x.key < y.key; });
  InMemoryStore inline_store(3), plain_store(3);
  auto inlined = *History::Open(&inline_store, {});
  HistoryOptions plain_options;
  plain_options.inline_blob_max = 0;
  auto plain = *History::Open(&plain_store, plain_options);
  Hash32 r1 = *inlined->Commit(kEmptyRoot, updates);
  Hash32 r2 = *plain->Commit(kEmptyRoot, updates);
  EXPECT_EQ(r1, r2);
  EXPECT_EQ(plain_store.KeyCount(1), updates.size());
  EXPECT_EQ(large, 72u);
  EXPECT_EQ(inline_store.KeyCount(1), large);
  // Delete half, then change the other half.
  std::vector<LeafUpdate> next;
  for (size_t i = 0; i < updates.size(); ++i) {
    if (i % 2 == 0) {
      next.push_back(LeafUpdate{updates[i].key, std::nullopt, {}});
    } else {
      Bytes blob(i, 0xee);
      next.push_back(
          LeafUpdate{updates[i].key, blob, crypto::Blake2b256(blob)});
    }
  }
  Hash32 s1 = *inlined->Commit(r1, next);
  Hash32 s2 = *plain->Commit(r2, next);
  EXPECT_EQ(s1, s2);
  EXPECT_TRUE(inlined->VerifyRoot(s1).ok());
  EXPECT_TRUE(plain->VerifyRoot(s2).ok());
  for (size_t i = 0; i < next.size(); ++i) {
    auto a = inlined->ReadLeaf(s1, next[i].key);
    auto b = plain->ReadLeaf(s2, next[i].key);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*a, *b);
    EXPECT_EQ(a->has_value(), next[i].blob.has_value());
  }
}

TEST(HistoryTest, AlteredInlineBlobIsReportedByVerify) {
  // A node whose stored inline value was changed still decodes, but its
  // leaf no longer matches the value's hash.
  InMemoryStore store(3);
  auto h = *History::Open(&store, {});
  Bytes blob = ToBytes("inline value");
  LeafUpdate u{T("k")->hash(), blob, crypto::Blake2b256(blob)};
  Hash32 root = *h->Commit(kEmptyRoot, std::span<const LeafUpdate>(&u, 1));
  ASSERT_TRUE(h->VerifyRoot(root).ok());
  auto stored = store.Get(0, root);
  ASSERT_TRUE(stored.ok() && stored->has_value());
  Bytes altered = **stored;
  altered.back() ^= 1;
  WriteBatch put;
  put.Put(0, root, altered);
  ASSERT_TRUE(store.Write(put).ok());
  auto fresh = *History::Open(&store, {});  // Cold node cache.
  EXPECT_EQ(fresh->VerifyRoot(root).code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace rnode::rspace

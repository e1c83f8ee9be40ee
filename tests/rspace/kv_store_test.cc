// KeyValueStore implementations: in-memory, RocksDB and fault injection.
#include <algorithm>
#include <atomic>
#include <set>
#include <thread>
#include <filesystem>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

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
  EXPECT_TRUE(space->Produce(ctx, T("j2"), T("2"), false)->has_value());
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

TEST(HistoryTest, MissingBlobIsReportedByVerify) {
  InMemoryStore store(3);
  auto h = *History::Open(&store, {});
  LeafUpdate u{T("k")->hash(), ToBytes("blob"), T("blob")->hash()};
  Hash32 root = *h->Commit(kEmptyRoot, std::span<const LeafUpdate>(&u, 1));
  EXPECT_TRUE(h->VerifyRoot(root).ok());
  WriteBatch del;
  del.Delete(1, T("blob")->hash());
  ASSERT_TRUE(store.Write(del).ok());
  EXPECT_EQ(h->VerifyRoot(root).code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace rnode::rspace

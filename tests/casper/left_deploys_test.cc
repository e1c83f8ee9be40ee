// LeftDeploys: records survive a reopen, a signature has one record, and
// the bounds (count, age) drop the oldest first.
#include "casper/pool/left_deploys.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rspace/storage/kv_store.h"
#include "rspace/storage/rocksdb_store.h"

namespace rnode::casper::pool {
namespace {

Bytes Sig(uint8_t i) { return Bytes{0x30, 0x44, i, 7}; }
std::vector<Bytes> One(uint8_t i) { return {Sig(i)}; }

std::unique_ptr<LeftDeploys> OpenOn(rspace::KeyValueStore* store,
                                    LeftDeploysOptions options = {}) {
  auto left = LeftDeploys::Open(store, 0, options);
  EXPECT_TRUE(left.ok()) << left.status();
  return left.ok() ? *std::move(left) : nullptr;
}

std::optional<DeployLeft> Why(const LeftDeploys& left, uint8_t i) {
  auto got = left.Get(Sig(i));
  EXPECT_TRUE(got.ok()) << got.status();
  return got.ok() ? *got : std::nullopt;
}

TEST(LeftDeploysTest, RecordsAreKeptAcrossAReopenAndReplacedByANewOne) {
  rspace::InMemoryStore store(1);
  {
    auto left = OpenOn(&store);
    const std::vector<Bytes> expired = {Sig(1), Sig(2), Sig(1)};
    ASSERT_TRUE(left->Put(expired, DeployLeft::kExpired, 1000).ok());
    ASSERT_TRUE(left->Put(One(3), DeployLeft::kLeftOut, 1001).ok());
    EXPECT_EQ(left->size(), 3u);  // Sig(1) twice in one call is one record.
    ASSERT_TRUE(left->Put(One(2), DeployLeft::kLeftOut, 1002).ok());
    EXPECT_EQ(left->size(), 3u);
  }
  auto left = OpenOn(&store);
  EXPECT_EQ(left->size(), 3u);
  EXPECT_EQ(Why(*left, 1), DeployLeft::kExpired);
  EXPECT_EQ(Why(*left, 2), DeployLeft::kLeftOut);
  EXPECT_EQ(Why(*left, 3), DeployLeft::kLeftOut);
  EXPECT_EQ(Why(*left, 4), std::nullopt);
}

TEST(LeftDeploysTest, TheOldestGoBeyondTheCount) {
  rspace::InMemoryStore store(1);
  auto left = OpenOn(&store, {.max_records = 3, .max_age_ms = 1'000'000});
  for (uint8_t i = 1; i <= 5; ++i) {
    ASSERT_TRUE(left->Put(One(i), DeployLeft::kExpired, 100 * i).ok());
  }
  EXPECT_EQ(left->size(), 3u);
  EXPECT_EQ(Why(*left, 1), std::nullopt);
  EXPECT_EQ(Why(*left, 2), std::nullopt);
  for (uint8_t i = 3; i <= 5; ++i)
    EXPECT_EQ(Why(*left, i), DeployLeft::kExpired);
  // A replaced record is as old as its last Put: 3 is now the newest.
  ASSERT_TRUE(left->Put(One(3), DeployLeft::kExpired, 600).ok());
  ASSERT_TRUE(left->Put(One(6), DeployLeft::kExpired, 700).ok());
  EXPECT_EQ(Why(*left, 4), std::nullopt);
  EXPECT_EQ(Why(*left, 3), DeployLeft::kExpired);
  EXPECT_EQ(left->size(), 3u);
  EXPECT_EQ(OpenOn(&store)->size(), 3u);  // What the store holds.
}

TEST(LeftDeploysTest, RecordsOlderThanTheAgeGoAtTheNextPut) {
  rspace::InMemoryStore store(1);
  auto left = OpenOn(&store, {.max_records = 100, .max_age_ms = 1000});
  ASSERT_TRUE(left->Put(One(1), DeployLeft::kExpired, 0).ok());
  ASSERT_TRUE(left->Put(One(2), DeployLeft::kExpired, 900).ok());
  ASSERT_TRUE(left->Put(One(3), DeployLeft::kExpired, 1500).ok());
  EXPECT_EQ(Why(*left, 1), std::nullopt);  // 1500 ms old.
  EXPECT_EQ(Why(*left, 2), DeployLeft::kExpired);
  EXPECT_EQ(left->size(), 2u);
}

TEST(LeftDeploysTest, ABadSignatureWritesNothing) {
  rspace::InMemoryStore store(1);
  auto left = OpenOn(&store);
  const std::vector<Bytes> with_empty = {Sig(1), Bytes{}};
  EXPECT_EQ(left->Put(with_empty, DeployLeft::kExpired, 1).code(),
            absl::StatusCode::kInvalidArgument);
  const std::vector<Bytes> with_huge = {Sig(1), Bytes(1025, 0x30)};
  EXPECT_EQ(left->Put(with_huge, DeployLeft::kExpired, 1).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(left->size(), 0u);
  EXPECT_EQ(Why(*left, 1), std::nullopt);
}

TEST(LeftDeploysTest, AMalformedRecordIsDataLoss) {
  rspace::InMemoryStore store(1);
  rspace::WriteBatch batch;
  Bytes key{'S'};
  const Bytes sig = Sig(1);
  key.insert(key.end(), sig.begin(), sig.end());
  batch.Put(0, key, Bytes{9, 9});
  ASSERT_TRUE(store.Write(batch).ok());
  EXPECT_EQ(LeftDeploys::Open(&store, 0).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(LeftDeploysTest, KeptOnRocksDbAcrossARestart) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("left-deploys-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  {
    auto store = rspace::RocksDbStore::Open(dir.string(), {"left-deploys"});
    ASSERT_TRUE(store.ok()) << store.status();
    auto left = OpenOn(store->get());
    ASSERT_TRUE(left->Put(One(1), DeployLeft::kExpired, 5).ok());
    ASSERT_TRUE(left->Put(One(2), DeployLeft::kLeftOut, 6).ok());
  }
  {
    auto store = rspace::RocksDbStore::Open(dir.string(), {"left-deploys"});
    ASSERT_TRUE(store.ok()) << store.status();
    auto left = OpenOn(store->get());
    EXPECT_EQ(left->size(), 2u);
    EXPECT_EQ(Why(*left, 1), DeployLeft::kExpired);
    EXPECT_EQ(Why(*left, 2), DeployLeft::kLeftOut);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rnode::casper::pool

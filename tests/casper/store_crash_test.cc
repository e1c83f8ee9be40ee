// Durability across SIGKILL of the stores on RocksDB: a child process
// writes in lock step with the parent, which kills it mid-write; everything
// acknowledged is there after reopening. Integration-labelled: real stores
// in temporary folders, and forked processes.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "casper/dag/dag_store.h"
#include "casper/pool/deploy_pool.h"
#include "gtest/gtest.h"
#include "rspace/storage/rocksdb_store.h"
#include "tests/casper/dag_test_blocks.h"
#include "tests/casper/lock_step_child.h"
#include "tests/casper/test_key.h"
#include "tests/sanitizer.h"
#include "tests/test_seed.h"

namespace rnode::casper {
namespace {

using dag::DagColumnNames;
using dag::DagColumnsFrom;
using dag::DagStore;
using dag::blocks_for_tests::MakeBlock;
using pool::DeployPool;

constexpr int64_t kNow = 1'700'000'000'000;

SignedDeploy PoolDeploy(int i) {
  DeployData d;
  d.term = "@0!(" + std::to_string(i) + ")";
  d.timestamp = kNow + i;
  d.phlo_price = 1;
  d.phlo_limit = 1000;
  d.shard_id = "root";
  return *SignedDeploy::Sign(d, testing::MakeTestKey(7).sk);
}

// A child process inserts a chain of blocks into a RocksDB store and
// reports each acknowledged insert; the parent SIGKILLs it at a random
// point. Every acknowledged block must be there after reopening, and the
// store must open (the DAG closed under parents).
TEST(DagStoreCrashTest, AcknowledgedBlocksSurviveSigkill) {
  if (rnode::testing::kUnderThreadSanitizer) {
    GTEST_SKIP() << "RocksDB is not TSAN-instrumented, and TSAN refuses fork";
  }
  const uint64_t seed = rnode::testing::TestSeed(
      "DagStoreCrashTest.AcknowledgedBlocksSurviveSigkill", 16);
  std::mt19937_64 rng(seed);
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("dag_crash_" + std::to_string(::getpid())))
                              .string();
  std::filesystem::remove_all(dir);
  // Blocks made before forking: the child only writes.
  std::vector<block::Block> chain{MakeBlock(1, 0, 0, {})};
  for (int i = 1; i < 60; ++i) {
    chain.push_back(MakeBlock(static_cast<uint8_t>(1 + i % 3), i, i,
                              {chain.back().hash}, {}, {i}));
  }
  std::set<Hash32> acknowledged;
  size_t start = 0;
  int kills = 0;
  for (int round = 0; round < 5 && start < chain.size(); ++round) {
    // The child inserts chain[start + i] at step i; after kill_after
    // acknowledged inserts it is killed while it makes the next one.
    std::unique_ptr<rspace::RocksDbStore> child_store;
    std::unique_ptr<DagStore> child_dag;
    testing::LockStepChild child(
        [&] {
          auto store = rspace::RocksDbStore::Open(dir, DagColumnNames());
          if (!store.ok()) return false;
          child_store = *std::move(store);
          auto dag = DagStore::Open(child_store.get(), DagColumnsFrom(0));
          if (!dag.ok()) return false;
          child_dag = *std::move(dag);
          return true;
        },
        [&](size_t i) {
          return start + i < chain.size() &&
                 child_dag->Insert(chain[start + i]).ok();
        });
    ASSERT_TRUE(child.started());
    const size_t remaining = chain.size() - start;
    const size_t kill_after = rng() % std::max<size_t>(1, remaining - 1);
    for (size_t acks = 0; acks < kill_after; ++acks) {
      ASSERT_TRUE(child.Step());
      acknowledged.insert(chain[start + acks].hash);
    }
    if (child.KillDuringNextStep()) ++kills;
    auto store = rspace::RocksDbStore::Open(dir, DagColumnNames());
    ASSERT_TRUE(store.ok()) << store.status();
    auto dag = DagStore::Open(store->get(), DagColumnsFrom(0));
    ASSERT_TRUE(dag.ok()) << "round " << round << ": " << dag.status();
    for (const Hash32& a : acknowledged) {
      EXPECT_TRUE((*dag)->Contains(a)) << "round " << round;
      auto b = (*dag)->GetBlock(a);
      ASSERT_TRUE(b.ok() && b->has_value());
    }
    // The chain is linear and inserted in order: the stored count is the
    // next block to insert (the one in flight at the kill may be there).
    const size_t stored = (*dag)->size();
    EXPECT_GE(stored, start + kill_after) << "round " << round;
    EXPECT_LE(stored, start + kill_after + 1) << "round " << round;
    start = stored;
  }
  EXPECT_EQ(kills, 5);
  std::filesystem::remove_all(dir);
}

// A child process adds deploys to a RocksDB-backed pool in lock step with
// the parent, which SIGKILLs it while it adds one more: every deploy whose
// Add returned is in the pool after reopening.
TEST(DeployPoolCrashTest, AcknowledgedDeploysSurviveSigkill) {
  if (rnode::testing::kUnderThreadSanitizer) {
    GTEST_SKIP() << "RocksDB is not TSAN-instrumented, and TSAN refuses fork";
  }
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("pool_crash_" + std::to_string(::getpid())))
                              .string();
  std::filesystem::remove_all(dir);
  std::vector<SignedDeploy> deploys;
  for (int i = 0; i < 40; ++i) deploys.push_back(PoolDeploy(i));
  size_t start = 0;
  size_t acknowledged = 0;
  for (int round = 0; round < 4; ++round) {
    // The child adds deploys[start + i] at step i.
    std::unique_ptr<rspace::RocksDbStore> child_store;
    std::unique_ptr<DeployPool> child_pool;
    testing::LockStepChild child(
        [&] {
          auto store = rspace::RocksDbStore::Open(dir, {"deploy-pool"});
          if (!store.ok()) return false;
          child_store = *std::move(store);
          auto pool = DeployPool::Open(child_store.get(), 0);
          if (!pool.ok()) return false;
          child_pool = *std::move(pool);
          return true;
        },
        [&](size_t i) {
          return start + i < deploys.size() &&
                 child_pool->Add(deploys[start + i], 0, kNow).ok();
        });
    ASSERT_TRUE(child.started());
    const size_t kill_after = 3 + static_cast<size_t>(round) * 2;
    for (size_t k = 0; k < kill_after; ++k) ASSERT_TRUE(child.Step());
    EXPECT_TRUE(child.KillDuringNextStep());
    acknowledged = start + kill_after;
    auto store = rspace::RocksDbStore::Open(dir, {"deploy-pool"});
    ASSERT_TRUE(store.ok()) << store.status();
    auto pool = DeployPool::Open(store->get(), 0);
    ASSERT_TRUE(pool.ok()) << pool.status();
    for (size_t i = 0; i < acknowledged; ++i) {
      EXPECT_TRUE((*pool)->Contains(deploys[i].sig()))
          << "round " << round << " deploy " << i;
    }
    EXPECT_LE((*pool)->size(), acknowledged + 1);
    start = (*pool)->size();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rnode::casper

// Joining the shard again (node/core/rejoin.h): the marker, forgetting the
// DAG's records and nothing else, a forget cut by a failed write finished
// by the next, and the beyond_history timer (HeldFor, catch_up.h).
#include "node/core/rejoin.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "casper/dag/dag_store.h"
#include "gtest/gtest.h"
#include "node/core/catch_up.h"
#include "rspace/storage/fault_store.h"
#include "rspace/storage/kv_store.h"
#include "util/file_io.h"

namespace rnode::node {
namespace {

using namespace std::chrono_literals;

// Columns as a node lays them out: three of the history, the DAG's four,
// the pool and the left deploys.
constexpr size_t kColumns = 9;
const casper::dag::DagColumns kDag = casper::dag::DagColumnsFrom(3);

class RejoinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("rnode_rejoin_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // More records in one DAG column than one write deletes.
    rspace::WriteBatch batch;
    for (size_t i = 0; i < kForgetBatchKeys + 10; ++i) {
      batch.Put(kDag.meta, Key(i), Bytes{1});
    }
    for (const rspace::ColumnId c :
         {kDag.blocks, kDag.deploys, kDag.state, rspace::ColumnId{0},
          rspace::ColumnId{1}, rspace::ColumnId{2}, rspace::ColumnId{7},
          rspace::ColumnId{8}}) {
      batch.Put(c, Key(0), Bytes{2});
      batch.Put(c, Key(1), Bytes{3});
    }
    ASSERT_TRUE(store_.Write(batch).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static Bytes Key(size_t i) {
    return Bytes{static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
  }
  size_t Count(rspace::ColumnId c) const { return store_.KeyCount(c); }

  std::string dir_;
  rspace::InMemoryStore store_{kColumns};
};

TEST_F(RejoinTest, WithoutTheMarkerNothingIsTouched) {
  absl::StatusOr<std::optional<uint64_t>> forgot =
      ForgetChainIfMarked(&store_, kDag, dir_);
  ASSERT_TRUE(forgot.ok()) << forgot.status();
  EXPECT_FALSE(forgot->has_value());
  EXPECT_EQ(Count(kDag.meta), kForgetBatchKeys + 10);
  EXPECT_EQ(Count(kDag.blocks), 2u);
}

TEST_F(RejoinTest, TheMarkerForgetsTheDagAndKeepsTheRest) {
  ASSERT_TRUE(MarkForRejoin(dir_, "beyond_history for 30 s").ok());
  EXPECT_TRUE(MarkedForRejoin(dir_));
  EXPECT_EQ(*ReadSmallFile(dir_ + kRejoinMarkerFile, 1024),
            "beyond_history for 30 s\n");
  absl::StatusOr<std::optional<uint64_t>> forgot =
      ForgetChainIfMarked(&store_, kDag, dir_);
  ASSERT_TRUE(forgot.ok()) << forgot.status();
  ASSERT_TRUE(forgot->has_value());
  EXPECT_EQ(**forgot, kForgetBatchKeys + 10 + 3 * 2);
  for (const rspace::ColumnId c :
       {kDag.blocks, kDag.meta, kDag.deploys, kDag.state}) {
    EXPECT_EQ(Count(c), 0u) << c;
  }
  // The history's tries, the deploy pool, the left deploys.
  for (const rspace::ColumnId c :
       {rspace::ColumnId{0}, rspace::ColumnId{1}, rspace::ColumnId{2},
        rspace::ColumnId{7}, rspace::ColumnId{8}}) {
    EXPECT_EQ(Count(c), 2u) << c;
  }
  EXPECT_FALSE(MarkedForRejoin(dir_));
  // A DAG opened on what is left is empty: the node makes its genesis.
  absl::StatusOr<std::unique_ptr<casper::dag::DagStore>> dag =
      casper::dag::DagStore::Open(&store_, kDag);
  ASSERT_TRUE(dag.ok()) << dag.status();
  EXPECT_EQ((*dag)->size(), 0u);
  // Once forgotten, a later open touches nothing.
  forgot = ForgetChainIfMarked(&store_, kDag, dir_);
  ASSERT_TRUE(forgot.ok());
  EXPECT_FALSE(forgot->has_value());
  EXPECT_EQ(Count(rspace::ColumnId{7}), 2u);
}

// A write that fails midway keeps the marker: the next open finishes.
TEST_F(RejoinTest, AForgetCutShortIsFinishedByTheNextOpen) {
  ASSERT_TRUE(MarkForRejoin(dir_, "test").ok());
  rspace::FaultInjectingStore faulty(&store_);
  faulty.FailWritesAfter(1);
  absl::StatusOr<std::optional<uint64_t>> forgot =
      ForgetChainIfMarked(&faulty, kDag, dir_);
  EXPECT_FALSE(forgot.ok());
  EXPECT_TRUE(MarkedForRejoin(dir_));
  EXPECT_GT(Count(kDag.meta) + Count(kDag.state), 0u);
  faulty.Heal();
  forgot = ForgetChainIfMarked(&faulty, kDag, dir_);
  ASSERT_TRUE(forgot.ok()) << forgot.status();
  ASSERT_TRUE(forgot->has_value());
  EXPECT_EQ(Count(kDag.meta), 0u);
  EXPECT_EQ(Count(kDag.state), 0u);
  EXPECT_FALSE(MarkedForRejoin(dir_));
}

TEST(HeldForTest, FiresOnceAfterTheConditionHeldWithoutABreak) {
  HeldFor held(30s);
  const HeldFor::Clock::time_point t0{};
  EXPECT_FALSE(held.Update(true, t0));
  EXPECT_FALSE(held.Update(true, t0 + 29s));
  // A break starts the count again.
  EXPECT_FALSE(held.Update(false, t0 + 30s));
  EXPECT_FALSE(held.Update(true, t0 + 31s));
  EXPECT_FALSE(held.Update(true, t0 + 60s));
  EXPECT_TRUE(held.Update(true, t0 + 61s));
  // Once only.
  EXPECT_FALSE(held.Update(true, t0 + 62s));
  EXPECT_FALSE(held.Update(false, t0 + 63s));
  EXPECT_FALSE(held.Update(true, t0 + 64s));
  EXPECT_FALSE(held.Update(true, t0 + 200s));
}

}  // namespace
}  // namespace rnode::node

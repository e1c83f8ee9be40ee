// A deploy's status read from the chain alone (ChainQueries::FindDeploy,
// docs/node.md "A deploy's status"): a node whose pool never held the
// deploy and that has no record of it leaving answers from the blocks it
// stores, as every other node holding them does. DAGs built by hand.
#include <memory>
#include <optional>
#include <vector>

#include "casper/pool/deploy_pool.h"
#include "casper/pool/left_deploys.h"
#include "gtest/gtest.h"
#include "node/core/chain_queries.h"
#include "rspace/storage/kv_store.h"
#include "tests/casper/dag_test_blocks.h"

namespace rnode::node {
namespace {

using casper::dag::blocks_for_tests::Deploy;
using casper::dag::blocks_for_tests::MakeBlock;

// The deploy followed: valid in blocks 1 to 50 (valid after 0, the
// lifespan of 50 blocks).
const Bytes kSig = Deploy(7).sig;

class DeployStatusTest : public ::testing::Test {
 protected:
  DeployStatusTest() : store_(6) {
    dag_ =
        *casper::dag::DagStore::Open(&store_, casper::dag::DagColumnsFrom(0));
    pool_ = *casper::pool::DeployPool::Open(&store_, 4);
    left_ = *casper::pool::LeftDeploys::Open(&store_, 5);
    QueryDeps deps;
    deps.dag = dag_.get();
    deps.pool = pool_.get();
    deps.left = left_.get();
    queries_ = std::make_unique<ChainQueries>(deps);
    genesis_ = Put(MakeBlock(1, 0, 0, {}));
  }

  Hash32 Add(uint8_t seed, int32_t seq, int64_t number,
             std::vector<Hash32> parents, std::vector<int> deploys = {},
             std::optional<Hash32> base = std::nullopt,
             std::vector<Bytes> rejected = {}) {
    casper::block::Block b = MakeBlock(seed, seq, number, std::move(parents),
                                       {}, std::move(deploys));
    b.body.merge_base = base;
    for (Bytes& sig : rejected) b.body.rejected.push_back({sig, false, {}});
    EXPECT_TRUE(
        casper::block::SignBlock(b, casper::testing::MakeTestKey(seed).sk)
            .ok());
    return Put(b);
  }
  Hash32 Put(const casper::block::Block& b) {
    auto inserted = dag_->Insert(b);
    EXPECT_TRUE(inserted.ok() && *inserted) << inserted.status();
    return b.hash;
  }
  // A chain of single-parent blocks on `from` up to number `to`.
  Hash32 ChainTo(Hash32 from, int64_t from_number, int64_t to) {
    for (int64_t n = from_number + 1; n <= to; ++n) {
      from = Add(1, static_cast<int32_t>(100 + n), n, {from});
    }
    return from;
  }
  DeployStatus Status() {
    absl::StatusOr<DeployStatus> s = queries_->FindDeploy(kSig);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : DeployStatus{};
  }

  rspace::InMemoryStore store_;
  std::unique_ptr<casper::dag::DagStore> dag_;
  std::unique_ptr<casper::pool::DeployPool> pool_;
  std::unique_ptr<casper::pool::LeftDeploys> left_;
  std::unique_ptr<ChainQueries> queries_;
  Hash32 genesis_{};
};

// A's copy of the deploy races C; merge M rejects it, and no block holds
// the deploy again. While its window is open it is PENDING (it may go in
// a block again); once the last finalized block is past the window it is
// EXPIRED, with the rejection counted, on this node, whose pool never held
// it.
TEST_F(DeployStatusTest, ARejectedCopyWhoseWindowClosedReadsExpired) {
  const Hash32 a = Add(1, 1, 1, {genesis_}, {7});
  const Hash32 c = Add(2, 1, 1, {genesis_});
  const Hash32 m = Add(3, 1, 2, {c, a}, {}, genesis_, {kSig});
  const Hash32 open = ChainTo(m, 2, 40);
  ASSERT_TRUE(dag_->SetLastFinalized(open).ok());
  DeployStatus s = Status();
  EXPECT_EQ(s.state, DeployStatus::State::kPending);
  EXPECT_EQ(s.rejection_count, 1u);
  EXPECT_EQ(s.block, std::optional<Hash32>(a));
  const Hash32 closed = ChainTo(open, 40, 60);
  ASSERT_TRUE(dag_->SetLastFinalized(closed).ok());
  s = Status();
  EXPECT_EQ(s.state, DeployStatus::State::kExpired);
  EXPECT_EQ(s.rejection_count, 1u);
  // Nothing local decided it: no pool entry, no record of it leaving.
  EXPECT_FALSE(pool_->Get(kSig).has_value());
  auto left = left_->Get(kSig);
  ASSERT_TRUE(left.ok());
  EXPECT_FALSE(left->has_value());
}

// The same copy kept by the merge is FINALIZED once a finalized block's
// state holds it, whatever the window says after.
TEST_F(DeployStatusTest, AKeptCopyReadsFinalizedPastItsWindow) {
  const Hash32 a = Add(1, 1, 1, {genesis_}, {7});
  const Hash32 c = Add(2, 1, 1, {genesis_});
  const Hash32 m = Add(3, 1, 2, {c, a}, {}, genesis_);
  ASSERT_TRUE(dag_->SetLastFinalized(ChainTo(m, 2, 60)).ok());
  const DeployStatus s = Status();
  EXPECT_EQ(s.state, DeployStatus::State::kFinalized);
  EXPECT_EQ(s.rejection_count, 0u);
  EXPECT_EQ(s.block, std::optional<Hash32>(a));
}

// A deploy no stored block holds and this node never received: it cannot
// know its window, and says it does not know the deploy.
TEST_F(DeployStatusTest, ADeployNeverSeenIsNotFound) {
  ASSERT_TRUE(dag_->SetLastFinalized(ChainTo(genesis_, 0, 3)).ok());
  EXPECT_EQ(queries_->FindDeploy(kSig).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace rnode::node

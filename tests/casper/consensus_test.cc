// Tests for fork choice (LMD-GHOST) and finality (clique oracle, finalizer)
// on small DAGs built block by block.
#include <map>
#include <vector>

#include "casper/block/block.h"
#include "casper/consensus/finality.h"
#include "casper/consensus/fork_choice.h"
#include "casper/dag/dag_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rspace/storage/kv_store.h"
#include "tests/casper/test_key.h"

namespace rnode::casper::consensus {
namespace {

using ::testing::ElementsAre;
using testing::MakeTestKey;

crypto::Secp256k1PublicKey Key(uint8_t v) { return MakeTestKey(v).pk; }

// A shard of validators 1..n with the given stakes, sharing one DAG (every
// validator sees every block at once unless a test says otherwise).
class Shard {
 public:
  explicit Shard(std::vector<int64_t> stakes) : store_(4) {
    for (size_t i = 0; i < stakes.size(); ++i) {
      bonds_.push_back({Key(static_cast<uint8_t>(i + 1)), stakes[i]});
    }
    dag_ = *dag::DagStore::Open(&store_, dag::DagColumnsFrom(0));
    block::Block g;
    g.body.state.bonds = bonds_;
    g.sender = Key(1);
    g.shard_id = "root";
    g.hash = block::ComputeBlockHash(g);
    genesis_ = g.hash;
    EXPECT_TRUE(*dag_->Insert(g));
  }

  // Validator `v` makes a block on `parents` (fork choice when empty),
  // justifying `view` (the DAG's latest messages when empty).
  Hash32 Propose(uint8_t v, std::vector<Hash32> parents = {},
                 LatestMessages view = {}) {
    if (view.empty()) view = dag_->LatestMessages();
    if (parents.empty()) {
      parents = ChooseParents(*dag_, view, WeightsOf(bonds_))->parents;
    }
    block::Block b;
    b.header.parents = parents;
    int64_t number = 0;
    for (const Hash32& p : parents) {
      number = std::max(number, dag_->Meta(p).value()->block_number + 1);
    }
    b.body.state.block_number = number;
    b.body.state.bonds = bonds_;
    for (const auto& [validator, hash] : view) {
      b.justifications.push_back({validator, hash});
    }
    auto own = view.find(Key(v));
    b.seq_num =
        own == view.end() ? 1 : dag_->Meta(own->second).value()->seq_num + 1;
    b.header.timestamp = ++clock_;
    b.shard_id = "root";
    EXPECT_TRUE(block::SignBlock(b, MakeTestKey(v).sk).ok());
    auto r = dag_->Insert(b);
    EXPECT_TRUE(r.ok() && *r) << r.status();
    return b.hash;
  }

  dag::DagStore& dag() { return *dag_; }
  const Hash32& genesis() const { return genesis_; }
  Weights weights() const { return WeightsOf(bonds_); }

 private:
  rspace::InMemoryStore store_;
  std::unique_ptr<dag::DagStore> dag_;
  std::vector<block::Bond> bonds_;
  Hash32 genesis_{};
  int64_t clock_ = 0;
};

TEST(ForkChoiceTest, GenesisAloneIsTheParent) {
  Shard s({10, 10, 10});
  auto fc = ChooseParents(s.dag(), {}, s.weights());
  ASSERT_TRUE(fc.ok()) << fc.status();
  EXPECT_THAT(fc->parents, ElementsAre(s.genesis()));
}

TEST(ForkChoiceTest, HeaviestBranchIsTheMainParentAndOthersFollow) {
  Shard s({10, 20, 30});
  const Hash32 a = s.Propose(1, {s.genesis()}, {{Key(1), s.genesis()}});
  const Hash32 b = s.Propose(2, {s.genesis()}, {{Key(1), s.genesis()}});
  const Hash32 c = s.Propose(3, {b}, {{Key(2), b}});
  const LatestMessages latest{{Key(1), a}, {Key(2), b}, {Key(3), c}};
  auto fc = ChooseParents(s.dag(), latest, s.weights());
  ASSERT_TRUE(fc.ok()) << fc.status();
  EXPECT_EQ(fc->base, s.genesis());
  // b's branch scores 20 + 30, a's 10: c (on b) is the main parent.
  EXPECT_THAT(fc->parents, ElementsAre(c, a));

  ForkChoiceOptions one;
  one.max_parents = 1;
  EXPECT_THAT(ChooseParents(s.dag(), latest, s.weights(), one)->parents,
              ElementsAre(c));
  ForkChoiceOptions shallow;
  shallow.max_parent_depth = 0;  // a is one below c: dropped.
  EXPECT_THAT(ChooseParents(s.dag(), latest, s.weights(), shallow)->parents,
              ElementsAre(c));

  // Weight moves the choice: with validator 1 heavy, a leads.
  Weights heavy_1 = s.weights();
  heavy_1[Key(1)] = 100;
  EXPECT_THAT(ChooseParents(s.dag(), latest, heavy_1)->parents,
              ElementsAre(a, c));
  // An unweighted validator's message counts for nothing.
  Weights without_3 = s.weights();
  without_3.erase(Key(3));
  EXPECT_THAT(ChooseParents(s.dag(), latest, without_3)->parents,
              ElementsAre(b, a));
}

TEST(ForkChoiceTest, EqualScoresAreOrderedByHash) {
  Shard s({10, 10});
  const Hash32 a = s.Propose(1, {s.genesis()}, {{Key(1), s.genesis()}});
  const Hash32 b = s.Propose(2, {s.genesis()}, {{Key(1), s.genesis()}});
  const LatestMessages latest{{Key(1), a}, {Key(2), b}};
  auto fc = ChooseParents(s.dag(), latest, s.weights());
  ASSERT_TRUE(fc.ok());
  EXPECT_EQ(fc->parents, (std::vector<Hash32>{std::min(a, b), std::max(a, b)}));
}

TEST(ForkChoiceTest, UnknownLatestMessageIsRefused) {
  Shard s({10});
  Hash32 ghost{};
  ghost[0] = 7;
  auto fc = ChooseParents(s.dag(), {{Key(1), ghost}}, s.weights());
  EXPECT_EQ(fc.status().code(), absl::StatusCode::kFailedPrecondition);
}

// A validator silent since block 1, under a last finalized block far above
// and blocks deleted below a floor (retention keeps its message, not the
// chain under it): its message votes for nothing, and the choice does not
// walk down to it (the shard's proposers once failed with DataLoss here,
// every proposal, for good).
TEST(ForkChoiceTest, AMessageBelowTheLastFinalizedBlockDoesNotVote) {
  Shard s({10, 10, 10});
  s.Propose(3, {s.genesis()}, {{Key(3), s.genesis()}});
  std::vector<Hash32> chain{s.genesis()};
  for (int i = 0; i < 200; ++i) {
    chain.push_back(s.Propose(static_cast<uint8_t>(1 + i % 2), {chain.back()}));
  }
  ASSERT_TRUE(s.dag().SetLastFinalized(chain[190]).ok());
  absl::StatusOr<dag::DagStore::PruneStats> pruned = s.dag().PruneBelow(40);
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  ASSERT_GT(pruned->blocks_deleted, 0u);
  auto fc = ChooseParents(s.dag(), s.dag().LatestMessages(), s.weights());
  ASSERT_TRUE(fc.ok()) << fc.status();
  EXPECT_THAT(fc->parents, ElementsAre(chain.back()));
  EXPECT_EQ(fc->base, chain[199]);
  // With every message below the last finalized block, that block.
  const LatestMessages old{{Key(3), s.dag().LatestMessages().at(Key(3))}};
  fc = ChooseParents(s.dag(), old, s.weights());
  ASSERT_TRUE(fc.ok()) << fc.status();
  EXPECT_THAT(fc->parents, ElementsAre(chain[190]));
}

TEST(CliqueTest, MaxWeightCliqueFindsTheHeaviestSet) {
  // 0-1-2 a triangle of weight 3; 3 (weight 5) joined only to 0.
  std::vector<int64_t> w{1, 1, 1, 5};
  std::vector<std::vector<bool>> j(4, std::vector<bool>(4, false));
  auto join = [&](int a, int b) { j[a][b] = j[b][a] = true; };
  join(0, 1);
  join(1, 2);
  join(0, 2);
  join(0, 3);
  EXPECT_EQ(MaxWeightClique(w, j), 6);  // {0, 3}
  w[3] = 1;
  EXPECT_EQ(MaxWeightClique(w, j), 3);  // {0, 1, 2}
  EXPECT_EQ(MaxWeightClique({}, {}), 0);
}

TEST(FaultToleranceTest, ThresholdIsExact) {
  FaultTolerance ft{20, 30};  // (40 - 30) / 30 = 1/3
  EXPECT_TRUE(ft.Exceeds(333'333));
  EXPECT_FALSE(ft.Exceeds(333'334));
  EXPECT_NEAR(ft.value(), 1.0 / 3, 1e-12);
  EXPECT_FALSE((FaultTolerance{0, 0}).Exceeds(0));
  EXPECT_EQ((FaultTolerance{0, 30}).value(), -1.0);
}

// Round-robin proposing on one shared DAG: all three agree, so blocks reach
// fault tolerance 1 and finalize at both thresholds.
TEST(FinalityTest, ThreeAgreeingValidatorsFinalizeAtBothThresholds) {
  Shard s({10, 10, 10});
  std::vector<Hash32> made;
  for (int round = 0; round < 4; ++round) {
    for (uint8_t v = 1; v <= 3; ++v) made.push_back(s.Propose(v));
  }
  const LatestMessages latest = s.dag().LatestMessages();
  auto ft = CliqueOracle(s.dag(), made[0], latest);
  ASSERT_TRUE(ft.ok()) << ft.status();
  EXPECT_EQ(ft->clique_weight, 30);
  EXPECT_DOUBLE_EQ(ft->value(), 1.0);
  // Blocks 1..12 form one chain. Block 11 is on the main chains of 2 and
  // 3, who have seen each other's latest blocks: 1/3 > 0.1. Block 10 is on
  // all three: 1 > 0.67.
  for (const auto& [ppm, number] :
       std::vector<std::pair<int64_t, int64_t>>{{100'000, 11}, {670'000, 10}}) {
    FinalizerOptions options;
    options.threshold_ppm = ppm;
    auto lfb = FindNewLastFinalized(s.dag(), latest, options);
    ASSERT_TRUE(lfb.ok()) << lfb.status();
    ASSERT_TRUE(lfb->has_value()) << ppm;
    EXPECT_EQ(s.dag().Meta(**lfb).value()->block_number, number) << ppm;
  }
}

// Validator 3 is bonded but silent: two of three agree, fault tolerance
// 1/3: final at 0.1, not at 0.67.
TEST(FinalityTest, TwoOfThreeFinalizeAtPointOneButNotAtPointSixSeven) {
  Shard s({10, 10, 10});
  for (int round = 0; round < 4; ++round) {
    s.Propose(1);
    s.Propose(2);
  }
  const LatestMessages latest = s.dag().LatestMessages();
  FinalizerOptions low;
  low.threshold_ppm = 100'000;
  auto lfb = FindNewLastFinalized(s.dag(), latest, low);
  ASSERT_TRUE(lfb.ok() && lfb->has_value());
  auto ft = CliqueOracle(s.dag(), **lfb, latest);
  EXPECT_EQ(ft->clique_weight, 20);
  FinalizerOptions high;
  high.threshold_ppm = 670'000;
  auto none = FindNewLastFinalized(s.dag(), latest, high);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

// Two validators build on different children of genesis: neither side has
// a majority, nothing above genesis is final.
TEST(FinalityTest, ASplitShardFinalizesNothingAboveTheFork) {
  Shard s({10, 10, 10, 10});
  const Hash32 a = s.Propose(1, {s.genesis()}, {{Key(1), s.genesis()}});
  const Hash32 b = s.Propose(2, {s.genesis()}, {{Key(1), s.genesis()}});
  Hash32 la = a, lb = b;
  for (int i = 0; i < 3; ++i) {
    la = s.Propose(3, {la}, {{Key(1), la}});
    lb = s.Propose(4, {lb}, {{Key(2), lb}});
  }
  const LatestMessages latest{
      {Key(1), a}, {Key(2), b}, {Key(3), la}, {Key(4), lb}};
  auto ft = CliqueOracle(s.dag(), a, latest);
  ASSERT_TRUE(ft.ok());
  EXPECT_EQ(ft->clique_weight, 0);  // Agreeing weight 20 of 40: not > half.
  EXPECT_EQ(ft->value(), -1.0);
  auto lfb = FindNewLastFinalized(s.dag(), latest);
  ASSERT_TRUE(lfb.ok());
  ASSERT_TRUE(lfb->has_value());
  EXPECT_EQ(**lfb, s.genesis());
}

// Validator 2 first built away from the target and then on it. Validator 3
// has not seen either block of 2, so 3 might still see 2 disagree: the two
// are not joined until 3 justifies 2's agreeing block.
TEST(FinalityTest, UnseenDisagreementBreaksTheClique) {
  Shard s({10, 10, 10});
  const Hash32 g = s.genesis();
  const Hash32 t = s.Propose(1, {g}, {{Key(1), g}});
  const Hash32 away = s.Propose(2, {g}, {{Key(1), g}});
  const Hash32 back = s.Propose(2, {t}, {{Key(1), t}, {Key(2), away}});
  const Hash32 by_3 = s.Propose(3, {t}, {{Key(1), t}});
  const Hash32 by_1 =
      s.Propose(1, {t}, {{Key(1), t}, {Key(2), back}, {Key(3), by_3}});
  auto ft = CliqueOracle(s.dag(), t,
                         {{Key(1), by_1}, {Key(2), back}, {Key(3), by_3}});
  ASSERT_TRUE(ft.ok()) << ft.status();
  EXPECT_EQ(ft->clique_weight, 20);  // {1, 2} or {1, 3}: (40 - 30) / 30.
  EXPECT_TRUE(ft->Exceeds(100'000));
  EXPECT_FALSE(ft->Exceeds(670'000));

  const Hash32 by_3_again =
      s.Propose(3, {t}, {{Key(1), by_1}, {Key(2), back}, {Key(3), by_3}});
  ft = CliqueOracle(s.dag(), t,
                    {{Key(1), by_1}, {Key(2), back}, {Key(3), by_3_again}});
  ASSERT_TRUE(ft.ok());
  EXPECT_EQ(ft->clique_weight, 30);
}

}  // namespace
}  // namespace rnode::casper::consensus

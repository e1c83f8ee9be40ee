// Unit tests of the merger's rules on small hand-built scopes.
#include <algorithm>
#include <functional>
#include <string>

#include "casper/merge/merger.h"
#include "gtest/gtest.h"
#include "tests/casper/merge/merge_test_util.h"
#include "tests/casper/merge/scope_builders.h"

namespace rnode::casper::merge {
namespace {

using rspace::ChannelState;
using rspace::Datum;
using rspace::WaitingContinuation;
using testing::C;
using testing::Chan;
using testing::Change;
using testing::Continuation;
using testing::Deploy;
using testing::HashOf;
using testing::MakeDatum;
using testing::MakeTerm;
using testing::StoreContinuation;
using testing::StoreDatum;
using testing::TakeDatum;

void Finish(DeployInput& d) {
  std::sort(d.changes.channels.begin(), d.changes.channels.end(),
            [](const auto& a, const auto& b) { return a.channel < b.channel; });
}

// A produce (triggered here) that fires the waiting continuation `k` on `ch`.
void FireContinuation(DeployInput& d, const Hash32& ch,
                      const WaitingContinuation& k, uint64_t salt) {
  Hash32 p = HashOf(310, salt);
  d.events.push_back(rspace::ProduceEvent{p, ch, HashOf(9), false, 0});
  d.events.push_back(rspace::CommEvent{
      HashOf(311, salt), k.source, k.persist, false, {{ch, p, false}}});
  if (!k.persist) Change(d, ch).removed_continuations.push_back(k);
}

const Hash32 kVault = HashOf(500);

void Transfer(DeployInput& d, const Datum& balance, int64_t delta,
              uint64_t salt) {
  d.number_diffs[kVault] += delta;
  TakeDatum(d, kVault, balance, salt);
  d.events.push_back(
      rspace::ProduceEvent{HashOf(320, salt), kVault, HashOf(9), false, 0});
  d.changes.channels
      .clear();  // Raw changes of a listed number channel are ignored.
}

BlockInput Block(uint64_t tag, std::vector<DeployInput> deploys) {
  for (auto& d : deploys) Finish(d);
  return BlockInput{HashOf(600, tag), tag, std::move(deploys)};
}

class MergerTest : public ::testing::Test {
 protected:
  void CommitBase() {
    auto root = testing::CommitStates(*th_.history, rspace::kEmptyRoot, base_);
    ASSERT_TRUE(root.ok()) << root.status();
    base_root_ = *root;
  }

  absl::StatusOr<MergeResult> Run(std::vector<BlockInput> blocks,
                                  bool with_codec = true,
                                  std::span<const Bytes> settled = {},
                                  std::span<const DeployCopy> preferred = {}) {
    std::vector<std::shared_ptr<const BlockIndex>> idx;
    for (auto& b : blocks) {
      auto x = BuildBlockIndex(std::move(b));
      if (!x.ok()) return x.status();
      idx.push_back(*x);
    }
    MergeOptions options;
    if (with_codec) options.number_codec = &codec_;
    options.settled = settled;
    options.preferred = preferred;
    return Merge(*th_.history, base_root_, idx, options);
  }

  ChannelState State(const Hash32& root, const Hash32& ch) {
    auto s = testing::ReadState(*th_.history, root, ch);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : ChannelState{};
  }

  int64_t Balance(const Hash32& root) {
    auto v = codec_.Read(State(root, kVault));
    EXPECT_TRUE(v.ok());
    return v.ok() ? *v : -1;
  }

  Datum SetVault(int64_t value) {
    base_[kVault] = *codec_.Write(kVault, value);
    return base_[kVault].data[0];
  }

  testing::TestHistory th_;
  testing::TestNumberCodec codec_;
  std::map<Hash32, ChannelState> base_;
  Hash32 base_root_{};
};

TEST_F(MergerTest, ConcurrentTransfersIntoOneVaultMergeToExactSum) {
  Datum balance = SetVault(100);
  CommitBase();
  std::vector<BlockInput> blocks;
  for (int i = 0; i < 3; ++i) {
    DeployInput d = Deploy("t" + std::to_string(i), 10);
    Transfer(d, balance, 10 * (i + 1), i);
    blocks.push_back(Block(i, {d}));
  }
  auto r = Run(blocks);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->rejected.empty());
  EXPECT_TRUE(r->conflicts.empty());
  EXPECT_EQ(Balance(r->root), 160);
}

// A deploy whose effect the base already holds (an earlier copy below it,
// which a merge on the way had rejected then): its copy in scope is
// rejected with its branch, and the other branches are kept.
TEST_F(MergerTest, AScopeCopyOfADeployTheBaseHoldsIsRejected) {
  Datum balance = SetVault(100);
  CommitBase();
  DeployInput again = Deploy("paid-twice", 10);
  Transfer(again, balance, 10, 1);
  DeployInput other = Deploy("other", 10);
  Transfer(other, balance, 5, 2);
  const std::vector<Bytes> settled{again.id};
  auto r = Run({Block(1, {again}), Block(2, {other})}, true, settled);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rejected.size(), 1u);
  EXPECT_EQ(r->rejected[0].id, again.id);
  EXPECT_EQ(r->rejected[0].reason, RejectReason::kSettledInBase);
  EXPECT_EQ(Balance(r->root), 105);
  // Without the base's record both are kept (the check is the option's).
  auto plain = Run({Block(1, {again}), Block(2, {other})});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(plain->rejected.empty());
  EXPECT_EQ(Balance(plain->root), 115);
}

TEST_F(MergerTest, TwoSpendsThatOverdrawLeaveExactlyOneRejected) {
  Datum balance = SetVault(100);
  CommitBase();
  DeployInput a = Deploy("spend-a", 10);
  Transfer(a, balance, -70, 1);
  DeployInput b = Deploy("spend-b", 3);
  Transfer(b, balance, -60, 2);
  auto r = Run({Block(1, {a}), Block(2, {b})});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rejected.size(), 1u);
  EXPECT_EQ(r->rejected[0].id, b.id);
  EXPECT_EQ(r->rejected[0].reason, RejectReason::kNumberChannel);
  EXPECT_EQ(Balance(r->root), 30);
}

TEST_F(MergerTest, EqualCostOverdrawKeepsTheBranchWithTheSmallerKey) {
  Datum balance = SetVault(100);
  CommitBase();
  DeployInput a = Deploy("spend-a", 5);
  Transfer(a, balance, -70, 1);
  DeployInput b = Deploy("spend-b", 5);
  Transfer(b, balance, -60, 2);
  auto r = Run({Block(1, {a}), Block(2, {b})});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rejected.size(), 1u);
  ASSERT_EQ(r->branches.size(), 2u);
  EXPECT_FALSE(r->branches[0].rejected);
  EXPECT_TRUE(r->branches[1].rejected);
  const bool a_first = HashOf(600, 1) < HashOf(600, 2);
  EXPECT_EQ(Balance(r->root), a_first ? 30 : 40);
}

TEST_F(MergerTest, MergeableExemptionNeedsBothBranches) {
  Datum balance = SetVault(100);
  CommitBase();
  DeployInput a = Deploy("listed", 10);
  Transfer(a, balance, 5, 1);
  DeployInput b = Deploy("unlisted", 3);
  TakeDatum(b, kVault, balance, 2);
  b.changes.channels.clear();
  auto r = Run({Block(1, {a}), Block(2, {b})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ExpandConflictPairs(*r).size(), 1u);
  ASSERT_EQ(r->rejected.size(), 1u);
  EXPECT_EQ(r->rejected[0].id, b.id);
  EXPECT_EQ(Balance(r->root), 105);
}

TEST_F(MergerTest, RaceOnABaseDatumRejectsTheCheaperBranch) {
  Datum x = MakeDatum(1, 1);
  base_[C(1)].data.push_back(x);
  CommitBase();
  DeployInput a = Deploy("a", 10);
  TakeDatum(a, C(1), x, 1);
  StoreDatum(a, C(2), MakeDatum(5, 50));
  DeployInput b = Deploy("b", 3);
  TakeDatum(b, C(1), x, 2);
  auto r = Run({Block(1, {a}), Block(2, {b})});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rejected.size(), 1u);
  EXPECT_EQ(r->rejected[0].id, b.id);
  EXPECT_EQ(r->rejected[0].reason, RejectReason::kConflict);
  EXPECT_TRUE(State(r->root, C(1)).data.empty());
  EXPECT_EQ(State(r->root, C(2)).data.size(), 1u);
}

TEST_F(MergerTest, PersistentDatumReadInTwoBranchesDoesNotConflict) {
  Datum x = MakeDatum(1, 1, /*persist=*/true);
  base_[C(1)].data.push_back(x);
  CommitBase();
  DeployInput a = Deploy("a", 10);
  TakeDatum(a, C(1), x, 1);
  DeployInput b = Deploy("b", 3);
  TakeDatum(b, C(1), x, 2);
  auto r = Run({Block(1, {a}), Block(2, {b})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->conflicts.empty());
  EXPECT_TRUE(r->rejected.empty());
  EXPECT_EQ(r->root, base_root_);
}

TEST_F(MergerTest, SurvivingProduceAndConsumeOnOneChannelConflict) {
  CommitBase();
  DeployInput a = Deploy("a", 10);
  StoreDatum(a, C(1), MakeDatum(1, 1));
  DeployInput b = Deploy("b", 3);
  StoreContinuation(b, Continuation({2, 1}, 7));
  auto r = Run({Block(1, {a}), Block(2, {b})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ExpandConflictPairs(*r).size(), 1u);
  ASSERT_EQ(r->rejected.size(), 1u);
  EXPECT_EQ(r->rejected[0].id, b.id);
}

TEST_F(MergerTest, ProduceOnABaseJoinChannelConflictsWithEveryBranch) {
  WaitingContinuation join = Continuation({1, 2}, 9);
  base_[join.group.front()].continuations.push_back(join);
  base_[C(1)].joins.push_back(join.group);
  base_[C(2)].joins.push_back(join.group);
  CommitBase();
  for (uint64_t join_cost : {5u, 10u}) {
    DeployInput a = Deploy("a", join_cost);
    StoreDatum(a, C(1), MakeDatum(1, 1));
    DeployInput b = Deploy("b", 3);
    StoreDatum(b, C(3), MakeDatum(2, 2));
    DeployInput c = Deploy("c", 4);
    StoreDatum(c, C(4), MakeDatum(3, 3));
    auto r = Run({Block(1, {a}), Block(2, {b}), Block(3, {c})});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->base_join_branches.size(), 1u);
    EXPECT_EQ(ExpandConflictPairs(*r).size(), 2u);
    if (join_cost == 5) {
      ASSERT_EQ(r->rejected.size(), 1u);
      EXPECT_EQ(r->rejected[0].id, a.id);
    } else {
      ASSERT_EQ(r->rejected.size(), 2u);
      EXPECT_EQ(r->rejected[0].id, b.id);
      EXPECT_EQ(r->rejected[1].id, c.id);
    }
  }
}

TEST_F(MergerTest, SameDeployInTwoBlocksIsAppliedOnceAndNotReportedRejected) {
  CommitBase();
  DeployInput a = Deploy("same", 10);
  StoreDatum(a, C(1), MakeDatum(1, 1));
  auto r = Run({Block(1, {a}), Block(2, {a})});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->branches.size(), 2u);
  EXPECT_EQ(r->branches[0].rejected + r->branches[1].rejected, 1);
  EXPECT_TRUE(r->rejected.empty());
  EXPECT_EQ(State(r->root, C(1)).data.size(), 1u);
}

TEST_F(MergerTest, ExactSearchBeatsPickingTheMostExpensiveFirst) {
  Datum x = MakeDatum(1, 1), y = MakeDatum(2, 2);
  base_[C(1)].data = {x};
  base_[C(2)].data = {y};
  CommitBase();
  DeployInput a = Deploy("a", 5);
  TakeDatum(a, C(1), x, 1);
  DeployInput b = Deploy("b", 6);
  TakeDatum(b, C(1), x, 2);
  TakeDatum(b, C(2), y, 3);
  DeployInput c = Deploy("c", 5);
  TakeDatum(c, C(2), y, 4);
  auto r = Run({Block(1, {a}), Block(2, {b}), Block(3, {c})});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rejected.size(), 1u);
  EXPECT_EQ(r->rejected[0].id, b.id);
  EXPECT_EQ(r->metrics.exact_components, 1u);
}

// A preferred branch (its deploy is in the main parent's state) is kept
// although rejecting it would cost least: the two cheaper-together
// branches it conflicts with are rejected instead.
TEST_F(MergerTest, APreferredBranchIsKeptOverAnyCostOfOthers) {
  Datum x = MakeDatum(1, 1), y = MakeDatum(2, 2);
  base_[C(1)].data = {x};
  base_[C(2)].data = {y};
  CommitBase();
  DeployInput a = Deploy("a", 5'000);
  TakeDatum(a, C(1), x, 1);
  DeployInput b = Deploy("b", 6);
  TakeDatum(b, C(1), x, 2);
  TakeDatum(b, C(2), y, 3);
  DeployInput c = Deploy("c", 5'000);
  TakeDatum(c, C(2), y, 4);
  auto blocks = [&] {
    return std::vector{Block(1, {a}), Block(2, {b}), Block(3, {c})};
  };
  auto plain = Run(blocks());
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_EQ(plain->rejected.size(), 1u);
  EXPECT_EQ(plain->rejected[0].id, b.id);
  const std::vector<DeployCopy> preferred{{b.id, HashOf(600, 2)}};
  auto r = Run(blocks(), true, {}, preferred);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rejected.size(), 2u);
  EXPECT_EQ(r->rejected[0].id, a.id);
  EXPECT_EQ(r->rejected[1].id, c.id);
  EXPECT_EQ(r->rejected[0].reason, RejectReason::kConflict);
  EXPECT_EQ(r->metrics.exact_components, 1u);
  // Two preferred branches in conflict: the fewest preferred go (b), then
  // the order is the usual one (c, not preferred, stays with a).
  const std::vector<DeployCopy> both{{a.id, HashOf(600, 1)},
                                     {b.id, HashOf(600, 2)}};
  auto two = Run(blocks(), true, {}, both);
  ASSERT_TRUE(two.ok()) << two.status();
  ASSERT_EQ(two->rejected.size(), 1u);
  EXPECT_EQ(two->rejected[0].id, b.id);
}

// Only the copy the main parent's state holds is preferred: another copy
// of the same deploy (in another parent's lineage) is not, so of the two
// (one conflict clique) the merge keeps the main lineage's, here the
// cheaper one.
TEST_F(MergerTest, OnlyThePreferredCopyOfADeployIsPreferred) {
  CommitBase();
  const Hash32 main_copy = HashOf(600, 1), other_copy = HashOf(600, 2);
  auto blocks = [&] {
    return std::vector{Block(1, {Deploy("d", 5)}), Block(2, {Deploy("d", 50)})};
  };
  auto rejected_block = [](const MergeResult& r) {
    std::vector<Hash32> out;
    for (const BranchInfo& b : r.branches) {
      if (b.rejected) out.push_back(b.chains.front().block);
    }
    return out;
  };
  auto plain = Run(blocks());
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(rejected_block(*plain), std::vector<Hash32>{main_copy});
  const std::vector<DeployCopy> preferred{{Deploy("d", 5).id, main_copy}};
  auto r = Run(blocks(), true, {}, preferred);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(rejected_block(*r), std::vector<Hash32>{other_copy});
  EXPECT_TRUE(r->rejected.empty());  // the deploy is kept, once
}

// A hot race above the exact bound: kMaxExactComponentBranches + 4 blocks,
// block i holding deploy "d<i>" of cost `cost(i)`, each taking the one
// datum `x` on C(1).
std::vector<BlockInput> HotRace(const Datum& x,
                                const std::function<uint64_t(int)>& cost) {
  std::vector<BlockInput> blocks;
  const int n = static_cast<int>(kMaxExactComponentBranches) + 4;
  for (int i = 0; i < n; ++i) {
    DeployInput d = Deploy("d" + std::to_string(i), cost(i));
    TakeDatum(d, C(1), x, i);
    blocks.push_back(Block(i, {d}));
  }
  return blocks;
}

// Above the exact bound the greedy fallback keeps the preferred branch
// first, the cheapest of the race.
TEST_F(MergerTest, HotRaceAboveTheExactBoundKeepsThePreferred) {
  Datum x = MakeDatum(1, 1);
  base_[C(1)].data = {x};
  CommitBase();
  const std::vector<BlockInput> blocks =
      HotRace(x, [](int i) { return 10 + static_cast<uint64_t>(i); });
  const int n = static_cast<int>(blocks.size());
  const std::vector<DeployCopy> preferred{
      {Deploy("d0", 10).id, HashOf(600, 0)}};
  auto r = Run(blocks, true, {}, preferred);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->metrics.greedy_components, 1u);
  ASSERT_EQ(r->rejected.size(), static_cast<size_t>(n - 1));
  for (const auto& b : r->branches) {
    EXPECT_EQ(b.rejected, b.cost != 10u) << b.cost;
  }
}

TEST_F(MergerTest, HotRaceAboveTheExactBoundKeepsTheMostExpensive) {
  Datum x = MakeDatum(1, 1);
  base_[C(1)].data = {x};
  CommitBase();
  const int n = static_cast<int>(kMaxExactComponentBranches) + 4;
  const std::vector<BlockInput> blocks = HotRace(
      x, [n](int i) { return 10 + static_cast<uint64_t>((i * 7) % n); });
  auto r = Run(blocks);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->metrics.greedy_components, 1u);
  EXPECT_EQ(r->conflicts.size(), 1u);  // One group, not n^2 pairs.
  ASSERT_EQ(r->rejected.size(), static_cast<size_t>(n - 1));
  for (const auto& b : r->branches) {
    if (!b.rejected) {
      EXPECT_EQ(b.cost, 10u + static_cast<uint64_t>(n - 1));
    }
  }
}

TEST_F(MergerTest, ThreadCountDoesNotChangeTheResult) {
  // Enough changed channels that the per-channel work is split into tasks.
  const int n = 1500;
  std::vector<Datum> inputs;
  for (int i = 0; i < n; ++i) {
    inputs.push_back(MakeDatum(i, 1000 + i));
    base_[C(1000 + i)].data = {inputs.back()};
  }
  CommitBase();
  std::vector<std::shared_ptr<const BlockIndex>> idx;
  for (int b = 0; b * 10 < n; ++b) {
    std::vector<DeployInput> deploys;
    for (int i = b * 10; i < (b + 1) * 10 && i < n; ++i) {
      DeployInput d = Deploy("t" + std::to_string(i), 1 + i % 5);
      // Every 50th deploy also takes its neighbour's datum: a race.
      TakeDatum(d, C(1000 + i), inputs[i], 2 * i);
      if (i % 50 == 0) TakeDatum(d, C(1001 + i), inputs[i + 1], 2 * i + 1);
      StoreDatum(d, C(5000 + i), MakeDatum(i, 5000 + i));
      StoreDatum(d, C(9000), MakeDatum(i, 9000 + i));
      deploys.push_back(std::move(d));
    }
    auto x = BuildBlockIndex(Block(b, std::move(deploys)));
    ASSERT_TRUE(x.ok()) << x.status();
    idx.push_back(*x);
  }
  MergeOptions options;
  options.number_codec = &codec_;
  MergeContext two({.threads = 2});
  auto r1 = Merge(*th_.history, base_root_, idx, options);
  auto r2 = Merge(*th_.history, base_root_, idx, options, two);
  ASSERT_TRUE(r1.ok()) << r1.status();
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_NE(r1->root, base_root_);
  EXPECT_EQ(r1->rejected.size(), static_cast<size_t>(n / 50));
  EXPECT_GT(r1->metrics.leaves_written, 2000u);
  EXPECT_EQ(r2->root, r1->root);
  EXPECT_EQ(r2->rejected, r1->rejected);
  EXPECT_EQ(r2->branches, r1->branches);
  EXPECT_EQ(r2->conflicts, r1->conflicts);
}

TEST_F(MergerTest, DependentDeploysOfABlockFormOneChain) {
  CommitBase();
  Datum p = MakeDatum(1, 1);
  DeployInput d1 = Deploy("d1", 1);
  StoreDatum(d1, C(1), p);
  DeployInput d2 = Deploy("d2", 2);
  TakeDatum(d2, C(1), p, 2);
  DeployInput d3 = Deploy("d3", 3);
  StoreDatum(d3, C(3), MakeDatum(3, 3));
  auto idx = BuildBlockIndex(Block(1, {d1, d2, d3}));
  ASSERT_TRUE(idx.ok()) << idx.status();
  ASSERT_EQ((*idx)->chains.size(), 2u);
  EXPECT_EQ((*idx)->chains[0].deploys, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ((*idx)->chains[0].cost, 3u);
  EXPECT_EQ((*idx)->chains[1].deploys, (std::vector<uint32_t>{2}));
  auto r = Run({Block(1, {d1, d2, d3})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(State(r->root, C(1)).data.empty());
  EXPECT_EQ(State(r->root, C(3)).data.size(), 1u);
}

TEST_F(MergerTest, JoinIsRemovedWhenTwoBranchesTakeTheLastTwoContinuations) {
  WaitingContinuation k0 = Continuation({1}, 1), k1 = Continuation({1}, 2);
  base_[C(1)].continuations = {k0, k1};
  base_[C(1)].joins = {k0.group};
  CommitBase();
  DeployInput a = Deploy("a", 1);
  FireContinuation(a, C(1), k0, 1);
  DeployInput b = Deploy("b", 1);
  FireContinuation(b, C(1), k1, 2);
  auto r = Run({Block(1, {a}), Block(2, {b})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->rejected.empty());
  EXPECT_TRUE(State(r->root, C(1)).empty());
}

TEST_F(MergerTest, RemovalOfAnItemAbsentFromTheBaseRejectsTheBranch) {
  CommitBase();
  DeployInput a = Deploy("a", 100);
  TakeDatum(a, C(1), MakeDatum(1, 1), 1);
  DeployInput b = Deploy("b", 1);
  StoreDatum(b, C(2), MakeDatum(2, 2));
  auto r = Run({Block(1, {a}), Block(2, {b})});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rejected.size(), 1u);
  EXPECT_EQ(r->rejected[0].id, a.id);
  EXPECT_EQ(r->rejected[0].reason, RejectReason::kUnavailable);
}

TEST_F(MergerTest, MalformedScopesAreInvalidArgument) {
  Datum balance = SetVault(100);
  CommitBase();
  DeployInput t = Deploy("t", 1);
  Transfer(t, balance, 5, 1);
  EXPECT_EQ(Run({Block(1, {t})}, /*with_codec=*/false).status().code(),
            absl::StatusCode::kInvalidArgument);
  DeployInput a = Deploy("a", 1);
  StoreDatum(a, C(1), MakeDatum(1, 1));
  EXPECT_EQ(Run({Block(1, {a}), Block(1, {a})}).status().code(),
            absl::StatusCode::kInvalidArgument);
  DeployInput raw = Deploy("raw", 1);
  StoreDatum(raw, kVault, MakeDatum(1, 9));
  EXPECT_EQ(Run({Block(1, {t}), Block(2, {raw})}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BuildBlockIndex(Block(1, {Deploy("", 1)})).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(MergerTest, LimitsAreResourceExhausted) {
  CommitBase();
  std::vector<BlockInput> blocks;
  for (size_t i = 0; i <= kMaxScopeBlocks; ++i) blocks.push_back(Block(i, {}));
  EXPECT_EQ(Run(blocks).status().code(), absl::StatusCode::kResourceExhausted);
  BlockInput big = Block(1, {});
  big.deploys.resize(kMaxDeploysPerBlock + 1);
  EXPECT_EQ(BuildBlockIndex(std::move(big)).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST_F(MergerTest, NegativeBaseValueIsFailedPrecondition) {
  Datum balance = SetVault(-5);
  CommitBase();
  DeployInput t = Deploy("t", 1);
  Transfer(t, balance, 5, 1);
  EXPECT_EQ(Run({Block(1, {t})}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(MergerTest, EmptyScopeKeepsTheBaseRoot) {
  base_[C(1)].data.push_back(MakeDatum(1, 1));
  CommitBase();
  auto r = Run({});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->root, base_root_);
  EXPECT_TRUE(r->branches.empty());
}

}  // namespace
}  // namespace rnode::casper::merge

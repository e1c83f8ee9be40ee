// Where a deploy's effect is in a state of the DAG (casper/prestate/
// ancestry.h): DAGs built by hand with merge records, walked down through
// single parents and merge bases.
#include "casper/prestate/ancestry.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "casper/prestate/awaiting.h"
#include "gtest/gtest.h"
#include "rspace/storage/kv_store.h"
#include "tests/casper/dag_test_blocks.h"
#include "tests/test_seed.h"

namespace rnode::casper::prestate {
namespace {

using dag::blocks_for_tests::Deploy;
using dag::blocks_for_tests::MakeBlock;

// The deploy the tests follow, and another.
const Bytes kSig = Deploy(7).sig;

class AncestryTest : public ::testing::Test {
 protected:
  AncestryTest() : store_(4) {
    dag_ = *dag::DagStore::Open(&store_, dag::DagColumnsFrom(0));
    genesis_ = Put(MakeBlock(1, 0, 0, {}));
  }

  // Stores a block by validator `seed` (its `seq`th) of number `number` on
  // `parents`, holding `deploys`, with a merge record when given.
  Hash32 Add(uint8_t seed, int32_t seq, int64_t number,
             std::vector<Hash32> parents, std::vector<int> deploys = {},
             std::optional<Hash32> base = std::nullopt,
             std::vector<Bytes> rejected = {}) {
    block::Block b = MakeBlock(seed, seq, number, std::move(parents), {},
                               std::move(deploys));
    b.body.merge_base = base;
    for (Bytes& sig : rejected) b.body.rejected.push_back({sig, false, {}});
    EXPECT_TRUE(block::SignBlock(b, testing::MakeTestKey(seed).sk).ok());
    return Put(b);
  }

  Hash32 Put(const block::Block& b) {
    auto inserted = dag_->Insert(b);
    EXPECT_TRUE(inserted.ok() && *inserted) << inserted.status();
    return b.hash;
  }

  std::optional<Hash32> Post(const Hash32& block) {
    auto copy = CopyInPostState(*dag_, block, kSig, 0);
    EXPECT_TRUE(copy.ok()) << copy.status();
    return copy.ok() ? *copy : std::nullopt;
  }

  std::optional<Hash32> Pre(std::vector<Hash32> parents,
                            std::optional<Hash32> base = std::nullopt,
                            std::vector<Bytes> rejected = {}) {
    std::vector<block::RejectedDeploy> records;
    for (Bytes& sig : rejected) records.push_back({sig, false, {}});
    auto copy =
        CopyInPreState(*dag_, {parents, base, records}, kSig, /*min=*/0);
    EXPECT_TRUE(copy.ok()) << copy.status();
    return copy.ok() ? *copy : std::nullopt;
  }

  rspace::InMemoryStore store_;
  std::unique_ptr<dag::DagStore> dag_;
  Hash32 genesis_{};
};

TEST_F(AncestryTest, ACopyOnTheParentChainIsHeld) {
  const Hash32 a = Add(1, 1, 1, {genesis_}, {7});
  const Hash32 b = Add(2, 1, 2, {a});
  EXPECT_EQ(Post(a), a);
  EXPECT_EQ(Post(b), a);
  EXPECT_EQ(Pre({b}), a);
  EXPECT_EQ(Pre({genesis_}), std::nullopt);
  EXPECT_EQ(Post(genesis_), std::nullopt);
}

TEST_F(AncestryTest, AMergeHoldsAScopeCopyUnlessItRejectedIt) {
  const Hash32 a = Add(1, 1, 1, {genesis_}, {7});
  const Hash32 c = Add(2, 1, 1, {genesis_}, {8});
  EXPECT_EQ(Pre({a, c}, genesis_), a);
  EXPECT_EQ(Pre({a, c}, genesis_, {kSig}), std::nullopt);
  // Another deploy's rejection does not count.
  EXPECT_EQ(Pre({a, c}, genesis_, {Deploy(8).sig}), a);
}

// The copy in A is rejected by merge M; a block on M may hold the deploy
// again (R), and from then on R's copy is the one held, through later
// merges that keep it.
TEST_F(AncestryTest, ARejectedCopyLeavesRoomForOneMore) {
  const Hash32 a = Add(1, 1, 1, {genesis_}, {7});
  const Hash32 c = Add(2, 1, 1, {genesis_});
  const Hash32 m = Add(3, 1, 2, {c, a}, {}, genesis_, {kSig});
  EXPECT_EQ(Post(m), std::nullopt);
  EXPECT_EQ(Pre({m}), std::nullopt);
  const Hash32 r = Add(3, 2, 3, {m}, {7});
  EXPECT_EQ(Post(r), r);
  // A merge over base M: R in scope, kept.
  const Hash32 y = Add(1, 2, 3, {m});
  EXPECT_EQ(Pre({r, y}, m), r);
  const Hash32 n = Add(2, 2, 4, {r, y}, {}, m);
  EXPECT_EQ(Post(n), r);
  // A merge whose base is N: both copies are below it, A's rejected on
  // the way down, R's held.
  const Hash32 z = Add(1, 3, 5, {n});
  EXPECT_EQ(Pre({z}), r);
}

// Below the merge base the base's own history decides: A's copy is in the
// base's state (no merge on its way rejected it), so a scope copy is not
// what the pre-state holds either way.
TEST_F(AncestryTest, ACopyBelowTheBaseIsHeldThroughIt) {
  const Hash32 a = Add(1, 1, 1, {genesis_}, {7});
  const Hash32 b = Add(2, 1, 2, {a});
  const Hash32 x = Add(1, 2, 3, {b});
  const Hash32 y = Add(2, 2, 3, {b});
  EXPECT_EQ(Pre({x, y}, b), a);
  EXPECT_EQ(Pre({x, y}, b, {kSig}), a);  // the scope's record is not A's
}

TEST_F(AncestryTest, OfTwoKeptScopeCopiesTheHighestIsAnswered) {
  const Hash32 a = Add(1, 1, 1, {genesis_}, {7});
  const Hash32 a2 = Add(1, 2, 2, {a});
  const Hash32 c = Add(2, 1, 1, {genesis_});
  const Hash32 c2 = Add(2, 2, 2, {c}, {7});
  EXPECT_EQ(Pre({a2, c2}, genesis_), c2);
}

TEST_F(AncestryTest, CopiesBelowTheFloorAreNotLookedFor) {
  const Hash32 a = Add(1, 1, 1, {genesis_}, {7});
  const Hash32 b = Add(2, 1, 2, {a});
  auto copy = CopyInPreState(*dag_, {std::vector<Hash32>{b}, {}, {}}, kSig,
                             /*min_number=*/2);
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(*copy, std::nullopt);
}

TEST_F(AncestryTest, AStoredMergeWithoutItsBaseIsDataLoss) {
  const Hash32 a = Add(1, 1, 1, {genesis_}, {7});
  const Hash32 c = Add(2, 1, 1, {genesis_});
  const Hash32 m = Add(3, 1, 2, {a, c});  // no merge base recorded
  auto copy = CopyInPostState(*dag_, m, kSig, 0);
  EXPECT_EQ(copy.status().code(), absl::StatusCode::kDataLoss);
}

// ScopeCopiesInPostState answers what CopyInPostState answers per deploy,
// on random DAGs: validators building on their own and others' latest
// blocks, now and then on a stale one, with merges over the real merge base
// that reject random deploys, and a small pool of deploys copied many times
// (so copies meet in scopes, below bases and on the path).
TEST_F(AncestryTest, ScopeCopiesAgreeWithTheWalkPerDeploy) {
  const uint64_t seed = rnode::testing::TestSeed(4417);
  std::mt19937_64 rng(seed);
  constexpr int kValidators = 4, kPool = 6;
  const int blocks = 240, queries = 400;
  std::vector<Bytes> pool;
  for (int d = 0; d < kPool; ++d) pool.push_back(Deploy(d).sig);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto meta = [&](const Hash32& h) { return *dag_->Meta(h); };
  size_t held = 0, compared = 0;
  {
    std::vector<Hash32> all{genesis_};
    std::vector<Hash32> latest(kValidators, genesis_);
    std::vector<int32_t> seq(kValidators, 0);
    // The merge base of `parents` (first the main one), as MergeBaseOf.
    auto base_of = [&](const std::vector<Hash32>& parents) {
      std::vector<std::shared_ptr<const dag::BlockMeta>> metas;
      for (const Hash32& p : parents) metas.push_back(meta(p));
      return (*dag::MergeBaseOf(*dag_, metas))->hash;
    };
    for (int n = 0; n < blocks; ++n) {
      const size_t v = pick(kValidators);
      std::vector<Hash32> parents{latest[v]};
      for (size_t o = 0; o < kValidators; ++o) {
        if (o != v && pick(3) != 0) parents.push_back(latest[o]);
      }
      if (pick(5) == 0) parents.push_back(all[pick(all.size())]);  // stale
      std::sort(parents.begin(), parents.end());
      parents.erase(std::unique(parents.begin(), parents.end()), parents.end());
      // Not a parent that is an ancestor of another.
      std::erase_if(parents, [&](const Hash32& p) {
        return std::any_of(parents.begin(), parents.end(), [&](auto& q) {
          return q != p && dag_->IsAncestor(p, q);
        });
      });
      std::swap(parents.front(), parents[pick(parents.size())]);
      int64_t number = 0;
      for (const Hash32& p : parents) {
        number = std::max(number, meta(p)->block_number + 1);
      }
      std::vector<int> deploys;
      for (int d = 0; d < kPool; ++d) {
        if (pick(5) == 0) deploys.push_back(d);
      }
      std::optional<Hash32> base;
      std::vector<Bytes> rejected;
      if (parents.size() >= 2) {
        base = base_of(parents);
        for (const Bytes& sig : pool) {
          if (pick(3) == 0) rejected.push_back(sig);
        }
      }
      const Hash32 h = Add(static_cast<uint8_t>(v + 1), ++seq[v], number,
                           parents, deploys, base, rejected);
      latest[v] = h;
      all.push_back(h);
    }
    for (int q = 0; q < queries; ++q) {
      std::vector<Hash32> parents{all[pick(all.size())], all[pick(all.size())]};
      if (parents[0] == parents[1]) continue;
      const Hash32 base = base_of(parents);
      std::set<Hash32> scope;
      std::deque<Hash32> queue(parents.begin(), parents.end());
      while (!queue.empty()) {
        const Hash32 h = queue.front();
        queue.pop_front();
        if (dag_->IsAncestor(h, base) || !scope.insert(h).second) continue;
        for (const Hash32& p : meta(h)->parents) queue.push_back(p);
      }
      std::vector<HeldCopy> expected;
      for (const Bytes& sig : pool) {
        auto copy = CopyInPostState(*dag_, parents[0], sig, 0);
        ASSERT_TRUE(copy.ok()) << copy.status();
        if (copy->has_value() && scope.contains(**copy)) {
          expected.push_back({sig, **copy});
        }
      }
      auto got = ScopeCopiesInPostState(
          *dag_, parents[0], [&](const Hash32& h) { return scope.contains(h); },
          pool);
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ(*got, expected) << "query " << q;
      held += expected.size();
      ++compared;
    }
  }
  // The DAGs are rich enough that the answer is often a held copy.
  EXPECT_GT(compared, 200u);
  EXPECT_GT(held, compared / 2);
}

// Deploys a finalized merge rejected are awaited while the finalized state
// lacks them (awaiting.h): the stall the ASan suite hit had a recovered
// deploy that no validator made a block for.
class AwaitedDeploysTest : public AncestryTest {
 protected:
  // A (copy of the deploy) and C race; M merges them over the genesis and
  // rejects A's copy.
  void Race() {
    a_ = Add(1, 1, 1, {genesis_}, {7});
    c_ = Add(2, 1, 1, {genesis_});
    m_ = Add(3, 1, 2, {c_, a_}, {}, genesis_, {kSig});
  }
  std::vector<Bytes> Note(AwaitedDeploys& w, const Hash32& lfb,
                          std::vector<Hash32> blocks, int64_t next) {
    auto noted = w.NoteFinalized(*dag_, lfb, blocks, next, /*now_ms=*/0);
    EXPECT_TRUE(noted.ok()) << noted.status();
    return noted.ok() ? *noted : std::vector<Bytes>{};
  }
  std::vector<Bytes> Settle(AwaitedDeploys& w, const Hash32& lfb,
                            int64_t next) {
    auto held = w.Settle(*dag_, lfb, next, /*now_ms=*/0);
    EXPECT_TRUE(held.ok()) << held.status();
    return held.ok() ? *held : std::vector<Bytes>{};
  }
  Hash32 a_{}, c_{}, m_{};
};

TEST_F(AwaitedDeploysTest, ARejectionTheFinalizedStateLacksIsAwaitedOnce) {
  Race();
  AwaitedDeploys w;
  EXPECT_EQ(Note(w, m_, {a_, c_, m_}, 3), std::vector<Bytes>{kSig});
  EXPECT_TRUE(w.Contains(kSig));
  EXPECT_EQ(Note(w, m_, {m_}, 3), std::vector<Bytes>{});  // already
  EXPECT_EQ(Settle(w, m_, 3), std::vector<Bytes>{});
  EXPECT_EQ(w.size(), 1u);
}

// The finalized state comes to hold the first copy again (a later merge
// over a base below A keeps it): the deploy is done, and leaves the pool.
TEST_F(AwaitedDeploysTest, AFinalizedStateHoldingAnEarlierCopySettlesIt) {
  Race();
  AwaitedDeploys w;
  ASSERT_EQ(Note(w, m_, {a_, c_, m_}, 3), std::vector<Bytes>{kSig});
  const Hash32 y = Add(2, 2, 2, {c_});
  const Hash32 n = Add(1, 2, 3, {y, a_}, {}, genesis_);
  ASSERT_EQ(Post(n), a_);
  EXPECT_EQ(Settle(w, n, 4), std::vector<Bytes>{kSig});
  EXPECT_TRUE(w.empty());
}

TEST_F(AwaitedDeploysTest, ARejectionTheFinalizedStateHoldsIsNotAwaited) {
  Race();
  const Hash32 r = Add(3, 2, 3, {m_}, {7});  // included again
  AwaitedDeploys w;
  EXPECT_EQ(Note(w, r, {a_, c_, m_, r}, 4), std::vector<Bytes>{});
  EXPECT_TRUE(w.empty());
}

// The test deploys are valid after block 0: blocks up to 49 may hold
// them.
TEST_F(AwaitedDeploysTest, AClosedWindowEndsTheWait) {
  Race();
  AwaitedDeploys w;
  EXPECT_EQ(Note(w, m_, {a_, c_, m_}, 50), std::vector<Bytes>{});
  ASSERT_EQ(Note(w, m_, {a_, c_, m_}, 49), std::vector<Bytes>{kSig});
  EXPECT_EQ(Settle(w, m_, 49), std::vector<Bytes>{});
  EXPECT_EQ(w.size(), 1u);
  EXPECT_EQ(Settle(w, m_, 50), std::vector<Bytes>{});  // closed, not held
  EXPECT_TRUE(w.empty());
}

TEST_F(AwaitedDeploysTest, TheOldestIsForgottenAtCapacity) {
  Race();
  const Bytes other = Deploy(8).sig;
  const Hash32 a2 = Add(1, 2, 3, {m_}, {8});
  const Hash32 c2 = Add(2, 2, 3, {m_});
  const Hash32 m2 = Add(3, 2, 4, {c2, a2}, {}, m_, {other});
  AwaitedDeploys w(/*capacity=*/1);
  ASSERT_EQ(Note(w, m_, {a_, c_, m_}, 3), std::vector<Bytes>{kSig});
  EXPECT_EQ(Note(w, m2, {a2, c2, m2}, 5), std::vector<Bytes>{other});
  EXPECT_EQ(w.size(), 1u);
  EXPECT_TRUE(w.Contains(other));
  EXPECT_FALSE(w.Contains(kSig));
}

TEST(NamesRejectedTest, MatchesWholeSignaturesOnly) {
  const std::vector<block::RejectedDeploy> r{{Bytes{1, 2, 3}, false, {}}};
  EXPECT_TRUE(NamesRejected(r, Bytes{1, 2, 3}));
  EXPECT_FALSE(NamesRejected(r, Bytes{1, 2}));
  EXPECT_FALSE(NamesRejected(r, Bytes{1, 2, 3, 4}));
  EXPECT_FALSE(NamesRejected({}, Bytes{1, 2, 3}));
}

}  // namespace
}  // namespace rnode::casper::prestate

// Tests for the block store and DAG: inserts and their refusals, the derived
// views, the deploy index, finalization, reopening, the metadata codec and
// durability across SIGKILL.
#include "casper/dag/dag_store.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "casper/block/block.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rspace/storage/fault_store.h"
#include "rspace/storage/kv_store.h"
#include "rspace/storage/rocksdb_store.h"
#include "tests/casper/dag_test_blocks.h"
#include "tests/casper/test_key.h"
#include "tests/sanitizer.h"
#include "tests/test_seed.h"

namespace rnode::casper::dag {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeTestKey;

using blocks_for_tests::Deploy;
using blocks_for_tests::MakeBlock;
using blocks_for_tests::StateHash;

class DagStoreTest : public ::testing::Test {
 protected:
  DagStoreTest() : store_(4) {}
  std::unique_ptr<DagStore> Open() {
    auto dag = DagStore::Open(&store_, DagColumnsFrom(0));
    EXPECT_TRUE(dag.ok()) << dag.status();
    return dag.ok() ? *std::move(dag) : nullptr;
  }
  rspace::InMemoryStore store_;
};

TEST_F(DagStoreTest, InsertsAndReadsBack) {
  auto dag = Open();
  const block::Block genesis = MakeBlock(1, 0, 0, {});
  auto inserted = dag->Insert(genesis);
  ASSERT_TRUE(inserted.ok()) << inserted.status();
  EXPECT_TRUE(*inserted);
  EXPECT_TRUE(dag->Contains(genesis.hash));
  auto back = dag->GetBlock(genesis.hash);
  ASSERT_TRUE(back.ok() && back->has_value());
  EXPECT_EQ(**back, genesis);
  ASSERT_TRUE(dag->Meta(genesis.hash).ok());
  EXPECT_EQ(**dag->Meta(genesis.hash), MetaOf(genesis, false));
  EXPECT_EQ(dag->size(), 1u);
  EXPECT_FALSE(dag->GetBlock(StateHash(7))->has_value());
  EXPECT_EQ(dag->Meta(StateHash(7)).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(DagStoreTest, FirstCopyWinsAndMissingDependenciesAreRefused) {
  auto dag = Open();
  const block::Block genesis = MakeBlock(1, 0, 0, {});
  ASSERT_TRUE(*dag->Insert(genesis));
  EXPECT_FALSE(*dag->Insert(genesis));
  block::Block copy = genesis;
  copy.sig.back() ^= 1;  // Same hash, another (bad) signature: not stored.
  EXPECT_FALSE(*dag->Insert(copy));
  EXPECT_EQ(dag->GetBlock(genesis.hash)->value().sig, genesis.sig);

  const block::Block orphan = MakeBlock(2, 1, 1, {StateHash(50)});
  auto r = dag->Insert(orphan);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("needs parent " + HexEncode(StateHash(50))));
  const block::Block unjustified =
      MakeBlock(2, 1, 1, {genesis.hash}, {{MakeTestKey(1).pk, StateHash(51)}});
  r = dag->Insert(unjustified);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("needs justification " + HexEncode(StateHash(51))));
  block::Block unsealed = genesis;
  unsealed.hash = Hash32{};
  EXPECT_EQ(dag->Insert(unsealed).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(dag->size(), 1u);
}

TEST_F(DagStoreTest, DerivedViewsFollowTheDag) {
  auto dag = Open();
  const auto k1 = MakeTestKey(1).pk, k2 = MakeTestKey(2).pk;
  const block::Block g = MakeBlock(1, 0, 0, {});
  const block::Block a = MakeBlock(1, 1, 1, {g.hash}, {{k1, g.hash}});
  const block::Block b = MakeBlock(2, 1, 1, {g.hash}, {{k1, g.hash}});
  const block::Block c =
      MakeBlock(1, 2, 2, {a.hash, b.hash}, {{k1, a.hash}, {k2, b.hash}});
  // An invalid block by 2 on c: stored as evidence, never a tip or latest.
  const block::Block bad = MakeBlock(2, 2, 3, {c.hash}, {{k2, b.hash}});
  for (const auto* blk : {&g, &a, &b, &c}) ASSERT_TRUE(*dag->Insert(*blk));
  ASSERT_TRUE(*dag->Insert(bad, /*invalid=*/true));
  EXPECT_TRUE(dag->Meta(bad.hash).value()->invalid);

  std::vector<Hash32> ab{a.hash, b.hash};
  std::sort(ab.begin(), ab.end());
  EXPECT_EQ(dag->Children(g.hash), ab);
  EXPECT_THAT(dag->Children(a.hash), ElementsAre(c.hash));
  EXPECT_EQ(dag->AtHeight(1), ab);
  EXPECT_EQ(dag->MaxHeight(), 3);
  EXPECT_THAT(dag->Tips(), ElementsAre(c.hash));
  auto latest = dag->LatestMessages();
  EXPECT_EQ(latest.at(k1), c.hash);
  EXPECT_EQ(latest.at(k2), b.hash);
  EXPECT_TRUE(dag->IsAncestor(g.hash, c.hash));
  EXPECT_TRUE(dag->IsAncestor(b.hash, c.hash));
  EXPECT_TRUE(dag->IsAncestor(c.hash, c.hash));
  EXPECT_FALSE(dag->IsAncestor(a.hash, b.hash));
  EXPECT_FALSE(dag->IsAncestor(c.hash, g.hash));

  // The stored records of `blocks`, in order.
  auto records = [&](std::initializer_list<Hash32> blocks) {
    std::vector<std::shared_ptr<const BlockMeta>> out;
    for (const Hash32& h : blocks) out.push_back(*dag->Meta(h));
    return out;
  };
  // Main chains: c's runs c, a, g; b's runs b, g; they meet at g, and a
  // block meets itself.
  EXPECT_EQ((*MainChainMeet(*dag, records({c.hash, b.hash})))->hash, g.hash);
  EXPECT_EQ((*MainChainMeet(*dag, records({c.hash, a.hash})))->hash, a.hash);
  EXPECT_EQ(MainChainMeet(*dag, {}).status().code(),
            absl::StatusCode::kInvalidArgument);

  // An equivocation: two blocks of 2 with sequence number 1; the latest
  // message is the smaller hash, deterministically.
  const block::Block b2 = MakeBlock(2, 1, 1, {g.hash}, {{k2, g.hash}});
  ASSERT_TRUE(*dag->Insert(b2));
  EXPECT_EQ(dag->LatestMessages().at(k2), std::min(b.hash, b2.hash));

  // The merge base: the highest block on the main parent's main chain
  // that every parent descends from. d's chain runs d, b, g; c descends
  // from b, so a block of (d, c) merges over b, where the main chains
  // meet at g. With c the main parent, neither c nor a is under d: g.
  const block::Block d = MakeBlock(3, 1, 2, {b.hash}, {{k2, b.hash}});
  ASSERT_TRUE(*dag->Insert(d));
  EXPECT_EQ((*MainChainMeet(*dag, records({d.hash, c.hash})))->hash, g.hash);
  EXPECT_EQ((*MergeBaseOf(*dag, records({d.hash, c.hash})))->hash, b.hash);
  EXPECT_EQ((*MergeBaseOf(*dag, records({c.hash, d.hash})))->hash, g.hash);
  EXPECT_EQ((*MergeBaseOf(*dag, records({a.hash})))->hash, a.hash);
  EXPECT_EQ(MergeBaseOf(*dag, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(DagStoreTest, DeployIndexListsEveryBlockHoldingADeploy) {
  auto dag = Open();
  const block::Block g = MakeBlock(1, 0, 0, {});
  const block::Block a = MakeBlock(1, 1, 1, {g.hash}, {}, {1, 2, 2});
  const block::Block b = MakeBlock(2, 1, 1, {g.hash}, {}, {2});
  for (const auto* blk : {&g, &a, &b}) ASSERT_TRUE(*dag->Insert(*blk));
  std::vector<Hash32> both{a.hash, b.hash};
  std::sort(both.begin(), both.end());
  EXPECT_EQ(*dag->BlocksWithDeploy(Deploy(2).sig), both);
  EXPECT_THAT(*dag->BlocksWithDeploy(Deploy(1).sig), ElementsAre(a.hash));
  EXPECT_TRUE(dag->BlocksWithDeploy(Deploy(3).sig)->empty());
}

// The rejection index: the valid blocks whose merge record names a deploy
// (an invalid block's record is not counted), apart from the holders.
TEST_F(DagStoreTest, RejectionIndexListsTheValidBlocksThatRejectedADeploy) {
  auto dag = Open();
  const block::Block g = MakeBlock(1, 0, 0, {});
  const block::Block a = MakeBlock(1, 1, 1, {g.hash}, {}, {1});
  const block::Block c = MakeBlock(2, 1, 1, {g.hash}, {}, {});
  auto merge = [&](uint8_t seed, int32_t seq) {
    block::Block m = MakeBlock(seed, seq, 2, {a.hash, c.hash});
    m.body.merge_base = g.hash;
    m.body.rejected.push_back({Deploy(1).sig, false, {}});
    EXPECT_TRUE(block::SignBlock(m, MakeTestKey(seed).sk).ok());
    return m;
  };
  const block::Block m = merge(1, 2);
  const block::Block bad = merge(2, 2);
  for (const auto* blk : {&g, &a, &c, &m}) ASSERT_TRUE(*dag->Insert(*blk));
  ASSERT_TRUE(*dag->Insert(bad, /*invalid=*/true));
  EXPECT_THAT(*dag->BlocksRejectingDeploy(Deploy(1).sig), ElementsAre(m.hash));
  EXPECT_THAT(*dag->BlocksWithDeploy(Deploy(1).sig), ElementsAre(a.hash));
  EXPECT_TRUE(dag->BlocksRejectingDeploy(Deploy(2).sig)->empty());
}

TEST_F(DagStoreTest, FinalityMovesOnlyForwardAndCoversAncestors) {
  auto dag = Open();
  const block::Block g = MakeBlock(1, 0, 0, {});
  const block::Block a = MakeBlock(1, 1, 1, {g.hash});
  const block::Block b = MakeBlock(2, 1, 1, {g.hash});
  const block::Block c = MakeBlock(1, 2, 2, {a.hash});
  for (const auto* blk : {&g, &a, &b, &c}) ASSERT_TRUE(*dag->Insert(*blk));
  EXPECT_FALSE(dag->LastFinalized().has_value());
  ASSERT_TRUE(dag->SetLastFinalized(a.hash).ok());
  EXPECT_EQ(dag->LastFinalized(), a.hash);
  EXPECT_TRUE(dag->IsFinalized(g.hash));
  EXPECT_TRUE(dag->IsFinalized(a.hash));
  EXPECT_FALSE(dag->IsFinalized(b.hash));
  EXPECT_FALSE(dag->IsFinalized(c.hash));
  auto sideways = dag->SetLastFinalized(b.hash);
  EXPECT_EQ(sideways.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(sideways.message()),
              HasSubstr("does not descend from the last finalized block"));
  EXPECT_EQ(dag->SetLastFinalized(StateHash(60)).code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(dag->SetLastFinalized(c.hash).ok());
  EXPECT_TRUE(dag->IsFinalized(c.hash));
}

// A block by validator `seed` without user deploys that slashes
// validator 2.
block::Block SlashingBlock(uint8_t seed, int32_t seq, int64_t number,
                           std::vector<Hash32> parents) {
  block::Block b = MakeBlock(seed, seq, number, std::move(parents));
  block::ProcessedSystemDeploy slash;
  slash.deploy = block::SlashDeploy{StateHash(77), MakeTestKey(2).pk, 0};
  b.body.system_deploys.push_back(slash);
  b.body.system_deploys.push_back({block::CloseBlockDeploy{}, {}, ""});
  EXPECT_TRUE(block::SignBlock(b, MakeTestKey(seed).sk).ok());
  return b;
}

TEST_F(DagStoreTest, UnfinalizedWorkIsValidBlocksWithDeploysOrASlash) {
  auto dag = Open();
  EXPECT_TRUE(UnfinalizedWork(*dag)->empty());
  const block::Block g = MakeBlock(1, 0, 0, {}, {}, {1});
  const block::Block a = MakeBlock(1, 1, 1, {g.hash}, {}, {2});
  block::Block closed = MakeBlock(2, 1, 1, {g.hash});
  closed.body.system_deploys.push_back({block::CloseBlockDeploy{}, {}, ""});
  ASSERT_TRUE(block::SignBlock(closed, MakeTestKey(2).sk).ok());
  const block::Block s = SlashingBlock(1, 2, 2, {a.hash});
  const block::Block bad = MakeBlock(2, 2, 2, {closed.hash}, {}, {3});
  EXPECT_FALSE(block::CarriesSlash(closed));
  EXPECT_TRUE(block::CarriesSlash(s));
  for (const block::Block* blk :
       std::initializer_list<const block::Block*>{&g, &a, &closed, &s}) {
    ASSERT_TRUE(*dag->Insert(*blk));
  }
  ASSERT_TRUE(*dag->Insert(bad, /*invalid=*/true));
  // Nothing final: genesis counts too; the empty block and the invalid one
  // never do.
  EXPECT_EQ(*UnfinalizedWork(*dag),
            (std::vector<Hash32>{g.hash, a.hash, s.hash}));
  ASSERT_TRUE(dag->SetLastFinalized(g.hash).ok());
  EXPECT_EQ(*UnfinalizedWork(*dag), (std::vector<Hash32>{a.hash, s.hash}));
  ASSERT_TRUE(dag->SetLastFinalized(a.hash).ok());
  EXPECT_THAT(*UnfinalizedWork(*dag), ElementsAre(s.hash));
  dag.reset();
  dag = Open();
  EXPECT_THAT(*UnfinalizedWork(*dag), ElementsAre(s.hash));
  ASSERT_TRUE(dag->SetLastFinalized(s.hash).ok());
  EXPECT_TRUE(UnfinalizedWork(*dag)->empty());
}

TEST_F(DagStoreTest, ReopeningRebuildsEveryView) {
  std::vector<Hash32> tips;
  std::map<crypto::Secp256k1PublicKey, Hash32> latest;
  block::Block g, a, b;
  {
    auto dag = Open();
    g = MakeBlock(1, 0, 0, {});
    a = MakeBlock(1, 1, 1, {g.hash}, {}, {4});
    b = MakeBlock(2, 1, 2, {a.hash});
    for (const auto* blk : {&g, &a, &b}) ASSERT_TRUE(*dag->Insert(*blk));
    ASSERT_TRUE(dag->SetLastFinalized(a.hash).ok());
    tips = dag->Tips();
    latest = dag->LatestMessages();
  }
  auto dag = Open();
  EXPECT_EQ(dag->size(), 3u);
  EXPECT_EQ(dag->Tips(), tips);
  EXPECT_EQ(dag->LatestMessages(), latest);
  EXPECT_EQ(dag->LastFinalized(), a.hash);
  EXPECT_TRUE(dag->IsFinalized(g.hash));
  EXPECT_FALSE(dag->IsFinalized(b.hash));
  EXPECT_THAT(dag->Children(a.hash), ElementsAre(b.hash));
  EXPECT_THAT(*dag->BlocksWithDeploy(Deploy(4).sig), ElementsAre(a.hash));
  EXPECT_EQ(dag->GetBlock(b.hash)->value(), b);
}

// A joining node's DAG (docs/p2p.md "Joining"): its genesis, then a window
// of a peer's blocks anchored at the peer's last finalized block. Blocks at
// or below the floor come without their parents; above it every
// dependency is given or stored, and that holds for inserts afterwards, and
// across a reopen.
TEST_F(DagStoreTest, AnAnchoredWindowFollowsOnAsADagFromGenesis) {
  // The shard's chain: g, then 1..10 by validators 1 and 2 in turn; block 8
  // justifies block 3 (a validator long silent), blocks 6 and 7 both hold
  // deploy 4 (a copy a merge rejected, proposed again).
  const block::Block g = MakeBlock(1, 0, 0, {});
  std::vector<block::Block> chain{g};
  for (int n = 1; n <= 10; ++n) {
    const uint8_t seed = n % 2 == 1 ? 1 : 2;
    std::vector<block::Justification> justified;
    if (n == 8) justified.push_back({MakeTestKey(3).pk, chain[3].hash});
    std::vector<int> deploys;
    if (n == 6 || n == 7) deploys.push_back(4);
    chain.push_back(
        MakeBlock(seed, n, n, {chain.back().hash}, justified, deploys));
  }
  std::vector<block::Block> window(chain.begin() + 5, chain.end());
  constexpr int64_t kFloor = 5;
  const Hash32 lfb = chain[8].hash;
  Hash32 b11_hash{};
  {
    auto dag = Open();
    ASSERT_TRUE(*dag->Insert(g));
    ASSERT_TRUE(dag->SetLastFinalized(g.hash).ok());
    // Block 8's justification is neither given nor stored: refused, and
    // nothing changed.
    absl::Status missing = dag->Anchor(window, lfb, kFloor);
    EXPECT_EQ(missing.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(missing.message(), HasSubstr("needs justification"));
    EXPECT_EQ(dag->size(), 1u);
    EXPECT_EQ(dag->LastFinalized(), g.hash);
    EXPECT_FALSE(dag->floor().has_value());
    EXPECT_EQ(dag->Anchor(window, chain[4].hash, kFloor).code(),
              absl::StatusCode::kInvalidArgument);  // not among them
    EXPECT_EQ(dag->Anchor(window, chain[5].hash, kFloor).code(),
              absl::StatusCode::kInvalidArgument);  // at the floor

    window.push_back(chain[3]);  // history: its own parent is not given
    ASSERT_TRUE(dag->Anchor(window, lfb, kFloor).ok());
    EXPECT_EQ(dag->size(), 8u);
    EXPECT_EQ(dag->floor(), kFloor);
    EXPECT_EQ(dag->LastFinalized(), lfb);
    for (int n : {5, 6, 7, 8})
      EXPECT_TRUE(dag->IsFinalized(chain[n].hash)) << n;
    EXPECT_FALSE(dag->IsFinalized(chain[9].hash));
    EXPECT_THAT(dag->Tips(), ElementsAre(chain[10].hash));
    EXPECT_THAT(dag->Children(chain[8].hash), ElementsAre(chain[9].hash));
    EXPECT_TRUE(dag->IsAncestor(chain[5].hash, chain[10].hash));
    EXPECT_TRUE(dag->IsAncestor(g.hash, chain[10].hash));  // finalized
    std::vector<Hash32> holders{chain[6].hash, chain[7].hash};
    std::sort(holders.begin(), holders.end());
    EXPECT_EQ(*dag->BlocksWithDeploy(Deploy(4).sig), holders);
    EXPECT_EQ(dag->LatestMessages().at(MakeTestKey(2).pk), chain[10].hash);
    EXPECT_EQ(dag->Anchor(window, lfb, kFloor).code(),
              absl::StatusCode::kFailedPrecondition);  // once
    // Not verified yet (the join verifies it by the blocks above).
    EXPECT_EQ(dag->UnverifiedAnchor(), lfb);

    // It follows the shard: a child, finality, and history below the floor
    // without its parents; above the floor a missing parent is refused.
    const block::Block b11 = MakeBlock(1, 11, 11, {chain[10].hash});
    b11_hash = b11.hash;
    ASSERT_TRUE(*dag->Insert(b11));
    ASSERT_TRUE(dag->SetLastFinalized(chain[10].hash).ok());
    EXPECT_TRUE(dag->IsFinalized(chain[9].hash));
    ASSERT_TRUE(*dag->Insert(chain[2]));
    const block::Block orphan = MakeBlock(2, 12, 12, {StateHash(99)});
    EXPECT_EQ(dag->Insert(orphan).status().code(),
              absl::StatusCode::kFailedPrecondition);
  }
  auto dag = Open();
  ASSERT_NE(dag, nullptr);
  EXPECT_EQ(dag->floor(), kFloor);
  EXPECT_EQ(dag->size(), 10u);
  EXPECT_EQ(dag->LastFinalized(), chain[10].hash);
  EXPECT_FALSE(dag->IsFinalized(StateHash(99)));
  EXPECT_TRUE(dag->Contains(chain[2].hash));
  // History is never a tip.
  EXPECT_THAT(dag->Tips(), ElementsAre(b11_hash));
  // The unverified anchor survives a reopen until it is verified, once.
  EXPECT_EQ(dag->UnverifiedAnchor(), lfb);
  ASSERT_TRUE(dag->SetAnchorVerified().ok());
  EXPECT_FALSE(dag->UnverifiedAnchor().has_value());
  dag.reset();
  dag = Open();
  ASSERT_NE(dag, nullptr);
  EXPECT_FALSE(dag->UnverifiedAnchor().has_value());
}

// Only a DAG holding its genesis alone can be anchored.
TEST_F(DagStoreTest, ADagThatFollowedTheShardIsNotAnchored) {
  auto dag = Open();
  const block::Block g = MakeBlock(1, 0, 0, {});
  const block::Block a = MakeBlock(1, 1, 1, {g.hash});
  ASSERT_TRUE(*dag->Insert(g));
  ASSERT_TRUE(*dag->Insert(a));
  const block::Block b = MakeBlock(2, 1, 2, {a.hash});
  const absl::Status s = dag->Anchor(std::vector<block::Block>{b}, b.hash, 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("holds 2 blocks"));
  EXPECT_FALSE(dag->Contains(b.hash));
}

TEST_F(DagStoreTest, OpenRefusesADamagedStore) {
  const block::Block g = MakeBlock(1, 0, 0, {});
  const block::Block a = MakeBlock(2, 1, 1, {g.hash});
  {
    auto dag = Open();
    ASSERT_TRUE(*dag->Insert(g));
    ASSERT_TRUE(*dag->Insert(a));
  }
  // The parent's metadata record lost (as if deleted by something else).
  rspace::WriteBatch batch;
  batch.Delete(1, g.hash);
  ASSERT_TRUE(store_.Write(batch).ok());
  auto r = DagStore::Open(&store_, DagColumnsFrom(0));
  ASSERT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("not stored"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(HexEncode(g.hash)));
}

// One writer inserts a chain while readers query the views: every view a
// reader gets is of a DAG prefix (tips are one block, the latest message
// is stored), and the final views hold the whole chain.
TEST_F(DagStoreTest, ReadersRunConcurrentlyWithTheWriter) {
  auto dag = Open();
  std::vector<block::Block> chain{MakeBlock(1, 0, 0, {})};
  for (int i = 1; i < 120; ++i) {
    chain.push_back(
        MakeBlock(static_cast<uint8_t>(1 + i % 2), i, i, {chain.back().hash}));
  }
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::thread writer([&] {
    for (const auto& b : chain) {
      if (!dag->Insert(b).ok()) bad++;
    }
    done = true;
  });
  std::thread reader([&] {
    while (!done) {
      const auto tips = dag->Tips();
      if (tips.size() > 1) bad++;
      for (const auto& [key, hash] : dag->LatestMessages()) {
        if (!dag->Meta(hash).ok()) bad++;
      }
    }
  });
  writer.join();
  reader.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(dag->size(), chain.size());
  EXPECT_THAT(dag->Tips(), ElementsAre(chain.back().hash));
}

// Tips are kept as blocks are inserted (and rebuilt on reopening, where
// the store hands blocks back in key order, children before parents): they
// are always the valid blocks without a valid child.
TEST_F(DagStoreTest, TipsMatchAScanOfARandomDag) {
  std::mt19937_64 rng(
      rnode::testing::TestSeed("DagStoreTest.TipsMatchAScanOfARandomDag", 7));
  auto scan = [](DagStore& dag, const std::vector<block::Block>& blocks) {
    std::set<Hash32> tips;
    for (const auto& b : blocks) {
      if (dag.Meta(b.hash).value()->invalid) continue;
      bool child = false;
      for (const Hash32& c : dag.Children(b.hash)) {
        child = child || !dag.Meta(c).value()->invalid;
      }
      if (!child) tips.insert(b.hash);
    }
    return std::vector<Hash32>(tips.begin(), tips.end());
  };
  std::vector<block::Block> blocks{MakeBlock(1, 0, 0, {})};
  {
    auto dag = Open();
    ASSERT_TRUE(*dag->Insert(blocks[0]));
    for (int i = 1; i < 60; ++i) {
      // One to three parents among the newest blocks, some blocks invalid.
      std::set<Hash32> parents;
      const size_t n = 1 + rng() % 3;
      int64_t number = 0;
      for (size_t k = 0; k < n; ++k) {
        const size_t back = rng() % std::min<size_t>(blocks.size(), 6);
        const block::Block& p = blocks[blocks.size() - 1 - back];
        parents.insert(p.hash);
        number = std::max(number, p.body.state.block_number + 1);
      }
      blocks.push_back(MakeBlock(static_cast<uint8_t>(1 + i % 2), i, number,
                                 {parents.begin(), parents.end()}));
      ASSERT_TRUE(*dag->Insert(blocks.back(), /*invalid=*/rng() % 5 == 0));
      ASSERT_EQ(dag->Tips(), scan(*dag, blocks)) << "after block " << i;
    }
  }
  auto dag = Open();
  EXPECT_EQ(dag->Tips(), scan(*dag, blocks));
}

// A DAG of `n` blocks by three validators, finalized as it grows: a main
// chain, blocks on stale parents, invalid blocks, and a validator that
// stops early (its latest message drops far below the window).
struct GrownDag {
  std::vector<block::Block> blocks;
  std::vector<bool> invalid;                         // By block.
  std::vector<std::pair<size_t, Hash32>> finalized;  // After block i.
};

GrownDag GrowDag(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  GrownDag out;
  out.blocks.push_back(MakeBlock(1, 0, 0, {}));
  out.invalid.push_back(false);
  std::vector<size_t> main{0};
  int32_t seq[4] = {0, 0, 0, 0};
  for (int i = 1; i < n; ++i) {
    // Validator 3 makes blocks only at the start.
    const uint8_t v = i < 10 ? static_cast<uint8_t>(1 + i % 3)
                             : static_cast<uint8_t>(1 + i % 2);
    const block::Block& head = out.blocks[main.back()];
    std::vector<Hash32> parents{head.hash};
    int64_t number = head.body.state.block_number + 1;
    const uint64_t kind = rng() % 10;
    if (kind == 0 && main.size() > 3) {
      // On a stale parent: a side branch that the main chain then merges.
      const block::Block& old = out.blocks[main[main.size() - 3]];
      parents = {old.hash};
      number = old.body.state.block_number + 1;
    } else if (kind == 1 && !out.invalid[out.blocks.size() - 2]) {
      parents.push_back(out.blocks[out.blocks.size() - 2].hash);
    }
    std::sort(parents.begin(), parents.end());
    parents.erase(std::unique(parents.begin(), parents.end()), parents.end());
    const bool invalid = kind == 2;
    out.blocks.push_back(MakeBlock(v, ++seq[v], number, parents, {}, {i}));
    out.invalid.push_back(invalid);
    if (kind != 0 && !invalid) main.push_back(out.blocks.size() - 1);
    if (main.size() > 4 && i % 3 == 0) {
      out.finalized.emplace_back(out.blocks.size() - 1,
                                 out.blocks[main[main.size() - 4]].hash);
    }
  }
  return out;
}

// Every answer of `dag` about `blocks`, in one string, for comparing two
// stores (or one before and after reopening).
std::string Answers(const DagStore& dag,
                    const std::vector<block::Block>& blocks) {
  std::string out = "size " + std::to_string(dag.size()) + " max " +
                    std::to_string(dag.MaxHeight()) + "\n";
  for (int64_t n = 0; n <= dag.MaxHeight(); ++n) {
    out += "height " + std::to_string(n) + ":";
    for (const Hash32& h : dag.AtHeight(n)) out += " " + HexEncode(h);
    out += "\n";
  }
  for (const Hash32& h : dag.Tips()) out += "tip " + HexEncode(h) + "\n";
  for (const Hash32& h : dag.InvalidBlocks())
    out += "bad " + HexEncode(h) + "\n";
  for (const auto& [k, h] : dag.LatestMessages()) {
    out += "latest " + HexEncode(k) + " " + HexEncode(h) + "\n";
  }
  out += "lfb " + (dag.LastFinalized() ? HexEncode(*dag.LastFinalized()) : "-");
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Hash32& h = blocks[i].hash;
    auto meta = dag.Meta(h);
    out += "\n" + HexEncode(h) + (dag.Contains(h) ? " in" : " out") +
           (meta.ok() && **meta == MetaOf(blocks[i], (*meta)->invalid)
                ? " meta"
                : " no-meta") +
           (dag.IsFinalized(h) ? " final" : "") + " kids";
    for (const Hash32& c : dag.Children(h))
      out += " " + HexEncode(c).substr(0, 8);
    // Ancestry against a few earlier blocks.
    for (size_t back : {size_t{1}, size_t{7}, size_t{40}}) {
      if (back <= i) {
        out += dag.IsAncestor(blocks[i - back].hash, h) ? " A" : " -";
      }
    }
  }
  return out;
}

// The window bounds what memory holds, and every query answers as it does
// with the whole DAG in memory: while the DAG grows, after reopening, and
// for a store written before the indexes existed.
TEST(DagWindowTest, EvictedBlocksAnswerAsInMemory) {
  const uint64_t seed = rnode::testing::TestSeed(
      "DagWindowTest.EvictedBlocksAnswerAsInMemory", 21);
  const int n = rnode::testing::kUnderSanitizer ? 300 : 1200;
  const GrownDag grown = GrowDag(seed, n);
  rspace::InMemoryStore small_store(4), whole_store(4);
  auto small = DagStore::Open(&small_store, DagColumnsFrom(0),
                              {.kept_below_finalized = 8});
  auto whole = DagStore::Open(&whole_store, DagColumnsFrom(0),
                              {.kept_below_finalized = 1'000'000});
  ASSERT_TRUE(small.ok() && whole.ok());
  size_t next_final = 0;
  size_t most_in_memory = 0;
  for (size_t i = 0; i < grown.blocks.size(); ++i) {
    const block::Block& b = grown.blocks[i];
    ASSERT_TRUE(*(*small)->Insert(b, grown.invalid[i])) << i;
    ASSERT_TRUE(*(*whole)->Insert(b, grown.invalid[i])) << i;
    while (next_final < grown.finalized.size() &&
           grown.finalized[next_final].first == i) {
      const Hash32& f = grown.finalized[next_final++].second;
      ASSERT_TRUE((*small)->SetLastFinalized(f).ok());
      ASSERT_TRUE((*whole)->SetLastFinalized(f).ok());
    }
    most_in_memory = std::max(most_in_memory, (*small)->window_size());
    if (i % 97 == 0) {
      ASSERT_EQ(Answers(**small, grown.blocks), Answers(**whole, grown.blocks))
          << "after block " << i;
    }
  }
  // A late block on a branch far below the window.
  const block::Block late = MakeBlock(2, 9999, 3, {grown.blocks[1].hash});
  ASSERT_TRUE(*(*small)->Insert(late));
  ASSERT_TRUE(*(*whole)->Insert(late));
  std::vector<block::Block> all = grown.blocks;
  all.push_back(late);
  const std::string expected = Answers(**whole, all);
  EXPECT_EQ(Answers(**small, all), expected);
  EXPECT_EQ((*whole)->window_size(), all.size());
  // The window: 8 numbers below the finalized block, the few above it, and
  // a block or two per number.
  EXPECT_LT(most_in_memory, 80u);
  EXPECT_GT(next_final, static_cast<size_t>(n) / 4);

  small->reset();
  auto reopen = [&] {
    return DagStore::Open(&small_store, DagColumnsFrom(0),
                          {.kept_below_finalized = 8});
  };
  auto reopened = reopen();
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_LT((*reopened)->window_size(), 80u);
  EXPECT_EQ(Answers(**reopened, all), expected);

  // A store without the indexes (written before they existed): the state
  // column held only the last finalized block.
  std::vector<Bytes> index_keys;
  ASSERT_TRUE(small_store
                  .ForEach(3,
                           [&](ByteView key, ByteView) {
                             if (std::string(key.begin(), key.end()) !=
                                 "last-finalized") {
                               index_keys.emplace_back(key.begin(), key.end());
                             }
                             return absl::OkStatus();
                           })
                  .ok());
  ASSERT_GT(index_keys.size(), all.size());
  rspace::WriteBatch wipe;
  for (const Bytes& k : index_keys) wipe.Delete(3, k);
  ASSERT_TRUE(small_store.Write(wipe).ok());
  reopened->reset();
  auto rebuilt = reopen();
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  EXPECT_LT((*rebuilt)->window_size(), 80u);
  EXPECT_EQ(Answers(**rebuilt, all), expected);
  rebuilt->reset();
  auto again = reopen();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(Answers(**again, all), expected);
}

// Whether the genesis (or any finalized block) is an ancestor of a block
// above the last finalized one is answered from the window: a walk down to
// the last finalized block, not a read of the whole chain below it.
TEST(DagWindowTest, AFinalizedAncestorIsFoundWithoutReadingTheChain) {
  rspace::InMemoryStore base(4);
  rspace::FaultInjectingStore store(&base);
  auto dag =
      DagStore::Open(&store, DagColumnsFrom(0), {.kept_below_finalized = 8});
  ASSERT_TRUE(dag.ok());
  std::vector<block::Block> chain{MakeBlock(1, 0, 0, {})};
  ASSERT_TRUE(*(*dag)->Insert(chain[0]));
  for (int i = 1; i < 400; ++i) {
    chain.push_back(
        MakeBlock(static_cast<uint8_t>(1 + i % 2), i, i, {chain.back().hash}));
    ASSERT_TRUE(*(*dag)->Insert(chain.back()));
    if (i >= 4) {
      ASSERT_TRUE((*dag)->SetLastFinalized(chain[i - 4].hash).ok());
    }
  }
  // A side block on an old block: not a descendant of the finalized one.
  const block::Block side = MakeBlock(2, 999, 11, {chain[10].hash});
  ASSERT_TRUE(*(*dag)->Insert(side));
  const uint64_t before = store.reads();
  EXPECT_TRUE((*dag)->IsAncestor(chain[0].hash, chain.back().hash));
  EXPECT_TRUE((*dag)->IsAncestor(chain[200].hash, chain.back().hash));
  EXPECT_LT(store.reads() - before, 10u);
  // Off the finalized chain the walk still answers, reading what it must.
  EXPECT_TRUE((*dag)->IsAncestor(chain[3].hash, side.hash));
  EXPECT_FALSE((*dag)->IsAncestor(side.hash, chain.back().hash));
  EXPECT_FALSE((*dag)->IsAncestor(chain[12].hash, side.hash));
}

// Meta tells a block that is not stored (NotFound) from one whose record
// could not be read (the store's error): below the window a block is read
// from the store, and a failed read is not "absent".
TEST(DagWindowTest, MetaTellsAReadFailureFromAMissingBlock) {
  rspace::InMemoryStore base(4);
  rspace::FaultInjectingStore store(&base);
  auto dag =
      DagStore::Open(&store, DagColumnsFrom(0), {.kept_below_finalized = 2});
  ASSERT_TRUE(dag.ok());
  std::vector<block::Block> chain{MakeBlock(1, 0, 0, {})};
  ASSERT_TRUE(*(*dag)->Insert(chain[0]));
  for (int i = 1; i < 20; ++i) {
    chain.push_back(MakeBlock(1, i, i, {chain.back().hash}));
    ASSERT_TRUE(*(*dag)->Insert(chain.back()));
  }
  ASSERT_TRUE((*dag)->SetLastFinalized(chain[15].hash).ok());
  // chain[0] is below the window: its metadata comes from the store.
  ASSERT_TRUE((*dag)->Meta(chain[0].hash).ok());
  EXPECT_EQ((*dag)->Meta(StateHash(7)).status().code(),
            absl::StatusCode::kNotFound);
  store.FailReadsAfter(0);
  EXPECT_EQ((*dag)->Meta(chain[0].hash).status().code(),
            absl::StatusCode::kUnavailable);
  store.Heal();
  EXPECT_EQ((**(*dag)->Meta(chain[0].hash)).block_number, 0);
}

// The soak's stall: a validator whose latest block fell below the last
// finalized one asked, for every peer block, whether the genesis (the
// latest block of its sender) was an ancestor of its own, walking the whole
// chain from the store. The validators are ordered so that the genesis
// sender's key comes first, as it did there.
TEST(DagWindowTest, ALatestBlockBelowTheFinalizedOneIsBehindWithoutAWalk) {
  std::vector<uint8_t> seeds{1, 2, 3};
  std::sort(seeds.begin(), seeds.end(), [](uint8_t a, uint8_t b) {
    return MakeTestKey(a).pk < MakeTestKey(b).pk;
  });
  const uint8_t genesis_sender = seeds[0], stale = seeds[1], busy = seeds[2];
  rspace::InMemoryStore base(4);
  rspace::FaultInjectingStore store(&base);
  auto dag =
      DagStore::Open(&store, DagColumnsFrom(0), {.kept_below_finalized = 8});
  ASSERT_TRUE(dag.ok());
  std::vector<block::Block> chain{MakeBlock(genesis_sender, 0, 0, {})};
  ASSERT_TRUE(*(*dag)->Insert(chain[0]));
  for (int i = 1; i < 400; ++i) {
    const uint8_t sender = i == 300 ? stale : busy;
    chain.push_back(MakeBlock(sender, i, i, {chain.back().hash}));
    ASSERT_TRUE(*(*dag)->Insert(chain.back()));
    if (i >= 4) {
      ASSERT_TRUE((*dag)->SetLastFinalized(chain[i - 4].hash).ok());
    }
  }
  ASSERT_EQ((*dag)->LatestMessages().at(MakeTestKey(stale).pk),
            chain[300].hash);
  uint64_t before = store.reads();
  EXPECT_FALSE(LatestJustifiesOthers(**dag, MakeTestKey(stale).pk));
  EXPECT_LT(store.reads() - before, 10u);
  EXPECT_FALSE(LatestJustifiesOthers(**dag, MakeTestKey(9).pk));
  // The busy validator's latest block is the tip: it justifies the
  // genesis and the stale block, found above the finalized one.
  before = store.reads();
  EXPECT_TRUE(LatestJustifiesOthers(**dag, MakeTestKey(busy).pk));
  EXPECT_LT(store.reads() - before, 10u);
  // A block of the stale validator on the tip catches it up.
  const block::Block caught = MakeBlock(stale, 400, 400, {chain.back().hash});
  ASSERT_TRUE(*(*dag)->Insert(caught));
  EXPECT_TRUE(LatestJustifiesOthers(**dag, MakeTestKey(stale).pk));
  EXPECT_FALSE(LatestJustifiesOthers(**dag, MakeTestKey(busy).pk));
}

// A validator silent since it made a block on a branch finality left: its
// latest block is below the last finalized one and never finalized. It is
// off the chain for good, so the busy validator's block justifies all that
// counts, said without walking down to it (with retention the walk would
// read deleted blocks).
TEST(DagWindowTest, ALatestBlockOffTheFinalizedChainDoesNotCount) {
  rspace::InMemoryStore base(4);
  rspace::FaultInjectingStore store(&base);
  auto dag =
      DagStore::Open(&store, DagColumnsFrom(0), {.kept_below_finalized = 8});
  ASSERT_TRUE(dag.ok());
  const uint8_t busy = 1, silent = 2;
  std::vector<block::Block> chain{MakeBlock(busy, 0, 0, {})};
  ASSERT_TRUE(*(*dag)->Insert(chain[0]));
  for (int i = 1; i < 400; ++i) {
    chain.push_back(MakeBlock(busy, i, i, {chain.back().hash}));
    ASSERT_TRUE(*(*dag)->Insert(chain.back()));
    if (i == 100) {
      // On chain[99] beside chain[100]: never a parent.
      ASSERT_TRUE(
          *(*dag)->Insert(MakeBlock(silent, 1000, 100, {chain[99].hash})));
    }
    if (i >= 4) {
      ASSERT_TRUE((*dag)->SetLastFinalized(chain[i - 4].hash).ok());
    }
  }
  const Hash32 off = (*dag)->LatestMessages().at(MakeTestKey(silent).pk);
  ASSERT_FALSE((*dag)->IsFinalized(off));
  const uint64_t before = store.reads();
  EXPECT_TRUE(LatestJustifiesOthers(**dag, MakeTestKey(busy).pk));
  EXPECT_LT(store.reads() - before, 10u);
}

// Issue 43: a lookup by hash prefix walked every height of the chain. It
// is a seek in the store now; its answers are a brute-force scan's, in the
// in-memory store and in RocksDB (whose scan is a real seek).
TEST(DagPrefixTest, HashPrefixesFindWhatAScanFinds) {
  const uint64_t seed = rnode::testing::TestSeed(
      "DagPrefixTest.HashPrefixesFindWhatAScanFinds", 43);
  const GrownDag grown = GrowDag(seed, 300);
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("rnode-dag-prefix-" + std::to_string(::getpid())))
                              .string();
  std::filesystem::remove_all(dir);
  rspace::InMemoryStore memory(4);
  auto rocks = rspace::RocksDbStore::Open(dir, DagColumnNames());
  ASSERT_TRUE(rocks.ok()) << rocks.status();
  for (rspace::KeyValueStore* store :
       {static_cast<rspace::KeyValueStore*>(&memory),
        static_cast<rspace::KeyValueStore*>(rocks->get())}) {
    auto dag = DagStore::Open(store, DagColumnsFrom(0));
    ASSERT_TRUE(dag.ok()) << dag.status();
    std::vector<std::string> all;
    for (size_t i = 0; i < grown.blocks.size(); ++i) {
      ASSERT_TRUE(*(*dag)->Insert(grown.blocks[i], grown.invalid[i]));
      all.push_back(HexEncode(grown.blocks[i].hash));
    }
    std::sort(all.begin(), all.end());
    const auto scan = [&](const std::string& prefix, size_t max) {
      std::vector<std::string> out;
      for (const std::string& h : all) {
        if (h.starts_with(prefix) && out.size() < max) out.push_back(h);
      }
      return out;
    };
    for (const std::string& h : all) {
      for (size_t len : {1, 2, 3, 7, 64}) {
        const std::string prefix = h.substr(0, len);
        auto found = (*dag)->HashesWithPrefix(prefix, 4);
        ASSERT_TRUE(found.ok()) << found.status();
        std::vector<std::string> hex;
        for (const Hash32& f : *found) hex.push_back(HexEncode(f));
        ASSERT_EQ(hex, scan(prefix, 4)) << prefix;
      }
    }
    EXPECT_TRUE((*dag)->HashesWithPrefix("ffffffffffffff", 2)->size() <= 2);
    for (const std::string& bad :
         std::vector<std::string>{"", "AB", "0g", std::string(65, '0')}) {
      EXPECT_EQ((*dag)->HashesWithPrefix(bad, 2).status().code(),
                absl::StatusCode::kInvalidArgument)
          << bad;
    }
  }
  rocks->reset();
  std::filesystem::remove_all(dir);
}

TEST(BlockMetaTest, CodecRoundTripsAndRefusesDamage) {
  const BlockMeta meta =
      MetaOf(MakeBlock(1, 3, 4, {StateHash(1), StateHash(2)},
                       {{MakeTestKey(1).pk, StateHash(3)}}, {1, 2}),
             true);
  const Bytes bytes = EncodeBlockMeta(meta);
  auto back = DecodeBlockMeta(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, meta);
  for (size_t cut : {size_t{0}, size_t{1}, size_t{40}, bytes.size() - 1}) {
    auto r = DecodeBlockMeta(ByteView(bytes.data(), cut));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << cut;
  }
  Bytes longer = bytes;
  longer.push_back(0);
  EXPECT_EQ(DecodeBlockMeta(longer).status().code(),
            absl::StatusCode::kDataLoss);
  Bytes version = bytes;
  version[0] = 9;
  EXPECT_THAT(std::string(DecodeBlockMeta(version).status().message()),
              HasSubstr("bad version"));
  Bytes flags = bytes;
  flags.back() = 0x80;
  EXPECT_EQ(DecodeBlockMeta(flags).status().code(),
            absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace rnode::casper::dag

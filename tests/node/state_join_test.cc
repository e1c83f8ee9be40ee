// Tests for StateJoin (node/core/state_join.h): what a peer sends while a
// node joins is held within a bound, whatever the peer sends; and once
// anchored, the join is over only when the blocks above the anchor make
// it final. The join runs without a transport (it asks nothing; the tests
// hand it blocks and range ends); its peers' last finalized blocks come to
// a ChainSync as heights; its tries are all held already.
#include "node/core/state_join.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "casper/block/block.h"
#include "casper/dag/dag_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "node/core/chain_sync.h"
#include "rnode_sync.pb.h"
#include "rspace/storage/kv_store.h"
#include "tests/casper/test_key.h"
#include "tests/eventually.h"

namespace rnode::node {
namespace {

using casper::block::Block;
using ::rnode::testing::Eventually;

constexpr int64_t kAnchorNumber = 40;
constexpr int64_t kWindow = 10;
constexpr int64_t kFloor = kAnchorNumber - kWindow;
constexpr size_t kMaxBlocks = 8;

// A block sealed by test key `seed`, numbered `number`, its `salt` making
// it distinct (a peer can make as many as it likes).
Block Sealed(uint8_t seed, int64_t number, int salt) {
  Block b;
  b.shard_id = "root";
  b.body.state.block_number = number;
  b.header.timestamp = salt;
  b.seq_num = salt;
  EXPECT_TRUE(
      casper::block::SignBlock(b, casper::testing::MakeTestKey(seed).sk).ok());
  return b;
}

// A block of a shard of validators 1, 2 and 3 (stake 10 each), by
// validator `seed`, numbered `number`, on `parent`, justifying `justified`.
Block ShardBlock(uint8_t seed, int64_t number, const Block* parent,
                 const std::vector<const Block*>& justified) {
  Block b;
  b.shard_id = "root";
  b.body.state.block_number = number;
  b.body.state.pre_state = Hash32{static_cast<uint8_t>(number), 1};
  b.body.state.post_state = Hash32{static_cast<uint8_t>(number), 2};
  for (uint8_t v : {1, 2, 3}) {
    b.body.state.bonds.push_back({casper::testing::MakeTestKey(v).pk, 10});
  }
  if (parent != nullptr) b.header.parents.push_back(parent->hash);
  for (const Block* j : justified)
    b.justifications.push_back({j->sender, j->hash});
  b.header.timestamp = 1'700'000'000'000 + number;
  b.seq_num = static_cast<int32_t>(number);
  EXPECT_TRUE(
      casper::block::SignBlock(b, casper::testing::MakeTestKey(seed).sk).ok());
  return b;
}

// The validator who makes block `number` of the chain below: 1, 2, 3 in
// turn.
uint8_t Maker(int64_t number) { return static_cast<uint8_t>(number % 3 + 1); }

// Blocks `from`.. `to` on `chain` (whose last block is `to` - 1's parent):
// each on the one before, justifying the three before it at or above
// `lowest` (a window's floor: what a join holds).
void Extend(std::vector<Block>& chain, int64_t to, int64_t lowest) {
  while (static_cast<int64_t>(chain.size()) <= to) {
    const int64_t n = static_cast<int64_t>(chain.size());
    std::vector<const Block*> justified;
    for (int64_t k = std::max(lowest, n - 3); k < n; ++k) {
      justified.push_back(&chain[k]);
    }
    chain.push_back(ShardBlock(Maker(n), n, &chain.back(), justified));
  }
}

p2p::PeerNode Peer(uint8_t id) {
  p2p::PeerNode p;
  p.id = Bytes(20, id);
  return p;
}

class StateJoinTest : public ::testing::Test {
 protected:
  StateJoinTest() : store_(4) {
    dag_ =
        *casper::dag::DagStore::Open(&store_, casper::dag::DagColumnsFrom(0));
    sync_ = std::make_unique<ChainSync>(dag_.get(), ChainSyncOptions{});
  }
  ~StateJoinTest() override {
    if (join_ != nullptr) join_->Stop();
    sync_->Stop();
  }

  // The DAG holds `genesis`; a join over it whose tries are all held
  // already (nothing is fetched), with `deps` for the rest.
  void MakeJoin(const Block* genesis, StateJoinOptions options,
                StateJoin::Deps deps = {}) {
    if (genesis != nullptr) {
      ASSERT_TRUE(*dag_->Insert(*genesis));
    }
    options.min_finalized_number = 1;
    options.window_numbers = kWindow;
    options.tick = std::chrono::milliseconds(1);
    deps.dag = dag_.get();
    deps.store = &store_;
    deps.sync = sync_.get();
    deps.has_root = [](const Hash32&) { return true; };
    if (!deps.hand_on) deps.hand_on = [](Block) {};
    join_ = std::make_unique<StateJoin>(std::move(deps), options);
  }

  // A join that holds at most kMaxBlocks.
  void MakeBoundedJoin() {
    StateJoinOptions options;
    options.max_blocks = kMaxBlocks;
    const Block genesis = Sealed(1, 0, 0);
    MakeJoin(&genesis, options);
  }

  // Two peers tell the anchor as their last finalized block; the join
  // chooses it and starts fetching blocks (with no transport: it sends
  // nothing, and takes what comes).
  void ChooseAnchor(const Hash32& anchor = Hash32{0x7a}) {
    sync::ChainHeight h;
    h.set_max_number(kAnchorNumber + 5);
    h.set_finalized_number(kAnchorNumber);
    h.set_finalized_hash(std::string(anchor.begin(), anchor.end()));
    for (uint8_t p : {1, 2}) {
      sync_->OnPacket(Peer(p), packet::kChainHeight, h.SerializeAsString());
    }
    join_->Start(nullptr);
    ASSERT_TRUE(Eventually(
        [&] { return join_->Progress().phase == JoinPhase::kBlocks; }));
    ASSERT_EQ(join_->Progress().floor, kAnchorNumber - kWindow);
  }

  // Hands the join the blocks from `floor` to the anchor as a peer's
  // range would, and ends the range (once the join has asked for it: its
  // thread records the request a tick after choosing).
  void HandWindow(const std::vector<Block>& chain, int64_t floor) {
    for (int64_t n = floor; n <= kAnchorNumber; ++n) {
      Block copy = chain[n];  // OnBlock takes what it holds
      EXPECT_TRUE(join_->OnBlock(Peer(3), copy));
    }
    EXPECT_TRUE(Eventually([&] {
      join_->OnRangeEnd(Peer(1), floor, kAnchorNumber + 1);
      join_->OnRangeEnd(Peer(2), floor, kAnchorNumber + 1);
      return join_->Progress().phase != JoinPhase::kBlocks;
    }));
  }

  // The verification tests' join: the clique oracle at 0.1, checked every
  // millisecond, overdue after 50 ms; `done_` once settled.
  StateJoinOptions VerifyOptions() const {
    StateJoinOptions options;
    options.verify_interval = std::chrono::milliseconds(1);
    options.verify_overdue = std::chrono::milliseconds(50);
    return options;
  }
  StateJoin::Deps VerifyDeps() {
    StateJoin::Deps deps;
    deps.anchor_final = [this](const Hash32& anchor) {
      return AnchorIsFinal(*dag_, anchor, 100'000);
    };
    deps.done = [this] { done_ = true; };
    return deps;
  }
  // Blocks 0..40 of validators 1, 2 and 3 in turn (chain_), and such a
  // join anchored at block 40, verifying.
  void AnchorOnTheChain() {
    chain_ = {ShardBlock(1, 0, nullptr, {})};
    Extend(chain_, kAnchorNumber, kFloor);
    MakeJoin(&chain_[0], VerifyOptions(), VerifyDeps());
    ChooseAnchor(chain_[kAnchorNumber].hash);
    HandWindow(chain_, kFloor);
    ASSERT_TRUE(Eventually(
        [&] { return join_->Progress().phase == JoinPhase::kVerifying; }));
  }

  std::vector<Block> chain_;
  std::atomic<bool> done_{false};
  rspace::InMemoryStore store_;
  std::unique_ptr<casper::dag::DagStore> dag_;
  std::unique_ptr<ChainSync> sync_;
  std::unique_ptr<StateJoin> join_;
};

// A peer sending block after validly sealed block in the window's numbers
// (its own key: whether a sender is bonded is only known once the anchor
// is there) fills the bound and no more.
TEST_F(StateJoinTest, BlocksHeldStayWithinTheBound) {
  MakeBoundedJoin();
  ChooseAnchor();
  for (int i = 0; i < 50; ++i) {
    Block b = Sealed(9, kAnchorNumber - 1, i + 1);
    EXPECT_TRUE(join_->OnBlock(Peer(3), b));
  }
  EXPECT_EQ(join_->Progress().blocks, kMaxBlocks);
}

// Below the floor a block is history the join asked for by hash; one it
// did not ask for is not held. A block whose seal does not check is not
// held either, and is counted.
TEST_F(StateJoinTest, UnaskedHistoryAndBadSealsAreNotHeld) {
  MakeBoundedJoin();
  ChooseAnchor();
  Block old = Sealed(9, kAnchorNumber - kWindow - 1, 1);
  EXPECT_TRUE(join_->OnBlock(Peer(3), old));
  Block forged = Sealed(9, kAnchorNumber - 1, 2);
  forged.seq_num = 99;  // the hash no longer matches
  EXPECT_TRUE(join_->OnBlock(Peer(3), forged));
  const JoinProgress p = join_->Progress();
  EXPECT_EQ(p.blocks, 0u);
  EXPECT_EQ(p.bad_blocks, 1u);
  Block fine = Sealed(9, kAnchorNumber - 1, 3);
  EXPECT_TRUE(join_->OnBlock(Peer(3), fine));
  EXPECT_EQ(join_->Progress().blocks, 1u);
}

// Anchored, the join is not over until the blocks above the anchor, which
// the node validates itself, make it final by the clique oracle: with none
// it stays verifying (and says so once overdue), not ready; once all three
// validators built on it, it is done.
TEST_F(StateJoinTest, TheAnchorIsVerifiedByTheBlocksAboveIt) {
  AnchorOnTheChain();
  std::vector<Block>& chain = chain_;
  ASSERT_TRUE(Eventually([&] { return !join_->Progress().error.empty(); }));
  EXPECT_EQ(dag_->LastFinalized(), chain[kAnchorNumber].hash);
  EXPECT_THAT(join_->Progress().error, ::testing::HasSubstr("not final"));
  EXPECT_FALSE(join_->active());  // blocks go to the engine
  EXPECT_FALSE(join_->settled());
  EXPECT_FALSE(done_.load());
  EXPECT_EQ(dag_->UnverifiedAnchor(), chain[kAnchorNumber].hash);

  // A restart before the anchor is verified: the new join only verifies
  // (blocks go to the engine at once), and is not settled until then.
  join_->Stop();
  MakeJoin(nullptr, VerifyOptions(), VerifyDeps());
  EXPECT_FALSE(join_->active());
  Block late = chain[kAnchorNumber];
  EXPECT_FALSE(join_->OnBlock(Peer(3), late));  // the engine's
  join_->Start(nullptr);
  ASSERT_TRUE(Eventually([&] {
    const JoinProgress p = join_->Progress();
    return p.phase == JoinPhase::kVerifying && !p.error.empty();
  }));
  EXPECT_EQ(join_->Progress().anchor_number, kAnchorNumber);
  EXPECT_FALSE(join_->settled());
  EXPECT_FALSE(done_.load());

  Extend(chain, kAnchorNumber + 6, kFloor);
  for (int64_t n = kAnchorNumber + 1; n <= kAnchorNumber + 6; ++n) {
    ASSERT_TRUE(*dag_->Insert(chain[n]));
  }
  ASSERT_TRUE(Eventually([&] { return join_->settled(); }));
  EXPECT_TRUE(done_.load());
  const JoinProgress p = join_->Progress();
  EXPECT_EQ(p.phase, JoinPhase::kDone);
  EXPECT_EQ(p.error, "");
  // Recorded: reopened, the DAG has no anchor left to verify.
  EXPECT_FALSE(dag_->UnverifiedAnchor().has_value());
  auto reopened =
      casper::dag::DagStore::Open(&store_, casper::dag::DagColumnsFrom(0));
  ASSERT_TRUE(reopened.ok());
  EXPECT_FALSE((*reopened)->UnverifiedAnchor().has_value());
}

// Validator 3 fell silent at block #5, far below the window's floor: the
// window's blocks justify its latest block, and the peers' retention keeps
// that block and what it justifies, which validating its next block
// reads. The join fetches both before it anchors, and the DAG holds them
// (a validator that joined again once failed every proposal for want of
// them: chaos beyond-history).
TEST_F(StateJoinTest, ASilentValidatorsLatestBlockComesWithWhatItJustifies) {
  // 0..5 by 1, 2, 3 in turn; then 1 and 2 alone; each block justifies every
  // validator's latest block.
  std::vector<Block> chain{ShardBlock(1, 0, nullptr, {})};
  std::map<uint8_t, size_t> latest{{1, 0}};
  for (int64_t n = 1; n <= kAnchorNumber; ++n) {
    const uint8_t maker = n <= 5 ? Maker(n) : static_cast<uint8_t>(1 + n % 2);
    std::vector<const Block*> justified;
    for (const auto& [v, at] : latest) justified.push_back(&chain[at]);
    chain.push_back(ShardBlock(maker, n, &chain.back(), justified));
    latest[maker] = chain.size() - 1;
  }
  ASSERT_EQ(latest.at(3), 5u);
  MakeJoin(&chain[0], StateJoinOptions{});
  ChooseAnchor(chain[kAnchorNumber].hash);
  for (int64_t n = kFloor; n <= kAnchorNumber; ++n) {
    Block copy = chain[n];
    EXPECT_TRUE(join_->OnBlock(Peer(3), copy));
  }
  // Each block below the floor once the join has asked for it (once the
  // range has ended, for #5).
  auto hand = [&](int64_t n) {
    const uint64_t before = join_->Progress().blocks;
    return Eventually([&] {
      join_->OnRangeEnd(Peer(1), kFloor, kAnchorNumber + 1);
      join_->OnRangeEnd(Peer(2), kFloor, kAnchorNumber + 1);
      Block copy = chain[n];
      EXPECT_TRUE(join_->OnBlock(Peer(3), copy));
      return join_->Progress().blocks > before;
    });
  };
  // #31 justifies #29, by validator 2, below the floor: asked as usual.
  ASSERT_TRUE(hand(29));
  ASSERT_TRUE(hand(5));
  // #5 justifies #2 (its own), #3 and #4: the join waits for them.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(join_->Progress().phase, JoinPhase::kBlocks);
  for (int64_t n : {2, 3, 4}) ASSERT_TRUE(hand(n)) << n;
  ASSERT_TRUE(Eventually([&] { return join_->settled(); }))
      << JoinPhaseName(join_->Progress().phase) << " "
      << join_->Progress().error;
  for (int64_t n : {2, 3, 4, 5, 29}) {
    EXPECT_TRUE(dag_->Contains(chain[n].hash)) << n;
  }
  EXPECT_EQ(dag_->LatestMessages().at(casper::testing::MakeTestKey(3).pk),
            chain[5].hash);
}

// Peers named a block the shard did not build on: validators 1 and 3 went
// on from its parent. It is never verified, and the node never ready.
TEST_F(StateJoinTest, AnAnchorTheShardLeftIsNeverVerified) {
  AnchorOnTheChain();
  const std::vector<Block>& chain = chain_;
  // The shard's real chain: from block #39, by 3 and 1 in turn, each
  // seeing the other.
  const Block& fork_base = chain[kAnchorNumber - 1];
  std::vector<Block> fork;
  for (int i = 0; i < 6; ++i) {
    const Block& parent = fork.empty() ? fork_base : fork.back();
    std::vector<const Block*> justified{&parent};
    if (fork.size() >= 2) justified.push_back(&fork[fork.size() - 2]);
    fork.push_back(
        ShardBlock(i % 2 == 0 ? 3 : 1, kAnchorNumber + i, &parent, justified));
    ASSERT_TRUE(*dag_->Insert(fork.back()));
  }
  ASSERT_TRUE(Eventually([&] { return !join_->Progress().error.empty(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(join_->Progress().phase, JoinPhase::kVerifying);
  EXPECT_FALSE(join_->settled());
  EXPECT_FALSE(done_.load());
}

}  // namespace
}  // namespace rnode::node

// Tests for StateJoin's intake of blocks from peers (node/core/state_join.h):
// what a peer sends while a node joins is held within a bound, whatever
// the peer sends. The join runs without a transport (it asks nothing);
// its peers' last finalized blocks come to a ChainSync as heights.
#include "node/core/state_join.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "casper/block/block.h"
#include "casper/dag/dag_store.h"
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
constexpr int64_t kWindow = 10;  // the floor is #30
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

p2p::PeerNode Peer(uint8_t id) {
  p2p::PeerNode p;
  p.id = Bytes(20, id);
  return p;
}

class StateJoinTest : public ::testing::Test {
 protected:
  StateJoinTest() : store_(4) {
    dag_ = *casper::dag::DagStore::Open(&store_,
                                        casper::dag::DagColumnsFrom(0));
    EXPECT_TRUE(*dag_->Insert(Sealed(1, 0, 0)));
    sync_ = std::make_unique<ChainSync>(dag_.get(), ChainSyncOptions{});
    StateJoinOptions options;
    options.min_finalized_number = 1;
    options.window_numbers = kWindow;
    options.max_blocks = kMaxBlocks;
    options.tick = std::chrono::milliseconds(1);
    StateJoin::Deps deps;
    deps.dag = dag_.get();
    deps.store = &store_;
    deps.sync = sync_.get();
    deps.has_root = [](const Hash32&) { return false; };
    deps.hand_on = [](Block) {};
    join_ = std::make_unique<StateJoin>(std::move(deps), options);
  }
  ~StateJoinTest() override {
    join_->Stop();
    sync_->Stop();
  }

  // Two peers tell the anchor as their last finalized block; the join
  // chooses it and starts fetching blocks (with no transport: it sends
  // nothing, and takes what comes).
  void ChooseAnchor() {
    sync::ChainHeight h;
    h.set_max_number(kAnchorNumber + 5);
    h.set_finalized_number(kAnchorNumber);
    h.set_finalized_hash(std::string(32, '\x7a'));
    for (uint8_t p : {1, 2}) {
      sync_->OnPacket(Peer(p), packet::kChainHeight, h.SerializeAsString());
    }
    join_->Start(nullptr);
    ASSERT_TRUE(Eventually(
        [&] { return join_->Progress().phase == JoinPhase::kBlocks; }));
    ASSERT_EQ(join_->Progress().floor, kAnchorNumber - kWindow);
  }

  rspace::InMemoryStore store_;
  std::unique_ptr<casper::dag::DagStore> dag_;
  std::unique_ptr<ChainSync> sync_;
  std::unique_ptr<StateJoin> join_;
};

// A peer sending block after validly sealed block in the window's numbers
// (its own key: whether a sender is bonded is only known once the anchor
// is there) fills the bound and no more.
TEST_F(StateJoinTest, BlocksHeldStayWithinTheBound) {
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

}  // namespace
}  // namespace rnode::node

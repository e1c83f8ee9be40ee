// Tests for ChainSync (catching up by height): two nodes on 127.0.0.1, each
// a DAG with a ChainSync over a real transport; a node's handler stores the
// blocks it receives as the engine would (a block waits until its parent
// is stored), and records how far above its highest block they came.
#include "node/core/chain_sync.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "casper/block/block_codec.h"
#include "casper/dag/dag_store.h"
#include "gtest/gtest.h"
#include "node/core/network.h"
#include "node/p2p/transport.h"
#include "rnode_sync.pb.h"
#include "rspace/storage/kv_store.h"
#include "tests/casper/test_key.h"
#include "tests/eventually.h"
#include "tests/node/node_ids.h"
#include "util/bytes.h"
#include "util/mutex.h"

namespace rnode::node {
namespace {

using casper::block::Block;
using ::rnode::testing::Eventually;
using std::chrono::milliseconds;

constexpr char kNetwork[] = "testnet";

// Block `seed`'s block numbered `number` on `parent` (genesis: none).
Block MakeBlock(uint8_t seed, int64_t number, const Hash32* parent) {
  Block b;
  b.sender = casper::testing::MakeTestKey(seed).pk;
  b.shard_id = "root";
  b.body.state.block_number = number;
  if (parent != nullptr) b.header.parents = {*parent};
  b.hash = casper::block::ComputeBlockHash(b);
  return b;
}

// Genesis, then `numbers` numbers of `per_number` blocks each, every block
// on the first block of the number below.
std::vector<Block> MakeChain(int64_t numbers, uint8_t per_number) {
  std::vector<Block> chain{MakeBlock(1, 0, nullptr)};
  Hash32 below = chain[0].hash;
  for (int64_t n = 1; n <= numbers; ++n) {
    const Hash32 parent = below;
    for (uint8_t v = 0; v < per_number; ++v) {
      chain.push_back(MakeBlock(static_cast<uint8_t>(1 + v), n, &parent));
      if (v == 0) below = chain.back().hash;
    }
  }
  return chain;
}

// Faster than the node's timings, the same shape.
ChainSyncOptions FastSync() {
  ChainSyncOptions o;
  o.tick = milliseconds(20);
  o.ask_interval_behind = milliseconds(100);
  o.ask_interval = milliseconds(200);
  o.request_timeout = milliseconds(1000);
  o.alone_grace = milliseconds(200);
  return o;
}

// One side: a DAG, its ChainSync and a transport. Blocks that arrive are
// stored once their parent is; the rest wait in `pending_`.
class Side : public p2p::PacketHandler {
 public:
  Side(uint8_t identity, const std::vector<Block>& stored,
       const ChainSyncOptions& options) {
    dag_ =
        *casper::dag::DagStore::Open(&store_, casper::dag::DagColumnsFrom(0));
    for (const Block& b : stored) EXPECT_TRUE(*dag_->Insert(b));
    sync_ = std::make_unique<ChainSync>(dag_.get(), options);
    absl::StatusOr<std::unique_ptr<p2p::Transport>> t = p2p::Transport::Start(
        rnode::testing::FastTransportOptions(
            rnode::testing::TestIdentity(identity), kNetwork),
        this, nullptr);
    EXPECT_TRUE(t.ok()) << t.status();
    if (t.ok()) transport_ = *std::move(t);
  }
  ~Side() override {
    sync_->Stop();
    transport_.reset();
  }
  void Attach() { sync_->Attach(transport_.get()); }

  void OnPacket(const p2p::PeerNode& from, const std::string& type_id,
                std::string content, bool streamed) override {
    if (ChainSync::Handles(type_id)) {
      sync_->OnPacket(from, type_id, content);
      return;
    }
    if (type_id == packet::kForkChoiceTipRequest) {
      MutexLock lock(&mu_);
      ++tip_requests_;
      return;
    }
    if (type_id != packet::kBlockMessage || !streamed) return;
    absl::StatusOr<Block> b = casper::block::DecodeBlock(
        ByteView(reinterpret_cast<const uint8_t*>(content.data()),
                 content.size()),
        size_t{1} << 20);
    if (!b.ok()) return;
    MutexLock lock(&mu_);
    ++received_;
    max_above_ = std::max(max_above_, b->number() - dag_->MaxHeight());
    pending_.emplace(b->hash, *std::move(b));
    // Store what can be, until nothing moves.
    for (bool moved = true; moved;) {
      moved = false;
      for (auto it = pending_.begin(); it != pending_.end();) {
        if (dag_->Contains(it->second.header.parents[0])) {
          (void)dag_->Insert(it->second);
          it = pending_.erase(it);
          moved = true;
        } else {
          ++it;
        }
      }
    }
    max_pending_ = std::max(max_pending_, pending_.size());
  }
  void OnConnected(const p2p::PeerNode& peer) override {
    sync_->OnConnected(peer);
  }

  void Connect(Side& other) {
    ASSERT_TRUE(transport_->AddPeer(other.transport_->self()));
    ASSERT_TRUE(Eventually([&] {
      return !transport_->Connected().empty() &&
             !other.transport_->Connected().empty();
    }));
  }

  casper::dag::DagStore& dag() { return *dag_; }
  ChainSync& sync() { return *sync_; }
  p2p::Transport& transport() { return *transport_; }
  int64_t max_above() const {
    MutexLock lock(&mu_);
    return max_above_;
  }
  size_t max_pending() const {
    MutexLock lock(&mu_);
    return max_pending_;
  }
  size_t received() const {
    MutexLock lock(&mu_);
    return received_;
  }
  int tip_requests() const {
    MutexLock lock(&mu_);
    return tip_requests_;
  }

 private:
  rspace::InMemoryStore store_{4};
  std::unique_ptr<casper::dag::DagStore> dag_;
  std::unique_ptr<ChainSync> sync_;
  std::unique_ptr<p2p::Transport> transport_;
  mutable Mutex mu_;
  std::map<Hash32, Block> pending_ ABSL_GUARDED_BY(mu_);
  int64_t max_above_ ABSL_GUARDED_BY(mu_) = 0;
  size_t max_pending_ ABSL_GUARDED_BY(mu_) = 0;
  size_t received_ ABSL_GUARDED_BY(mu_) = 0;
  int tip_requests_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST(ChainSyncTest, TheTargetIsTheSecondHighestHeight) {
  EXPECT_EQ(ChainSync::Target({}), -1);
  EXPECT_EQ(ChainSync::Target({7}), 7);
  EXPECT_EQ(ChainSync::Target({7, 9}), 7);
  // One peer's made-up height alone moves nothing.
  EXPECT_EQ(ChainSync::Target({12, 1'000'000'000, 10}), 12);
  EXPECT_EQ(ChainSync::Target({5, 5, 5}), 5);
}

// Issue 48: a node far behind fetched the gap by parents from the tip and
// held it all in its buffer. Now it asks by height: every block arrives at
// most ahead + window numbers above its highest stored block, whatever
// the gap, and it catches up.
TEST(ChainSyncTest, AFarBehindNodeFetchesByHeightWithinTheWindow) {
  const std::vector<Block> chain = MakeChain(600, 3);
  ChainSyncOptions options = FastSync();
  options.has_bootstrap = true;
  Side ahead(1, chain, FastSync());
  Side behind(2, {chain[0]}, options);
  ahead.Attach();
  behind.Attach();
  EXPECT_EQ(behind.sync().Progress().state, SyncState::kStarting);
  behind.Connect(ahead);
  ASSERT_TRUE(Eventually([&] { return behind.dag().MaxHeight() == 600; },
                         std::chrono::seconds(60)))
      << "at #" << behind.dag().MaxHeight();
  // The last number's other blocks may still be on their way.
  EXPECT_TRUE(Eventually([&] { return behind.dag().size() == chain.size(); }));
  for (const Block& b : chain) {
    if (!behind.dag().Contains(b.hash))
      ADD_FAILURE() << "missing #" << b.number();
  }
  ASSERT_TRUE(Eventually(
      [&] { return behind.sync().Progress().state == SyncState::kCaughtUp; }));
  EXPECT_LE(behind.max_above(), options.ahead + options.window);
  // Blocks waiting for a parent: a window's worth at most (3 per number).
  EXPECT_LE(behind.max_pending(),
            static_cast<size_t>(3 * (options.ahead + options.window)));
  // Caught up, it asked for the peers' tips (what the last ranges left
  // out comes through their parents).
  EXPECT_TRUE(Eventually([&] { return ahead.tip_requests() >= 1; }));
  const SyncCounters c = behind.sync().counters();
  EXPECT_EQ(c.catch_ups, 1u);
  EXPECT_GE(c.caught_up_numbers, 590u);
  EXPECT_GE(c.ranges_asked, 600u / options.window);
  EXPECT_GE(ahead.sync().counters().range_blocks_served, chain.size() - 1);
}

TEST(ChainSyncTest, ANodeWithABootstrapIsStartingUntilAPeerToldItsHeight) {
  const std::vector<Block> chain = MakeChain(3, 1);
  ChainSyncOptions options = FastSync();
  options.has_bootstrap = true;
  Side a(1, chain, FastSync());
  Side b(2, chain, options);
  a.Attach();
  b.Attach();
  std::this_thread::sleep_for(milliseconds(400));  // past alone_grace
  EXPECT_EQ(b.sync().Progress().state, SyncState::kStarting);
  b.Connect(a);
  ASSERT_TRUE(Eventually(
      [&] { return b.sync().Progress().state == SyncState::kCaughtUp; }));
  EXPECT_EQ(b.sync().Progress().target, 3);
  EXPECT_EQ(b.sync().counters().ranges_asked, 0u);
}

// A restarted node a few numbers below its peers (fewer than
// behind_numbers) is not ready until it has them: before it first catches
// up, any gap over near_numbers counts.
TEST(ChainSyncTest, ARestartedNodeAFewNumbersBelowFetchesThemBeforeReady) {
  const std::vector<Block> chain = MakeChain(20, 1);
  ChainSyncOptions options = FastSync();
  options.has_bootstrap = true;
  ASSERT_LT(5, options.behind_numbers);
  Side a(1, chain, FastSync());
  Side b(2, std::vector<Block>(chain.begin(), chain.end() - 5), options);
  a.Attach();
  b.Attach();
  b.Connect(a);
  ASSERT_TRUE(Eventually(
      [&] { return b.sync().Progress().state == SyncState::kCaughtUp; }));
  EXPECT_GE(b.dag().MaxHeight(), 20 - options.near_numbers);
  EXPECT_GE(b.sync().counters().ranges_asked, 1u);
}

// Near but below the peers (a gap ranges leave to the tips), the node asks
// its peers for their tips every round until it has them.
TEST(ChainSyncTest, ANodeJustBelowItsPeersAsksForTheirTips) {
  const std::vector<Block> chain = MakeChain(10, 1);
  ChainSyncOptions options = FastSync();
  options.has_bootstrap = true;
  Side a(1, chain, FastSync());
  // Caught up once (equal), then a is one number ahead.
  Side b(2, std::vector<Block>(chain.begin(), chain.end() - 1), options);
  a.Attach();
  b.Attach();
  b.Connect(a);
  ASSERT_TRUE(Eventually([&] { return a.tip_requests() >= 2; }))
      << a.tip_requests();
  EXPECT_EQ(b.sync().Progress().state, SyncState::kCaughtUp);
  EXPECT_EQ(b.sync().Progress().behind(), 1);
}

TEST(ChainSyncTest, AFirstNodeIsCaughtUpAtOnceNewOrAfterTheGraceWithHistory) {
  Side fresh(1, MakeChain(0, 1), FastSync());
  EXPECT_EQ(fresh.sync().Progress().state, SyncState::kCaughtUp);
  Side restarted(2, MakeChain(4, 1), FastSync());
  restarted.Attach();
  EXPECT_EQ(restarted.sync().Progress().state, SyncState::kStarting);
  EXPECT_TRUE(Eventually([&] {
    return restarted.sync().Progress().state == SyncState::kCaughtUp;
  }));
}

// With bonded_only, a height told by a peer not proven to run a bonded
// validator counts for nothing: anyone's node cannot make this one behind
// (or ready).
TEST(ChainSyncTest, HeightsOfUnprovenPeersDoNotCount) {
  const std::vector<Block> chain = MakeChain(40, 1);
  ChainSyncOptions options = FastSync();
  options.has_bootstrap = true;
  options.bonded_only = true;
  Side a(1, chain, FastSync());
  Side b(2, {chain[0]}, options);
  a.Attach();
  b.Attach();
  b.Connect(a);
  ASSERT_TRUE(
      Eventually([&] { return b.sync().counters().heights_ignored >= 2; }));
  EXPECT_EQ(b.sync().counters().heights_heard, 0u);
  EXPECT_EQ(b.sync().Progress().state, SyncState::kStarting);
  EXPECT_EQ(b.sync().counters().ranges_asked, 0u);
}

// A range answer is bounded whatever was asked: at most kMaxRangeNumbers
// numbers, and it stops at a number's end after max_range_blocks blocks.
TEST(ChainSyncTest, ARangeAnswerIsBounded) {
  const std::vector<Block> chain = MakeChain(400, 3);
  ChainSyncOptions options = FastSync();
  options.max_range_blocks = 10;
  Side server(1, chain, options);
  Side asker(2, {chain[0]}, FastSync());  // never attached: it only records
  server.Attach();
  asker.Connect(server);
  sync::BlockRangeRequest req;
  req.set_from_number(1);
  req.set_numbers(100'000);
  ASSERT_TRUE(asker.transport()
                  .Send(server.transport().self().id,
                        packet::kBlockRangeRequest, req.SerializeAsString())
                  .ok());
  // 10 blocks reach a number's end at 12 (3 per number).
  ASSERT_TRUE(Eventually([&] { return asker.received() >= 12; }));
  ASSERT_TRUE(
      Eventually([&] { return server.sync().counters().ranges_served == 1; }));
  EXPECT_EQ(server.sync().counters().range_blocks_served, 12u);
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(asker.received(), 12u);
  EXPECT_EQ(asker.dag().MaxHeight(), 4);

  // Without the block bound, the numbers' bound.
  Side server2(3, chain, FastSync());
  Side asker2(4, {chain[0]}, FastSync());
  server2.Attach();
  asker2.Connect(server2);
  ASSERT_TRUE(asker2.transport()
                  .Send(server2.transport().self().id,
                        packet::kBlockRangeRequest, req.SerializeAsString())
                  .ok());
  ASSERT_TRUE(
      Eventually([&] { return server2.sync().counters().ranges_served == 1; }));
  EXPECT_LE(server2.sync().counters().range_blocks_served,
            static_cast<uint64_t>(3 * kMaxRangeNumbers));

  // A range far past the top reads nothing (and does not overflow).
  req.set_from_number(std::numeric_limits<int64_t>::max());
  ASSERT_TRUE(asker2.transport()
                  .Send(server2.transport().self().id,
                        packet::kBlockRangeRequest, req.SerializeAsString())
                  .ok());
  ASSERT_TRUE(
      Eventually([&] { return server2.sync().counters().ranges_served == 2; }));
  EXPECT_LE(server2.sync().counters().range_blocks_served,
            static_cast<uint64_t>(3 * kMaxRangeNumbers));
}

// Issue 45: a node further behind than its peers keep blocks (their
// retention deleted what it needs next) asked them for ranges they no
// longer held and stayed behind for ever, saying only that it was catching
// up. Their heights now carry their floors: it asks nothing of them and
// says it is beyond their history; a peer that keeps the blocks is asked
// as before.
TEST(ChainSyncTest, ANodeBelowEveryPeersFloorIsBeyondHistoryAndAsksNothing) {
  const std::vector<Block> chain = MakeChain(400, 1);
  ChainSyncOptions options = FastSync();
  options.has_bootstrap = true;
  Side pruned(1, chain, FastSync());
  ASSERT_TRUE(pruned.dag().SetLastFinalized(chain.back().hash).ok());
  auto stats = pruned.dag().PruneBelow(200);
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_GT(stats->blocks_deleted, 150u);
  Side behind(2, std::vector<Block>(chain.begin(), chain.begin() + 11),
              options);  // #0 to #10
  pruned.Attach();
  behind.Attach();
  behind.Connect(pruned);
  ASSERT_TRUE(Eventually([&] {
    return behind.sync().Progress().state == SyncState::kBeyondHistory;
  })) << SyncStateName(behind.sync().Progress().state);
  const SyncProgress p = behind.sync().Progress();
  EXPECT_EQ(p.peers_floor, 200);
  EXPECT_EQ(p.local, 10);
  EXPECT_EQ(p.target, 400);
  std::this_thread::sleep_for(milliseconds(300));  // a few ticks more
  EXPECT_EQ(behind.sync().counters().ranges_asked, 0u);
  EXPECT_EQ(pruned.sync().counters().ranges_served, 0u);

  // A peer that keeps every block: the node catches up from it alone.
  Side archive(3, chain, FastSync());
  archive.Attach();
  behind.Connect(archive);
  ASSERT_TRUE(Eventually([&] { return behind.dag().MaxHeight() >= 398; },
                         std::chrono::seconds(60)))
      << "at #" << behind.dag().MaxHeight();
  EXPECT_TRUE(Eventually(
      [&] { return behind.sync().Progress().state == SyncState::kCaughtUp; }));
  EXPECT_EQ(behind.sync().Progress().peers_floor, -1);
  // (Past #200 the pruned peer keeps what it is asked for, and is asked.)
  EXPECT_GE(archive.sync().counters().ranges_served, 1u);
}

// Sends a ChainHeight packet of `content` from a fresh peer to a fresh
// node and expects the node to punish it as malformed.
void ExpectHeightPunished(const std::string& content) {
  Side a(1, MakeChain(2, 1), FastSync());
  Side b(2, MakeChain(2, 1), FastSync());
  a.Attach();
  b.Attach();
  b.Connect(a);
  ASSERT_TRUE(b.transport()
                  .Send(a.transport().self().id, packet::kChainHeight, content)
                  .ok());
  ASSERT_TRUE(Eventually([&] { return a.sync().counters().malformed == 1; }));
  EXPECT_TRUE(Eventually([&] { return a.transport().Connected().empty(); }));
}

TEST(ChainSyncTest, AnUndecodableHeightIsPunished) {
  ExpectHeightPunished(std::string("\xff\xff\xff", 3));
}

// A floor above the sender's own top block is a lie (the floor is below
// its last finalized block): refused and punished, not remembered.
TEST(ChainSyncTest, AHeightWhoseFloorIsAboveItsTopIsPunished) {
  sync::ChainHeight lie;
  lie.set_max_number(10);
  lie.set_floor(11);
  ExpectHeightPunished(lie.SerializeAsString());
}

}  // namespace
}  // namespace rnode::node

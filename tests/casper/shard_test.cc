// In-process shards: 3 to 5 validators, each a TestNode with a Casper
// engine, exchanging blocks through an in-process transport that delivers
// in a deterministic order. Deploys are included and finalized everywhere
// with identical states; the fault-tolerance threshold behaves as
// documented; missing blocks are fetched; an equivocator is slashed once.
#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "casper/block/block_codec.h"
#include "casper/engine/engine.h"
#include "casper/prestate/ancestry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/casper/test_node.h"

namespace rnode::casper {
namespace {

using engine::Engine;
using engine::EngineOptions;
using engine::Received;
using testing::kGenesisTime;
using testing::MakeTestKey;
using testing::TestNode;

class Network;

// What an engine reported to its listener.
class Recorder : public engine::EngineListener {
 public:
  void OnBlockAdded(const block::Block& block) override {
    added.push_back(block.hash);
    if (on_added) on_added(block);
  }
  void OnFinalized(const Hash32& last, std::span<const Hash32> blocks,
                   std::span<const Bytes> deploys) override {
    last_finalized = last;
    finalized_blocks.insert(finalized_blocks.end(), blocks.begin(),
                            blocks.end());
    finalized_deploys.insert(finalized_deploys.end(), deploys.begin(),
                             deploys.end());
  }
  std::function<void(const block::Block&)> on_added;
  std::vector<Hash32> added;
  std::optional<Hash32> last_finalized;
  std::vector<Hash32> finalized_blocks;
  std::vector<Bytes> finalized_deploys;
};

// One validator: a TestNode and its engine, talking through the network.
class Peer : public engine::Transport {
 public:
  Peer(Network* net, int index, uint8_t key, int validators,
       EngineOptions options, size_t max_parents,
       dag::DagStoreOptions dag_options);
  void Broadcast(const block::Block& block) override;
  void Request(const Hash32& hash) override;
  void Cancel(const Hash32& hash) override { cancelled.push_back(hash); }
  // A fresh engine with these options (the buffer starts empty).
  void Retune(EngineOptions options) {
    options.listener = &events;
    engine = std::make_unique<Engine>(
        &node.dag(), &node.pool(), &node.validator(), &node.creator(), this,
        node.key().sk, options, &node.pre_states());
  }

  TestNode node;
  Recorder events;
  std::unique_ptr<Engine> engine;
  std::vector<Hash32> cancelled;
  int index;
  Network* net;
};

class Network {
 public:
  struct Message {
    int to = 0;
    int from = 0;
    bool request = false;  // else a block
    block::Block block;
    Hash32 hash{};
  };

  // Validators are keys 1..validators, each bonded and funded.
  Network(int validators, int64_t ftt_ppm = 100'000, size_t max_parents = 1,
          dag::DagStoreOptions dag_options = {}) {
    EngineOptions options;
    options.finalizer.threshold_ppm = ftt_ppm;
    for (int i = 0; i < validators; ++i) {
      peers.push_back(std::make_unique<Peer>(
          this, i, static_cast<uint8_t>(i + 1), validators, options,
          max_parents, dag_options));
    }
  }

  bool Linked(int a, int b) const {
    return !cut.contains(a) && !cut.contains(b);
  }

  // Delivers every queued message in order (each may queue more); bounded.
  void Pump() {
    for (int steps = 0; steps < 100'000 && !queue.empty(); ++steps) {
      Message m = std::move(queue.front());
      queue.pop_front();
      if (!Linked(m.from, m.to)) continue;
      Peer& to = *peers[m.to];
      if (m.request) {
        auto b = to.engine->GetBlock(m.hash);
        ASSERT_TRUE(b.ok());
        if (b->has_value()) {
          queue.push_back(Message{m.from, m.to, false, **b, {}});
        }
        continue;
      }
      auto r = to.engine->OnBlock(m.block, now);
      if (!r.ok() && failing.contains(m.to)) {
        ++failures;
        continue;
      }
      ASSERT_TRUE(r.ok()) << r.status();
    }
    ASSERT_TRUE(queue.empty()) << "the network did not settle";
  }

  // Validator i proposes (and the network settles).
  std::optional<Hash32> Propose(int i, bool allow_empty = false) {
    now += 10;
    auto h = peers[i]->engine->Propose(now, allow_empty);
    EXPECT_TRUE(h.ok()) << h.status();
    Pump();
    return h.ok() ? *h : std::nullopt;
  }

  // `rounds` rounds in which every validator proposes in turn, empty
  // blocks allowed (what gathers the votes finality needs).
  void ProposeRounds(int rounds) {
    for (int round = 0; round < rounds; ++round) {
      for (int k = 0; k < static_cast<int>(peers.size()); ++k) {
        Propose(k, /*allow_empty=*/true);
      }
    }
  }

  Peer& operator[](int i) { return *peers[i]; }

  std::vector<std::unique_ptr<Peer>> peers;
  std::deque<Message> queue;
  std::set<int> cut;      // Peers whose links are down.
  std::set<int> failing;  // Peers whose errors Pump counts, not fails on.
  int failures = 0;
  int64_t now = kGenesisTime + 1000;
};

Peer::Peer(Network* n, int i, uint8_t key, int validators,
           EngineOptions options, size_t max_parents,
           dag::DagStoreOptions dag_options)
    : node(key, validators, 1'000'000'000, 1, max_parents, validators,
           dag_options),
      index(i),
      net(n) {
  options.listener = &events;
  engine = std::make_unique<Engine>(&node.dag(), &node.pool(),
                                    &node.validator(), &node.creator(), this,
                                    node.key().sk, options, &node.pre_states());
}

void Peer::Broadcast(const block::Block& block) {
  for (size_t j = 0; j < net->peers.size(); ++j) {
    if (static_cast<int>(j) == index) continue;
    net->queue.push_back(
        Network::Message{static_cast<int>(j), index, false, block, {}});
  }
}

void Peer::Request(const Hash32& hash) {
  for (size_t j = 0; j < net->peers.size(); ++j) {
    if (static_cast<int>(j) == index) continue;
    net->queue.push_back(
        Network::Message{static_cast<int>(j), index, true, {}, hash});
  }
}

// Every peer holds the same blocks, the same last finalized block, and the
// same post-state for it.
void ExpectConverged(Network& net) {
  const auto lfb = net[0].node.dag().LastFinalized();
  ASSERT_TRUE(lfb.has_value());
  for (auto& p : net.peers) {
    EXPECT_EQ(p->node.dag().size(), net[0].node.dag().size()) << p->index;
    EXPECT_EQ(p->node.dag().LastFinalized(), lfb) << p->index;
    EXPECT_EQ(p->node.dag().Tips(), net[0].node.dag().Tips()) << p->index;
    EXPECT_EQ(p->node.dag().Meta(*lfb).value()->post_state,
              net[0].node.dag().Meta(*lfb).value()->post_state);
  }
}

TEST(ShardTest, ThreeValidatorsIncludeAndFinalizeEveryDeploy) {
  Network net(3);
  std::vector<Bytes> sigs;
  // Each validator gets its own deploys and proposes in turn.
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 3; ++i) {
      SignedDeploy d = net[i].node.Sign(
          "@0!(" + std::to_string(round * 3 + i) + ")", net.now + i);
      ASSERT_TRUE(net[i].node.pool().Add(d, 0, net.now).ok());
      sigs.push_back(d.sig());
      ASSERT_TRUE(net.Propose(i).has_value());
    }
  }
  // Empty blocks let the last deploys gather the votes they need.
  net.ProposeRounds(1);
  ExpectConverged(net);
  for (auto& p : net.peers) {
    for (const Bytes& sig : sigs) {
      auto holders = p->node.dag().BlocksWithDeploy(sig);
      ASSERT_TRUE(holders.ok());
      ASSERT_EQ(holders->size(), 1u);
      EXPECT_TRUE(p->node.dag().IsFinalized(holders->front()));
    }
    EXPECT_EQ(p->node.pool().size(), 0u);  // Finalized deploys leave.
    EXPECT_EQ(p->engine->counters().invalid, 0u);
    // The listener heard every stored block once, and every finalization:
    // each finalized block once, in block-number order, with its deploys.
    EXPECT_EQ(p->events.added.size(), p->node.dag().size() - 1);
    EXPECT_EQ(p->events.last_finalized, p->node.dag().LastFinalized());
    std::set<Hash32> blocks(p->events.finalized_blocks.begin(),
                            p->events.finalized_blocks.end());
    EXPECT_EQ(blocks.size(), p->events.finalized_blocks.size());
    EXPECT_EQ(blocks.size(), p->engine->counters().finalized);
    int64_t previous = 0;
    for (const Hash32& h : p->events.finalized_blocks) {
      EXPECT_TRUE(p->node.dag().IsFinalized(h));
      EXPECT_GE(p->node.dag().Meta(h).value()->block_number, previous);
      previous = p->node.dag().Meta(h).value()->block_number;
    }
    std::vector<Bytes> heard = p->events.finalized_deploys;
    std::vector<Bytes> expected = sigs;
    std::sort(heard.begin(), heard.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(heard, expected);
  }
}

// Validators propose without waiting for each other's blocks: blocks get
// several parents, and their pre-states are merges of the parents' scope;
// every node computes the same merge, and every deploy is finalized once.
TEST(ShardTest, MultiParentBlocksMergeTheirScope) {
  Network net(3, 100'000, /*max_parents=*/3);
  std::vector<Bytes> sigs;
  for (int round = 0; round < 4; ++round) {
    // All three propose on the same view, then the network delivers.
    std::vector<Hash32> made;
    for (int i = 0; i < 3; ++i) {
      SignedDeploy d = net[i].node.Sign(
          "@" + std::to_string(i) + "!(" + std::to_string(round) + ")",
          net.now + i);
      ASSERT_TRUE(net[i].node.pool().Add(d, 0, net.now).ok());
      sigs.push_back(d.sig());
      auto h = net[i].engine->Propose(net.now + 5 + i);
      ASSERT_TRUE(h.ok()) << h.status();
      ASSERT_TRUE(h->has_value());
      made.push_back(**h);
    }
    net.now += 10;
    net.Pump();
  }
  net.ProposeRounds(1);
  ExpectConverged(net);
  // Some block has several parents and a merge base.
  bool merged = false;
  for (int64_t n = 1; n <= net[0].node.dag().MaxHeight(); ++n) {
    for (const Hash32& h : net[0].node.dag().AtHeight(n)) {
      auto b = net[0].node.dag().GetBlock(h);
      ASSERT_TRUE(b.ok() && b->has_value());
      if ((*b)->header.parents.size() > 1) {
        merged = true;
        EXPECT_TRUE((*b)->body.merge_base.has_value());
        EXPECT_TRUE((*b)->body.rejected.empty());
      }
    }
  }
  EXPECT_TRUE(merged);
  for (auto& p : net.peers) {
    for (const Bytes& sig : sigs) {
      auto holders = p->node.dag().BlocksWithDeploy(sig);
      ASSERT_TRUE(holders.ok());
      ASSERT_EQ(holders->size(), 1u);
      EXPECT_TRUE(p->node.dag().IsFinalized(holders->front()));
    }
    EXPECT_EQ(p->engine->counters().invalid, 0u);
  }
  // As after a restart: a builder that kept no merge index computes, for
  // every multi-parent block, the pre-state and rejected set the block
  // records, rebuilding the scope's indexes by replaying stored blocks.
  dag::DagStore& dag = net[0].node.dag();
  auto fresh = net[0].node.FreshPreStates();
  int observed = 0;
  fresh->set_merge_observer([&](const merge::MergeMetrics& m) {
    ++observed;
    EXPECT_GE(m.blocks, 2u);
  });
  int checked = 0;
  for (int64_t n = 1; n <= dag.MaxHeight(); ++n) {
    for (const Hash32& h : dag.AtHeight(n)) {
      auto b = dag.GetBlock(h);
      ASSERT_TRUE(b.ok() && b->has_value());
      if ((*b)->header.parents.size() < 2) continue;
      auto pre = fresh->Compute((*b)->header.parents);
      ASSERT_TRUE(pre.ok()) << pre.status();
      EXPECT_EQ(pre->root, (*b)->body.state.pre_state);
      EXPECT_EQ(pre->merge_base, (*b)->body.merge_base);
      EXPECT_EQ(pre->rejected.size(), (*b)->body.rejected.size());
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
  EXPECT_EQ(observed, checked);  // one observation per merge
  EXPECT_GT(fresh->rebuilt(), 0u);
}

// Validator 0 puts `seed` in a block; validators 0 and 1 then each put one
// `racer` deploy in blocks made in parallel; validator 2 merges them.
struct Race {
  std::vector<Bytes> racers;  // Validator 0's, then 1's.
  Hash32 merge{};
  std::optional<block::Block> merged;
};
void RunRace(Network& net, const std::string& seed, const std::string& racer,
             Race& out) {
  ASSERT_TRUE(
      net[0].node.pool().Add(net[0].node.Sign(seed, net.now), 0, net.now).ok());
  ASSERT_TRUE(net.Propose(0).has_value());
  for (int i = 0; i < 2; ++i) {
    SignedDeploy d = net[i].node.Sign(racer, net.now + 100 + i);
    out.racers.push_back(d.sig());
    ASSERT_TRUE(net[i].node.pool().Add(d, 0, net.now).ok());
  }
  for (int i = 0; i < 2; ++i) {
    auto h = net[i].engine->Propose(net.now + 5);
    ASSERT_TRUE(h.ok() && h->has_value()) << h.status();
  }
  net.Pump();
  const auto merge = net.Propose(2, /*allow_empty=*/true);
  ASSERT_TRUE(merge.has_value());
  out.merge = *merge;
  auto b = net[0].node.dag().GetBlock(*merge);
  ASSERT_TRUE(b.ok() && b->has_value());
  out.merged = **b;
}

// Two validators include deploys that both take the one datum on a channel,
// on the same view; the next block merges both branches, rejects one of
// the two deploys, records it, and every node agrees (a node computing
// another rejection would judge the block invalid).
TEST(ShardTest, AMergeRejectsOneOfTwoRacingDeploysEverywhere) {
  Network net(3, 100'000, /*max_parents=*/3);
  Race race;
  RunRace(net, "@\"x\"!(1)", "for (_ <- @\"x\") { Nil }", race);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const std::vector<Bytes>& racers = race.racers;
  const std::optional<Hash32> merge = race.merge;
  const std::optional<block::Block>* b = &race.merged;
  EXPECT_EQ((*b)->header.parents.size(), 2u);
  ASSERT_EQ((*b)->body.rejected.size(), 1u);
  EXPECT_TRUE((*b)->body.rejected[0].sig == racers[0] ||
              (*b)->body.rejected[0].sig == racers[1]);
  for (auto& p : net.peers) {
    EXPECT_TRUE(p->node.dag().Contains(*merge)) << p->index;
    EXPECT_EQ(p->engine->counters().invalid, 0u);
  }
  // A builder that kept no index (a restart) rejects the same deploy.
  auto fresh = net[1].node.FreshPreStates();
  auto pre = fresh->Compute((*b)->header.parents);
  ASSERT_TRUE(pre.ok()) << pre.status();
  EXPECT_EQ(pre->root, (*b)->body.state.pre_state);
  ASSERT_EQ(pre->rejected.size(), 1u);
  EXPECT_EQ(pre->rejected[0].sig, (*b)->body.rejected[0].sig);
  EXPECT_EQ(fresh->rebuilt(), 2u);  // the two racing blocks
}

// Two increments of one counter race in parallel blocks; the merge keeps
// one. The other stays in its validator's pool (a rejected copy is not
// done), goes in that validator's next block (its pre-state does not hold
// it, so the repeat is allowed and every peer accepts it), and is
// finalized there: each increment's effect is in the finalized state
// exactly once, and the rejection is on record.
TEST(ShardTest, ADeployAMergeRejectedGoesInABlockAgainAndIsFinalizedOnce) {
  Network net(3, 100'000, /*max_parents=*/3);
  Race race;
  RunRace(net, "@\"c\"!(0)", "for (@n <- @\"c\") { @\"c\"!(n + 1) }", race);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const std::vector<Bytes>& increments = race.racers;
  const std::optional<Hash32> merge = race.merge;
  const std::optional<block::Block>* merged = &race.merged;
  ASSERT_EQ((*merged)->body.rejected.size(), 1u);
  const Bytes rejected = (*merged)->body.rejected[0].sig;
  const int owner = rejected == increments[0] ? 0 : 1;
  ASSERT_EQ(rejected, increments[owner]);
  EXPECT_FALSE((*merged)->body.rejected[0].duplicate);
  // Still waiting at its validator; its next block holds it again.
  EXPECT_TRUE(net[owner].node.pool().Contains(rejected));
  const auto again = net.Propose(owner);
  ASSERT_TRUE(again.has_value());
  auto again_block = net[0].node.dag().GetBlock(*again);
  ASSERT_TRUE(again_block.ok() && again_block->has_value());
  ASSERT_EQ((*again_block)->body.deploys.size(), 1u);
  EXPECT_EQ((*again_block)->body.deploys[0].sig, rejected);
  // A block whose pre-state holds it may not hold it again: the owner
  // proposes nothing more.
  auto none = net[owner].engine->Propose(net.now + 5);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  net.ProposeRounds(2);
  ExpectConverged(net);
  const Hash32 lfb = *net[0].node.dag().LastFinalized();
  ASSERT_TRUE(net[0].node.dag().IsAncestor(*again, lfb));
  for (auto& p : net.peers) {
    EXPECT_EQ(p->engine->counters().invalid, 0u) << p->index;
    for (const Bytes& sig : increments) {
      auto copy = prestate::CopyInPostState(p->node.dag(), lfb, sig, 0);
      ASSERT_TRUE(copy.ok()) << copy.status();
      ASSERT_TRUE(copy->has_value()) << p->index;
      if (sig == rejected) {
        EXPECT_EQ(**copy, *again);
      }
      EXPECT_FALSE(p->node.pool().Contains(sig)) << p->index;
      // Heard finalized once: the kept copy's block, not the rejected one.
      EXPECT_EQ(std::count(p->events.finalized_deploys.begin(),
                           p->events.finalized_deploys.end(), sig),
                1)
          << p->index;
    }
    auto rejecting = p->node.dag().BlocksRejectingDeploy(rejected);
    ASSERT_TRUE(rejecting.ok());
    EXPECT_EQ(*rejecting, std::vector<Hash32>{*merge}) << p->index;
  }
}

TEST(ShardTest, FiveValidatorsAgree) {
  Network net(5);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(net[i]
                      .node.pool()
                      .Add(net[i].node.Sign("@1!(" + std::to_string(i) + ")",
                                            net.now + round * 10 + i),
                           0, net.now)
                      .ok());
      ASSERT_TRUE(net.Propose(i).has_value());
    }
  }
  ExpectConverged(net);
  EXPECT_GE(net[0]
                .node.dag()
                .Meta(*net[0].node.dag().LastFinalized())
                .value()
                ->block_number,
            10);
}

// Validator 3 is bonded but offline: 2 of 3 agree, fault tolerance 1/3.
TEST(ShardTest, TwoOfThreeFinalizeAtPointOneNotAtPointSixSeven) {
  for (const auto& [ppm, finalizes] : std::vector<std::pair<int64_t, bool>>{
           {100'000, true}, {670'000, false}}) {
    Network net(3, ppm);
    net.cut.insert(2);
    for (int round = 0; round < 4; ++round) {
      for (int i = 0; i < 2; ++i) net.Propose(i, /*allow_empty=*/true);
    }
    const auto lfb = net[0].node.dag().LastFinalized();
    if (finalizes) {
      ASSERT_TRUE(lfb.has_value());
      EXPECT_GT(net[0].node.dag().Meta(*lfb).value()->block_number, 0) << ppm;
      EXPECT_EQ(net[1].node.dag().LastFinalized(), lfb);
    } else {
      // Only genesis can be final (every validator agrees with it).
      EXPECT_TRUE(!lfb.has_value() ||
                  net[0].node.dag().Meta(*lfb).value()->block_number == 0)
          << ppm;
    }
  }
}

// A block made on a stale view (its validator was cut off) is on no
// validator's main-parent chain once that validator catches up: the next
// blocks take it in as an extra parent all the same (as a tip), and its
// deploy is final. Also with only the blocks from the last finalized one up
// in memory, where merging and finalizing the stale block read it and its
// branch from the store (regression: both walks read the parents of a
// record already freed, and the nodes of a shard crashed after a
// partition).
class StaleViewTest : public ::testing::TestWithParam<int64_t> {};

INSTANTIATE_TEST_SUITE_P(KeptBelowFinalized, StaleViewTest,
                         ::testing::Values(128, 0));

TEST_P(StaleViewTest, ABlockMadeOnAStaleViewBecomesAParent) {
  Network net(3, 100'000, /*max_parents=*/3,
              dag::DagStoreOptions{.kept_below_finalized = GetParam()});
  net.cut.insert(2);
  // Deeper than fork choice takes secondary parents from (15 blocks).
  for (int round = 0; round < 10; ++round) {
    net.Propose(0, /*allow_empty=*/true);
    net.Propose(1, /*allow_empty=*/true);
  }
  SignedDeploy d = net[2].node.Sign("@\"stale\"!(1)", net.now, 3);
  ASSERT_TRUE(net[2].node.pool().Add(d, 0, net.now).ok());
  const auto stale = net.Propose(2);
  ASSERT_TRUE(stale.has_value());
  ASSERT_FALSE(net[0].node.dag().Contains(*stale));
  net.cut.clear();
  // Validator 2 catches up from a new block of 0 and builds on it; the
  // others receive its stale block only now.
  net.Propose(0, /*allow_empty=*/true);
  ASSERT_TRUE(net.Propose(2, /*allow_empty=*/true).has_value());
  auto sb = net[2].node.dag().GetBlock(*stale);
  ASSERT_TRUE(sb.ok() && sb->has_value());
  net[2].Broadcast(**sb);
  net.Pump();
  ASSERT_TRUE(net[0].node.dag().Contains(*stale));
  if (GetParam() == 0) {
    // The stale block is below the window: merging reads it from the store.
    const auto lfb = net[0].node.dag().LastFinalized();
    ASSERT_TRUE(lfb.has_value());
    EXPECT_GT(net[0].node.dag().Meta(*lfb).value()->block_number,
              net[0].node.dag().Meta(*stale).value()->block_number);
  }
  const auto next = net.Propose(0, /*allow_empty=*/true);
  ASSERT_TRUE(next.has_value());
  EXPECT_TRUE(net[0].node.dag().IsAncestor(*stale, *next));
  net.ProposeRounds(3);
  ExpectConverged(net);
  for (auto& p : net.peers) {
    auto holders = p->node.dag().BlocksWithDeploy(d.sig());
    ASSERT_TRUE(holders.ok());
    ASSERT_EQ(holders->size(), 1u) << p->index;
    EXPECT_TRUE(p->node.dag().IsFinalized(holders->front())) << p->index;
  }
}

// The number of blocks in the scope of the merge block `merge`: ancestors
// of its parents that are not ancestors of its merge base.
size_t MergeScopeSize(dag::DagStore& dag, const Hash32& merge) {
  auto record = dag.MergeRecordOf(merge);
  if (!record.ok() || *record == nullptr || !(*record)->merge_base) return 0;
  const Hash32 base = *(*record)->merge_base;
  std::set<Hash32> scope;
  // Each record held while its parents are read: a block below the DAG's
  // window is read from the store, and the record is then its only owner.
  std::vector<Hash32> stack = dag.Meta(merge).value()->parents;
  while (!stack.empty()) {
    const Hash32 h = stack.back();
    stack.pop_back();
    if (dag.IsAncestor(h, base) || !scope.insert(h).second) continue;
    const std::shared_ptr<const dag::BlockMeta> meta = dag.Meta(h).value();
    stack.insert(stack.end(), meta->parents.begin(), meta->parents.end());
  }
  return scope.size();
}

// A block made on a stale view holds an increment of the counter that an
// increment finalized meanwhile also took. The merge that takes the stale
// block in has its base below the finalized one, so both increments are in
// its scope and only one can stay: it keeps the finalized one, because the
// main parent's state holds it, although the stale one costs more (the
// merger otherwise rejects the cheaper branch). The stale increment is
// rejected, proposed again by its validator while its window is open, and
// finalized after it. Regression: the merge rejected the finalized
// increment, and a deploy read FINALIZED read PENDING again. The parameter is
// the rounds the stale validator misses: 60 gives the merge a scope of over a
// hundred blocks (regression: the preference was bounded to scopes of 64
// blocks, as finding the preferred copies cost a DAG walk per deploy).
class StaleIncrementTest : public ::testing::TestWithParam<int> {};

INSTANTIATE_TEST_SUITE_P(ScopeSizes, StaleIncrementTest,
                         ::testing::Values(10, 60));

TEST_P(StaleIncrementTest, AStaleBlockDoesNotUndoAFinalizedDeploy) {
  Network net(3, 100'000, /*max_parents=*/3);
  const std::string increment = "for (@n <- @\"c\") { @\"c\"!(n + 1) }";
  ASSERT_TRUE(net[0]
                  .node.pool()
                  .Add(net[0].node.Sign("@\"c\"!(0)", net.now), 0, net.now)
                  .ok());
  ASSERT_TRUE(net.Propose(0).has_value());
  net.cut.insert(2);
  SignedDeploy cheap = net[0].node.Sign(increment, net.now + 1);
  ASSERT_TRUE(net[0].node.pool().Add(cheap, 0, net.now).ok());
  const auto kept = net.Propose(0);
  ASSERT_TRUE(kept.has_value());
  for (int round = 0; round < GetParam(); ++round) {
    net.Propose(0, /*allow_empty=*/true);
    net.Propose(1, /*allow_empty=*/true);
  }
  ASSERT_TRUE(net[0].node.dag().IsFinalized(*kept));
  // The same increment with more work: its branch costs more.
  SignedDeploy costly = net[2].node.Sign(
      "for (@n <- @\"c\") { @\"c\"!(n + 1) | @\"w\"!(1) | @\"w\"!(2) | "
      "@\"w\"!(3) | @\"w\"!(4) | @\"w\"!(5) | @\"w\"!(6) }",
      net.now + 2, 3);
  ASSERT_TRUE(net[2].node.pool().Add(costly, 0, net.now).ok());
  const auto stale = net.Propose(2);
  ASSERT_TRUE(stale.has_value());
  net.cut.clear();
  net.Propose(0, /*allow_empty=*/true);
  ASSERT_TRUE(net.Propose(2, /*allow_empty=*/true).has_value());
  auto sb = net[2].node.dag().GetBlock(*stale);
  ASSERT_TRUE(sb.ok() && sb->has_value());
  net[2].Broadcast(**sb);
  net.Pump();
  net.ProposeRounds(4);
  ExpectConverged(net);
  const Hash32 lfb = *net[0].node.dag().LastFinalized();
  ASSERT_TRUE(net[0].node.dag().IsAncestor(*stale, lfb));
  for (auto& p : net.peers) {
    EXPECT_EQ(p->engine->counters().invalid, 0u) << p->index;
    // No merge ever rejected the finalized increment.
    auto rejecting = p->node.dag().BlocksRejectingDeploy(cheap.sig());
    ASSERT_TRUE(rejecting.ok());
    EXPECT_TRUE(rejecting->empty()) << p->index;
    auto copy = prestate::CopyInPostState(p->node.dag(), lfb, cheap.sig(), 0);
    ASSERT_TRUE(copy.ok()) << copy.status();
    EXPECT_EQ(*copy, std::optional<Hash32>(*kept)) << p->index;
    // The stale increment was rejected, went in a block again, and is
    // final there.
    rejecting = p->node.dag().BlocksRejectingDeploy(costly.sig());
    ASSERT_TRUE(rejecting.ok());
    ASSERT_FALSE(rejecting->empty()) << p->index;
    // The merge that rejected it had the stale distance in its scope.
    EXPECT_GE(MergeScopeSize(p->node.dag(), rejecting->front()), 2 * GetParam())
        << p->index;
    copy = prestate::CopyInPostState(p->node.dag(), lfb, costly.sig(), 0);
    ASSERT_TRUE(copy.ok()) << copy.status();
    if (2 * GetParam() < kDeployLifespanBlocks) {
      ASSERT_TRUE(copy->has_value()) << p->index;
      EXPECT_NE(**copy, *stale) << p->index;
    } else {
      // Its window (blocks 1 to 50) closed long before the merge.
      EXPECT_EQ(*copy, std::nullopt) << p->index;
    }
  }
}

TEST(ShardTest, AMissingBlockIsFetchedThenAccepted) {
  Network net(3);
  // Validator 1 proposes twice while cut off; then its link heals and its
  // next block arrives first at the others.
  net.cut.insert(0);
  net.Propose(0, /*allow_empty=*/true);
  net.Propose(0, /*allow_empty=*/true);
  net.cut.clear();
  const auto third = net.Propose(0, /*allow_empty=*/true);
  ASSERT_TRUE(third.has_value());
  for (int i = 1; i < 3; ++i) {
    EXPECT_TRUE(net[i].node.dag().Contains(*third)) << i;
    EXPECT_EQ(net[i].node.dag().size(), 4u);
    EXPECT_EQ(net[i].engine->buffered(), 0u);
    EXPECT_GE(net[i].engine->counters().buffered, 1u);
  }
}

// A block waiting for a block it slashes (not for a parent) stays waiting
// while other blocks arrive, and its missing block is requested once.
TEST(ShardTest, ABlockWaitingForASlashedBlockStaysBuffered) {
  Network net(3);
  auto made = net[0].node.Propose(net.now, /*allow_empty=*/true);
  ASSERT_TRUE(made.has_value());
  block::Block waiting = *made;
  Hash32 unknown{};
  unknown[0] = 0x5a;
  waiting.body.system_deploys.insert(
      waiting.body.system_deploys.begin(),
      block::ProcessedSystemDeploy{
          block::SlashDeploy{unknown, MakeTestKey(1).pk, 0}, {}, ""});
  ASSERT_TRUE(block::SignBlock(waiting, MakeTestKey(1).sk).ok());
  auto r = net[1].engine->OnBlock(waiting, net.now);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, Received::Kind::kBuffered);
  net.queue.clear();  // Nobody has the unknown block.
  // Another validator's block arrives: the waiting one is still missing
  // its slashed block, so it stays.
  ASSERT_TRUE(net.Propose(2, /*allow_empty=*/true).has_value());
  EXPECT_EQ(net[1].engine->buffered(), 1u);
  EXPECT_EQ(net[1].engine->counters().buffered, 1u);
}

// A buffered block whose store write fails as it leaves the buffer stays
// buffered and is taken with the next block (regression: it was dropped,
// and the block waiting for it, which counted it as on its way, waited
// for good, and so did every later block: the node fell behind for good).
TEST(ShardTest, ABufferedBlockWhoseWriteFailedIsTakenWithTheNextBlock) {
  Network net(3);
  // Validator 2 misses a and b; c reaches it first, then b, then a.
  net.cut.insert(1);
  const auto a = net.Propose(0, /*allow_empty=*/true);
  const auto b = net.Propose(0, /*allow_empty=*/true);
  ASSERT_TRUE(a.has_value() && b.has_value());
  net.cut.clear();
  // Its store fails from the moment a is stored: b and c, waiting for a,
  // cannot be stored when a frees them.
  net.failing.insert(1);
  net[1].events.on_added = [&](const block::Block& added) {
    if (added.hash == *a) net[1].node.faults().FailWritesAfter(0);
  };
  const auto c = net.Propose(0, /*allow_empty=*/true);
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(net[1].node.dag().Contains(*a));
  EXPECT_FALSE(net[1].node.dag().Contains(*b));
  EXPECT_GT(net.failures, 0);
  EXPECT_EQ(net[1].engine->buffered(), 2u);  // b and c, kept

  // The store works again: the next block from anyone takes them.
  net[1].node.faults().Heal();
  net[1].events.on_added = nullptr;
  net.failing.clear();
  ASSERT_TRUE(net.Propose(2, /*allow_empty=*/true).has_value());
  EXPECT_TRUE(net[1].node.dag().Contains(*b));
  EXPECT_TRUE(net[1].node.dag().Contains(*c));
  EXPECT_EQ(net[1].engine->buffered(), 0u);
  ExpectConverged(net);
}

// `b` with one parent, `parent`, signed by test key `key`.
block::Block Reparented(block::Block b, const Hash32& parent, uint8_t key) {
  b.header.parents = {parent};
  EXPECT_TRUE(block::SignBlock(b, MakeTestKey(key).sk).ok());
  return b;
}

// A hash no block has.
Hash32 Phantom(uint8_t tag) {
  Hash32 h{};
  h[0] = 0x77;
  h[1] = tag;
  return h;
}

// Requests for `hash` in the network's queue.
size_t Requests(const Network& net, const Hash32& hash) {
  return static_cast<size_t>(std::count_if(
      net.queue.begin(), net.queue.end(),
      [&](const auto& m) { return m.request && m.hash == hash; }));
}

// Issue 43: a block with unknown parents was buffered and its parents asked
// for whoever signed it, so a key with no stake could fill the buffer (and
// make the node behind) with blocks naming hashes nobody has. Now only a
// sender bonded in a known state gets a block to wait.
TEST(ShardTest, AnUnbondedKeysBlockWithUnknownParentsIsRefusedNothingAsked) {
  Network net(3);
  auto made = net[0].node.Propose(net.now, /*allow_empty=*/true);
  ASSERT_TRUE(made.has_value());
  const block::Block stranger = Reparented(*made, Phantom(1), /*key=*/9);
  auto r = net[1].engine->OnBlock(stranger, net.now);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, Received::Kind::kRefused) << r->verdict.detail;
  EXPECT_EQ(net[1].engine->buffered(), 0u);
  EXPECT_EQ(net[1].engine->counters().refused, 1u);
  EXPECT_EQ(Requests(net, Phantom(1)), 0u);
  // A bonded validator's block naming the same hash waits for it.
  r = net[1].engine->OnBlock(Reparented(*made, Phantom(1), 1), net.now);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, Received::Kind::kBuffered);
  EXPECT_EQ(Requests(net, Phantom(1)), 2u);  // both other validators
}

// A block a waiting block needs is buffered whoever signed it (a validator
// bonded in a block this node has not seen yet): the chain that needs it
// leads to a bonded sender's block.
TEST(ShardTest, ABlockAWaitingBlockNeedsWaitsWhateverItsSender) {
  Network net(3);
  auto made = net[0].node.Propose(net.now, /*allow_empty=*/true);
  ASSERT_TRUE(made.has_value());
  const block::Block newcomer = Reparented(*made, Phantom(2), /*key=*/9);
  const block::Block child = Reparented(*made, newcomer.hash, 1);
  auto r = net[1].engine->OnBlock(child, net.now);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, Received::Kind::kBuffered);
  EXPECT_EQ(Requests(net, newcomer.hash), 2u);
  r = net[1].engine->OnBlock(newcomer, net.now);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, Received::Kind::kBuffered);
  EXPECT_EQ(Requests(net, Phantom(2)), 2u);
  EXPECT_EQ(net[1].engine->buffered(), 2u);
}

// Issue 48: a node far behind followed a far tip down by its parents and
// held the whole gap in the buffer; past 1,024 blocks every block was
// refused as "buffer full" and the node never caught up. A block numbered
// more than max_ahead above the highest stored block now waits for
// nothing and nothing is asked for it (the node catches up by height); one
// at the limit waits as before.
TEST(ShardTest, ABlockFarAboveTheHighestStoredIsRefusedNothingAsked) {
  Network net(3);
  auto made = net[0].node.Propose(net.now, /*allow_empty=*/true);
  ASSERT_TRUE(made.has_value());
  const int64_t limit = EngineOptions{}.max_ahead;
  const int64_t highest = net[1].node.dag().MaxHeight();
  block::Block far = *made;
  far.body.state.block_number = highest + limit + 1;
  far = Reparented(far, Phantom(6), 1);
  auto r = net[1].engine->OnBlock(far, net.now);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, Received::Kind::kAhead) << r->verdict.detail;
  EXPECT_EQ(net[1].engine->buffered(), 0u);
  EXPECT_EQ(net[1].engine->counters().ahead, 1u);
  EXPECT_EQ(Requests(net, Phantom(6)), 0u);
  block::Block near = *made;
  near.body.state.block_number = highest + limit;
  near = Reparented(near, Phantom(7), 1);
  r = net[1].engine->OnBlock(near, net.now);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, Received::Kind::kBuffered) << r->verdict.detail;
  EXPECT_EQ(Requests(net, Phantom(7)), 2u);  // both other validators
}

// Retention (issue 45): a late block built on what a node deleted below
// its floor was validated against the deleted blocks and states, failed as
// an internal error and was asked for again every 10 s. It is now stale:
// dropped with the blocks waiting for it, nothing asked for.
TEST(ShardTest, ABlockBelowTheFloorIsDroppedWithTheBlocksWaitingForIt) {
  Network net(3, 100'000, 1, dag::DagStoreOptions{.kept_below_finalized = 0});
  // Validator 3's first block, made on the genesis and held back.
  const std::optional<block::Block> late =
      net[2].node.Propose(net.now, /*allow_empty=*/true);
  ASSERT_TRUE(late.has_value());
  std::optional<Hash32> top;
  for (int i = 0; i < 6; ++i) top = net.Propose(0, /*allow_empty=*/true);
  ASSERT_TRUE(top.has_value());
  Peer& b = net[1];
  ASSERT_TRUE(b.node.dag().SetLastFinalized(*top).ok());
  auto pruned = b.node.dag().PruneBelow(4);
  ASSERT_TRUE(pruned.ok()) << pruned.status();

  auto top_block = b.node.dag().GetBlock(*top);
  ASSERT_TRUE(top_block.ok() && top_block->has_value());
  const block::Block child = Reparented(**top_block, late->hash, 3);
  auto r = b.engine->OnBlock(child, net.now);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->kind, Received::Kind::kBuffered) << r->verdict.detail;
  const size_t asked = Requests(net, late->hash);

  r = b.engine->OnBlock(*late, net.now);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, Received::Kind::kStale) << r->verdict.detail;
  EXPECT_EQ(b.engine->counters().stale, 1u);
  EXPECT_EQ(b.engine->buffered(), 0u);
  EXPECT_EQ(b.engine->counters().expired, 1u);  // the child, with it
  EXPECT_FALSE(b.node.dag().Contains(late->hash));
  EXPECT_EQ(Requests(net, late->hash), asked);
}

// Issue 43: the buffer was bounded by count only (1,024 blocks, each up to
// the stream budget). Its bytes are bounded, in all and per sender: one
// validator's blocks cannot take the room of the others'.
TEST(ShardTest, OneSendersWaitingBlocksAreBoundedInBytes) {
  Network net(3);
  auto made = net[0].node.Propose(net.now, /*allow_empty=*/true);
  ASSERT_TRUE(made.has_value());
  const block::Block a = Reparented(*made, Phantom(3), 1);
  const block::Block b = Reparented(*made, Phantom(4), 1);
  const block::Block c = Reparented(*made, Phantom(5), 2);
  const size_t size = block::EncodeBlock(a).size();
  EngineOptions options;
  options.max_buffered_bytes_per_sender = size + size / 2;
  options.max_buffered_bytes = 3 * size;
  net[1].Retune(options);
  auto r = net[1].engine->OnBlock(a, net.now);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, Received::Kind::kBuffered);
  r = net[1].engine->OnBlock(b, net.now);
  EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
  r = net[1].engine->OnBlock(c, net.now);  // another sender
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, Received::Kind::kBuffered);
  EXPECT_EQ(net[1].engine->buffered(), 2u);
  EXPECT_EQ(net[1].engine->buffered_bytes(),
            size + block::EncodeBlock(c).size());
  EXPECT_EQ(net[1].engine->counters().buffer_full, 1u);
  EXPECT_EQ(Requests(net, Phantom(4)), 0u);
}

// Issue 43: a waiting block never left the buffer, and what it waited for
// was asked for for ever. After the time to live it goes, with the blocks
// waiting for it, and what only they needed is cancelled.
TEST(ShardTest, AWaitingBlockExpiresWithTheBlocksWaitingForIt) {
  Network net(3);
  auto made = net[0].node.Propose(net.now, /*allow_empty=*/true);
  ASSERT_TRUE(made.has_value());
  const block::Block root = Reparented(*made, Phantom(6), 1);
  const block::Block child = Reparented(*made, root.hash, 2);
  const int64_t t0 = net.now;
  ASSERT_TRUE(net[1].engine->OnBlock(root, t0).ok());
  ASSERT_TRUE(net[1].engine->OnBlock(child, t0 + 1000).ok());
  ASSERT_EQ(net[1].engine->buffered(), 2u);
  EXPECT_EQ(Requests(net, root.hash), 0u);  // buffered: not asked for
  const int64_t ttl = EngineOptions{}.buffer_ttl_ms;
  net[1].engine->ExpireBuffered(t0 + ttl - 1);
  EXPECT_EQ(net[1].engine->buffered(), 2u);
  EXPECT_TRUE(net[1].cancelled.empty());
  net[1].engine->ExpireBuffered(t0 + ttl);
  EXPECT_EQ(net[1].engine->buffered(), 0u);
  EXPECT_EQ(net[1].engine->buffered_bytes(), 0u);
  EXPECT_EQ(net[1].engine->counters().expired, 2u);
  EXPECT_THAT(net[1].cancelled, ::testing::ElementsAre(Phantom(6)));
  // The buffer works as before after it: the same root waits again.
  auto r = net[1].engine->OnBlock(root, t0 + ttl + 1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->kind, Received::Kind::kBuffered);
}

TEST(ShardTest, AnEquivocatorIsDetectedAndSlashedOnce) {
  Network net(3);
  // Validator 3 makes two different first blocks on two nodes of its own
  // (its engine's and a twin with the same key) and sends both.
  TestNode twin(3, 3, 1'000'000'000, 1, 1, /*funded=*/3);  // the same genesis
  ASSERT_TRUE(twin.pool().Add(twin.Sign("@2!(2)", net.now), 0, net.now).ok());
  auto twin_block = twin.Propose(net.now);
  ASSERT_TRUE(twin_block.has_value());
  net.Propose(2, /*allow_empty=*/true);  // The first, everywhere.
  for (int i = 0; i < 2; ++i) {
    auto r = net[i].engine->OnBlock(*twin_block, net.now);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->kind, Received::Kind::kInvalid);
    EXPECT_EQ(r->verdict.reason, validation::InvalidReason::kEquivocation);
  }
  // Validator 1 proposes: its block slashes 3; later blocks do not again.
  const auto slashing = net.Propose(0, /*allow_empty=*/true);
  ASSERT_TRUE(slashing.has_value());
  auto b = net[1].node.dag().GetBlock(*slashing);
  ASSERT_TRUE(b.ok() && b->has_value());
  int slashes = 0;
  for (const auto& s : (*b)->body.system_deploys) {
    slashes += std::holds_alternative<block::SlashDeploy>(s.deploy) ? 1 : 0;
  }
  EXPECT_EQ(slashes, 1);
  for (const auto& bond : (*b)->body.state.bonds) {
    EXPECT_NE(bond.validator, MakeTestKey(3).pk);  // No stake left.
  }
  for (int i = 0; i < 2; ++i) {
    auto later = net.Propose(i, /*allow_empty=*/true);
    ASSERT_TRUE(later.has_value());
    auto lb = net[0].node.dag().GetBlock(*later);
    for (const auto& s : (*lb)->body.system_deploys) {
      EXPECT_FALSE(std::holds_alternative<block::SlashDeploy>(s.deploy));
    }
  }
  EXPECT_EQ(net[0].engine->counters().invalid, 1u);
}

// A forger re-signs a real block of validator 2's with its key (same
// parents, justifications and sequence number, other extra bytes) and
// hands it to validator 3 only (what rnode-badpeer's equivocation does to
// a live shard). Validator 3 stores it as invalid and slashes validator 2;
// the others fetch it through the slash; the shard keeps agreeing and
// finalizing without validator 2.
TEST(ShardTest, AForgedEquivocationSeenByOneValidatorIsSlashedEverywhere) {
  Network net(3, 100'000, /*max_parents=*/3);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 3; ++i) {
      SignedDeploy d = net[i].node.Sign(
          "@0!(" + std::to_string(round * 3 + i) + ")", net.now + i);
      ASSERT_TRUE(net[i].node.pool().Add(d, 0, net.now).ok());
      ASSERT_TRUE(net.Propose(i).has_value());
    }
  }
  const auto latest = net[2].node.dag().LatestMessages();
  auto of2 = latest.find(MakeTestKey(2).pk);
  ASSERT_NE(of2, latest.end());
  auto real = net[2].engine->GetBlock(of2->second);
  ASSERT_TRUE(real.ok() && real->has_value());
  block::Block forged = **real;
  forged.extra = {0x66, 0x6f, 0x72, 0x67, 0x65, 0x64};
  ASSERT_TRUE(block::SignBlock(forged, MakeTestKey(2).sk).ok());
  ASSERT_NE(forged.hash, (*real)->hash);
  auto r = net[2].engine->OnBlock(forged, net.now);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->kind, Received::Kind::kInvalid);
  EXPECT_EQ(r->verdict.reason, validation::InvalidReason::kEquivocation);

  // Everyone keeps proposing with deploys; validator 2 (slashed) stops
  // once it sees it has no stake.
  for (int round = 0; round < 4; ++round) {
    for (int i : {2, 0, 1}) {
      SignedDeploy d = net[i].node.Sign(
          "@1!(" + std::to_string(round * 3 + i) + ")", net.now + i);
      ASSERT_TRUE(net[i].node.pool().Add(d, 0, net.now).ok());
      net.now += 10;
      (void)net[i].engine->Propose(net.now, /*allow_empty=*/true);
      net.Pump();
    }
  }
  for (int k : {0, 2, 0, 2}) net.Propose(k, /*allow_empty=*/true);
  for (auto& p : net.peers) {
    SCOPED_TRACE(p->index);
    EXPECT_EQ(p->engine->buffered(), 0u);
    EXPECT_TRUE(p->node.dag().Contains(forged.hash));
    const auto lfb = p->node.dag().LastFinalized();
    ASSERT_TRUE(lfb.has_value());
    const auto lfb_meta = p->node.dag().Meta(*lfb).value();
    for (const auto& bond : lfb_meta->bonds) {
      EXPECT_NE(bond.validator, MakeTestKey(2).pk);  // slashed, and final
    }
  }
  EXPECT_EQ(net[0].node.dag().LastFinalized(),
            net[2].node.dag().LastFinalized());
}

}  // namespace
}  // namespace rnode::casper

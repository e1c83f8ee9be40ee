// History retention (node/core/retention.h): over a DAG whose blocks name
// real states of a history, a collection keeps the states of the blocks
// numbered from the last finalized one's minus the kept numbers (and the
// genesis's, the tips', the latest messages' and the current root) and
// deletes the rest, with the blocks below that number; the API answers 410
// for a state or blocks gone.
#include "node/core/retention.h"

#include <memory>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "casper/block/block.h"
#include "casper/dag/dag_store.h"
#include "crypto/hash.h"
#include "gtest/gtest.h"
#include "node/api/http_answers.h"
#include "node/core/chain_queries.h"
#include "rspace/history/history.h"
#include "rspace/history/trie_gc.h"
#include "tests/casper/test_key.h"
#include "tests/test_seed.h"

namespace rnode::node {
namespace {

using casper::block::Block;

rspace::LeafUpdate Leaf(const Hash32& key, Bytes blob) {
  rspace::LeafUpdate u;
  u.key = key;
  u.blob_hash = crypto::Blake2b256(blob);
  u.blob = std::move(blob);
  return u;
}

// Block `number` by test key 1 (bonded alone), on `parent`, from state
// `pre` to `post`.
Block ChainBlock(int64_t number, const Block* parent, const Hash32& pre,
                 const Hash32& post) {
  Block b;
  b.shard_id = "root";
  b.body.state.block_number = number;
  b.body.state.pre_state = pre;
  b.body.state.post_state = post;
  b.body.state.bonds = {{casper::testing::MakeTestKey(1).pk, 10}};
  if (parent != nullptr) {
    b.header.parents.push_back(parent->hash);
    b.justifications.push_back({parent->sender, parent->hash});
  }
  b.header.timestamp = 1'700'000'000'000 + number;
  b.seq_num = static_cast<int32_t>(number);
  EXPECT_TRUE(
      casper::block::SignBlock(b, casper::testing::MakeTestKey(1).sk).ok());
  return b;
}

class StateRetentionTest : public ::testing::Test {
 protected:
  static constexpr int kBlocks = 40;

  StateRetentionTest() : store_(7) {
    rspace::HistoryOptions o;
    o.write_guard = &guard_;
    history_ = *rspace::History::Open(&store_, o);
    // A window of 4 numbers under the last finalized block, so that the
    // small kept numbers below let old blocks go.
    dag_ = *casper::dag::DagStore::Open(&store_, casper::dag::DagColumnsFrom(3),
                                        {.kept_below_finalized = 4});
    // States: 500 channels, then each block changes three of them.
    std::mt19937_64 rng(rnode::testing::TestSeed(5203));
    std::vector<rspace::LeafUpdate> all;
    for (int i = 0; i < 500; ++i) {
      Hash32 key;
      for (uint8_t& b : key) b = static_cast<uint8_t>(rng());
      all.push_back(Leaf(key, Bytes(i % 4 == 0 ? 300 : 30, 0)));
    }
    std::sort(all.begin(), all.end(),
              [](const auto& a, const auto& b) { return a.key < b.key; });
    states_.push_back(*history_->Commit(rspace::kEmptyRoot, all));
    chain_.push_back(
        ChainBlock(0, nullptr, rspace::kEmptyRoot, states_.back()));
    EXPECT_TRUE(*dag_->Insert(chain_.back()));
    for (int n = 1; n <= kBlocks; ++n) {
      std::vector<rspace::LeafUpdate> changed;
      for (size_t i = n % 7; i < all.size(); i += all.size() / 3) {
        changed.push_back(Leaf(
            all[i].key, Bytes(i % 4 == 0 ? 300 : 30, static_cast<uint8_t>(n))));
      }
      std::sort(changed.begin(), changed.end(),
                [](const auto& a, const auto& b) { return a.key < b.key; });
      states_.push_back(*history_->Commit(states_.back(), changed));
      chain_.push_back(
          ChainBlock(n, &chain_.back(), states_[n - 1], states_[n]));
      EXPECT_TRUE(*dag_->Insert(chain_.back()));
    }
    // Opened again, as after a restart: the states above are not among
    // its recent commits (History::RecentRoots), which retention keeps.
    history_ = *rspace::History::Open(&store_, o);
  }

  StateRetention Make(int64_t keep) {
    RetentionOptions options;
    options.keep_numbers = keep;
    return StateRetention(
        StateRetention::Deps{.dag = dag_.get(),
                             .history = history_.get(),
                             .store = &store_,
                             .columns = rspace::HistoryColumns{},
                             .guard = &guard_,
                             .ready = [] { return true; }},
        options);
  }

  rspace::InMemoryStore store_;
  rspace::TrieWriteGuard guard_{rspace::HistoryColumns{}};
  std::unique_ptr<rspace::History> history_;
  std::unique_ptr<casper::dag::DagStore> dag_;
  std::vector<Hash32> states_;
  std::vector<Block> chain_;
};

TEST_F(StateRetentionTest, OldStatesGoAndTheKeptOnesReadWhole) {
  StateRetention retention = Make(10);
  // No finalized block: nothing to measure from.
  EXPECT_EQ(retention.CollectOnce().status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(dag_->SetLastFinalized(chain_[30].hash).ok());
  auto stats = retention.CollectOnce();
  ASSERT_TRUE(stats.ok()) << stats.status();
  // Kept: the states of blocks 20..40 (their pre-states reach back to 19),
  // the genesis's; gone: those of blocks 1..18.
  for (int n = 19; n <= kBlocks; ++n) {
    EXPECT_TRUE(*history_->HasRoot(states_[n])) << n;
    EXPECT_TRUE(history_->VerifyRoot(states_[n]).ok()) << n;
  }
  EXPECT_TRUE(history_->VerifyRoot(states_[0]).ok());
  for (int n = 1; n <= 18; ++n) {
    EXPECT_FALSE(*history_->HasRoot(states_[n])) << n;
  }
  EXPECT_EQ(stats->roots_deleted, 18u);
  EXPECT_GT(stats->nodes_deleted, 18u);
  // The blocks below #20 went too, but the genesis.
  for (int n = 0; n <= kBlocks; ++n) {
    EXPECT_EQ(dag_->Contains(chain_[n].hash), n == 0 || n >= 20) << n;
  }
  const RetentionCounters c = retention.counters();
  EXPECT_EQ(c.collections, 1u);
  EXPECT_EQ(c.kept_from, 20);
  EXPECT_EQ(c.floor, 20);
  EXPECT_EQ(c.blocks_deleted, 19u);
  EXPECT_GT(c.block_bytes_deleted, 19u * 100);
  EXPECT_EQ(c.nodes_deleted, stats->nodes_deleted);
  // Collected again at once: nothing more to delete.
  auto again = retention.CollectOnce();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->nodes_deleted, 0u);
  EXPECT_EQ(retention.counters().collections, 2u);
}

// Kept too: a state committed but named by no stored block yet (a block
// between its state's commit and its store), and a block whose state this
// node never held (a joined node's window) does not stop the collection.
TEST_F(StateRetentionTest, RecentCommitsStayAndStatesNeverHeldAreSkipped) {
  ASSERT_TRUE(dag_->SetLastFinalized(chain_[30].hash).ok());
  // On the state of #5, which goes: the new root shares its nodes.
  Hash32 key{};
  key[0] = 7;
  absl::StatusOr<Hash32> pending = history_->Commit(
      states_[5], std::vector<rspace::LeafUpdate>{Leaf(key, Bytes(40, 3))});
  ASSERT_TRUE(pending.ok());
  ASSERT_TRUE(history_->Commit(states_[40], {}).ok());  // moves last_root
  Hash32 never{};
  never[5] = 0x55;
  Block unheld = ChainBlock(kBlocks + 1, &chain_.back(), states_[40], never);
  ASSERT_TRUE(*dag_->Insert(unheld));
  StateRetention retention = Make(10);
  auto stats = retention.CollectOnce();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_FALSE(*history_->HasRoot(states_[5]));
  EXPECT_TRUE(history_->VerifyRoot(*pending).ok());
  EXPECT_GT(stats->roots_deleted, 10u);
}

// The API over a DAG that pruned its old blocks: a range below the floor
// is 410 "pruned", one across it is served from the floor up, and a block
// asked for by hash says where the kept blocks start.
TEST_F(StateRetentionTest, QueriesOfPrunedBlocksSaySo) {
  ASSERT_TRUE(dag_->SetLastFinalized(chain_[30].hash).ok());
  StateRetention retention = Make(10);
  ASSERT_TRUE(retention.CollectOnce().ok());
  NodeConfig config;
  QueryDeps deps;
  deps.config = &config;
  deps.dag = dag_.get();
  ChainQueries queries(deps);
  absl::StatusOr<std::vector<Block>> old = queries.BlocksByHeight(5, 12);
  EXPECT_TRUE(rspace::IsPruned(old.status())) << old.status();
  EXPECT_EQ(ErrorOf(old.status(), "invalid").status, 410);
  absl::StatusOr<std::vector<Block>> across = queries.BlocksByHeight(15, 25);
  ASSERT_TRUE(across.ok()) << across.status();
  ASSERT_EQ(across->size(), 6u);
  EXPECT_EQ(across->front().hash, chain_[25].hash);
  EXPECT_EQ(across->back().hash, chain_[20].hash);
  absl::StatusOr<Block> gone = queries.GetBlock(chain_[7].hash);
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(gone.status().message().find("numbered from 20 up"),
            std::string::npos)
      << gone.status();
  EXPECT_TRUE(queries.GetBlock(chain_[20].hash).ok());
}

// A state read at a block whose state was collected is 410 "pruned" at the
// API, not 404 or 500.
TEST(PrunedStateTest, TheApiAnswers410) {
  const absl::Status pruned = rspace::PrunedError("the state of #3");
  EXPECT_TRUE(rspace::IsPruned(pruned));
  EXPECT_FALSE(rspace::IsPruned(absl::NotFoundError("the state of #3")));
  const http::Response r = ErrorOf(pruned, "invalid");
  EXPECT_EQ(r.status, 410);
  EXPECT_NE(r.body.find("\"pruned\""), std::string::npos) << r.body;
  EXPECT_EQ(ErrorOf(absl::NotFoundError("x"), "invalid").status, 404);
}

}  // namespace
}  // namespace rnode::node

// Tests for whole-block play and replay: a played block replays to the same
// post-state, and each way a block can misstate its execution is a verdict.
#include "casper/execution/block_executor.h"

#include <string>
#include <vector>

#include "casper/genesis/genesis.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/casper/contract_env.h"

namespace rnode::casper {
namespace {

using testing::ContractEnv;
using ::testing::HasSubstr;
using testing::MakeTestKey;

constexpr int64_t kNow = 1'700'000'000'000;

class BlockExecutorTest : public ::testing::Test {
 protected:
  BlockExecutorTest() : blocks(env.space.get(), env.executor.get()) {
    genesis::GenesisParams p;
    for (uint8_t i = 1; i <= 2; ++i) {
      genesis::Bond b;
      b.validator = MakeTestKey(i).pk;
      b.stake = 1000;
      p.bonds.push_back(b);
    }
    genesis::Wallet w;
    w.address = MakeTestKey(1).address;
    w.balance = 100'000'000;
    p.wallets.push_back(w);
    auto g = genesis::CreateGenesis(p, env.space.get(), env.contracts.get(),
                                    env.runtime.get());
    EXPECT_TRUE(g.ok()) << g.status();
    genesis_root = g->post_state();
  }

  SignedDeploy Sign(uint8_t key, std::string term, int64_t ts) {
    DeployData d;
    d.term = std::move(term);
    d.timestamp = ts;
    d.phlo_price = 1;
    d.phlo_limit = 100'000;
    d.shard_id = "root";
    return *SignedDeploy::Sign(d, MakeTestKey(key).sk);
  }

  // A played block of three deploys: one that succeeds, one whose deployer
  // cannot pay, one whose program fails.
  block::Block PlayedBlock() {
    deploys = {Sign(1, "new x in { x!(1) | for (_ <- x) { Nil } }", kNow),
               Sign(5, "Nil", kNow + 1),
               Sign(1, "new x in { x!(1 / 0) }", kNow + 2)};
    BlockEnv benv{1, kNow + 10, MakeTestKey(2).pk};
    auto played = blocks.Play(genesis_root, deploys, {}, benv);
    EXPECT_TRUE(played.ok()) << played.status();
    block::Block b;
    b.header.timestamp = benv.timestamp;
    b.body.state.pre_state = genesis_root;
    b.body.state.post_state = played->post_state;
    b.body.state.block_number = 1;
    b.body.deploys = played->deploys;
    b.body.system_deploys = played->system_deploys;
    b.shard_id = "root";
    EXPECT_TRUE(block::SignBlock(b, MakeTestKey(2).sk).ok());
    return b;
  }

  ContractEnv env;
  BlockExecutor blocks;
  Hash32 genesis_root{};
  std::vector<SignedDeploy> deploys;
};

TEST_F(BlockExecutorTest, PlayRecordsEachOutcomeAndReplayAgrees) {
  const block::Block b = PlayedBlock();
  ASSERT_EQ(b.body.deploys.size(), 3u);
  EXPECT_GT(b.body.deploys[0].cost, 0);
  EXPECT_FALSE(b.body.deploys[0].errored);
  EXPECT_TRUE(b.body.deploys[0].system_deploy_error.empty());
  EXPECT_EQ(b.body.deploys[1].cost, 0);
  EXPECT_THAT(b.body.deploys[1].system_deploy_error,
              HasSubstr("Insufficient funds"));
  EXPECT_TRUE(b.body.deploys[2].errored);
  ASSERT_EQ(b.body.system_deploys.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<block::CloseBlockDeploy>(
      b.body.system_deploys[0].deploy));
  EXPECT_NE(b.body.state.post_state, genesis_root);

  const BlockReplayVerdict v = blocks.Replay(b, deploys, {});
  ASSERT_TRUE(v.ok()) << v.reason << v.error;
  EXPECT_EQ(v.outcomes.size(), 4u);
  EXPECT_EQ(env.space->root(), b.body.state.post_state);
  // Replay again from scratch: deterministic.
  EXPECT_TRUE(blocks.Replay(b, deploys, {}).ok());
}

TEST_F(BlockExecutorTest, MisstatedExecutionIsInvalid) {
  const block::Block good = PlayedBlock();
  struct Case {
    std::string name;
    std::function<void(block::Block&)> change;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"cost", [](block::Block& b) { ++b.body.deploys[0].cost; },
       "recorded cost"},
      {"errored", [](block::Block& b) { b.body.deploys[2].errored = false; },
       "recorded cost"},
      {"precharge",
       [](block::Block& b) { b.body.deploys[1].system_deploy_error.clear(); },
       "precharge failed 0"},
      {"event dropped",
       [](block::Block& b) { b.body.deploys[0].events.pop_back(); },
       "deploy 0"},
      {"post-state", [](block::Block& b) { b.body.state.post_state[0] ^= 1; },
       "post-state"},
      {"no close-block", [](block::Block& b) { b.body.system_deploys.clear(); },
       "close-block"},
      {"two close-blocks",
       [](block::Block& b) {
         b.body.system_deploys.push_back(b.body.system_deploys[0]);
       },
       "second close-block"},
  };
  for (const Case& c : cases) {
    block::Block b = good;
    c.change(b);
    const BlockReplayVerdict v = blocks.Replay(b, deploys, {});
    EXPECT_EQ(v.kind, BlockReplayVerdict::Kind::kInvalid) << c.name;
    EXPECT_THAT(v.reason, HasSubstr(c.reason)) << c.name;
  }
  // The caller's mistake, not the block's: an internal error.
  const BlockReplayVerdict wrong =
      blocks.Replay(good, std::span(deploys).first(2), {});
  EXPECT_EQ(wrong.kind, BlockReplayVerdict::Kind::kInternalError);
}

}  // namespace
}  // namespace rnode::casper

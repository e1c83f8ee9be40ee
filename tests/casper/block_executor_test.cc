// Tests for whole-block play and replay: a played block replays to the same
// post-state, and each way a block can misstate its execution is a verdict.
#include "casper/execution/block_executor.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "casper/execution/executor_lanes.h"
#include "casper/genesis/genesis.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/casper/contract_env.h"
#include "tests/casper/test_genesis.h"
#include "util/worker_pool.h"

namespace rnode::casper {
namespace {

using testing::ContractEnv;
using ::testing::HasSubstr;
using testing::MakeTestKey;

constexpr int64_t kNow = 1'700'000'000'000;

class BlockExecutorTest : public ::testing::Test {
 protected:
  BlockExecutorTest()
      : blocks(env.space.get(), env.executor.get()),
        lanes(*ExecutorLanes::Create(env.space.get(), kContracts, 3, &pool)),
        parallel(env.space.get(), env.executor.get(), lanes.get(),
                 BlockExecutorOptions{.min_parallel_events_per_deploy = 0}) {
    const genesis::GenesisParams p =
        testing::TestGenesisParams(2, 4, 100'000'000);
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
    return BlockOf({Sign(1, "new x in { x!(1) | for (_ <- x) { Nil } }", kNow),
                    Sign(5, "Nil", kNow + 1),
                    Sign(1, "new x in { x!(1 / 0) }", kNow + 2)});
  }

  // A block of `signed_deploys` played on genesis.
  block::Block BlockOf(std::vector<SignedDeploy> signed_deploys) {
    deploys = std::move(signed_deploys);
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

  static constexpr contracts::ContractsOptions kContracts{
      .pos = {}, .test_processes = true};  // ContractEnv's
  ContractEnv env;
  BlockExecutor blocks;
  WorkerPool pool{2};
  std::unique_ptr<ExecutorLanes> lanes;
  // The same space and executor, with three lanes.
  BlockExecutor parallel;
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
    // With lanes: the same verdict, word for word.
    const BlockReplayVerdict p = parallel.Replay(b, deploys, {});
    EXPECT_EQ(p.kind, v.kind) << c.name;
    EXPECT_EQ(p.reason, v.reason) << c.name;
  }
  // The caller's mistake, not the block's: an internal error.
  const BlockReplayVerdict wrong =
      blocks.Replay(good, std::span(deploys).first(2), {});
  EXPECT_EQ(wrong.kind, BlockReplayVerdict::Kind::kInternalError);
}

// A state change by its items' identities (sources) per channel.
std::string Summary(const rspace::StateChanges& changes) {
  std::string out;
  auto ids = [&](const auto& items) {
    out += "[";
    for (const auto& item : items) out += HexEncode(item.source).substr(0, 8);
    out += "]";
  };
  for (const rspace::ChannelChange& c : changes.channels) {
    out += HexEncode(c.channel).substr(0, 8) + ":";
    ids(c.added_data);
    ids(c.removed_data);
    ids(c.added_continuations);
    ids(c.removed_continuations);
    out += absl::StrCat(c.added_joins.size(), "/", c.removed_joins.size(), ";");
  }
  return out;
}

// The outcomes replay gives must not depend on the lanes: each deploy's
// cost, failure, events, balance diffs and state change.
void ExpectSameOutcomes(const std::vector<DeployOutcome>& a,
                        const std::vector<DeployOutcome>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].cost, b[i].cost) << i;
    EXPECT_EQ(a[i].failure, b[i].failure) << i;
    EXPECT_EQ(a[i].events, b[i].events) << i;
    EXPECT_EQ(a[i].number_diffs, b[i].number_diffs) << i;
    EXPECT_EQ(Summary(a[i].changes), Summary(b[i].changes)) << i;
  }
}

constexpr char kPrivate[] =
    "new stdout(`rho:io:stdout`), x in { x!(1) | for (@v <- x) { "
    "stdout!(v) } }";

TEST_F(BlockExecutorTest, IndependentDeploysReplayOnLanes) {
  const block::Block b =
      BlockOf({Sign(1, kPrivate, kNow), Sign(2, kPrivate, kNow + 1),
               Sign(3, kPrivate, kNow + 2), Sign(4, kPrivate, kNow + 3)});
  const BlockReplayVerdict serial = blocks.Replay(b, deploys, {});
  ASSERT_TRUE(serial.ok()) << serial.reason << serial.error;
  EXPECT_FALSE(blocks.last_replay().parallel);

  const BlockReplayVerdict v = parallel.Replay(b, deploys, {});
  ASSERT_TRUE(v.ok()) << v.reason << v.error;
  // Each deploy alone (stdout is a system process's channel, and every
  // fee goes to the PoS vault in the deposit step).
  EXPECT_EQ(parallel.last_replay().groups, 4u);
  EXPECT_TRUE(parallel.last_replay().parallel);
  EXPECT_FALSE(parallel.last_replay().fell_back);
  EXPECT_EQ(env.space->root(), b.body.state.post_state);
  ExpectSameOutcomes(v.outcomes, serial.outcomes);
}

TEST_F(BlockExecutorTest, DeploysWritingOneChannelShareAGroup) {
  const block::Block b =
      BlockOf({Sign(1, "@\"shared\"!(1)", kNow),
               Sign(2, "for (_ <- @\"shared\") { Nil }", kNow + 1),
               Sign(3, kPrivate, kNow + 2), Sign(1, kPrivate, kNow + 3)});
  const BlockReplayVerdict v = parallel.Replay(b, deploys, {});
  ASSERT_TRUE(v.ok()) << v.reason << v.error;
  // {0, 1, 3}: the shared name, then deployer 1's balance; {2}.
  EXPECT_EQ(parallel.last_replay().groups, 2u);
  EXPECT_TRUE(parallel.last_replay().parallel);
  EXPECT_EQ(env.space->root(), b.body.state.post_state);
  ExpectSameOutcomes(v.outcomes, blocks.Replay(b, deploys, {}).outcomes);
}

// Deploy 0 reads the balance of key 3's vault, which deploy 1 pays into.
// The read is not in deploy 0's log (balance reads never are), so the
// block's logs put them in two groups; the check of what they did finds
// deploy 0 touched a channel the other group wrote, and the block replays
// serially, to the block's post-state.
TEST_F(BlockExecutorTest, AnUnloggedReadOfAnotherGroupsWriteFallsBack) {
  const std::string balance =
      absl::StrReplaceAll(R"(
new rl(`rho:registry:lookup`), vaultsCh, vaultCh, balanceCh in {
  rl!(`rho:vault:system`, *vaultsCh) |
  for (@(_, vaults) <- vaultsCh) {
    @vaults!("findOrCreate", "$ADDR", *vaultCh) |
    for (@(true, vault) <- vaultCh) { @vault!("balance", *balanceCh) }
  }
})",
                          {{"$ADDR", MakeTestKey(3).address}});
  const std::string transfer = absl::StrReplaceAll(
      R"(
new rl(`rho:registry:lookup`), deployerId(`rho:rchain:deployerId`),
    deployId(`rho:rchain:deployId`), vaultCh, keyCh, ret in {
  rl!(`rho:vault:system`, *ret) |
  for (@(_, vaults) <- ret) {
    @vaults!("findOrCreate", "$FROM", *vaultCh) |
    @vaults!("deployerAuthKey", *deployerId, *keyCh) |
    for (@(true, vault) <- vaultCh; key <- keyCh) {
      @vault!("transfer", "$TO", 5, *key, *deployId)
    }
  }
})",
      {{"$FROM", MakeTestKey(2).address}, {"$TO", MakeTestKey(3).address}});
  const block::Block b =
      BlockOf({Sign(1, balance, kNow), Sign(2, transfer, kNow + 1)});
  ASSERT_FALSE(b.body.deploys[0].errored);
  ASSERT_FALSE(b.body.deploys[1].errored);
  const BlockReplayVerdict v = parallel.Replay(b, deploys, {});
  ASSERT_TRUE(v.ok()) << v.reason << v.error;
  EXPECT_EQ(parallel.last_replay().groups, 2u);
  EXPECT_FALSE(parallel.last_replay().parallel);
  EXPECT_TRUE(parallel.last_replay().fell_back);
  EXPECT_EQ(env.space->root(), b.body.state.post_state);
  ExpectSameOutcomes(v.outcomes, blocks.Replay(b, deploys, {}).outcomes);
}

// With the default options, lanes are used only for blocks whose deploys
// average kMinParallelEventsPerDeploy recorded events or more.
TEST_F(BlockExecutorTest, LanesRunOnlyBlocksWithEnoughWorkPerDeploy) {
  BlockExecutor adaptive(env.space.get(), env.executor.get(), lanes.get());
  const block::Block light =
      BlockOf({Sign(1, kPrivate, kNow), Sign(2, kPrivate, kNow + 1)});
  for (const auto& d : light.body.deploys) {
    ASSERT_LT(d.events.size(), kMinParallelEventsPerDeploy);
  }
  ASSERT_TRUE(adaptive.Replay(light, deploys, {}).ok());
  EXPECT_EQ(adaptive.last_replay().groups, 0u);
  EXPECT_FALSE(adaptive.last_replay().parallel);

  const std::string loop =
      "new loop, x in { contract loop(@n) = { if (n > 0) { x!(n) | "
      "loop!(n - 1) } } | loop!(20) }";
  const block::Block heavy =
      BlockOf({Sign(1, loop, kNow), Sign(2, loop, kNow + 1)});
  for (const auto& d : heavy.body.deploys) {
    ASSERT_GE(d.events.size(), kMinParallelEventsPerDeploy);
  }
  const BlockReplayVerdict v = adaptive.Replay(heavy, deploys, {});
  ASSERT_TRUE(v.ok()) << v.reason << v.error;
  EXPECT_EQ(adaptive.last_replay().groups, 2u);
  EXPECT_TRUE(adaptive.last_replay().parallel);
  EXPECT_EQ(env.space->root(), heavy.body.state.post_state);
}

TEST(ExecutorLanesTest, RefusesMissingPartsAndNoLanes) {
  WorkerPool pool(2);
  EXPECT_EQ(ExecutorLanes::Create(nullptr, {}, 2, &pool).status().code(),
            absl::StatusCode::kInvalidArgument);
  ContractEnv env;
  EXPECT_EQ(
      ExecutorLanes::Create(env.space.get(), {}, 0, &pool).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ExecutorLanes::Create(env.space.get(), {}, 2, nullptr).status().code(),
      absl::StatusCode::kInvalidArgument);
  auto ok = ExecutorLanes::Create(env.space.get(), {}, 2, &pool);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)->size(), 2u);
}

TEST_F(BlockExecutorTest, AnUnsignedDeployStopsParallelReplayAsSerial) {
  const block::Block b =
      BlockOf({Sign(1, kPrivate, kNow), Sign(2, kPrivate, kNow + 1),
               Sign(3, kPrivate, kNow + 2)});
  auto source = [&](size_t i) -> const SignedDeploy* {
    return i == 1 ? nullptr : &deploys[i];
  };
  const BlockReplayVerdict v = parallel.Replay(b, source, {});
  EXPECT_EQ(v.kind, BlockReplayVerdict::Kind::kInvalid);
  EXPECT_THAT(v.reason, HasSubstr("deploy 1"));
  EXPECT_THAT(v.reason, HasSubstr("not signed"));
  EXPECT_TRUE(parallel.last_replay().fell_back);
}

}  // namespace
}  // namespace rnode::casper

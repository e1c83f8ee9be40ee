// Casper's system deploys through the executor: closeBlock and slash.
#include "casper/contracts/names.h"
#include "casper/execution/deploy_executor.h"
#include "casper/genesis/genesis.h"
#include "gtest/gtest.h"
#include "tests/casper/contract_env.h"

namespace rnode::casper {
namespace {

using testing::ContractEnv;
using testing::MakeTestKey;

contracts::ContractsOptions ShortEpochs() {
  contracts::ContractsOptions o;
  o.pos.epoch_length = 2;
  o.pos.quarantine_length = 2;
  o.test_processes = true;
  return o;
}

class SystemDeployTest : public ::testing::Test {
 protected:
  SystemDeployTest() : env(1, ShortEpochs()) {
    genesis::GenesisParams p;
    p.pos = ShortEpochs().pos;
    for (uint8_t i = 1; i <= 2; ++i) {
      genesis::Bond b;
      b.validator = MakeTestKey(i).pk;
      b.stake = 1000 * i;
      p.bonds.push_back(b);
    }
    genesis::Wallet w;
    w.address = MakeTestKey(1).address;
    w.balance = 10'000'000;
    p.wallets.push_back(w);
    auto g = genesis::CreateGenesis(p, env.space.get(), env.contracts.get(),
                                    env.runtime.get());
    EXPECT_TRUE(g.ok()) << g.status();
    root = g->post_state();
  }
  ContractEnv env;
  Hash32 root{};
};

TEST_F(SystemDeployTest, CloseBlockOutsideAnEpochBoundaryDoesNothing) {
  rholang::interp::BlockInfo block;
  block.block_number = 1;
  auto out = env.executor->PlaySystem({}, block);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(!out->failed());
  EXPECT_TRUE(out->events.empty());
  EXPECT_TRUE(out->changes.channels.empty());
  EXPECT_EQ(env.Checkpoint(), root);
}

TEST_F(SystemDeployTest, CloseBlockAtABoundaryCommitsRewardsAndReplays) {
  // A deploy's fee lands in the PoS vault: the reward pot.
  auto paid = env.Deploy(MakeTestKey(1), "Nil", 100'000, 3);
  ASSERT_TRUE(paid.ok() && !paid->failed());
  const int64_t fee = paid->charged - paid->refunded;
  ASSERT_GT(fee, 0);
  Hash32 before = env.Checkpoint();
  rholang::interp::BlockInfo block;
  block.block_number = 2;
  auto out = env.executor->PlaySystem({}, block);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_FALSE(out->failed()) << out->message;
  EXPECT_FALSE(out->changes.channels.empty());
  Hash32 after = env.Checkpoint();
  EXPECT_NE(after, before);
  // The stakes and the fee stay in the PoS vault (rewards are paid on
  // withdrawal).
  EXPECT_EQ(env.Balance(contracts::PosVaultAddress()), 3000 + fee);

  ASSERT_TRUE(env.space->Reset(before).ok());
  ReplayVerdict replayed = env.executor->ReplaySystem({}, block, out->events);
  ASSERT_TRUE(replayed.ok())
      << replayed.divergence.ToString() << replayed.error;
  EXPECT_EQ(env.Checkpoint(), after);
}

TEST_F(SystemDeployTest, SlashMovesTheStakeToTheCoopVault) {
  SystemDeploy slash;
  slash.kind = SystemDeploy::Kind::kSlash;
  slash.validator = MakeTestKey(2).pk_bytes();
  rholang::interp::BlockInfo block;
  block.block_number = 3;
  // The coop vault genesis made (PoS getCoopVault's address).
  auto found = env.Run(MakeTestKey(1), R"(
    new rl(`rho:registry:lookup`), out(`rho:io:stdout`), posCh, coopCh in {
      rl!(`rho:system:pos`, *posCh) |
      for (@(_, PoS) <- posCh) {
        @PoS!("getCoopVault", *coopCh) |
        for (@(_, address, _) <- coopCh) { out!(address) }
      }
    })");
  ASSERT_FALSE(found.failed()) << found.error;
  ASSERT_EQ(env.lines.out.size(), 1u);
  const std::string coop_address = env.lines.out[0].substr(
      1, env.lines.out[0].size() - 2);  // unquoted
  ASSERT_NE(coop_address, contracts::CoopVaultAddress());
  auto out = env.executor->PlaySystem(slash, block);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_FALSE(out->failed()) << out->message;
  EXPECT_EQ(env.Balance(coop_address), 2000);
  EXPECT_EQ(env.Balance(contracts::CoopVaultAddress()), 0);
  EXPECT_EQ(env.Balance(contracts::PosVaultAddress()), 1000);
  bool coop_diff = false;
  auto coop = *contracts::BalanceChannelHash(coop_address);
  for (const auto& d : out->number_diffs) {
    if (d.channel == coop) coop_diff = d.delta == 2000;
  }
  EXPECT_TRUE(coop_diff);
  Hash32 slashed = env.Checkpoint();
  contracts::ValidatorsCache cache(&env.space->history());
  auto v = cache.Get(slashed);
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ((*v)->active.size(), 1u);
  EXPECT_EQ((*v)->active[0], MakeTestKey(1).pk_bytes());
}

}  // namespace
}  // namespace rnode::casper

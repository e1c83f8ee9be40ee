// What a block leaves in the live state (issue 45's disk budget): the
// state a node keeps under retention is what its kept roots reach, so a
// system contract that leaves a channel behind per deploy or per block
// grows every node's disk without bound. These tests play chains of blocks
// with the load generator's own terms and count the channels (trie leaves)
// of each post-state: a block leaves exactly what its deploys' programs
// leave (a send nobody receives), and the block's own work (precharge,
// refund, close block) leaves nothing.
#include <cstdint>
#include <string>
#include <vector>

#include "casper/execution/block_executor.h"
#include "casper/genesis/genesis.h"
#include "gtest/gtest.h"
#include "integration/loadgen/workload.h"
#include "tests/casper/contract_env.h"
#include "tests/casper/test_genesis.h"

namespace rnode::casper {
namespace {

using testing::ContractEnv;
using testing::MakeTestKey;

constexpr int64_t kNow = 1'700'000'000'000;
constexpr uint8_t kWallets = 4;

class StateResidueTest : public ::testing::Test {
 protected:
  StateResidueTest() : blocks(env.space.get(), env.executor.get()) {
    const genesis::GenesisParams p =
        testing::TestGenesisParams(2, kWallets, 1'000'000'000);
    for (const genesis::Wallet& w : p.wallets) {
      workload.wallets.push_back(w.address);
    }
    workload.run_tag = "residue";
    auto g = genesis::CreateGenesis(p, env.space.get(), env.contracts.get(),
                                    env.runtime.get());
    EXPECT_TRUE(g.ok()) << g.status();
    root = g->post_state();
  }

  // Plays one block on `root` holding `terms`, each signed by the wallet
  // key the load generator would use for `first_sequence` onward; every
  // deploy must succeed. Moves `root` to the block's post-state.
  void PlayBlock(const std::vector<std::string>& terms,
                 int64_t first_sequence) {
    std::vector<SignedDeploy> signed_deploys;
    for (size_t i = 0; i < terms.size(); ++i) {
      const int64_t seq = first_sequence + static_cast<int64_t>(i);
      DeployData d;
      d.term = terms[i];
      d.timestamp = kNow + seq;
      d.phlo_price = 1;
      d.phlo_limit = 1'000'000;
      d.shard_id = "root";
      signed_deploys.push_back(*SignedDeploy::Sign(
          d, MakeTestKey(static_cast<uint8_t>(1 + seq % kWallets)).sk));
    }
    ++number;
    auto played = blocks.Play(
        root, signed_deploys, {},
        BlockEnv{number, kNow + 1000 * number, MakeTestKey(1 + number % 2).pk});
    ASSERT_TRUE(played.ok()) << played.status();
    for (const block::ProcessedDeploy& d : played->deploys) {
      ASSERT_FALSE(d.errored) << "block " << number;
      ASSERT_TRUE(d.system_deploy_error.empty())
          << "block " << number << ": " << d.system_deploy_error;
    }
    root = played->post_state;
  }

  // Channels (trie leaves) of the live state at `root`.
  int64_t Channels() {
    int64_t n = 0;
    absl::Status s = env.space->history().trie().ForEachLeaf(
        root, [&n](const Hash32&, const Hash32&) {
          ++n;
          return absl::OkStatus();
        });
    EXPECT_TRUE(s.ok()) << s;
    return n;
  }

  // Plays `blocks_to_play` blocks of `per_block` deploys of the workload
  // after one warm-up block (a first transfer may create what later ones
  // reuse); returns the channels each block added.
  std::vector<int64_t> ChannelsAddedPerBlock(loadgen::WorkloadKind kind,
                                             int blocks_to_play,
                                             int per_block) {
    workload.kind = kind;
    int64_t seq = 0;
    auto next_terms = [&] {
      std::vector<std::string> terms;
      for (int i = 0; i < per_block; ++i) {
        terms.push_back(loadgen::WorkloadTerm(workload, seq + i));
      }
      return terms;
    };
    PlayBlock(next_terms(), seq);
    seq += per_block;
    std::vector<int64_t> added;
    for (int b = 0; b < blocks_to_play; ++b) {
      const int64_t before = Channels();
      PlayBlock(next_terms(), seq);
      seq += per_block;
      added.push_back(Channels() - before);
    }
    return added;
  }

  ContractEnv env;
  BlockExecutor blocks;
  loadgen::Workload workload;
  Hash32 root{};
  int64_t number = 0;
};

TEST_F(StateResidueTest, AnEmptyBlockLeavesNothing) {
  PlayBlock({}, 0);
  for (int b = 0; b < 3; ++b) {
    const int64_t before = Channels();
    PlayBlock({}, 0);
    EXPECT_EQ(Channels(), before) << "empty block " << number;
  }
}

// "@N!(N)" is a send nobody receives: one channel per deploy, the user's
// data, kept for ever by every node.
TEST_F(StateResidueTest, ANoopDeployLeavesItsOneSend) {
  const std::vector<int64_t> added =
      ChannelsAddedPerBlock(loadgen::WorkloadKind::kNoop, 3, 4);
  EXPECT_EQ(added, (std::vector<int64_t>{4, 4, 4}));
}

// The transfer term sends the vault's answer to a fresh name it never
// reads: that answer is the one channel a transfer leaves. The vaults,
// the auth keys, the cost accounting and the close-block deploy leave
// nothing.
TEST_F(StateResidueTest, ATransferLeavesOnlyItsUnreadAnswer) {
  const std::vector<int64_t> added =
      ChannelsAddedPerBlock(loadgen::WorkloadKind::kTransfer, 3, 4);
  EXPECT_EQ(added, (std::vector<int64_t>{4, 4, 4}));
}

// With --read-answers (the disk soak's terms) a noop and a transfer leave
// nothing at all.
TEST_F(StateResidueTest, DeploysThatReadTheirAnswersLeaveNothing) {
  workload.read_answers = true;
  for (loadgen::WorkloadKind kind :
       {loadgen::WorkloadKind::kNoop, loadgen::WorkloadKind::kTransfer}) {
    EXPECT_EQ(ChannelsAddedPerBlock(kind, 3, 4),
              (std::vector<int64_t>{0, 0, 0}))
        << loadgen::WorkloadName(kind);
  }
}

}  // namespace
}  // namespace rnode::casper

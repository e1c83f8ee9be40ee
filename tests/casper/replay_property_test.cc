// Determinism of block execution across thread counts: seeded random blocks
// (random Rholang programs as deploys of several deployers) made on a
// one-thread node are valid, with the same post-state, on nodes replaying
// with 1, 2 and 8 threads (the interpreter's parallel rounds, the
// validator's signature checks and parallel replay on lanes). The programs
// use public names as well as their own, so blocks mix deploys that replay
// at once with deploys that share channels.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/casper/test_node.h"
#include "tests/rholang/interpreter/program_generator.h"
#include "tests/sanitizer.h"
#include "tests/test_seed.h"

namespace rnode::casper {
namespace {

using testing::kGenesisTime;
using testing::TestNode;

// Blocks are made in chains of kChain on fresh nodes, so that data the
// random programs leave on public names does not pile up over the run
// (each chain starts from genesis again).
constexpr int kChain = 10;

TEST(ReplayPropertyTest, BlocksReplayIdenticallyAtEveryThreadCount) {
  const uint64_t seed = rnode::testing::TestSeed(
      "ReplayPropertyTest.BlocksReplayIdenticallyAtEveryThreadCount", 1000);
  // 1,000 blocks; a twentieth under the sanitizers.
  const int blocks = rnode::testing::kUnderSanitizer ? 50 : 1000;
  std::mt19937_64 rng(seed);
  const int64_t funds = 1'000'000'000'000'000;
  rholang::interp::testing::GeneratorOptions programs;
  programs.max_processes = 20;
  int deploys_run = 0;
  int succeeded = 0;
  // Replays (on the 2- and 8-thread nodes) whose parallel run was used, and
  // those that fell back to serial replay.
  int parallel = 0;
  int fell_back = 0;
  constexpr int kDeployers = 4;
  for (int chain = 0; chain * kChain < blocks; ++chain) {
    TestNode maker(1, 1, funds, /*threads=*/1, /*max_parents=*/1, kDeployers);
    std::vector<std::unique_ptr<TestNode>> replayers;
    for (int threads : {1, 2, 8}) {
      replayers.push_back(std::make_unique<TestNode>(
          1, 1, funds, threads, /*max_parents=*/1, kDeployers));
    }
    int64_t now = kGenesisTime + 1000;
    for (int n = 0; n < kChain; ++n) {
      const int deploys = 1 + static_cast<int>(rng() % 4);
      for (int d = 0; d < deploys; ++d) {
        const auto signer = static_cast<uint8_t>(1 + rng() % kDeployers);
        DeployData data;
        data.term = rholang::interp::testing::GenerateProgram(rng(), programs);
        data.timestamp = ++now;
        data.phlo_price = 1;
        data.phlo_limit = 300'000;
        data.shard_id = "root";
        auto signed_deploy =
            SignedDeploy::Sign(data, testing::MakeTestKey(signer).sk);
        ASSERT_TRUE(signed_deploy.ok());
        ASSERT_TRUE(maker.pool().Add(*signed_deploy, n, now).ok());
      }
      now += 10;
      auto block = maker.Propose(now);
      ASSERT_TRUE(block.has_value()) << "chain " << chain << " block " << n;
      deploys_run += static_cast<int>(block->body.deploys.size());
      for (const auto& d : block->body.deploys) {
        succeeded += (!d.errored && d.system_deploy_error.empty()) ? 1 : 0;
      }
      ASSERT_TRUE(maker.Receive(*block, now).valid());
      for (size_t r = 0; r < replayers.size(); ++r) {
        validation::Verdict v = replayers[r]->Receive(*block, now);
        ASSERT_TRUE(v.valid())
            << "chain " << chain << " block " << n << " on replayer " << r
            << ": " << validation::InvalidReasonName(v.reason) << ": "
            << v.detail << v.error;
        ASSERT_EQ(replayers[r]->space().root(), block->body.state.post_state);
        const ReplayInfo& info = replayers[r]->blocks().last_replay();
        parallel += info.parallel ? 1 : 0;
        fell_back += info.fell_back ? 1 : 0;
      }
    }
  }
  EXPECT_GE(deploys_run, blocks);
  // Most programs finish within the phlo limit (some run out or fail, as
  // the generator intends): the replays compare real work.
  EXPECT_GE(succeeded, deploys_run / 2);
  // The lanes' results were used, not only the serial fallback: in a tenth
  // of the multi-threaded replays at least (seed 1000: 432 of 2,000; the
  // random programs share public names, so many blocks form one group or
  // fall back).
  EXPECT_GE(parallel, 2 * blocks / 10);
  std::printf(
      "%d deploys in %d blocks, %d succeeded; of %d multi-threaded replays, "
      "%d parallel, %d fell back to serial\n",
      deploys_run, blocks, succeeded, 2 * blocks, parallel, fell_back);
}

}  // namespace
}  // namespace rnode::casper

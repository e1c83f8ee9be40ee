#include "node/core/gossip_backup.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "casper/deploy.h"
#include "crypto/secp256k1.h"
#include "gtest/gtest.h"

namespace rnode::node {
namespace {

using namespace std::chrono_literals;
using Clock = GossipBackup::Clock;

// Deploy `n` of deployer `signer` (-1: a deployer of its own, n), with a
// term of `term_bytes` bytes (0: a short one).
casper::SignedDeploy Deploy(int n, int64_t valid_after = 100, int signer = -1,
                            size_t term_bytes = 0) {
  casper::DeployData d;
  d.term = term_bytes == 0 ? "@0!(" + std::to_string(n) + ")"
                           : std::string(term_bytes, ' ');
  d.timestamp = 1'700'000'000'000 + n;
  d.phlo_price = 1;
  d.phlo_limit = 100'000;
  d.valid_after_block_number = valid_after;
  d.shard_id = "root";
  crypto::Secp256k1PrivateKey key{};
  key[30] = 1;
  key[31] = static_cast<uint8_t>(signer < 0 ? n : signer);
  return *casper::SignedDeploy::Sign(d, key);
}

std::vector<Bytes> Sigs(const std::vector<casper::SignedDeploy>& deploys) {
  std::vector<Bytes> out;
  for (const auto& d : deploys) out.push_back(d.sig());
  return out;
}

TEST(GossipBackupTest, HoldsEveryDeployUntilItsTakeoverTime) {
  GossipBackup backup(100, 1 << 20, 5000ms);
  const Clock::time_point t0{};
  std::vector<Bytes> sigs;
  for (int i = 0; i < 10; ++i) {
    casper::SignedDeploy d = Deploy(i);
    sigs.push_back(d.sig());
    EXPECT_EQ(backup.Hold(std::move(d), t0 + i * 1ms),
              GossipBackup::Held::kHeld);
  }
  // Ten different deploys, ten held (the key was once read after the
  // deploy had moved: every deploy got the same empty key, one was held).
  EXPECT_EQ(backup.size(), 10u);
  EXPECT_TRUE(backup.TakeDue(t0 + 4999ms, 101).empty());
  std::vector<casper::SignedDeploy> due = backup.TakeDue(t0 + 5004ms, 101);
  std::vector<Bytes> got = Sigs(due);
  std::vector<Bytes> want(sigs.begin(), sigs.begin() + 5);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
  EXPECT_EQ(backup.size(), 5u);
  EXPECT_EQ(backup.TakeDue(t0 + 1h, 101).size(), 5u);
  EXPECT_EQ(backup.size(), 0u);
}

TEST(GossipBackupTest, ForgottenDeploysAreNeverDue) {
  GossipBackup backup(100, 1 << 20, 5000ms);
  const Clock::time_point t0{};
  casper::SignedDeploy a = Deploy(1), b = Deploy(2);
  const Bytes a_sig = a.sig(), b_sig = b.sig();
  backup.Hold(std::move(a), t0);
  backup.Hold(std::move(b), t0);
  backup.Forget(a_sig);
  backup.Forget(Bytes{1, 2, 3});  // never held: no-op
  EXPECT_EQ(Sigs(backup.TakeDue(t0 + 1h, 101)), std::vector<Bytes>{b_sig});
}

TEST(GossipBackupTest, HalfTheWindowGoneMakesADeployDueEarly) {
  GossipBackup backup(100, 1 << 20, 5000ms);
  const Clock::time_point t0{};
  backup.Hold(Deploy(1, /*valid_after=*/100), t0);
  // The window is blocks 101..150; past its middle the deploy is due
  // whatever the clock says.
  EXPECT_TRUE(backup.TakeDue(t0, 110).empty());
  EXPECT_EQ(backup.TakeDue(t0, 126).size(), 1u);
}

TEST(GossipBackupTest, IsBoundedAndKeepsTheFirstArrival) {
  GossipBackup backup(2, 1 << 20, 5000ms);
  const Clock::time_point t0{};
  EXPECT_EQ(backup.Hold(Deploy(1), t0), GossipBackup::Held::kHeld);
  EXPECT_EQ(backup.Hold(Deploy(1), t0 + 4s), GossipBackup::Held::kAlreadyHeld);
  EXPECT_EQ(backup.Hold(Deploy(2), t0), GossipBackup::Held::kHeld);
  EXPECT_EQ(backup.Hold(Deploy(3), t0), GossipBackup::Held::kFull);
  EXPECT_EQ(backup.size(), 2u);
  // Deploy 1 is due by its first arrival, not the repeat's.
  EXPECT_EQ(backup.TakeDue(t0 + 5s, 101).size(), 2u);
}

// Regression (issue 43): the backup was bounded by count only: 20,000
// deploys of the largest term (about 5 GiB) fitted.
TEST(GossipBackupTest, IsBoundedInBytes) {
  GossipBackup backup(100, 1000, 5000ms);
  const Clock::time_point t0{};
  EXPECT_EQ(backup.Hold(Deploy(1, 100, -1, 600), t0),
            GossipBackup::Held::kDeployerFull);  // above 1000 / 16
  GossipBackup roomy(100, 16'000, 5000ms);
  for (int i = 0; i < 16; ++i) {
    ASSERT_EQ(roomy.Hold(Deploy(i, 100, -1, 1000), t0),
              GossipBackup::Held::kHeld)
        << i;
  }
  EXPECT_EQ(roomy.term_bytes(), 16'000u);
  EXPECT_EQ(roomy.Hold(Deploy(16, 100, -1, 1), t0), GossipBackup::Held::kFull);
  // Bytes taken over or forgotten are free again.
  EXPECT_EQ(roomy.TakeDue(t0 + 5s, 101).size(), 16u);
  EXPECT_EQ(roomy.term_bytes(), 0u);
  EXPECT_EQ(roomy.Hold(Deploy(16, 100, -1, 1000), t0),
            GossipBackup::Held::kHeld);
}

// One deployer (a key made for the purpose, or a busy one) holds at most a
// sixteenth of the backup, by count and by bytes; others still get in.
TEST(GossipBackupTest, ADeployerHoldsAtMostItsShare) {
  GossipBackup backup(160, 1 << 20, 5000ms);  // 10 deploys each
  const Clock::time_point t0{};
  std::vector<Bytes> sigs;
  for (int i = 0; i < 10; ++i) {
    casper::SignedDeploy d = Deploy(i, 100, /*signer=*/200);
    sigs.push_back(d.sig());
    ASSERT_EQ(backup.Hold(std::move(d), t0), GossipBackup::Held::kHeld) << i;
  }
  EXPECT_EQ(backup.Hold(Deploy(10, 100, 200), t0),
            GossipBackup::Held::kDeployerFull);
  EXPECT_EQ(backup.Hold(Deploy(11, 100, 201), t0), GossipBackup::Held::kHeld);
  backup.Forget(sigs[0]);
  EXPECT_EQ(backup.Hold(Deploy(10, 100, 200), t0), GossipBackup::Held::kHeld);
  EXPECT_EQ(backup.size(), 11u);
}

}  // namespace
}  // namespace rnode::node

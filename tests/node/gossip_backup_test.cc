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

casper::SignedDeploy Deploy(int n, int64_t valid_after = 100) {
  casper::DeployData d;
  d.term = "@0!(" + std::to_string(n) + ")";
  d.timestamp = 1'700'000'000'000 + n;
  d.phlo_price = 1;
  d.phlo_limit = 100'000;
  d.valid_after_block_number = valid_after;
  d.shard_id = "root";
  crypto::Secp256k1PrivateKey key{};
  key[31] = 7;
  return *casper::SignedDeploy::Sign(d, key);
}

std::vector<Bytes> Sigs(const std::vector<casper::SignedDeploy>& deploys) {
  std::vector<Bytes> out;
  for (const auto& d : deploys) out.push_back(d.sig());
  return out;
}

TEST(GossipBackupTest, HoldsEveryDeployUntilItsTakeoverTime) {
  GossipBackup backup(100, 5000ms);
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
  GossipBackup backup(100, 5000ms);
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
  GossipBackup backup(100, 5000ms);
  const Clock::time_point t0{};
  backup.Hold(Deploy(1, /*valid_after=*/100), t0);
  // The window is blocks 101..150; past its middle the deploy is due
  // whatever the clock says.
  EXPECT_TRUE(backup.TakeDue(t0, 110).empty());
  EXPECT_EQ(backup.TakeDue(t0, 126).size(), 1u);
}

TEST(GossipBackupTest, IsBoundedAndKeepsTheFirstArrival) {
  GossipBackup backup(2, 5000ms);
  const Clock::time_point t0{};
  EXPECT_EQ(backup.Hold(Deploy(1), t0), GossipBackup::Held::kHeld);
  EXPECT_EQ(backup.Hold(Deploy(1), t0 + 4s), GossipBackup::Held::kAlreadyHeld);
  EXPECT_EQ(backup.Hold(Deploy(2), t0), GossipBackup::Held::kHeld);
  EXPECT_EQ(backup.Hold(Deploy(3), t0), GossipBackup::Held::kFull);
  EXPECT_EQ(backup.size(), 2u);
  // Deploy 1 is due by its first arrival, not the repeat's.
  EXPECT_EQ(backup.TakeDue(t0 + 5s, 101).size(), 2u);
}

}  // namespace
}  // namespace rnode::node

// The merger over real vault deploys: REV balances are mergeable number
// channels (issue #7's "no lost update" with the real codec of issue #6).
#include <string>

#include "absl/strings/str_replace.h"
#include "casper/contracts/ledger.h"
#include "casper/contracts/names.h"
#include "casper/merge/merger.h"
#include "gtest/gtest.h"
#include "rholang/interpreter/term_codec.h"
#include "tests/casper/contract_env.h"

namespace rnode::casper {
namespace {

using testing::ContractEnv;
using testing::MakeTestKey;
using testing::TestKey;

constexpr char kTransfer[] = R"(
new deployerId(`rho:system:deployerId`), rl(`rho:registry:lookup`),
    vaultsCh, fromCh, keyCh, resultCh in {
  rl!(`rho:vault:system`, *vaultsCh) |
  for (@(_, Vaults) <- vaultsCh) {
    @Vaults!("findOrCreate", "$FROM", *fromCh) |
    @Vaults!("deployerAuthKey", *deployerId, *keyCh) |
    for (@(true, from) <- fromCh; key <- keyCh) {
      @from!("transfer", "$TO", $AMOUNT, *key, *resultCh)
    }
  }
})";

std::string Transfer(const TestKey& from, const TestKey& to, int64_t amount) {
  return absl::StrReplaceAll(kTransfer, {{"$FROM", from.address},
                                         {"$TO", to.address},
                                         {"$AMOUNT", std::to_string(amount)}});
}

constexpr int64_t kLimit = 1'000'000;

class VaultMergeTest : public ::testing::Test {
 protected:
  VaultMergeTest()
      : alice(MakeTestKey(1)),
        bob(MakeTestKey(2)),
        carol(MakeTestKey(3)),
        dave(MakeTestKey(4)) {
    env.Fund(alice.address, 3'000'000);
    env.Fund(bob.address, 3'000'000);
    base = env.Checkpoint();
  }

  // Plays `term` by `key` on the base state as the only deploy of a block.
  std::shared_ptr<const merge::BlockIndex> Block(uint8_t tag,
                                                 const TestKey& key,
                                                 const std::string& term,
                                                 int64_t* fee) {
    EXPECT_TRUE(env.space->Reset(base).ok());
    auto out = env.Deploy(key, term, kLimit, 1, 1'700'000'000'000 + tag);
    EXPECT_TRUE(out.ok() && !out->failed());
    *fee = out->charged - out->refunded;
    merge::DeployInput d;
    d.id = Bytes(8, tag);
    d.cost = static_cast<uint64_t>(out->cost);
    d.events = out->events;
    d.changes = out->changes;
    for (const auto& n : out->number_diffs) d.number_diffs[n.channel] = n.delta;
    merge::BlockInput b;
    b.hash.fill(tag);
    b.number = 1;
    b.deploys.push_back(std::move(d));
    EXPECT_TRUE(env.Checkpoint() != Hash32{});
    auto index = merge::BuildBlockIndex(std::move(b));
    EXPECT_TRUE(index.ok()) << index.status();
    return *index;
  }

  absl::StatusOr<merge::MergeResult> MergeOf(
      std::vector<std::shared_ptr<const merge::BlockIndex>> scope) {
    merge::MergeOptions options;
    options.number_codec = &codec;
    options.term_factory = rholang::interp::StoredTermFactory();
    return merge::Merge(env.space->history(), base, scope, options);
  }

  ContractEnv env;
  TestKey alice, bob, carol, dave;
  Hash32 base{};
  contracts::BalanceCodec codec;
};

TEST_F(VaultMergeTest, ConcurrentTransfersIntoOneVaultAddUp) {
  int64_t fee_a = 0;
  int64_t fee_b = 0;
  auto a = Block(1, alice, Transfer(alice, carol, 100), &fee_a);
  auto b = Block(2, bob, Transfer(bob, carol, 200), &fee_b);
  auto merged = MergeOf({a, b});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_TRUE(merged->rejected.empty());
  ASSERT_TRUE(env.space->Reset(merged->root).ok());
  EXPECT_EQ(env.Balance(carol.address), 300);
  EXPECT_EQ(env.Balance(alice.address), 3'000'000 - 100 - fee_a);
  EXPECT_EQ(env.Balance(bob.address), 3'000'000 - 200 - fee_b);
  EXPECT_EQ(env.Balance(contracts::PosVaultAddress()), fee_a + fee_b);
}

TEST_F(VaultMergeTest, TwoSpendsThatOverdrawOneVaultLeaveExactlyOneRejected) {
  int64_t fee_a = 0;
  int64_t fee_b = 0;
  auto a = Block(1, alice, Transfer(alice, carol, 1'500'000), &fee_a);
  auto b = Block(2, alice, Transfer(alice, dave, 1'500'000), &fee_b);
  auto merged = MergeOf({a, b});
  ASSERT_TRUE(merged.ok()) << merged.status();
  ASSERT_EQ(merged->rejected.size(), 1u);
  EXPECT_EQ(merged->rejected[0].reason, merge::RejectReason::kNumberChannel);
  ASSERT_TRUE(env.space->Reset(merged->root).ok());
  const bool kept_a = merged->rejected[0].id == Bytes(8, 2);
  EXPECT_EQ(env.Balance(carol.address), kept_a ? 1'500'000 : 0);
  EXPECT_EQ(env.Balance(dave.address), kept_a ? 0 : 1'500'000);
  EXPECT_EQ(env.Balance(alice.address),
            3'000'000 - 1'500'000 - (kept_a ? fee_a : fee_b));
}

TEST_F(VaultMergeTest, ParentOrderDoesNotChangeTheResult) {
  int64_t fee = 0;
  auto a = Block(1, alice, Transfer(alice, carol, 10), &fee);
  auto b = Block(2, bob, Transfer(bob, carol, 20), &fee);
  auto c = Block(3, alice, Transfer(alice, dave, 30), &fee);
  auto x = MergeOf({a, b, c});
  auto y = MergeOf({c, a, b});
  ASSERT_TRUE(x.ok() && y.ok());
  EXPECT_EQ(x->root, y->root);
  EXPECT_EQ(x->rejected, y->rejected);
}

}  // namespace
}  // namespace rnode::casper

// The REV vault and native cost accounting, driven by signed deploys
// through the DeployExecutor (the acceptance checks of issue #6).
#include <span>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "casper/contracts/ledger.h"
#include "casper/contracts/names.h"
#include "gtest/gtest.h"
#include "rspace/event_log.h"
#include "tests/casper/contract_env.h"

namespace rnode::casper {
namespace {

using testing::ContractEnv;
using testing::MakeTestKey;
using testing::TestKey;

// A wallet's transfer deploy in the shape current clients send: the vault
// contract from the registry under rho:vault:system, both vaults and the
// deployer's auth key joined, the result printed and sent to the deploy id.
constexpr char kTransferTemplate[] = R"(
new deployId(`rho:rchain:deployId`), deployerId(`rho:system:deployerId`),
    rl(`rho:registry:lookup`), stdout(`rho:io:stdout`),
    vaultsCh, fromCh, toCh, keyCh, resultCh in {
  rl!(`$URI`, *vaultsCh) |
  for (@(_, Vaults) <- vaultsCh) {
    @Vaults!("findOrCreate", "$FROM", *fromCh) |
    @Vaults!("findOrCreate", "$TO", *toCh) |
    @Vaults!("deployerAuthKey", *deployerId, *keyCh) |
    for (@(true, from) <- fromCh; key <- keyCh; @(true, to) <- toCh) {
      @from!("transfer", "$TO", $AMOUNT, *key, *resultCh) |
      for (@result <- resultCh) {
        stdout!(("transfer", result)) | deployId!(result)
      }
    }
  }
}
)";

std::string Transfer(const std::string& from, const std::string& to,
                     const std::string& amount,
                     const std::string& uri = "rho:vault:system") {
  return absl::StrReplaceAll(
      kTransferTemplate,
      {{"$URI", uri}, {"$FROM", from}, {"$TO", to}, {"$AMOUNT", amount}});
}

// The shape of a Python client's transfer: only the sender's vault and key
// are joined, the receiver's vault is not looked up first, the result goes
// nowhere but the deploy id.
constexpr char kMinimalTransferTemplate[] = R"(
new rl(`rho:registry:lookup`), deployerId(`rho:rchain:deployerId`),
    deployId(`rho:rchain:deployId`), vaultCh, authKeyCh, ret in {
  rl!(`rho:vault:system`, *ret) |
  for (@(_, vaults) <- ret) {
    @vaults!("findOrCreate", "$FROM", *vaultCh) |
    @vaults!("deployerAuthKey", *deployerId, *authKeyCh) |
    for (@(true, vault) <- vaultCh; key <- authKeyCh) {
      @vault!("transfer", "$TO", $AMOUNT, *key, *deployId)
    }
  }
}
)";

constexpr char kBalanceTemplate[] = R"(
new rl(`rho:registry:lookup`), stdout(`rho:io:stdout`), vaultsCh, vaultCh,
    balanceCh in {
  rl!(`rho:vault:system`, *vaultsCh) |
  for (@(_, Vaults) <- vaultsCh) {
    @Vaults!("findOrCreate", "$ADDR", *vaultCh) |
    for (@(true, vault) <- vaultCh) {
      @vault!("balance", *balanceCh) |
      for (@balance <- balanceCh) { stdout!(("balance", balance)) }
    }
  }
}
)";

constexpr int64_t kFunds = 100'000'000'000;  // 1,000 REV in dust
constexpr int64_t kLimit = 1'000'000;

class VaultTest : public ::testing::Test {
 protected:
  VaultTest() : alice(MakeTestKey(1)), bob(MakeTestKey(2)) {
    env.Fund(alice.address, kFunds);
  }
  // Replays `term`, signed by alice with the fields ContractEnv::Deploy
  // uses (price 1), against `recorded`.
  absl::StatusOr<ReplayVerdict> ReplayAsAlice(
      const std::string& term, std::span<const rspace::Event> recorded) {
    DeployData d;
    d.term = term;
    d.timestamp = 1'700'000'000'000;
    d.phlo_limit = kLimit;
    d.phlo_price = 1;
    d.shard_id = "root";
    auto sd = SignedDeploy::Sign(d, alice.sk);
    if (!sd.ok()) return sd.status();
    return env.executor->Replay(*sd, env.block, recorded);
  }
  // The same, on the space reset to `start` first.
  absl::StatusOr<ReplayVerdict> ReplayFromAsAlice(
      const Hash32& start, const std::string& term,
      std::span<const rspace::Event> recorded) {
    if (absl::Status s = env.space->Reset(start); !s.ok()) return s;
    return ReplayAsAlice(term, recorded);
  }

  ContractEnv env;
  TestKey alice;
  TestKey bob;
};

TEST_F(VaultTest, StandardTransferMovesExactAmountsWithPrechargeAndRefund) {
  auto out = env.Deploy(alice, Transfer(alice.address, bob.address, "2500"),
                        kLimit, /*phlo_price=*/3);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_FALSE(out->failed()) << out->message;
  ASSERT_GT(out->cost, 0);
  EXPECT_EQ(out->charged, kLimit * 3);
  EXPECT_EQ(out->refunded, (kLimit - out->cost) * 3);
  ASSERT_EQ(env.lines.out.size(), 1u);
  EXPECT_EQ(env.lines.out[0], "(\"transfer\", (true, Nil))");
  EXPECT_EQ(env.Balance(bob.address), 2500);
  EXPECT_EQ(env.Balance(alice.address), kFunds - 2500 - out->cost * 3);
  EXPECT_EQ(env.Balance(contracts::PosVaultAddress()), out->cost * 3);
}

// setLog with rho:io:stdout as the log: each logged transfer is a line.
// $LOG is the log channel, then two transfers of 7 and 8 follow in turn.
constexpr char kLoggedTransfersTemplate[] = R"(
new deployerId(`rho:system:deployerId`), rl(`rho:registry:lookup`),
    stdout(`rho:io:stdout`), vaultsCh, fromCh, keyCh, setCh, r1, r2 in {
  rl!(`rho:vault:system`, *vaultsCh) |
  for (@(_, Vaults) <- vaultsCh) {
    @Vaults!("findOrCreate", "$FROM", *fromCh) |
    @Vaults!("deployerAuthKey", *deployerId, *keyCh) |
    for (@(true, from) <- fromCh; @key <- keyCh) {
      @from!("setLog", $LOG, key, *setCh) |
      for (@set <- setCh) {
        stdout!(("set", set)) |
        @from!("transfer", "$TO", 7, key, *r1) |
        for (_ <- r1) { @from!("transfer", "$TO", 8, key, *r2) }
      }
    }
  }
}
)";

std::string LoggedTransfers(const std::string& from, const std::string& to,
                            const std::string& log) {
  return absl::StrReplaceAll(kLoggedTransfersTemplate,
                             {{"$FROM", from}, {"$TO", to}, {"$LOG", log}});
}

TEST_F(VaultTest, SetLogReportsEveryTransferOnTheLogChannel) {
  auto out = env.Deploy(
      alice, LoggedTransfers(alice.address, bob.address, "*stdout"), kLimit);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_FALSE(out->failed()) << out->message;
  // The block data of ContractEnv's block: number, time, sender.
  const std::string tail = absl::StrCat(
      ", (true, Nil), ", env.block.block_number, ", ", env.block.timestamp,
      ", \"", HexEncode(ByteView(env.block.sender_public_key)),
      "\".hexToBytes()]");
  EXPECT_EQ(
      env.lines.out,
      (std::vector<std::string>{
          "(\"set\", true)",
          absl::StrCat("[\"transfer\", \"", bob.address, "\", 7", tail),
          absl::StrCat("[\"transfer\", \"", bob.address, "\", 8", tail)}));
  EXPECT_EQ(env.Balance(bob.address), 15);

  // The log survives the deploy; Nil switches it off.
  env.lines.out.clear();
  out = env.Deploy(alice, LoggedTransfers(alice.address, bob.address, "Nil"),
                   kLimit, 1, 1'700'000'000'001);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_FALSE(out->failed()) << out->message;
  EXPECT_EQ(env.lines.out, (std::vector<std::string>{"(\"set\", true)"}));
  EXPECT_EQ(env.Balance(bob.address), 30);
}

TEST_F(VaultTest, SetLogWithAnotherKeyIsRefusedAndLogsNothing) {
  // Bob's key on alice's vault.
  env.Fund(bob.address, kFunds);
  const std::string term = absl::StrReplaceAll(
      LoggedTransfers(alice.address, bob.address, "*stdout"),
      {{"@from!(\"transfer\"", "Nil | @\"unused\"!(\"transfer\""}});
  auto out = env.Deploy(bob, term, kLimit);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_FALSE(out->failed()) << out->message;
  EXPECT_EQ(env.lines.out, (std::vector<std::string>{"(\"set\", false)"}));
}

TEST_F(VaultTest, MinimalClientTransferToAnUnusedAddressCompletes) {
  auto out = env.Deploy(
      alice,
      absl::StrReplaceAll(kMinimalTransferTemplate, {{"$FROM", alice.address},
                                                     {"$TO", bob.address},
                                                     {"$AMOUNT", "31415"}}),
      kLimit, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_FALSE(out->failed()) << out->message;
  EXPECT_EQ(env.Balance(bob.address), 31415);
  EXPECT_EQ(env.Balance(alice.address), kFunds - 31415 - 2 * out->cost);
}

TEST_F(VaultTest, OlderRegistryNameWorksToo) {
  auto out = env.Deploy(
      alice, Transfer(alice.address, bob.address, "7", "rho:rchain:revVault"));
  ASSERT_TRUE(out.ok() && !out->failed());
  EXPECT_EQ(env.Balance(bob.address), 7);
}

TEST_F(VaultTest, BalanceQueryReadsTheVault) {
  auto out = env.Deploy(
      bob, absl::StrReplaceAll(kBalanceTemplate, {{"$ADDR", alice.address}}),
      kLimit, /*phlo_price=*/0);
  ASSERT_TRUE(out.ok() && !out->failed());
  ASSERT_EQ(env.lines.out.size(), 1u);
  EXPECT_EQ(env.lines.out[0], absl::StrCat("(\"balance\", ", kFunds, ")"));
}

struct Refusal {
  std::string name;
  std::string amount;
  std::string reply;
};

class VaultRefusalTest : public VaultTest,
                         public ::testing::WithParamInterface<Refusal> {};

TEST_P(VaultRefusalTest, RefusedTransferMovesNothingButFees) {
  const Refusal& r = GetParam();
  auto out = env.Deploy(alice, Transfer(alice.address, bob.address, r.amount),
                        kLimit, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_FALSE(out->failed()) << out->message;
  ASSERT_EQ(env.lines.out.size(), 1u);
  EXPECT_EQ(env.lines.out[0], "(\"transfer\", (false, \"" + r.reply + "\"))");
  EXPECT_EQ(env.Balance(bob.address), 0);
  EXPECT_EQ(env.Balance(alice.address), kFunds - out->cost);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, VaultRefusalTest,
    ::testing::Values(
        Refusal{"InsufficientFunds", "100000000001", "Insufficient funds"},
        Refusal{"NegativeAmount", "-5", "Amount must be positive value"},
        Refusal{"ZeroAmount", "0", "Amount must be positive value"},
        Refusal{"NotAnInt", "\"10\"", "Amount must be an Int"}),
    [](const auto& info) { return info.param.name; });

TEST_F(VaultTest, WrongAuthKeyIsRefused) {
  // Bob asks for his own key and tries to spend Alice's vault with it.
  auto out =
      env.Deploy(bob, Transfer(alice.address, bob.address, "10"), kLimit, 0);
  ASSERT_TRUE(out.ok() && !out->failed());
  ASSERT_EQ(env.lines.out.size(), 1u);
  EXPECT_EQ(env.lines.out[0], "(\"transfer\", (false, \"Invalid AuthKey\"))");
  EXPECT_EQ(env.Balance(alice.address), kFunds);
  EXPECT_EQ(env.Balance(bob.address), 0);
}

TEST_F(VaultTest, InvalidTargetAddressIsRefusedFirst) {
  auto out = env.Deploy(
      alice, Transfer(alice.address, "1111notAnAddress", "-1"), kLimit, 0);
  ASSERT_TRUE(out.ok() && !out->failed());
  // findOrCreate of the target already fails: the join never fires.
  EXPECT_TRUE(env.lines.out.empty());
  EXPECT_EQ(env.Balance(alice.address), kFunds);
}

TEST_F(VaultTest, DeployerWithoutFundsGetsPaymentErrorAndNothingMoves) {
  Hash32 before = env.Checkpoint();
  auto out =
      env.Deploy(bob, Transfer(bob.address, alice.address, "1"), kLimit, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->failure, DeployFailure::kInsufficientFunds);
  EXPECT_EQ(out->message, "Deploy payment failed: Insufficient funds");
  EXPECT_EQ(out->cost, 0);
  EXPECT_EQ(out->charged, 0);
  EXPECT_TRUE(out->changes.channels.empty());
  EXPECT_TRUE(env.lines.out.empty());
  EXPECT_EQ(env.Checkpoint(), before);
}

TEST_F(VaultTest, FailedProgramKeepsPrechargeAndRefundsNothingWhenOutOfPhlo) {
  // A loop that runs out of phlo: the whole limit is paid.
  auto out = env.Deploy(
      alice, "new loop in { contract loop(_) = { loop!(0) } | loop!(0) }",
      50'000, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->failure, DeployFailure::kOutOfPhlo) << out->message;
  EXPECT_EQ(out->cost, 50'000);
  EXPECT_EQ(out->refunded, 0);
  EXPECT_EQ(env.Balance(alice.address), kFunds - 100'000);
  EXPECT_EQ(env.Balance(contracts::PosVaultAddress()), 100'000);
}

TEST_F(VaultTest, NumberDiffsAreTheExactBalanceChanges) {
  auto out =
      env.Deploy(alice, Transfer(alice.address, bob.address, "40"), kLimit, 1);
  ASSERT_TRUE(out.ok() && !out->failed());
  auto alice_ch = *contracts::BalanceChannelHash(alice.address);
  auto bob_ch = *contracts::BalanceChannelHash(bob.address);
  auto pos_ch = *contracts::BalanceChannelHash(contracts::PosVaultAddress());
  std::map<Hash32, int64_t> diffs;
  for (const auto& d : out->number_diffs) diffs[d.channel] = d.delta;
  EXPECT_EQ(diffs.size(), 3u);
  EXPECT_EQ(diffs[alice_ch], -40 - out->cost);
  EXPECT_EQ(diffs[bob_ch], 40);
  EXPECT_EQ(diffs[pos_ch], out->cost);
}

TEST_F(VaultTest, ReplayOfTheRecordedEventsReachesTheSameState) {
  // A plain transfer, and two that a log set by setLog reports.
  for (const std::string& term :
       {Transfer(alice.address, bob.address, "99"),
        LoggedTransfers(alice.address, bob.address, "*stdout")}) {
    Hash32 start = env.Checkpoint();
    auto out = env.Deploy(alice, term, kLimit, 1);
    ASSERT_TRUE(out.ok() && !out->failed());
    Hash32 played = env.Checkpoint();

    auto replayed = ReplayFromAsAlice(start, term, out->events);
    ASSERT_TRUE(replayed.ok()) << replayed.status();
    ASSERT_EQ(replayed->kind, ReplayVerdict::Kind::kOk)
        << replayed->divergence.ToString() << replayed->error;
    EXPECT_EQ(replayed->outcome.cost, out->cost);
    EXPECT_EQ(replayed->outcome.failure, DeployFailure::kNone);
    EXPECT_EQ(env.Checkpoint(), played);
  }
}

TEST_F(VaultTest, ReplayOfAnotherProgramAgainstTheRecordIsADivergence) {
  Hash32 start = env.Checkpoint();
  auto out =
      env.Deploy(alice, Transfer(alice.address, bob.address, "99"), kLimit, 1);
  ASSERT_TRUE(out.ok() && !out->failed());

  // Not what ran.
  auto replayed = ReplayFromAsAlice(
      start, Transfer(alice.address, bob.address, "98"), out->events);
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_EQ(replayed->kind, ReplayVerdict::Kind::kDiverged) << replayed->error;
  // "98" instead of "99": the first event that differs is a produce.
  EXPECT_EQ(replayed->divergence.kind,
            rspace::Divergence::Kind::kUnrecordedProduce)
      << replayed->divergence.ToString();
}

// A contract's own precondition failure (here: proof of stake before its
// genesis) is the deploy's error in play and in replay alike; replay must
// not report it as a divergence, or validators would reject a valid block.
TEST_F(VaultTest, ContractFailureReplaysAsTheDeploysErrorNotADivergence) {
  const std::string term = R"(
new rl(`rho:registry:lookup`), ch, ret in {
  rl!(`rho:system:pos`, *ch) |
  for (@(_, pos) <- ch) { @pos!("getBonds", *ret) }
})";
  Hash32 start = env.Checkpoint();
  auto out = env.Deploy(alice, term, kLimit, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->failure, DeployFailure::kProgramError) << out->message;
  EXPECT_NE(out->message.find("PoS state missing"), std::string::npos)
      << out->message;
  Hash32 played = env.Checkpoint();

  auto replayed = ReplayFromAsAlice(start, term, out->events);
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  ASSERT_EQ(replayed->kind, ReplayVerdict::Kind::kOk)
      << replayed->divergence.ToString() << replayed->error;
  EXPECT_EQ(replayed->outcome.failure, out->failure);
  EXPECT_EQ(replayed->outcome.message, out->message);
  EXPECT_EQ(replayed->outcome.cost, out->cost);
  EXPECT_EQ(env.Checkpoint(), played);
}

TEST(VaultThreadsTest, SameDeploysGiveTheSameRootOnAnyThreadCount) {
  std::vector<Hash32> roots;
  for (int threads : {1, 4}) {
    ContractEnv env(threads);
    TestKey a = MakeTestKey(1);
    TestKey b = MakeTestKey(2);
    env.Fund(a.address, kFunds);
    for (int i = 0; i < 3; ++i) {
      auto out = env.Deploy(a, Transfer(a.address, b.address, "5"), kLimit, 1,
                            1'700'000'000'000 + i);
      ASSERT_TRUE(out.ok() && !out->failed());
    }
    roots.push_back(env.Checkpoint());
  }
  EXPECT_EQ(roots[0], roots[1]);
}

}  // namespace
}  // namespace rnode::casper

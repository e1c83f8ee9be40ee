// DeployExecutor's typed outcomes: which failures belong to the deploy, which
// to the block (divergence) and which to the node (internal).
#include "casper/execution/deploy_executor.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/history/history.h"
#include "rspace/storage/fault_store.h"
#include "tests/casper/contract_env.h"

namespace rnode::casper {
namespace {

using testing::ContractEnv;
using testing::MakeTestKey;
using testing::TestKey;

constexpr int64_t kFunds = 10'000'000;

SignedDeploy SignedBy(const TestKey& key, std::string term, int64_t price,
                      int64_t limit = 100'000) {
  DeployData d;
  d.term = std::move(term);
  d.timestamp = 1'700'000'000'000;
  d.phlo_limit = limit;
  d.phlo_price = price;
  d.shard_id = "root";
  absl::StatusOr<SignedDeploy> sd = SignedDeploy::Sign(d, key.sk);
  EXPECT_TRUE(sd.ok()) << sd.status();
  return *std::move(sd);
}

// The executor of a second space opened on `env`'s store through a store
// that can be made to fail: its caches start empty, so the deploy reads.
struct FaultyNode {
  explicit FaultyNode(ContractEnv& env)
      : faulty(&env.store),
        contracts(
            contracts::ContractsOptions{.pos = {}, .test_processes = true}) {
    rspace::SpaceOptions so;
    so.term_factory = rholang::interp::StoredTermFactory();
    space = *rspace::Space::Open(&faulty, so);
    runtime = *rholang::interp::Runtime::Create(
        space.get(), contracts.RuntimeOptionsFor(1, &lines));
    executor = std::make_unique<DeployExecutor>(space.get(), &contracts,
                                                runtime.get());
  }
  rspace::FaultInjectingStore faulty;
  testing::Lines lines;
  contracts::SystemContracts contracts;
  std::unique_ptr<rspace::Space> space;
  std::unique_ptr<rholang::interp::Runtime> runtime;
  std::unique_ptr<DeployExecutor> executor;
};

TEST(DeployExecutorTest, ProgramErrorIsTheDeploysFailureWithItsMessage) {
  ContractEnv env;
  TestKey alice = MakeTestKey(1);
  env.Fund(alice.address, kFunds);
  auto out = env.Deploy(alice, "@0!(1 / 0)", 100'000, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->failure, DeployFailure::kProgramError);
  EXPECT_TRUE(out->failed());
  EXPECT_NE(out->message.find("division by zero"), std::string::npos)
      << out->message;
  // Parse (10 bytes) and the evaluation up to the failing division: it
  // pays what it used; the rest of the charge is refunded.
  EXPECT_EQ(out->cost, 30);
  EXPECT_EQ(out->refunded, 100'000 - 30);
}

TEST(DeployExecutorTest, OverflowingChargeIsPhloOverflowAndRunsNothing) {
  ContractEnv env;
  TestKey alice = MakeTestKey(1);
  env.Fund(alice.address, kFunds);
  Hash32 before = env.Checkpoint();
  auto out = env.Deploy(alice, "@0!(1)", int64_t{1} << 40, int64_t{1} << 40);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->failure, DeployFailure::kPhloOverflow);
  EXPECT_EQ(out->cost, 0);
  EXPECT_EQ(out->charged, 0);
  EXPECT_EQ(env.Checkpoint(), before);
}

TEST(DeployExecutorTest, SuccessHasNoFailureAndNoMessage) {
  ContractEnv env;
  TestKey alice = MakeTestKey(1);
  env.Fund(alice.address, kFunds);
  auto out = env.Deploy(alice, "@0!(1)", 100'000, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->failure, DeployFailure::kNone);
  EXPECT_EQ(out->message, "");
}

// Puts a datum on @"x" and checkpoints: a later deploy that reads @"x" on a
// fresh space must read its blob from the store. The datum is longer than
// the history's inline bound, so the blob is stored by hash and read on its
// own (a small one would come with the root node the space pins at open).
Hash32 StoreDatumOnX(ContractEnv& env) {
  const std::string big(rspace::kDefaultInlineBlobMax, 'v');
  auto put = env.executor->Play(
      SignedBy(MakeTestKey(3), "@\"x\"!(\"" + big + "\")", 0), env.block);
  EXPECT_TRUE(put.ok() && !put->failed());
  return env.Checkpoint();
}

// A storage fault while the program runs is the node's problem: before the
// outcome was typed it was recorded as the deploy's error, and a block
// carrying it would have been built on a local fault.
TEST(DeployExecutorTest, StorageFaultDuringTheProgramIsAnErrorNotAnOutcome) {
  ContractEnv env;
  StoreDatumOnX(env);
  FaultyNode node(env);
  node.faulty.FailReadsAfter(0);
  // Price 0: no balance is read before the program runs.
  absl::StatusOr<DeployOutcome> out = node.executor->Play(
      SignedBy(MakeTestKey(1), "for (_ <- @\"x\") { Nil }", /*price=*/0),
      env.block);
  ASSERT_FALSE(out.ok()) << DeployFailureName(out->failure) << " "
                         << out->message;
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnavailable)
      << out.status();
}

TEST(DeployExecutorTest, StorageFaultDuringReplayIsAnInternalErrorVerdict) {
  ContractEnv env;
  Hash32 start = StoreDatumOnX(env);
  SignedDeploy deploy =
      SignedBy(MakeTestKey(1), "for (_ <- @\"x\") { Nil }", /*price=*/0);
  auto played = env.executor->Play(deploy, env.block);
  ASSERT_TRUE(played.ok() && !played->failed()) << played.status();
  ASSERT_TRUE(env.space->Reset(start).ok());
  FaultyNode node(env);
  node.faulty.FailReadsAfter(0);
  ReplayVerdict v = node.executor->Replay(deploy, env.block, played->events);
  EXPECT_EQ(v.kind, ReplayVerdict::Kind::kInternalError)
      << v.divergence.ToString();
  EXPECT_EQ(v.error.code(), absl::StatusCode::kUnavailable) << v.error;
}

TEST(DeployExecutorTest, MalformedRecordedLogIsADivergence) {
  ContractEnv env;
  Hash32 start = env.Checkpoint();
  SignedDeploy deploy = SignedBy(MakeTestKey(1), "@\"x\"!(1)", /*price=*/0);
  auto played = env.executor->Play(deploy, env.block);
  ASSERT_TRUE(played.ok()) << played.status();
  ASSERT_FALSE(played->events.empty());
  std::vector<rspace::Event> tampered = played->events;
  std::visit([](auto& e) { e.hash[0] ^= 1; }, tampered[0]);
  ASSERT_TRUE(env.space->Reset(start).ok());
  ReplayVerdict v = env.executor->Replay(deploy, env.block, tampered);
  ASSERT_EQ(v.kind, ReplayVerdict::Kind::kDiverged) << v.error;
  EXPECT_EQ(v.divergence.kind, rspace::Divergence::Kind::kMalformedLog);
}

TEST(DeployExecutorTest, ReplayMissingARecordedCommIsAnUnusedCommDivergence) {
  ContractEnv env;
  TestKey alice = MakeTestKey(1);
  Hash32 start = env.Checkpoint();
  // A COMM recorded by another deploy, added to this deploy's log: the
  // replay never reproduces it.
  auto other = env.executor->Play(
      SignedBy(alice, "@\"y\"!(1) | for (_ <- @\"y\") { Nil }", 0),
      env.block);
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE(env.space->Reset(start).ok());
  SignedDeploy deploy = SignedBy(alice, "@\"x\"!(1)", 0);
  auto played = env.executor->Play(deploy, env.block);
  ASSERT_TRUE(played.ok()) << played.status();
  std::vector<rspace::Event> recorded = played->events;
  Hash32 extra{};
  for (const rspace::Event& e : other->events) {
    if (const auto* c = std::get_if<rspace::CommEvent>(&e)) {
      recorded.push_back(e);
      extra = c->hash;
    }
  }
  ASSERT_NE(extra, Hash32{});
  ASSERT_TRUE(env.space->Reset(start).ok());
  ReplayVerdict v = env.executor->Replay(deploy, env.block, recorded);
  ASSERT_EQ(v.kind, ReplayVerdict::Kind::kDiverged) << v.error;
  EXPECT_EQ(v.divergence.kind, rspace::Divergence::Kind::kUnusedComm)
      << v.divergence.ToString();
  EXPECT_EQ(v.divergence.event, extra);
}

}  // namespace
}  // namespace rnode::casper

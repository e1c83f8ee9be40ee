#include "tests/casper/contract_env.h"

#include "casper/contracts/ledger.h"
#include "gtest/gtest.h"
#include "rholang/interpreter/native_space.h"
#include "rholang/interpreter/term_codec.h"

namespace rnode::casper::testing {
namespace {
// Column families of the in-memory store the history needs.
constexpr size_t kStoreColumns = 3;
}  // namespace

ContractEnv::ContractEnv(int threads, contracts::ContractsOptions options)
    : store(kStoreColumns) {
  rspace::SpaceOptions so;
  so.term_factory = rholang::interp::StoredTermFactory();
  space = *rspace::Space::Open(&store, so);
  contracts = std::make_unique<contracts::SystemContracts>(options);
  auto rt = rholang::interp::Runtime::Create(
      space.get(), contracts->RuntimeOptionsFor(threads, &lines));
  EXPECT_TRUE(rt.ok()) << rt.status();
  runtime = *std::move(rt);
  executor = std::make_unique<DeployExecutor>(space.get(), contracts.get(),
                                              runtime.get());
  block.block_number = 1;
  block.timestamp = 1'700'000'000'000;
}

void ContractEnv::Fund(std::string_view address, int64_t amount) {
  rspace::EventLog log;
  rholang::interp::SpaceNative native(
      space.get(), rspace::OpContext{&log, &runtime->matcher()}, nullptr);
  ASSERT_TRUE(contracts->ledger().Mint(native, address, amount).ok());
  Checkpoint();
}

int64_t ContractEnv::Balance(std::string_view address) {
  absl::StatusOr<int64_t> b = contracts::ReadBalance(*space, address);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? *b : -1;
}

Hash32 ContractEnv::Checkpoint() {
  absl::StatusOr<Hash32> root = space->CreateCheckpoint();
  EXPECT_TRUE(root.ok()) << root.status();
  return root.ok() ? *root : Hash32{};
}

absl::StatusOr<DeployOutcome> ContractEnv::Deploy(const TestKey& key,
                                                  std::string term,
                                                  int64_t phlo_limit,
                                                  int64_t phlo_price,
                                                  int64_t timestamp) {
  DeployData d;
  d.term = std::move(term);
  d.timestamp = timestamp;
  d.phlo_limit = phlo_limit;
  d.phlo_price = phlo_price;
  d.shard_id = "root";
  absl::StatusOr<SignedDeploy> sd = SignedDeploy::Sign(d, key.sk);
  if (!sd.ok()) return sd.status();
  return executor->Play(*sd, block);
}

rholang::interp::EvalResult ContractEnv::Run(const TestKey& key,
                                             const std::string& term,
                                             int64_t phlo_limit) {
  rholang::interp::DeployInfo info;
  info.timestamp = 1'700'000'000'000;
  info.deployer_public_key = key.pk_bytes();
  info.deploy_id = Bytes(64, key.sk[0]);
  rspace::EventLog log;
  return runtime->EvaluateSource(term, info, phlo_limit, &log, &block);
}

}  // namespace rnode::casper::testing

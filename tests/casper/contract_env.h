// A test environment for the native system contracts: an in-memory space,
// SystemContracts (with the rho:test:* processes), a runtime, a deploy
// executor, signing keys and funding. Shared by the contract tests.
#ifndef RNODE_TESTS_CASPER_CONTRACT_ENV_H_
#define RNODE_TESTS_CASPER_CONTRACT_ENV_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/contracts/system_contracts.h"
#include "casper/deploy.h"
#include "casper/execution/deploy_executor.h"
#include "crypto/secp256k1.h"
#include "rholang/interpreter/reducer.h"
#include "rspace/space.h"
#include "rspace/storage/kv_store.h"
#include "tests/casper/test_key.h"

namespace rnode::casper::testing {

// Collects stdout / stderr lines of the programs.
using Lines = rholang::interp::CollectingSink;

class ContractEnv {
 public:
  explicit ContractEnv(int threads = 1, contracts::ContractsOptions options = {
                                            .pos = {}, .test_processes = true});

  // Mints `amount` into `address` and checkpoints.
  void Fund(std::string_view address, int64_t amount);
  // The balance as the ledger reads it (no event recorded that matters).
  int64_t Balance(std::string_view address);

  // Signs and plays a deploy of `term` by `key` through the executor.
  absl::StatusOr<DeployOutcome> Deploy(const TestKey& key, std::string term,
                                       int64_t phlo_limit = 1'000'000,
                                       int64_t phlo_price = 1,
                                       int64_t timestamp = 1'700'000'000'000);
  // Evaluates `term` as `key`'s program without cost accounting.
  rholang::interp::EvalResult Run(const TestKey& key, const std::string& term,
                                  int64_t phlo_limit = 10'000'000);

  Hash32 Checkpoint();

  rspace::InMemoryStore store;
  std::unique_ptr<rspace::Space> space;
  Lines lines;
  std::unique_ptr<contracts::SystemContracts> contracts;
  std::unique_ptr<rholang::interp::Runtime> runtime;
  std::unique_ptr<DeployExecutor> executor;
  rholang::interp::BlockInfo block;
};

}  // namespace rnode::casper::testing

#endif  // RNODE_TESTS_CASPER_CONTRACT_ENV_H_

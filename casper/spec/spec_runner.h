// The Rholang spec runner behind `rholang spec` (docs/spec-runner.md): runs a
// RhoSpec-style test file as a deploy on a fresh state that has the system
// contracts and the rho:test:* processes, with a spec framework registered
// at the URI the public test files look up, and reads one verdict per test
// case from the assertions the framework reports.
#ifndef RNODE_CASPER_SPEC_SPEC_RUNNER_H_
#define RNODE_CASPER_SPEC_SPEC_RUNNER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace rnode::casper::spec {

// Where the public test files look the framework up, and the deploy
// timestamp its published signed insertion was made for.
inline constexpr std::string_view kFrameworkUri =
    "rho:id:zphjgsfy13h1k85isc8rtwtgt3t9zzt5pjd5ihykfmyapfc4wt3x5h";
inline constexpr int64_t kFrameworkTimestamp = 1559158671800;
// The key of the deploy that registers the framework: the registry checks
// the published signature against this deployer's public key.
inline constexpr std::string_view kFrameworkDeployerKey =
    "abaa20c1d578612b568a7c3d9b16e81c68d73b931af92cf79727e02011c558c6";
// The public test key the public contract tests deploy with (their
// expected vault addresses derive from it).
inline constexpr std::string_view kDefaultSpecDeployerKey =
    "a68a6e6cca30f81bd24a719f3145d20e8424bd7b396309b0708a16c7d8000b76";

// The public test harness's second default key: its genesis funds the
// vaults of this key and of kDefaultSpecDeployerKey.
inline constexpr std::string_view kSecondSpecKey =
    "5a0bde2f5857124b1379c78535b07a278e3b9cefbcacc02e62ab3294c02765a1";
// What the public test harness's genesis puts in each of those vaults (the
// public SystemVault tests expect it).
inline constexpr int64_t kSpecGenesisVaultBalance = 9'000'000;
// Each genesis vault key is also a bonded validator with this stake (the
// PoS vault holds their sum); the coop vault's signers are the same keys,
// a majority of them to spend; the spec deployer may spend the PoS vault
// (posVaultTransfer).
inline constexpr int64_t kSpecGenesisStake = 1'000;

// Our framework (framework.cc): "testSuite" with cases, setup and
// teardown; "assert" and "assertMany" with the public assertion shapes.
extern const std::string_view kDefaultFramework;

struct SpecOptions {
  // Rholang source run first, at kFrameworkTimestamp; it must register the
  // framework at kFrameworkUri (ours by default; the public
  // RhoSpecContract.rho works too once what it looks up is installed).
  std::string_view framework = kDefaultFramework;
  int64_t phlo_limit = 100'000'000;  // per deploy; the specs run uncharged
  int threads = 1;                   // interpreter workers
  // Hex of the secp256k1 private key whose public key is the spec deploy's
  // deployer (rho:system:deployerId, rho:deploy:data).
  std::string_view deployer_key = kDefaultSpecDeployerKey;
  // Hex of the secp256k1 private keys whose vaults hold
  // genesis_vault_balance at the start, as in the public harness's genesis.
  std::vector<std::string_view> genesis_vault_keys = {kDefaultSpecDeployerKey,
                                                      kSecondSpecKey};
  int64_t genesis_vault_balance = kSpecGenesisVaultBalance;
};

// One test case: every assertion it made, in every attempt, held.
struct SpecCase {
  std::string name;
  bool passed = false;
  std::string reason;  // the first failed assertion's clue when !passed
  int assertions = 0;
};

struct SpecReport {
  std::vector<SpecCase> cases;  // in the order their first assertion came
  // The framework reported the suite complete (`testSuiteCompleted true`).
  bool completed = false;
  // Why the file could not run to the end: a parse error, a deploy error,
  // or empty.
  std::string error;
  std::vector<std::string> output;  // every stdout and stderr line
  // Every case passed, at least one ran, and the suite completed.
  bool passed() const;
};

// Runs `spec` (Rholang source) after the helper contracts and the framework.
// A bad deployer key, or the framework's own failure (it did not parse, or
// failed), is an InvalidArgument error; a helper contract that fails is
// Internal (a bug here);
// everything about the spec itself is in the report. Deterministic: the same
// inputs give the same report with any thread count.
absl::StatusOr<SpecReport> RunSpec(std::string_view spec,
                                   const SpecOptions& options = {});

// Parses one line of rho:test:assertAck
// ("assert NAME (attempt N): ok|FAILED: CLUE"). False for other lines.
struct AssertLine {
  std::string name;
  int64_t attempt = 0;
  bool ok = false;
  std::string clue;
};
bool ParseAssertLine(std::string_view line, AssertLine* out);

}  // namespace rnode::casper::spec

#endif  // RNODE_CASPER_SPEC_SPEC_RUNNER_H_

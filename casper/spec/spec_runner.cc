#include "casper/spec/spec_runner.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "casper/contracts/helper_contracts.h"
#include "casper/contracts/pos.h"
#include "casper/contracts/system_contracts.h"
#include "crypto/rev_address.h"
#include "crypto/secp256k1.h"
#include "rholang/interpreter/native_space.h"
#include "rholang/interpreter/reducer.h"
#include "rholang/interpreter/system_processes.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/event_log.h"
#include "rspace/space.h"
#include "rspace/storage/kv_store.h"
#include "util/bytes.h"
#include "util/status_macros.h"

namespace rnode::casper::spec {
namespace {

namespace interp = rholang::interp;

// Column families of the in-memory store the history needs.
constexpr size_t kStoreColumns = 3;
// The spec deploy's timestamp (the helpers and the framework run at their
// published ones).
constexpr int64_t kSpecTimestamp = 1'700'000'000'000;
constexpr std::string_view kAssertPrefix = "assert ";
constexpr std::string_view kAttemptMark = " (attempt ";
constexpr std::string_view kCompletedLine = "testSuiteCompleted true";

// Sends lines to one list in the order they come, stdout and stderr mixed.
class LineSink final : public interp::OutputSink {
 public:
  explicit LineSink(std::vector<std::string>* lines) : lines_(lines) {}
  void Stdout(std::string_view line) override { lines_->emplace_back(line); }
  void Stderr(std::string_view line) override { lines_->emplace_back(line); }

 private:
  std::vector<std::string>* lines_;
};

}  // namespace

bool SpecReport::passed() const {
  if (!error.empty() || !completed || cases.empty()) return false;
  for (const SpecCase& c : cases) {
    if (!c.passed) return false;
  }
  return true;
}

bool ParseAssertLine(std::string_view line, AssertLine* out) {
  if (!line.starts_with(kAssertPrefix)) return false;
  line.remove_prefix(kAssertPrefix.size());
  // The first " (attempt N): " ends the name (a name holding that text is
  // read short; the public files' names do not).
  size_t mark = line.find(kAttemptMark);
  if (mark == std::string_view::npos) return false;
  std::string_view rest = line.substr(mark + kAttemptMark.size());
  size_t close = rest.find("): ");
  if (close == std::string_view::npos || close == 0) return false;
  std::string digits(rest.substr(0, close));
  char* end = nullptr;
  long long attempt = std::strtoll(digits.c_str(), &end, 10);
  if (end == nullptr || *end != '\0') return false;
  rest.remove_prefix(close + 3);
  bool ok = rest.starts_with("ok: ");
  if (!ok && !rest.starts_with("FAILED: ")) return false;
  rest.remove_prefix(ok ? 4 : 8);
  out->name = std::string(line.substr(0, mark));
  out->attempt = attempt;
  out->ok = ok;
  out->clue = std::string(rest);
  return true;
}

namespace {

// The public keys of the genesis vault keys, in the options' order: their
// vaults are funded and they are the bonded validators (and the coop
// vault's signers). InvalidArgument for a key that is not 32 bytes of hex.
absl::StatusOr<std::vector<crypto::Secp256k1PublicKey>> GenesisVaultKeys(
    const SpecOptions& options) {
  std::vector<crypto::Secp256k1PublicKey> vault_keys;
  for (std::string_view key_hex : options.genesis_vault_keys) {
    absl::StatusOr<crypto::Secp256k1PrivateKey> key =
        HexDecodeFixed<32>(key_hex);
    if (!key.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("genesis vault key: ", key.status().message()));
    }
    vault_keys.push_back(crypto::Secp256k1PublicKeyOf(*key));
  }
  return vault_keys;
}

// The harness's genesis vaults: each key's vault funded with `balance`,
// and the keys (each once, ascending) bonded in PoS with kSpecGenesisStake.
absl::Status MintGenesisVaults(
    contracts::SystemContracts& contracts, rspace::Space& space,
    interp::Runtime& runtime,
    const std::vector<crypto::Secp256k1PublicKey>& vault_keys,
    int64_t balance) {
  rspace::EventLog log;
  interp::SpaceNative native(&space,
                             rspace::OpContext{&log, &runtime.matcher()},
                             /*meter=*/nullptr, runtime.channel_terms());
  contracts.ledger().BeginDeploy();
  std::vector<contracts::Bond> bonds;
  for (const crypto::Secp256k1PublicKey& pk : vault_keys) {
    RETURN_IF_ERROR(contracts.ledger().Mint(
        native, crypto::RevAddressFromPublicKey(pk), balance));
    bonds.push_back({Bytes(pk.begin(), pk.end()), kSpecGenesisStake});
  }
  std::sort(bonds.begin(), bonds.end(),
            [](const contracts::Bond& a, const contracts::Bond& b) {
              return a.validator < b.validator;
            });
  bonds.erase(
      std::unique(bonds.begin(), bonds.end(),
                  [](const contracts::Bond& a, const contracts::Bond& b) {
                    return a.validator == b.validator;
                  }),
      bonds.end());
  if (!bonds.empty()) RETURN_IF_ERROR(contracts.pos().Genesis(native, bonds));
  return absl::OkStatus();
}

// The coop vault, its signers the vault keys (each once), a majority of
// them to spend; none without keys.
absl::Status CreateSpecCoopVault(
    interp::Runtime& runtime, rspace::Space& space,
    const interp::BlockInfo& block,
    const std::vector<crypto::Secp256k1PublicKey>& vault_keys) {
  if (vault_keys.empty()) return absl::OkStatus();
  std::vector<Bytes> signers;
  signers.reserve(vault_keys.size());
  for (const crypto::Secp256k1PublicKey& pk : vault_keys) {
    signers.emplace_back(pk.begin(), pk.end());
  }
  std::sort(signers.begin(), signers.end());
  signers.erase(std::unique(signers.begin(), signers.end()), signers.end());
  return contracts::CreateCoopVault(
      runtime, space, block, signers,
      static_cast<int64_t>(signers.size() / 2 + 1));
}

// Runs the framework's deploy and checkpoints. InvalidArgument when the
// framework fails.
absl::Status RunFramework(interp::Runtime& runtime, rspace::Space& space,
                          const SpecOptions& options,
                          const interp::DeployInfo& deploy,
                          const interp::BlockInfo& block) {
  rspace::EventLog log;
  interp::EvalResult r = runtime.EvaluateSource(
      options.framework, deploy, options.phlo_limit, &log, &block);
  if (r.failed()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the spec framework failed: ", r.error.message()));
  }
  absl::StatusOr<Hash32> root = space.CreateCheckpoint();
  return root.status();
}

// The cases of the assert lines of report.output from line `first`, and
// whether the suite completed.
void ReadCases(size_t first, SpecReport& report) {
  std::map<std::string, size_t> index;  // case name -> position in cases
  for (size_t i = first; i < report.output.size(); ++i) {
    const std::string& line = report.output[i];
    if (line == kCompletedLine) {
      report.completed = true;
      continue;
    }
    AssertLine a;
    if (!ParseAssertLine(line, &a)) continue;
    auto [it, added] = index.emplace(a.name, report.cases.size());
    if (added) {
      SpecCase c;
      c.name = a.name;
      c.passed = true;
      report.cases.push_back(std::move(c));
    }
    SpecCase& c = report.cases[it->second];
    ++c.assertions;
    if (!a.ok && c.passed) {
      c.passed = false;
      c.reason = absl::StrCat("attempt ", a.attempt, ": ", a.clue);
    }
  }
}

}  // namespace

absl::StatusOr<SpecReport> RunSpec(std::string_view spec,
                                   const SpecOptions& options) {
  SpecReport report;
  LineSink sink(&report.output);
  rspace::InMemoryStore store(kStoreColumns);
  rspace::SpaceOptions so;
  so.term_factory = interp::StoredTermFactory();
  absl::StatusOr<std::unique_ptr<rspace::Space>> space =
      rspace::Space::Open(&store, so);
  if (!space.ok()) return space.status();
  ASSIGN_OR_RETURN(const std::vector<crypto::Secp256k1PublicKey> vault_keys,
                   GenesisVaultKeys(options));
  absl::StatusOr<crypto::Secp256k1PrivateKey> deployer =
      HexDecodeFixed<32>(options.deployer_key);
  if (!deployer.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("deployer key: ", deployer.status().message()));
  }
  // PoS as the node's defaults, except that the spec deployer may spend
  // the PoS vault (posVaultTransfer has a case to pass).
  contracts::PosParams pos;
  const crypto::Secp256k1PublicKey deployer_pk =
      crypto::Secp256k1PublicKeyOf(*deployer);
  pos.vault_transfer_key.assign(deployer_pk.begin(), deployer_pk.end());
  contracts::SystemContracts contracts(
      contracts::ContractsOptions{.pos = pos, .test_processes = true});
  absl::StatusOr<std::unique_ptr<interp::Runtime>> runtime =
      interp::Runtime::Create(
          space->get(), contracts.RuntimeOptionsFor(options.threads, &sink));
  if (!runtime.ok()) return runtime.status();
  // The block the deploys run in is the public test harness's default:
  // number 0, timestamp 0, sender the one byte 0x00.
  interp::BlockInfo block;
  block.sender_public_key = Bytes{0x00};

  absl::StatusOr<interp::DeployInfo> framework_deploy = contracts::SourceDeploy(
      options.framework, kFrameworkTimestamp, kFrameworkDeployerKey);
  if (!framework_deploy.ok()) return framework_deploy.status();
  absl::StatusOr<interp::DeployInfo> spec_deploy =
      contracts::SourceDeploy(spec, kSpecTimestamp, options.deployer_key);
  if (!spec_deploy.ok()) return spec_deploy.status();
  RETURN_IF_ERROR(MintGenesisVaults(contracts, **space, **runtime, vault_keys,
                                    options.genesis_vault_balance));
  // The helper contracts the public genesis has (rho:lang:listOps, ...),
  // each by its own deploy, the coop vault, then the framework.
  RETURN_IF_ERROR(contracts::DeployHelperContracts(**runtime, **space, block));
  RETURN_IF_ERROR(CreateSpecCoopVault(**runtime, **space, block, vault_keys));
  RETURN_IF_ERROR(
      RunFramework(**runtime, **space, options, *framework_deploy, block));
  const size_t framework_lines = report.output.size();

  rspace::EventLog log;
  interp::EvalResult r = (*runtime)->EvaluateSource(
      spec, *spec_deploy, options.phlo_limit, &log, &block);
  if (r.failed()) report.error = std::string(r.error.message());
  ReadCases(framework_lines, report);
  return report;
}

}  // namespace rnode::casper::spec

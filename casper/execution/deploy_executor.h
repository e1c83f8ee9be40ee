// Runs one user deploy with native cost accounting (docs/contracts.md
// "Cost accounting"): precharge, the program, refund — the unit Casper's
// block creation and replay are built from.
//
//   1. Precharge: phloLimit x phloPrice of the deployer's balance is held
//      (contracts::Ledger::Hold): while the program runs, every read of the
//      deployer's balance (its vault's "balance", a transfer's funds check)
//      sees it gone, as if moved to the PoS vault. Not enough funds: the
//      outcome carries system_error "Deploy payment failed: Insufficient
//      funds", the program does not run, nothing moves, cost 0.
//   2. The program runs with phloLimit; on failure its effects are undone
//      (the charge stays) and the whole limit is spent when out of phlo.
//   3. Settlement (refund): the hold is released and cost x phloPrice moves
//      from the deployer's vault to the PoS vault in one ledger transfer;
//      the rest of the charge, (phloLimit - cost) x phloPrice, is the
//      refund, which therefore never leaves the vault.
// The state afterwards is exactly that of moving the charge out and the
// refund back; the settlement's writes (Take + Put on both balance
// channels) are recorded in the deploy's event log with the program's, so
// replay checks them, and the number diffs give the merger the net change.
#ifndef RNODE_CASPER_EXECUTION_DEPLOY_EXECUTOR_H_
#define RNODE_CASPER_EXECUTION_DEPLOY_EXECUTOR_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "casper/contracts/ledger.h"
#include "casper/contracts/system_contracts.h"
#include "casper/deploy.h"
#include "rholang/interpreter/reducer.h"
#include "rspace/event_log.h"
#include "rspace/space.h"
#include "rspace/state_change.h"

namespace rnode::casper {

struct DeployOutcome {
  // Phlo the program used (0 when the precharge failed).
  int64_t cost = 0;
  // The program's error (OK when it ran to completion).
  absl::Status error;
  // Set when the precharge failed; the program did not run.
  std::string system_error;
  int64_t charged = 0;   // phloLimit x phloPrice (0 when the precharge failed)
  int64_t refunded = 0;  // (phloLimit - cost) x phloPrice
  // The deploy's event log in canonical order (rspace::EventLog::Take).
  std::vector<rspace::Event> events;
  // Its state change (all phases composed) and REV balance diffs: the
  // merger's input.
  rspace::StateChanges changes;
  std::vector<contracts::NumberDiff> number_diffs;
};

// The system deploys Casper runs after a block's user deploys
// (docs/contracts-pos.md "Epochs", "Slashing").
struct SystemDeploy {
  enum class Kind { kCloseBlock, kSlash };
  Kind kind = Kind::kCloseBlock;
  Bytes validator;  // kSlash: the 65-byte key to slash
};

// Not thread-safe: one deploy at a time on the space (the runtime's rule).
class DeployExecutor {
 public:
  // None owned; all must outlive the executor. `runtime` must have been
  // created on `space` with contracts->RuntimeOptionsFor(...).
  DeployExecutor(rspace::Space* space, contracts::SystemContracts* contracts,
                 rholang::interp::Runtime* runtime)
      : space_(space), contracts_(contracts), runtime_(runtime) {}

  // Plays `deploy` in `block`. Errors are internal (the space or history
  // failed); a deploy's own failures are in the outcome.
  absl::StatusOr<DeployOutcome> Play(const SignedDeploy& deploy,
                                     const rholang::interp::BlockInfo& block);

  // Replays `deploy` against its recorded events: the same phases, with
  // every event checked. A ReplayDivergenceError (rspace::IsReplayDivergence)
  // when the replay diverges; any other failure of the deploy, including a
  // contract's FailedPrecondition, is the outcome's error as in Play.
  absl::StatusOr<DeployOutcome> Replay(const SignedDeploy& deploy,
                                       const rholang::interp::BlockInfo& block,
                                       std::span<const rspace::Event> recorded);

  // Runs a system deploy natively (no Rholang, no phlo: cost 0). A failure
  // of the operation itself (e.g. malformed PoS state) is the outcome's
  // error, with its effects undone; errors returned are internal.
  absl::StatusOr<DeployOutcome> PlaySystem(
      const SystemDeploy& deploy, const rholang::interp::BlockInfo& block);
  // As PlaySystem, checking every event against `recorded`.
  absl::StatusOr<DeployOutcome> ReplaySystem(
      const SystemDeploy& deploy, const rholang::interp::BlockInfo& block,
      std::span<const rspace::Event> recorded);

 private:
  absl::StatusOr<DeployOutcome> Run(const SignedDeploy& deploy,
                                    const rholang::interp::BlockInfo& block,
                                    rspace::EventLog& log);
  absl::StatusOr<DeployOutcome> RunSystem(
      const SystemDeploy& deploy, const rholang::interp::BlockInfo& block,
      rspace::EventLog& log);
  // The REV address of a deployer key, remembered (at most
  // kMaxCachedAddresses keys, then the memory is cleared).
  std::optional<std::string> DeployerAddress(const SignedDeploy& deploy);
  static constexpr size_t kMaxCachedAddresses = 4096;

  rspace::Space* space_;
  contracts::SystemContracts* contracts_;
  rholang::interp::Runtime* runtime_;
  std::unordered_map<std::string, std::string> addresses_;
};

}  // namespace rnode::casper

#endif  // RNODE_CASPER_EXECUTION_DEPLOY_EXECUTOR_H_

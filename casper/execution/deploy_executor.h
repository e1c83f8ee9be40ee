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
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "casper/contracts/ledger.h"
#include "casper/contracts/system_contracts.h"
#include "casper/deploy.h"
#include "rholang/interpreter/reducer.h"
#include "rspace/deploy_scope.h"
#include "rspace/event_log.h"
#include "rspace/space.h"
#include "rspace/state_change.h"
#include "util/bounded_cache.h"

namespace rnode::casper {

// Why a deploy failed. A failed deploy is still part of its block (its
// charge stays paid); a validator compares the kind, never the message.
enum class DeployFailure : uint8_t {
  kNone,
  // The precharge (phloLimit x phloPrice) is more than the deployer's
  // balance: the program did not run, nothing moved, cost 0.
  kInsufficientFunds,
  // phloLimit x phloPrice does not fit in 64 bits (or is negative): as
  // kInsufficientFunds, nothing ran.
  kPhloOverflow,
  // The program used its whole phlo limit; its effects were undone.
  kOutOfPhlo,
  // The program (or a system deploy's operation) failed otherwise: a parse
  // or normalize error, a runtime error, rho:execution:abort, a contract's
  // refusal. Its effects were undone; it paid what it used.
  kProgramError,
};
std::string_view DeployFailureName(DeployFailure failure);

// The result of playing (or replaying) one deploy.
struct DeployOutcome {
  // Phlo the program used (0 when it did not run).
  int64_t cost = 0;
  DeployFailure failure = DeployFailure::kNone;
  // Empty for kNone; otherwise what failed, for people (the public node's
  // texts where it has one, e.g. "Deploy payment failed: Insufficient
  // funds").
  std::string message;
  int64_t charged = 0;   // phloLimit x phloPrice (0 when nothing ran)
  int64_t refunded = 0;  // (phloLimit - cost) x phloPrice
  // The deploy's event log in canonical order (rspace::EventLog::Take).
  std::vector<rspace::Event> events;
  // Its state change (all phases composed) and REV balance diffs: the
  // merger's input.
  rspace::StateChanges changes;
  std::vector<contracts::NumberDiff> number_diffs;

  bool failed() const { return failure != DeployFailure::kNone; }
};

// The verdict of replaying a deploy against the events its block recorded.
struct ReplayVerdict {
  enum class Kind : uint8_t {
    kOk,             // replayed exactly: `outcome` holds the result
    kDiverged,       // the block's log is not what the deploy does
    kInternalError,  // a local fault (storage, a broken invariant): never
                     // the block's fault
  };
  Kind kind = Kind::kOk;
  DeployOutcome outcome;          // kOk
  rspace::Divergence divergence;  // kDiverged
  absl::Status error;             // kInternalError
  bool ok() const { return kind == Kind::kOk; }
};

// The system deploys Casper runs after a block's user deploys
// (docs/contracts-pos.md "Epochs", "Slashing").
struct SystemDeploy {
  enum class Kind { kCloseBlock, kSlash };
  Kind kind = Kind::kCloseBlock;
  Bytes validator;  // kSlash: the 65-byte key to slash
};

// Not thread-safe: one deploy at a time on the space (the runtime's rule).
// Each deploy's space changes are recorded in a DeployScope the executor
// owns for that deploy (the space itself keeps no per-deploy state).
class DeployExecutor {
 public:
  // None owned; all must outlive the executor. `runtime` must have been
  // created on `space` with contracts->RuntimeOptionsFor(...).
  DeployExecutor(rspace::Space* space, contracts::SystemContracts* contracts,
                 rholang::interp::Runtime* runtime)
      : space_(space), contracts_(contracts), runtime_(runtime) {}

  // Plays `deploy` in `block`. Errors are internal (the space or history
  // failed, the deployer key is malformed); a deploy's own failures are in
  // the outcome. On error the space is left at an undefined point of the
  // deploy: the caller drops the block's work (Space::Reset).
  absl::StatusOr<DeployOutcome> Play(const SignedDeploy& deploy,
                                     const rholang::interp::BlockInfo& block);

  // Replays `deploy` against its recorded events: the same phases, with
  // every event checked and every recorded COMM required. A contract's own
  // failure (e.g. a FailedPrecondition of PoS) is the outcome's failure as
  // in Play, not a divergence.
  ReplayVerdict Replay(const SignedDeploy& deploy,
                       const rholang::interp::BlockInfo& block,
                       std::span<const rspace::Event> recorded);

  // Runs a system deploy natively (no Rholang, no phlo: cost 0). A failure
  // of the operation itself (e.g. malformed PoS state) is the outcome's
  // kProgramError, with its effects undone; errors returned are internal.
  absl::StatusOr<DeployOutcome> PlaySystem(
      const SystemDeploy& deploy, const rholang::interp::BlockInfo& block);
  // As PlaySystem, checking every event against `recorded`.
  ReplayVerdict ReplaySystem(const SystemDeploy& deploy,
                             const rholang::interp::BlockInfo& block,
                             std::span<const rspace::Event> recorded);

 private:
  absl::StatusOr<DeployOutcome> Run(const SignedDeploy& deploy,
                                    const rholang::interp::BlockInfo& block,
                                    rspace::EventLog& log);
  absl::StatusOr<DeployOutcome> RunSystem(
      const SystemDeploy& deploy, const rholang::interp::BlockInfo& block,
      rspace::EventLog& log);
  // The REV address of a deployer key, remembered in addresses_.
  std::optional<std::string> DeployerAddress(const SignedDeploy& deploy);
  // Deployer keys whose address is remembered: the active deployers of
  // many blocks (the derivation is two Keccak hashes and a base58).
  static constexpr size_t kCachedAddresses = 4096;

  rspace::Space* space_;
  contracts::SystemContracts* contracts_;
  rholang::interp::Runtime* runtime_;
  BoundedCache<std::string, std::string> addresses_{kCachedAddresses};
};

}  // namespace rnode::casper

#endif  // RNODE_CASPER_EXECUTION_DEPLOY_EXECUTOR_H_

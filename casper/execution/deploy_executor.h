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
#include "rholang/interpreter/native_space.h"
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
  // The precharge failed (kInsufficientFunds, kPhloOverflow): the deployer
  // could not pay, and the program did not run.
  bool unpaid() const {
    return failure == DeployFailure::kInsufficientFunds ||
           failure == DeployFailure::kPhloOverflow;
  }
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

// A user deploy run up to its fee's deposit into the PoS vault
// (DeployExecutor::ReplayUntilDeposit): every deploy with a fee writes the
// PoS vault's balance, so parallel replay runs the rest of each deploy on
// its own and the deposits in block order. Opaque but for the two readers.
class PartialDeploy {
 public:
  PartialDeploy();
  ~PartialDeploy();
  PartialDeploy(PartialDeploy&&) noexcept;
  PartialDeploy& operator=(PartialDeploy&&) noexcept;

  // The run stopped before its deposit: a divergence or a local fault
  // (FinishReplay says which). Nothing it did is to be kept.
  bool stopped() const { return early_verdict_.has_value() || !error_.ok(); }
  // The channels the run changed, and those it touched (read, locked or
  // looked at, whether or not the log records it), ascending: the
  // DeployScope's. Empty when stopped before the program's scope existed.
  std::vector<Hash32> written_channels() const;
  std::vector<Hash32> touched_channels() const;

 private:
  friend class DeployExecutor;
  std::unique_ptr<rspace::EventLog> log_;
  std::unique_ptr<rspace::DeployScope> scope_;
  // Where the program began, once it did (a precharge failure stops
  // before): the deploy's state change is the scope's since then.
  std::optional<rspace::DeployScope::Mark> program_start_;
  DeployOutcome out_;
  int64_t deposit_ = 0;  // the fee, still to move into the PoS vault
  contracts::Ledger::Snapshot balances_;
  absl::Status error_;                          // the run's own error
  std::optional<ReplayVerdict> early_verdict_;  // e.g. a malformed log
};

// Not thread-safe: one deploy at a time per executor (the runtime's rule).
// Several executors (each with its own runtime and contracts) may run
// deploys on one space at once. Each deploy's space changes are recorded in
// a DeployScope the executor owns for that deploy (the space itself keeps
// no per-deploy state).
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

  // Replay in two steps (parallel replay): ReplayUntilDeposit runs
  // everything but the fee's deposit into the PoS vault (and may run on any
  // executor of the space); FinishReplay deposits the fee and gives
  // Replay's verdict. Replay(d, b, r) is FinishReplay(ReplayUntilDeposit(d,
  // b, r)). A PartialDeploy must be finished or destroyed before the space
  // is reset or checkpointed.
  PartialDeploy ReplayUntilDeposit(const SignedDeploy& deploy,
                                   const rholang::interp::BlockInfo& block,
                                   std::span<const rspace::Event> recorded);
  ReplayVerdict FinishReplay(PartialDeploy& partial);
  // FinishReplay's two steps: DepositReplayed moves the fee into the PoS
  // vault (in block order, on this executor); CompleteReplay, which needs
  // no executor and may run for several partials at once on any threads,
  // records the outcome and gives the verdict.
  void DepositReplayed(PartialDeploy& partial);
  static ReplayVerdict CompleteReplay(PartialDeploy& partial);

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
  // The deploy up to its fee's deposit, recorded in partial.log_ and in
  // the scope it gives `partial`, its outcome in partial.out_. Returns the
  // fee still to move into the PoS vault (0: none). An error is the run's
  // own (a local fault or a divergence): nothing of `partial` is kept.
  absl::StatusOr<int64_t> RunUntilDeposit(
      const SignedDeploy& deploy, const rholang::interp::BlockInfo& block,
      PartialDeploy& partial);
  // RunUntilDeposit's steps. Precharge holds phlo limit x price of the
  // deployer's balance; false (the failure in `out`) when the deploy
  // cannot pay, so its program does not run. RunProgram evaluates the
  // term on partial's scope; a program's failure is the outcome's. Settle
  // takes the fee from the deployer and returns what DepositFee must move
  // into the PoS vault.
  absl::StatusOr<bool> Precharge(rholang::interp::SpaceNative& native,
                                 const std::string& deployer,
                                 const DeployData& data, DeployOutcome& out);
  absl::Status RunProgram(const SignedDeploy& deploy,
                          const rholang::interp::BlockInfo& block,
                          PartialDeploy& partial);
  absl::StatusOr<int64_t> Settle(rholang::interp::SpaceNative& native,
                                 const std::string& deployer,
                                 const DeployData& data, DeployOutcome& out);
  // The fee's deposit into the PoS vault (none pending: nothing).
  absl::Status DepositFee(PartialDeploy& partial);
  // The outcome's record: events, state change, balance diffs.
  static absl::StatusOr<DeployOutcome> Record(PartialDeploy& partial);
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

#include "casper/execution/deploy_executor.h"

#include <limits>
#include <optional>
#include <utility>

#include "casper/contracts/names.h"
#include "crypto/rev_address.h"
#include "rholang/interpreter/cost.h"
#include "rholang/interpreter/native_space.h"
#include "util/status_macros.h"

namespace rnode::casper {
namespace {

namespace interp = rholang::interp;

// a x b for a, b >= 0, nullopt on overflow.
std::optional<int64_t> Product(int64_t a, int64_t b) {
  if (a < 0 || b < 0) return std::nullopt;
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a) {
    return std::nullopt;
  }
  return a * b;
}

// Whether `status` (a failed evaluation or contract call) is the deploy's
// own failure (cost.h lists the codes) rather than a local fault.
bool IsDeployFault(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return true;
    default:
      return false;
  }
}

DeployFailure FailureOf(const absl::Status& status) {
  return interp::IsOutOfPhlo(status) ? DeployFailure::kOutOfPhlo
                                     : DeployFailure::kProgramError;
}

// The verdict of a replay whose run ended with `out`: the log decides
// divergence, whatever status carried it out; then every recorded COMM
// must have been used.
ReplayVerdict VerdictOf(rspace::EventLog& log,
                        absl::StatusOr<DeployOutcome> out) {
  ReplayVerdict v;
  if (out.ok()) (void)log.CheckReplayDone();
  if (std::optional<rspace::Divergence> d = log.divergence()) {
    v.kind = ReplayVerdict::Kind::kDiverged;
    v.divergence = *std::move(d);
    return v;
  }
  if (!out.ok()) {
    v.kind = ReplayVerdict::Kind::kInternalError;
    v.error = out.status();
    return v;
  }
  v.outcome = *std::move(out);
  return v;
}

// The replay log rigged with `recorded`, or the verdict on a malformed one
// (a bad hash, too large): the block's fault.
std::variant<std::unique_ptr<rspace::EventLog>, ReplayVerdict> ReplayLog(
    std::span<const rspace::Event> recorded) {
  absl::StatusOr<std::unique_ptr<rspace::EventLog>> log =
      rspace::EventLog::ForReplay(recorded);
  if (log.ok()) return *std::move(log);
  ReplayVerdict v;
  v.kind = ReplayVerdict::Kind::kDiverged;
  v.divergence = {rspace::Divergence::Kind::kMalformedLog,
                  {},
                  std::string(log.status().message()),
                  "nothing"};
  return v;
}

// `run` on a log rigged with `recorded`, then its verdict.
template <typename RunFn>
ReplayVerdict Replayed(std::span<const rspace::Event> recorded, RunFn run) {
  auto log = ReplayLog(recorded);
  if (ReplayVerdict* v = std::get_if<ReplayVerdict>(&log)) return *v;
  rspace::EventLog& l = *std::get<std::unique_ptr<rspace::EventLog>>(log);
  return VerdictOf(l, run(l));
}

}  // namespace

std::string_view DeployFailureName(DeployFailure failure) {
  switch (failure) {
    case DeployFailure::kNone:
      return "none";
    case DeployFailure::kInsufficientFunds:
      return "insufficient funds";
    case DeployFailure::kPhloOverflow:
      return "phlo overflow";
    case DeployFailure::kOutOfPhlo:
      return "out of phlo";
    case DeployFailure::kProgramError:
      return "program error";
  }
  return "unknown";
}

PartialDeploy::PartialDeploy() = default;
PartialDeploy::~PartialDeploy() = default;
PartialDeploy::PartialDeploy(PartialDeploy&&) noexcept = default;
PartialDeploy& PartialDeploy::operator=(PartialDeploy&&) noexcept = default;

std::vector<Hash32> PartialDeploy::written_channels() const {
  return scope_ != nullptr ? scope_->WrittenChannels() : std::vector<Hash32>();
}

std::vector<Hash32> PartialDeploy::touched_channels() const {
  return scope_ != nullptr ? scope_->TouchedChannels() : std::vector<Hash32>();
}

absl::StatusOr<DeployOutcome> DeployExecutor::Play(
    const SignedDeploy& deploy, const interp::BlockInfo& block) {
  PartialDeploy partial;
  partial.log_ = std::make_unique<rspace::EventLog>();
  ASSIGN_OR_RETURN(partial.deposit_, RunUntilDeposit(deploy, block, partial));
  RETURN_IF_ERROR(DepositFee(partial));
  return Record(partial);
}

ReplayVerdict DeployExecutor::Replay(const SignedDeploy& deploy,
                                     const interp::BlockInfo& block,
                                     std::span<const rspace::Event> recorded) {
  PartialDeploy partial = ReplayUntilDeposit(deploy, block, recorded);
  return FinishReplay(partial);
}

PartialDeploy DeployExecutor::ReplayUntilDeposit(
    const SignedDeploy& deploy, const interp::BlockInfo& block,
    std::span<const rspace::Event> recorded) {
  PartialDeploy partial;
  auto log = ReplayLog(recorded);
  if (ReplayVerdict* v = std::get_if<ReplayVerdict>(&log)) {
    partial.early_verdict_ = std::move(*v);
    return partial;
  }
  partial.log_ = std::get<std::unique_ptr<rspace::EventLog>>(std::move(log));
  absl::StatusOr<int64_t> deposit = RunUntilDeposit(deploy, block, partial);
  if (deposit.ok()) {
    partial.deposit_ = *deposit;
  } else {
    partial.error_ = deposit.status();
  }
  return partial;
}

ReplayVerdict DeployExecutor::FinishReplay(PartialDeploy& partial) {
  DepositReplayed(partial);
  return CompleteReplay(partial);
}

void DeployExecutor::DepositReplayed(PartialDeploy& partial) {
  if (partial.stopped()) return;
  partial.error_ = DepositFee(partial);
}

ReplayVerdict DeployExecutor::CompleteReplay(PartialDeploy& partial) {
  if (partial.early_verdict_.has_value()) return *partial.early_verdict_;
  if (!partial.error_.ok()) return VerdictOf(*partial.log_, partial.error_);
  return VerdictOf(*partial.log_, Record(partial));
}

absl::StatusOr<DeployOutcome> DeployExecutor::PlaySystem(
    const SystemDeploy& deploy, const interp::BlockInfo& block) {
  rspace::EventLog log;
  return RunSystem(deploy, block, log);
}

ReplayVerdict DeployExecutor::ReplaySystem(
    const SystemDeploy& deploy, const interp::BlockInfo& block,
    std::span<const rspace::Event> recorded) {
  return Replayed(recorded, [&](rspace::EventLog& log) {
    return RunSystem(deploy, block, log);
  });
}

absl::StatusOr<DeployOutcome> DeployExecutor::RunSystem(
    const SystemDeploy& deploy, const interp::BlockInfo& block,
    rspace::EventLog& log) {
  DeployOutcome out;
  contracts::Ledger& ledger = contracts_->ledger();
  ledger.BeginDeploy();
  rspace::DeployScope scope(*space_);
  interp::SpaceNative native(
      space_, rspace::OpContext{&log, &runtime_->matcher(), &scope}, nullptr,
      runtime_->channel_terms());
  const rspace::DeployScope::Mark start = scope.mark();
  absl::Status st;
  switch (deploy.kind) {
    case SystemDeploy::Kind::kCloseBlock:
      st = contracts_->pos().CloseBlock(native, block);
      break;
    case SystemDeploy::Kind::kSlash:
      st = contracts_->pos().Slash(native, deploy.validator);
      break;
  }
  if (!st.ok()) {
    if (log.divergence().has_value() || !IsDeployFault(st)) return st;
    RETURN_IF_ERROR(scope.RevertTo(start));
    ledger.BeginDeploy();
    out.failure = DeployFailure::kProgramError;
    out.message = std::string(st.message());
    out.events = log.Take();
    return out;
  }
  ASSIGN_OR_RETURN(out.changes, scope.ChangesSince(start));
  out.number_diffs = ledger.Diffs();
  out.events = log.Take();
  return out;
}

std::optional<std::string> DeployExecutor::DeployerAddress(
    const SignedDeploy& deploy) {
  std::string key(deploy.deployer().begin(), deploy.deployer().end());
  if (std::optional<std::string> hit = addresses_.Get(key)) return hit;
  std::optional<std::string> address =
      crypto::RevAddressFromKeyBytes(ByteView(deploy.deployer()));
  if (!address.has_value()) return std::nullopt;
  return addresses_.Put(key, *std::move(address));
}

absl::StatusOr<int64_t> DeployExecutor::RunUntilDeposit(
    const SignedDeploy& deploy, const interp::BlockInfo& block,
    PartialDeploy& partial) {
  DeployOutcome& out = partial.out_;
  rspace::EventLog& log = *partial.log_;
  contracts::Ledger& ledger = contracts_->ledger();
  ledger.BeginDeploy();
  // Whatever the run's end, the balances it touched are the partial's.
  struct SaveBalances {
    PartialDeploy& partial;
    contracts::Ledger& ledger;
    ~SaveBalances() { partial.balances_ = ledger.Save(); }
  } save{partial, ledger};
  std::optional<std::string> deployer = DeployerAddress(deploy);
  if (!deployer.has_value()) {
    return absl::InvalidArgumentError("deployer key is not 65 bytes");
  }
  // This deploy's record of its space changes (its soft-checkpoint
  // journal); one per deploy, so deploys may share the space.
  partial.scope_ = std::make_unique<rspace::DeployScope>(*space_);
  // Native operations cost no phlo: the deploy pays the same whatever the
  // accounting costs.
  interp::SpaceNative native(
      space_,
      rspace::OpContext{&log, &runtime_->matcher(), partial.scope_.get()},
      nullptr, runtime_->channel_terms());
  ASSIGN_OR_RETURN(const bool runs,
                   Precharge(native, *deployer, deploy.data(), out));
  if (!runs) return 0;
  RETURN_IF_ERROR(RunProgram(deploy, block, partial));
  return Settle(native, *deployer, deploy.data(), out);
}

absl::StatusOr<bool> DeployExecutor::Precharge(interp::SpaceNative& native,
                                               const std::string& deployer,
                                               const DeployData& data,
                                               DeployOutcome& out) {
  // A hold on the deployer's balance (Ledger::Hold): the deployer sees the
  // charge gone while the program runs.
  contracts::Ledger& ledger = contracts_->ledger();
  std::optional<int64_t> charge = Product(data.phlo_limit, data.phlo_price);
  if (!charge.has_value()) {
    out.failure = DeployFailure::kPhloOverflow;
    out.message = "Deploy payment failed: phlo limit x price overflows";
    return false;
  }
  if (*charge <= 0) return true;
  ASSIGN_OR_RETURN(const int64_t balance, ledger.Balance(native, deployer));
  if (balance < *charge) {
    out.failure = DeployFailure::kInsufficientFunds;
    out.message = "Deploy payment failed: " +
                  std::string(contracts::TransferErrorText(
                      contracts::TransferError::kInsufficientFunds));
    return false;
  }
  ledger.Hold(deployer, *charge);
  out.charged = *charge;
  return true;
}

absl::Status DeployExecutor::RunProgram(const SignedDeploy& deploy,
                                        const interp::BlockInfo& block,
                                        PartialDeploy& partial) {
  contracts::Ledger& ledger = contracts_->ledger();
  rspace::EventLog& log = *partial.log_;
  DeployOutcome& out = partial.out_;
  const DeployData& data = deploy.data();
  interp::DeployInfo info;
  info.timestamp = data.timestamp;
  info.deployer_public_key.assign(deploy.deployer().begin(),
                                  deploy.deployer().end());
  info.deploy_id = deploy.id();
  // Reverted to `program_start_` on failure.
  contracts::Ledger::Snapshot before_program = ledger.Save();
  partial.program_start_ = partial.scope_->mark();
  interp::EvalResult result = runtime_->EvaluateSource(
      data.term, info, data.phlo_limit, &log, &block,
      /*check_replay_done=*/false, partial.scope_.get());
  ledger.ReleaseHold();
  if (result.failed()) {
    // A divergence is the block's fault and a local fault is nobody's: in
    // neither case is there a deploy outcome to record.
    if (log.divergence().has_value() || !IsDeployFault(result.error)) {
      return result.error;
    }
    ledger.Restore(std::move(before_program));
    out.failure = FailureOf(result.error);
    out.message = std::string(result.error.message());
  }
  out.cost = result.cost;
  return absl::OkStatus();
}

absl::StatusOr<int64_t> DeployExecutor::Settle(interp::SpaceNative& native,
                                               const std::string& deployer,
                                               const DeployData& data,
                                               DeployOutcome& out) {
  // The fee (cost x price) moves from the deployer to the PoS vault; the
  // rest of the hold is the refund. The hold guaranteed the funds. Here the
  // fee leaves the deployer; DepositFee moves it in.
  contracts::Ledger& ledger = contracts_->ledger();
  std::optional<int64_t> fee =
      Product(std::min(out.cost, data.phlo_limit), data.phlo_price);
  out.refunded = out.charged - fee.value_or(0);
  if (!fee.has_value() || *fee <= 0) return 0;
  const std::string& pos_vault = contracts::PosVaultAddress();
  ASSIGN_OR_RETURN(
      const contracts::TransferError refused,
      deployer == pos_vault
          ? ledger.Transfer(native, deployer, pos_vault, *fee)  // funds only
          : ledger.Withdraw(native, deployer, *fee));
  if (refused != contracts::TransferError::kNone) {
    return absl::InternalError(
        "deploy fee settlement failed: " +
        std::string(contracts::TransferErrorText(refused)));
  }
  return deployer == pos_vault ? 0 : *fee;
}

absl::Status DeployExecutor::DepositFee(PartialDeploy& partial) {
  if (partial.deposit_ <= 0) return absl::OkStatus();
  contracts::Ledger& ledger = contracts_->ledger();
  ledger.BeginDeploy();
  ledger.Restore(std::move(partial.balances_));
  interp::SpaceNative native(
      space_,
      rspace::OpContext{partial.log_.get(), &runtime_->matcher(),
                        partial.scope_.get()},
      nullptr, runtime_->channel_terms());
  absl::StatusOr<contracts::TransferError> refused =
      ledger.Deposit(native, contracts::PosVaultAddress(), partial.deposit_);
  partial.balances_ = ledger.Save();
  if (!refused.ok()) return refused.status();
  if (*refused != contracts::TransferError::kNone) {
    return absl::InternalError(
        "deploy fee settlement failed: " +
        std::string(contracts::TransferErrorText(*refused)));
  }
  partial.deposit_ = 0;
  return absl::OkStatus();
}

absl::StatusOr<DeployOutcome> DeployExecutor::Record(PartialDeploy& partial) {
  DeployOutcome out = std::move(partial.out_);
  // The program's and the settlement's changes as one (the precharge wrote
  // nothing): the scope's net change over both phases, which is their
  // composition (rspace::ComposeChanges; pinned by DeployScopeTest).
  if (partial.program_start_.has_value()) {
    ASSIGN_OR_RETURN(out.changes,
                     partial.scope_->ChangesSince(*partial.program_start_));
  }
  out.number_diffs = contracts::Ledger::DiffsOf(partial.balances_);
  out.events = partial.log_->Take();
  return out;
}

}  // namespace rnode::casper

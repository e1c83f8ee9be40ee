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

// `run` on a log rigged with `recorded`; then every recorded COMM must have
// been used. The log decides divergence, whatever status carried it out.
template <typename RunFn>
ReplayVerdict Replayed(std::span<const rspace::Event> recorded, RunFn run) {
  ReplayVerdict v;
  absl::StatusOr<std::unique_ptr<rspace::EventLog>> log =
      rspace::EventLog::ForReplay(recorded);
  if (!log.ok()) {
    // The block's log itself is malformed (a bad hash, too large).
    v.kind = ReplayVerdict::Kind::kDiverged;
    v.divergence = {rspace::Divergence::Kind::kMalformedLog,
                    {},
                    std::string(log.status().message()),
                    "nothing"};
    return v;
  }
  absl::StatusOr<DeployOutcome> out = run(**log);
  if (out.ok()) (void)(*log)->CheckReplayDone();
  if (std::optional<rspace::Divergence> d = (*log)->divergence()) {
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

absl::StatusOr<DeployOutcome> DeployExecutor::Play(
    const SignedDeploy& deploy, const interp::BlockInfo& block) {
  rspace::EventLog log;
  return Run(deploy, block, log);
}

ReplayVerdict DeployExecutor::Replay(const SignedDeploy& deploy,
                                     const interp::BlockInfo& block,
                                     std::span<const rspace::Event> recorded) {
  return Replayed(
      recorded, [&](rspace::EventLog& log) { return Run(deploy, block, log); });
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

absl::StatusOr<DeployOutcome> DeployExecutor::Run(
    const SignedDeploy& deploy, const interp::BlockInfo& block,
    rspace::EventLog& log) {
  DeployOutcome out;
  contracts::Ledger& ledger = contracts_->ledger();
  ledger.BeginDeploy();
  const DeployData& data = deploy.data();
  std::optional<std::string> deployer = DeployerAddress(deploy);
  if (!deployer.has_value()) {
    return absl::InvalidArgumentError("deployer key is not 65 bytes");
  }
  // This deploy's record of its space changes (its soft-checkpoint
  // journal); one per deploy, so deploys may share the space.
  rspace::DeployScope scope(*space_);
  // Native operations cost no phlo: the deploy pays the same whatever the
  // accounting costs.
  interp::SpaceNative native(
      space_, rspace::OpContext{&log, &runtime_->matcher(), &scope}, nullptr,
      runtime_->channel_terms());

  // 1. Precharge: a hold on the deployer's balance (Ledger::Hold); the
  // deployer sees the charge gone while the program runs.
  std::optional<int64_t> charge = Product(data.phlo_limit, data.phlo_price);
  if (!charge.has_value()) {
    out.failure = DeployFailure::kPhloOverflow;
    out.message = "Deploy payment failed: phlo limit x price overflows";
    out.events = log.Take();
    return out;
  }
  if (*charge > 0) {
    ASSIGN_OR_RETURN(int64_t balance, ledger.Balance(native, *deployer));
    if (balance < *charge) {
      out.failure = DeployFailure::kInsufficientFunds;
      out.message = "Deploy payment failed: " +
                    std::string(contracts::TransferErrorText(
                        contracts::TransferError::kInsufficientFunds));
      out.events = log.Take();
      out.number_diffs = ledger.Diffs();
      return out;
    }
    ledger.Hold(*deployer, *charge);
    out.charged = *charge;
  }

  // 2. The program (reverted to `program_start` on failure).
  interp::DeployInfo info;
  info.timestamp = data.timestamp;
  info.deployer_public_key.assign(deploy.deployer().begin(),
                                  deploy.deployer().end());
  info.deploy_id = deploy.id();
  contracts::Ledger::Snapshot before_program = ledger.Save();
  const rspace::DeployScope::Mark program_start = scope.mark();
  interp::EvalResult result =
      runtime_->EvaluateSource(data.term, info, data.phlo_limit, &log, &block,
                               /*check_replay_done=*/false, &scope);
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

  // 3. Settlement: the fee (cost x price) moves to the PoS vault; the rest
  // of the hold is the refund. The hold guaranteed the funds.
  std::optional<int64_t> fee =
      Product(std::min(out.cost, data.phlo_limit), data.phlo_price);
  if (fee.has_value() && *fee > 0) {
    ASSIGN_OR_RETURN(
        contracts::TransferError refused,
        ledger.Transfer(native, *deployer, contracts::PosVaultAddress(), *fee));
    if (refused != contracts::TransferError::kNone) {
      return absl::InternalError(
          "deploy fee settlement failed: " +
          std::string(contracts::TransferErrorText(refused)));
    }
  }
  out.refunded = out.charged - fee.value_or(0);

  // The program's and the settlement's changes as one (the precharge wrote
  // nothing): the scope's net change over both phases, which is their
  // composition (rspace::ComposeChanges; pinned by DeployScopeTest).
  ASSIGN_OR_RETURN(out.changes, scope.ChangesSince(program_start));
  out.number_diffs = ledger.Diffs();
  out.events = log.Take();
  return out;
}
}  // namespace rnode::casper

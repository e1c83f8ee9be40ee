#include "casper/execution/deploy_executor.h"

#include <limits>
#include <optional>
#include <utility>

#include "casper/contracts/names.h"
#include "rholang/interpreter/native_space.h"
#include "rholang/interpreter/process_util.h"
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

// `run` on a log rigged with `recorded`; then every recorded COMM must have
// been used.
template <typename RunFn>
absl::StatusOr<DeployOutcome> Replayed(std::span<const rspace::Event> recorded,
                                       RunFn run) {
  ASSIGN_OR_RETURN(std::unique_ptr<rspace::EventLog> log,
                   rspace::EventLog::ForReplay(recorded));
  ASSIGN_OR_RETURN(DeployOutcome out, run(*log));
  RETURN_IF_ERROR(log->CheckReplayDone());
  return out;
}

}  // namespace

absl::StatusOr<DeployOutcome> DeployExecutor::Play(
    const SignedDeploy& deploy, const interp::BlockInfo& block) {
  rspace::EventLog log;
  return Run(deploy, block, log);
}

absl::StatusOr<DeployOutcome> DeployExecutor::Replay(
    const SignedDeploy& deploy, const interp::BlockInfo& block,
    std::span<const rspace::Event> recorded) {
  return Replayed(
      recorded, [&](rspace::EventLog& log) { return Run(deploy, block, log); });
}

absl::StatusOr<DeployOutcome> DeployExecutor::PlaySystem(
    const SystemDeploy& deploy, const interp::BlockInfo& block) {
  rspace::EventLog log;
  return RunSystem(deploy, block, log);
}

absl::StatusOr<DeployOutcome> DeployExecutor::ReplaySystem(
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
  interp::SpaceNative native(
      space_, rspace::OpContext{&log, &runtime_->matcher()}, nullptr);
  rspace::SoftCheckpoint cp = space_->CreateSoftCheckpoint();
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
    if (log.replay() && rspace::IsReplayDivergence(st)) return st;
    RETURN_IF_ERROR(space_->RevertToSoftCheckpoint(cp));
    ledger.BeginDeploy();
    out.error = st;
    out.events = log.Take();
    return out;
  }
  out.changes = space_->ChangesSinceSoftCheckpoint();
  out.number_diffs = ledger.Diffs();
  out.events = log.Take();
  return out;
}

std::optional<std::string> DeployExecutor::DeployerAddress(
    const SignedDeploy& deploy) {
  std::string key(deploy.deployer().begin(), deploy.deployer().end());
  auto it = addresses_.find(key);
  if (it != addresses_.end()) return it->second;
  std::optional<std::string> address =
      interp::AddressOfKey(ByteView(deploy.deployer()));
  if (!address.has_value()) return std::nullopt;
  if (addresses_.size() >= kMaxCachedAddresses) addresses_.clear();
  addresses_.emplace(std::move(key), *address);
  return address;
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
  // Native operations cost no phlo: the deploy pays the same whatever the
  // accounting costs.
  interp::SpaceNative native(
      space_, rspace::OpContext{&log, &runtime_->matcher()}, nullptr);

  // 1. Precharge: a hold on the deployer's balance (Ledger::Hold); the
  // deployer sees the charge gone while the program runs.
  std::optional<int64_t> charge = Product(data.phlo_limit, data.phlo_price);
  if (!charge.has_value()) {
    out.system_error = "Deploy payment failed: phlo limit x price overflows";
    out.events = log.Take();
    return out;
  }
  if (*charge > 0) {
    ASSIGN_OR_RETURN(int64_t balance, ledger.Balance(native, *deployer));
    if (balance < *charge) {
      out.system_error = "Deploy payment failed: " +
                         std::string(contracts::TransferErrorText(
                             contracts::TransferError::kInsufficientFunds));
      out.events = log.Take();
      out.number_diffs = ledger.Diffs();
      return out;
    }
    ledger.Hold(*deployer, *charge);
    out.charged = *charge;
  }

  // 2. The program (its own soft checkpoint; reverted on failure).
  interp::DeployInfo info;
  info.timestamp = data.timestamp;
  info.deployer_public_key.assign(deploy.deployer().begin(),
                                  deploy.deployer().end());
  info.deploy_id = deploy.id();
  contracts::Ledger::Snapshot before_program = ledger.Save();
  interp::EvalResult result =
      runtime_->EvaluateSource(data.term, info, data.phlo_limit, &log, &block,
                               /*check_replay_done=*/false);
  ledger.ReleaseHold();
  if (result.failed()) {
    if (log.replay() && rspace::IsReplayDivergence(result.error)) {
      return result.error;  // replay divergence is not a deploy error
    }
    ledger.Restore(std::move(before_program));
  }
  out.cost = result.cost;
  out.error = result.error;
  rspace::StateChanges program = space_->ChangesSinceSoftCheckpoint();

  // 3. Settlement: the fee (cost x price) moves to the PoS vault; the rest
  // of the hold is the refund. The hold guaranteed the funds.
  space_->CreateSoftCheckpoint();
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
  rspace::StateChanges settlement = space_->ChangesSinceSoftCheckpoint();

  out.changes = rspace::ComposeChanges(program, settlement);
  out.number_diffs = ledger.Diffs();
  out.events = log.Take();
  return out;
}
}  // namespace rnode::casper

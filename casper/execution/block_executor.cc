// Whole-block play and replay.
#include "casper/execution/block_executor.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace rnode::casper {
namespace {

rholang::interp::BlockInfo InfoOf(const BlockEnv& env) {
  rholang::interp::BlockInfo info;
  info.block_number = env.number;
  info.timestamp = env.timestamp;
  info.sender_public_key.assign(env.sender.begin(), env.sender.end());
  return info;
}

bool PrechargeFailed(DeployFailure f) {
  return f == DeployFailure::kInsufficientFunds ||
         f == DeployFailure::kPhloOverflow;
}

// What a block records of a failed outcome: its message, or the failure's
// name when it has none.
std::string FailureText(const DeployOutcome& outcome) {
  return outcome.message.empty()
             ? std::string(DeployFailureName(outcome.failure))
             : outcome.message;
}

block::ProcessedSystemDeploy RecordSystem(
    std::variant<block::SlashDeploy, block::CloseBlockDeploy> which,
    const DeployOutcome& outcome) {
  block::ProcessedSystemDeploy d;
  d.deploy = std::move(which);
  d.events = outcome.events;
  if (outcome.failed()) d.error = FailureText(outcome);
  return d;
}

BlockReplayVerdict Invalid(std::string reason) {
  BlockReplayVerdict v;
  v.kind = BlockReplayVerdict::Kind::kInvalid;
  v.reason = std::move(reason);
  return v;
}

BlockReplayVerdict Internal(absl::Status error) {
  BlockReplayVerdict v;
  v.kind = BlockReplayVerdict::Kind::kInternalError;
  v.error = std::move(error);
  return v;
}

}  // namespace

block::ProcessedDeploy RecordDeploy(const SignedDeploy& deploy,
                                    const DeployOutcome& outcome) {
  const bool precharge_failed = PrechargeFailed(outcome.failure);
  return block::MakeProcessedDeploy(
      deploy, outcome.cost, outcome.failed() && !precharge_failed,
      precharge_failed ? FailureText(outcome) : std::string(), outcome.events);
}

absl::StatusOr<PlayedBlock> BlockExecutor::Play(
    const Hash32& pre_state, std::span<const SignedDeploy> deploys,
    std::span<const SlashToRun> slashes, const BlockEnv& env) {
  RETURN_IF_ERROR(space_->Reset(pre_state));
  const rholang::interp::BlockInfo info = InfoOf(env);
  PlayedBlock out;
  out.deploys.reserve(deploys.size());
  out.outcomes.reserve(deploys.size() + slashes.size() + 1);
  for (const SignedDeploy& d : deploys) {
    ASSIGN_OR_RETURN(DeployOutcome outcome, executor_->Play(d, info));
    out.deploys.push_back(RecordDeploy(d, outcome));
    out.outcomes.push_back(std::move(outcome));
  }
  for (const SlashToRun& s : slashes) {
    SystemDeploy sd{SystemDeploy::Kind::kSlash, s.validator};
    ASSIGN_OR_RETURN(DeployOutcome outcome, executor_->PlaySystem(sd, info));
    out.system_deploys.push_back(RecordSystem(s.record, outcome));
    out.outcomes.push_back(std::move(outcome));
  }
  ASSIGN_OR_RETURN(DeployOutcome close,
                   executor_->PlaySystem(SystemDeploy{}, info));
  out.system_deploys.push_back(RecordSystem(block::CloseBlockDeploy{}, close));
  out.outcomes.push_back(std::move(close));
  ASSIGN_OR_RETURN(out.post_state, space_->CreateCheckpoint());
  return out;
}

BlockReplayVerdict BlockExecutor::Replay(
    const block::Block& block, std::span<const SignedDeploy> deploys,
    std::span<const Bytes> slash_validators) {
  if (deploys.size() != block.body.deploys.size()) {
    return Internal(
        absl::InvalidArgumentError(absl::StrCat("replay given ", deploys.size(),
                                                " deploys for a block "
                                                "of ",
                                                block.body.deploys.size())));
  }
  return Replay(
      block, [&](size_t i) { return &deploys[i]; }, slash_validators);
}

BlockReplayVerdict BlockExecutor::Replay(
    const block::Block& block, const DeploySource& deploys,
    std::span<const Bytes> slash_validators) {
  const block::Body& body = block.body;
  // System deploys: the slashes, then exactly one close-block, last.
  const size_t n_system = body.system_deploys.size();
  if (n_system == 0 || !std::holds_alternative<block::CloseBlockDeploy>(
                           body.system_deploys.back().deploy)) {
    return Invalid("the last system deploy is not the close-block deploy");
  }
  for (size_t i = 0; i + 1 < n_system; ++i) {
    if (!std::holds_alternative<block::SlashDeploy>(
            body.system_deploys[i].deploy)) {
      return Invalid(
          absl::StrCat("system deploy ", i, " is a second close-block deploy"));
    }
  }
  if (slash_validators.size() != n_system - 1) {
    return Internal(absl::InvalidArgumentError(
        absl::StrCat("replay given ", slash_validators.size(),
                     " slash targets for ", n_system - 1, " slashes")));
  }
  if (absl::Status s = space_->Reset(body.state.pre_state); !s.ok()) {
    return Internal(std::move(s));
  }
  BlockEnv env{block.number(), block.header.timestamp, block.sender};
  const rholang::interp::BlockInfo info = InfoOf(env);
  BlockReplayVerdict verdict;
  verdict.outcomes.reserve(body.deploys.size() + n_system);
  for (size_t i = 0; i < body.deploys.size(); ++i) {
    const block::ProcessedDeploy& recorded = body.deploys[i];
    const SignedDeploy* deploy = deploys(i);
    if (deploy == nullptr) {
      return Invalid(absl::StrCat("deploy ", i, " (", HexEncode(recorded.sig),
                                  ") is not signed"));
    }
    ReplayVerdict r = executor_->Replay(*deploy, info, recorded.events);
    if (r.kind == ReplayVerdict::Kind::kInternalError) {
      return Internal(r.error);
    }
    if (r.kind == ReplayVerdict::Kind::kDiverged) {
      return Invalid(absl::StrCat("deploy ", i, " (", HexEncode(recorded.sig),
                                  ") diverged: ", r.divergence.ToString()));
    }
    const block::ProcessedDeploy again = RecordDeploy(*deploy, r.outcome);
    if (again.cost != recorded.cost || again.errored != recorded.errored ||
        again.system_deploy_error.empty() !=
            recorded.system_deploy_error.empty()) {
      return Invalid(absl::StrCat(
          "deploy ", i, " (", HexEncode(recorded.sig), ") recorded cost ",
          recorded.cost, ", errored ", recorded.errored, ", precharge failed ",
          !recorded.system_deploy_error.empty(), "; replay gives ", again.cost,
          ", ", again.errored, ", ", !again.system_deploy_error.empty()));
    }
    verdict.outcomes.push_back(std::move(r.outcome));
  }
  for (size_t i = 0; i < n_system; ++i) {
    const block::ProcessedSystemDeploy& recorded = body.system_deploys[i];
    SystemDeploy sd;
    if (i + 1 < n_system) {
      sd.kind = SystemDeploy::Kind::kSlash;
      sd.validator = slash_validators[i];
    }
    ReplayVerdict r = executor_->ReplaySystem(sd, info, recorded.events);
    if (r.kind == ReplayVerdict::Kind::kInternalError) {
      return Internal(r.error);
    }
    if (r.kind == ReplayVerdict::Kind::kDiverged) {
      return Invalid(absl::StrCat("system deploy ", i,
                                  " diverged: ", r.divergence.ToString()));
    }
    if (r.outcome.failed() != !recorded.error.empty()) {
      return Invalid(
          absl::StrCat("system deploy ", i, " recorded ",
                       recorded.error.empty() ? "success" : "failure",
                       "; replay gives the other"));
    }
    verdict.outcomes.push_back(std::move(r.outcome));
  }
  absl::StatusOr<Hash32> post = space_->CreateCheckpoint();
  if (!post.ok()) return Internal(post.status());
  if (*post != body.state.post_state) {
    return Invalid("post-state " + HexEncode(*post) + " is not the block's " +
                   HexEncode(body.state.post_state));
  }
  return verdict;
}

}  // namespace rnode::casper

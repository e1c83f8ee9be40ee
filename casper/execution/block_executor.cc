// Whole-block play and replay.
#include "casper/execution/block_executor.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "casper/contracts/ledger.h"
#include "casper/contracts/names.h"
#include "util/status_macros.h"
#include "util/union_find.h"

namespace rnode::casper {
namespace {

rholang::interp::BlockInfo InfoOf(const BlockEnv& env) {
  rholang::interp::BlockInfo info;
  info.block_number = env.number;
  info.timestamp = env.timestamp;
  info.sender_public_key.assign(env.sender.begin(), env.sender.end());
  return info;
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
  d.deploy = which;
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

// The block's verdict on user deploy `i` replayed as `r`: nullopt when
// it reproduced the block's record.
std::optional<BlockReplayVerdict> Judge(size_t i,
                                        const block::ProcessedDeploy& recorded,
                                        const SignedDeploy& deploy,
                                        const ReplayVerdict& r) {
  if (r.kind == ReplayVerdict::Kind::kInternalError) return Internal(r.error);
  if (r.kind == ReplayVerdict::Kind::kDiverged) {
    return Invalid(absl::StrCat("deploy ", i, " (", HexEncode(recorded.sig),
                                ") diverged: ", r.divergence.ToString()));
  }
  const block::ProcessedDeploy again = RecordDeploy(deploy, r.outcome);
  if (again.cost != recorded.cost || again.errored != recorded.errored ||
      again.system_deploy_error.empty() !=
          recorded.system_deploy_error.empty()) {
    return Invalid(absl::StrCat(
        "deploy ", i, " (", HexEncode(recorded.sig), ") recorded cost ",
        recorded.cost, ", errored ", recorded.errored, ", precharge failed ",
        !recorded.system_deploy_error.empty(), "; replay gives ", again.cost,
        ", ", again.errored, ", ", !again.system_deploy_error.empty()));
  }
  return std::nullopt;
}

BlockReplayVerdict NotSigned(size_t i, const block::ProcessedDeploy& d) {
  return Invalid(
      absl::StrCat("deploy ", i, " (", HexEncode(d.sig), ") is not signed"));
}

}  // namespace

block::ProcessedDeploy RecordDeploy(const SignedDeploy& deploy,
                                    const DeployOutcome& outcome) {
  const bool precharge_failed = outcome.unpaid();
  return block::MakeProcessedDeploy(
      deploy, outcome.cost, outcome.failed() && !precharge_failed,
      precharge_failed ? FailureText(outcome) : std::string(), outcome.events);
}

std::vector<block::Bond> BlockBonds(const contracts::Validators& validators) {
  std::vector<block::Bond> out;
  for (const contracts::Bond& b : validators.bonds) {
    if (b.stake <= 0 || b.validator.size() != 65) continue;
    block::Bond bond;
    std::copy(b.validator.begin(), b.validator.end(), bond.validator.begin());
    bond.stake = b.stake;
    out.push_back(bond);
  }
  std::sort(out.begin(), out.end(),
            [](const block::Bond& a, const block::Bond& b) {
              return a.validator < b.validator;
            });
  return out;
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
  last_replay_ = ReplayInfo{};
  absl::StatusOr<bool> parallel =
      ReplayInParallel(block, deploys, info, verdict.outcomes);
  if (!parallel.ok()) return Internal(parallel.status());
  last_replay_.parallel = *parallel;
  if (!*parallel) {
    if (last_replay_.groups > 1) {
      last_replay_.fell_back = true;
      verdict.outcomes.clear();
      if (absl::Status s = space_->Reset(body.state.pre_state); !s.ok()) {
        return Internal(std::move(s));
      }
    }
    if (std::optional<BlockReplayVerdict> bad =
            ReplaySerially(block, deploys, info, verdict.outcomes)) {
      return *std::move(bad);
    }
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

std::optional<BlockReplayVerdict> BlockExecutor::ReplaySerially(
    const block::Block& block, const DeploySource& deploys,
    const rholang::interp::BlockInfo& info,
    std::vector<DeployOutcome>& outcomes) {
  const size_t n = block.body.deploys.size();
  std::atomic<bool> done{false};
  auto replay = [&]() -> std::optional<BlockReplayVerdict> {
    for (size_t i = 0; i < n; ++i) {
      const block::ProcessedDeploy& recorded = block.body.deploys[i];
      const SignedDeploy* deploy = deploys(i);
      if (deploy == nullptr) return NotSigned(i, recorded);
      ReplayVerdict r = executor_->Replay(*deploy, info, recorded.events);
      if (auto bad = Judge(i, recorded, *deploy, r)) return bad;
      outcomes.push_back(std::move(r.outcome));
    }
    return std::nullopt;
  };
  if (lanes_ == nullptr || lanes_->pool().threads() < 2 || n < 2) {
    return replay();
  }
  // The pool's other threads ask for the deploys ahead of the replay, so
  // that the source's work (the validator's signature checks) overlaps it.
  std::optional<BlockReplayVerdict> verdict;
  std::atomic<size_t> ahead{0};
  WorkerPool& pool = lanes_->pool();
  pool.ParallelFor(static_cast<size_t>(pool.threads()), [&](size_t t) {
    if (t == 0) {
      verdict = replay();
      done.store(true, std::memory_order_relaxed);
      return;
    }
    for (size_t k = ahead.fetch_add(1);
         k < n && !done.load(std::memory_order_relaxed);
         k = ahead.fetch_add(1)) {
      (void)deploys(k);
    }
  });
  return verdict;
}

absl::StatusOr<Hash32> BlockExecutor::PosVaultChannel() {
  if (!pos_vault_channel_.has_value()) {
    ASSIGN_OR_RETURN(pos_vault_channel_, contracts::BalanceChannelHash(
                                             contracts::PosVaultAddress()));
  }
  return *pos_vault_channel_;
}

void BlockExecutor::GroupDeploys(const block::Block& block, const Hash32& pos,
                                 std::vector<uint32_t>& group) {
  const std::vector<block::ProcessedDeploy>& deploys = block.body.deploys;
  const size_t n = deploys.size();
  // A system process's channel (rho:io:stdout, the registry's lookup, a
  // native object's) holds its installed continuation, which never
  // changes: a send to it that fires the process at once changes nothing
  // there (the process's own effects are other events).
  absl::flat_hash_set<Hash32, Hash32Hasher> installed_channels;
  absl::flat_hash_set<Hash32, Hash32Hasher> installed_sources;
  for (const auto& [channel, source] : space_->InstalledSources()) {
    installed_channels.insert(channel);
    installed_sources.insert(source);
  }
  // Per channel, the deploys the log says read it and the first that
  // writes it. A read is a peek that found its datum, or a COMM that left
  // the datum (a peek, a persistent datum); anything else is a write.
  struct Access {
    std::optional<uint32_t> writer;
    std::vector<uint32_t> readers;
  };
  absl::flat_hash_map<Hash32, Access, Hash32Hasher> access;
  UnionFind uf(static_cast<uint32_t>(n));
  auto note = [&](const Hash32& channel, uint32_t i, bool write) {
    if (channel == pos) return;  // the deposits: in block order, after
    Access& a = access[channel];
    if (!write) {
      a.readers.push_back(i);
    } else if (!a.writer.has_value()) {
      a.writer = i;
    } else {
      uf.Union(*a.writer, i);
    }
  };
  // One deploy's sends that fired a system process, and consumes that
  // fired.
  absl::flat_hash_set<Hash32, Hash32Hasher> fired;
  absl::flat_hash_set<Hash32, Hash32Hasher> matched;
  for (uint32_t i = 0; i < n; ++i) {
    fired.clear();
    matched.clear();
    for (const rspace::Event& e : deploys[i].events) {
      const auto* m = std::get_if<rspace::CommEvent>(&e);
      if (m == nullptr) continue;
      matched.insert(m->consume);
      if (installed_sources.contains(m->consume)) {
        for (const rspace::CommBind& b : m->binds) fired.insert(b.produce);
      }
    }
    for (const rspace::Event& e : deploys[i].events) {
      if (const auto* p = std::get_if<rspace::ProduceEvent>(&e)) {
        const bool system = installed_channels.contains(p->channel) &&
                            !p->persist && fired.contains(p->hash);
        if (!system) note(p->channel, i, true);
      } else if (const auto* c = std::get_if<rspace::ConsumeEvent>(&e)) {
        const bool read = c->peek && !c->persist && matched.contains(c->hash);
        for (const Hash32& ch : c->channels) note(ch, i, !read);
      } else if (const auto* m = std::get_if<rspace::CommEvent>(&e)) {
        if (installed_sources.contains(m->consume)) continue;
        for (const rspace::CommBind& b : m->binds) {
          note(b.channel, i, !(m->peek || b.persist));
        }
      }
    }
  }
  for (const auto& [channel, a] : access) {
    if (!a.writer.has_value()) continue;
    for (uint32_t r : a.readers) uf.Union(*a.writer, r);
  }
  // Labelled by their first deploy (group[i] <= i).
  group = uf.Labels();
}

absl::StatusOr<bool> BlockExecutor::ReplayInParallel(
    const block::Block& block, const DeploySource& deploys,
    const rholang::interp::BlockInfo& info,
    std::vector<DeployOutcome>& outcomes) {
  const std::vector<block::ProcessedDeploy>& recorded = block.body.deploys;
  const size_t n = recorded.size();
  if (lanes_ == nullptr || lanes_->size() < 2 || lanes_->pool().threads() < 2 ||
      n < 2) {
    return false;
  }
  size_t events = 0;
  for (const block::ProcessedDeploy& d : recorded) events += d.events.size();
  if (events < options_.min_parallel_events_per_deploy * n) return false;
  ASSIGN_OR_RETURN(const Hash32 pos, PosVaultChannel());
  std::vector<uint32_t> group;
  GroupDeploys(block, pos, group);
  // Groups as lists of deploys in block order, ordered by first deploy (a
  // group's first deploy is the one it is named by: group[i] <= i).
  std::vector<std::vector<uint32_t>> groups;
  {
    std::vector<size_t> index(n);
    for (uint32_t i = 0; i < n; ++i) {
      if (group[i] == i) {
        index[i] = groups.size();
        groups.emplace_back();
      }
      groups[index[group[i]]].push_back(i);
    }
  }
  last_replay_.groups = groups.size();
  if (groups.size() < 2) return false;

  // Each lane takes the next group until none is left; any run that is not
  // a clean success stops them all.
  std::vector<PartialDeploy> partials(n);
  std::vector<const SignedDeploy*> signed_deploys(n, nullptr);
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  const size_t lanes = std::min(lanes_->size(), groups.size());
  lanes_->pool().ParallelFor(lanes, [&](size_t lane) {
    DeployExecutor& executor = lanes_->at(lane);
    for (size_t g = next.fetch_add(1); g < groups.size();
         g = next.fetch_add(1)) {
      for (uint32_t i : groups[g]) {
        if (stop.load(std::memory_order_relaxed)) return;
        const SignedDeploy* deploy = deploys(i);
        if (deploy == nullptr) {
          stop.store(true);
          return;
        }
        signed_deploys[i] = deploy;
        partials[i] =
            executor.ReplayUntilDeposit(*deploy, info, recorded[i].events);
        if (partials[i].stopped()) {
          stop.store(true);
          return;
        }
      }
    }
  });
  if (stop.load()) return false;

  // The grouping read the block's claims; the check reads what the deploys
  // did, from their scopes: no channel written by two groups, none a group
  // wrote touched (read, locked, looked at and found empty, a balance read)
  // by another, and the PoS vault's balance touched by none (its deposits
  // come next). Then every deploy saw what it sees in serial replay.
  // Channel -> the group whose deploys wrote it.
  absl::flat_hash_map<Hash32, uint32_t, Hash32Hasher> writer;
  for (uint32_t i = 0; i < n; ++i) {
    for (const Hash32& channel : partials[i].written_channels()) {
      auto [it, fresh] = writer.try_emplace(channel, group[i]);
      if (!fresh && it->second != group[i]) return false;
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    for (const Hash32& channel : partials[i].touched_channels()) {
      if (channel == pos) return false;
      auto it = writer.find(channel);
      if (it != writer.end() && it->second != group[i]) return false;
    }
  }

  // The deposits, in block order; then the outcomes and verdicts, at once.
  for (uint32_t i = 0; i < n; ++i) executor_->DepositReplayed(partials[i]);
  std::vector<ReplayVerdict> verdicts(n);
  std::atomic<bool> bad{false};
  lanes_->pool().ParallelFor(n, [&](size_t i) {
    verdicts[i] = DeployExecutor::CompleteReplay(partials[i]);
    if (Judge(i, recorded[i], *signed_deploys[i], verdicts[i]).has_value()) {
      bad.store(true);
    }
  });
  if (bad.load()) return false;
  outcomes.reserve(outcomes.size() + n);
  for (ReplayVerdict& v : verdicts) outcomes.push_back(std::move(v.outcome));
  return true;
}

}  // namespace rnode::casper

// Pre-states of blocks: one parent's post-state or the merge of the scope.
#include "casper/prestate/pre_state.h"

#include <algorithm>
#include <deque>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "casper/merge/merger.h"
#include "casper/prestate/ancestry.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace rnode::casper::prestate {
namespace {

absl::StatusOr<std::shared_ptr<const merge::BlockIndex>> IndexOf(
    const block::Block& block, std::span<const DeployOutcome> outcomes) {
  const size_t users = block.body.deploys.size();
  const size_t total = users + block.body.system_deploys.size();
  if (outcomes.size() != total) {
    return absl::InvalidArgumentError(
        "index of block " + HexEncode(block.hash) + ": " +
        std::to_string(outcomes.size()) + " outcomes for " +
        std::to_string(total) + " deploys");
  }
  merge::BlockInput input;
  input.hash = block.hash;
  input.number = static_cast<uint64_t>(block.number());
  input.deploys.reserve(total);
  for (size_t i = 0; i < total; ++i) {
    const DeployOutcome& o = outcomes[i];
    merge::DeployInput d;
    if (i < users) {
      d.id = block.body.deploys[i].sig;
      d.cost = static_cast<uint64_t>(std::max<int64_t>(o.cost, 0));
    } else {
      // A system deploy: the block hash and its position (unique).
      d.id.assign(block.hash.begin(), block.hash.end());
      d.id.push_back(static_cast<uint8_t>(i - users));
    }
    d.events = o.events;
    d.changes = o.changes;
    for (const auto& n : o.number_diffs) d.number_diffs[n.channel] += n.delta;
    input.deploys.push_back(std::move(d));
  }
  return merge::BuildBlockIndex(std::move(input));
}

}  // namespace

absl::Status PreStateBuilder::Remember(
    const block::Block& block, std::span<const DeployOutcome> outcomes) {
  return Keep(block, outcomes).status();
}

absl::StatusOr<std::shared_ptr<const PreStateBuilder::Kept>>
PreStateBuilder::Keep(const block::Block& block,
                      std::span<const DeployOutcome> outcomes) {
  auto kept = std::make_shared<Kept>();
  ASSIGN_OR_RETURN(kept->index, IndexOf(block, outcomes));
  for (const auto& d : block.body.deploys) kept->user_sigs.push_back(d.sig);
  return indexes_.Put(block.hash, std::move(kept));
}

absl::StatusOr<PreState> PreStateBuilder::Compute(
    std::span<const Hash32> parents) {
  if (parents.empty()) {
    return absl::InvalidArgumentError("a pre-state needs a parent");
  }
  std::vector<std::shared_ptr<const dag::BlockMeta>> cursors;
  for (const Hash32& p : parents) {
    absl::StatusOr<std::shared_ptr<const dag::BlockMeta>> m = dag_->Meta(p);
    if (absl::IsNotFound(m.status())) {
      return absl::FailedPreconditionError("parent " + HexEncode(p) +
                                           " is not stored");
    }
    RETURN_IF_ERROR(m.status());
    cursors.push_back(*std::move(m));
  }
  PreState out;
  if (parents.size() == 1) {
    out.root = cursors.front()->post_state;
    return out;
  }
  ASSIGN_OR_RETURN(const auto base,
                   dag::MergeBaseOf(*dag_, std::move(cursors)));
  // The scope: ancestors of the parents that are not ancestors of the base.
  std::set<Hash32> scope;
  std::deque<Hash32> queue(parents.begin(), parents.end());
  std::set<Hash32> seen(parents.begin(), parents.end());
  while (!queue.empty()) {
    const Hash32 h = queue.front();
    queue.pop_front();
    if (dag_->IsAncestor(h, base->hash)) continue;
    scope.insert(h);
    if (scope.size() > merge::kMaxScopeBlocks) {
      return absl::ResourceExhaustedError(
          "merge scope larger than " + std::to_string(merge::kMaxScopeBlocks) +
          " blocks");
    }
    // Held here: a block below the DAG's window is read from the store,
    // and this pointer is then its only owner (regression: the loop read
    // the parents of a freed record, and the node crashed).
    absl::StatusOr<std::shared_ptr<const dag::BlockMeta>> read = dag_->Meta(h);
    if (!read.ok()) {
      return absl::DataLossError(
          "scope block " + HexEncode(h) +
          " is not readable: " + std::string(read.status().message()));
    }
    const std::shared_ptr<const dag::BlockMeta> meta = *std::move(read);
    for (const Hash32& p : meta->parents) {
      if (seen.insert(p).second) queue.push_back(p);
    }
  }
  std::vector<std::shared_ptr<const merge::BlockIndex>> indexes;
  indexes.reserve(scope.size());
  std::set<Bytes> user_sigs;
  for (const Hash32& h : scope) {
    ASSIGN_OR_RETURN(std::shared_ptr<const Kept> kept, KeptOf(h));
    indexes.push_back(kept->index);
    user_sigs.insert(kept->user_sigs.begin(), kept->user_sigs.end());
  }
  // Deploys of the scope whose effect the base already holds (an earlier
  // copy below it): the merger rejects their scope copies. Of the others,
  // the scope copies the main parent's state holds (its merges kept them):
  // their branches are preferred, so the merge keeps what the main parent
  // kept.
  std::vector<Bytes> settled;
  std::vector<Bytes> unsettled;
  for (const Bytes& sig : user_sigs) {
    ASSIGN_OR_RETURN(std::optional<Hash32> copy,
                     CopyInPostState(*dag_, base->hash, sig, 0));
    (copy.has_value() ? settled : unsettled).push_back(sig);
  }
  ASSIGN_OR_RETURN(
      const std::vector<HeldCopy> held,
      ScopeCopiesInPostState(
          *dag_, parents.front(),
          [&](const Hash32& h) { return scope.contains(h); }, unsettled));
  std::vector<merge::DeployCopy> preferred;
  preferred.reserve(held.size());
  for (const HeldCopy& c : held) preferred.push_back({c.sig, c.block});
  merge::MergeOptions options;
  options.number_codec = codec_;
  options.term_factory = term_factory_;
  options.settled = settled;
  options.preferred = preferred;
  ASSIGN_OR_RETURN(
      merge::MergeResult merged,
      merge::Merge(*history_, base->post_state, indexes, options, *context_));
  if (merge_observer_) merge_observer_(merged.metrics);
  out.root = merged.root;
  out.merge_base = base->hash;
  for (const merge::RejectedDeploy& r : merged.rejected) {
    if (!user_sigs.contains(r.id)) continue;  // a system deploy
    out.rejected.push_back(
        {r.id, r.reason == merge::RejectReason::kSettledInBase, {}});
    // A merge whose base is below this node's last finalized block can
    // reject a copy finalized here (docs/validation.md "Recovery at
    // finality"): said, as finality of deploys is what clients rely on.
    absl::StatusOr<std::vector<Hash32>> holders = dag_->BlocksWithDeploy(r.id);
    if (!holders.ok()) continue;
    for (const Hash32& h : *holders) {
      if (scope.contains(h) && dag_->IsFinalized(h)) {
        finalized_log_.Warn(
            "merge over base {} rejects deploy {} ({}) whose copy in {} "
            "is finalized",
            HexEncode(base->hash).substr(0, 10), HexEncode(r.id).substr(0, 16),
            merge::RejectReasonName(r.reason), HexEncode(h).substr(0, 10));
      }
    }
  }
  return out;
}

absl::StatusOr<std::shared_ptr<const PreStateBuilder::Kept>>
PreStateBuilder::KeptOf(const Hash32& hash) {
  if (std::optional<std::shared_ptr<const Kept>> kept = indexes_.Get(hash)) {
    return *std::move(kept);
  }
  if (replayer_ == nullptr) {
    return absl::FailedPreconditionError(
        "the merge index of block " + HexEncode(hash) +
        " is not kept and there is no replayer to rebuild it");
  }
  ASSIGN_OR_RETURN(std::optional<block::Block> stored, dag_->GetBlock(hash));
  if (!stored.has_value()) {
    return absl::FailedPreconditionError("scope block " + HexEncode(hash) +
                                         " is not stored");
  }
  const block::Block& b = *stored;
  // The block was validated when it was stored: its deploys verify and its
  // slashes name stored invalid blocks. Anything else is a local fault.
  std::vector<SignedDeploy> deploys;
  deploys.reserve(b.body.deploys.size());
  for (const block::ProcessedDeploy& d : b.body.deploys) {
    auto s = SignedDeploy::Verify(d.data, d.deployer, d.sig,
                                  SigAlgorithmName(d.sig_algorithm));
    if (!s.ok()) {
      return absl::InternalError("stored block " + HexEncode(hash) +
                                 " holds a deploy that does not verify");
    }
    deploys.push_back(*std::move(s));
  }
  std::vector<Bytes> slashed;
  for (const block::ProcessedSystemDeploy& sd : b.body.system_deploys) {
    const auto* slash = std::get_if<block::SlashDeploy>(&sd.deploy);
    if (slash == nullptr) continue;
    absl::StatusOr<std::shared_ptr<const dag::BlockMeta>> target =
        dag_->Meta(slash->invalid_block);
    if (absl::IsNotFound(target.status())) {
      return absl::InternalError("stored block " + HexEncode(hash) +
                                 " slashes a block that is not stored");
    }
    RETURN_IF_ERROR(target.status());
    slashed.emplace_back((*target)->sender.begin(), (*target)->sender.end());
  }
  BlockReplayVerdict replay = replayer_->Replay(b, deploys, slashed);
  if (!replay.ok()) {
    return absl::InternalError(
        "stored block " + HexEncode(hash) + " does not replay: " +
        (replay.kind == BlockReplayVerdict::Kind::kInvalid
             ? replay.reason
             : std::string(replay.error.message())));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const Kept> kept, Keep(b, replay.outcomes));
  ++rebuilt_;
  return kept;
}

}  // namespace rnode::casper::prestate

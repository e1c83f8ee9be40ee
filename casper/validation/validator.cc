// The block validation pipeline.
#include "casper/validation/validator.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "casper/block/block_codec.h"
#include "casper/prestate/ancestry.h"
#include "casper/validation/internal/signed_replay.h"

namespace rnode::casper::validation {
namespace {

Verdict Invalid(InvalidReason reason, std::string detail) {
  Verdict v;
  v.kind = Verdict::Kind::kInvalid;
  v.reason = reason;
  v.detail = std::move(detail);
  return v;
}

Verdict Stale(std::string detail) {
  Verdict v;
  v.kind = Verdict::Kind::kStale;
  v.detail = std::move(detail);
  return v;
}

Verdict Internal(absl::Status error) {
  Verdict v;
  v.kind = Verdict::Kind::kInternal;
  v.error = std::move(error);
  return v;
}

// A stored block's metadata into `*out` (the blocks a check reads were
// found stored by CheckDependencies); a read failure is this node's fault,
// never the block's: an internal verdict.
std::optional<Verdict> ReadMeta(const dag::DagStore& dag, const Hash32& hash,
                                std::shared_ptr<const dag::BlockMeta>* out) {
  absl::StatusOr<std::shared_ptr<const dag::BlockMeta>> meta = dag.Meta(hash);
  if (!meta.ok()) return Internal(meta.status());
  *out = *std::move(meta);
  return std::nullopt;
}

std::string Hex(const Hash32& h) { return HexEncode(h); }

}  // namespace

std::string_view InvalidReasonName(InvalidReason reason) {
  switch (reason) {
    case InvalidReason::kInvalidBlockHash:
      return "InvalidBlockHash";
    case InvalidReason::kInvalidSignature:
      return "InvalidSignature";
    case InvalidReason::kInvalidFormat:
      return "InvalidFormat";
    case InvalidReason::kInvalidShardId:
      return "InvalidShardId";
    case InvalidReason::kInvalidParents:
      return "InvalidParents";
    case InvalidReason::kInvalidSender:
      return "InvalidSender";
    case InvalidReason::kInvalidFollows:
      return "InvalidFollows";
    case InvalidReason::kInvalidBlockNumber:
      return "InvalidBlockNumber";
    case InvalidReason::kInvalidSequenceNumber:
      return "InvalidSequenceNumber";
    case InvalidReason::kJustificationRegression:
      return "JustificationRegression";
    case InvalidReason::kInvalidTimestamp:
      return "InvalidTimestamp";
    case InvalidReason::kContainsFutureDeploy:
      return "ContainsFutureDeploy";
    case InvalidReason::kContainsExpiredDeploy:
      return "ContainsExpiredDeploy";
    case InvalidReason::kContainsTimeExpiredDeploy:
      return "ContainsTimeExpiredDeploy";
    case InvalidReason::kLowDeployCost:
      return "LowDeployCost";
    case InvalidReason::kDeployAboveLimits:
      return "DeployAboveLimits";
    case InvalidReason::kUnpaidDeploy:
      return "UnpaidDeploy";
    case InvalidReason::kBlockTooLarge:
      return "BlockTooLarge";
    case InvalidReason::kInvalidRepeatDeploy:
      return "InvalidRepeatDeploy";
    case InvalidReason::kDeployNotSigned:
      return "DeployNotSigned";
    case InvalidReason::kNeglectedInvalidBlock:
      return "NeglectedInvalidBlock";
    case InvalidReason::kUnauthorizedSlash:
      return "UnauthorizedSlashDeploy";
    case InvalidReason::kInvalidPreState:
      return "InvalidPreState";
    case InvalidReason::kInvalidRejectedDeploy:
      return "InvalidRejectedDeploy";
    case InvalidReason::kInvalidTransaction:
      return "InvalidTransaction";
    case InvalidReason::kInvalidBondsCache:
      return "InvalidBondsCache";
    case InvalidReason::kEquivocation:
      return "Equivocation";
  }
  return "Unknown";
}

bool IsSlashable(InvalidReason reason) {
  switch (reason) {
    // Nothing a block's sender signed can be held against it when the
    // signature or the form is broken, or the clock may be ours.
    case InvalidReason::kInvalidSignature:
    case InvalidReason::kInvalidFormat:
    case InvalidReason::kInvalidSender:
    case InvalidReason::kInvalidTimestamp:
    case InvalidReason::kInvalidRejectedDeploy:
    // The deploy rules come from each node's genesis parameters file, which
    // no block commits to: a node configured unlike its shard must not
    // slash honest validators (the public node does not slash for
    // LowDeployCost either).
    case InvalidReason::kLowDeployCost:
    case InvalidReason::kDeployAboveLimits:
    case InvalidReason::kBlockTooLarge:
      return false;
    default:
      return true;
  }
}

namespace {

using R = InvalidReason;
using internal::SignedReplay;
using internal::SignedReplayResult;

// What every check reads.
struct CheckInput {
  const block::Block& b;  // Not yet in the DAG.
  int64_t now_ms;         // The local clock.
  const ValidatorOptions& options;
  dag::DagStore& dag;
  // The DAG's floor, read once: every check of one validation sees the
  // same one while retention raises it.
  std::optional<int64_t> floor;
};

// What checks found that later checks read; each field is set by the check
// named beside it, and read only after it passed.
struct Found {
  // CheckParents: the parents' metadata in block order, main parent first.
  std::vector<std::shared_ptr<const dag::BlockMeta>> parents;
  int64_t number = 0;       // CheckBlockNumber: max(parent numbers) + 1.
  int64_t parent_time = 0;  // CheckBlockNumber: the latest parent timestamp.
  // CheckSequenceNumber: the sender's justified block, null for none.
  std::shared_ptr<const dag::BlockMeta> previous;
  std::set<Hash32> slashed;  // CheckSlashes: the blocks slashed.
  // CheckSlashes: the keys the slash system deploys slash, in block order.
  std::vector<Bytes> slash_validators;
  prestate::PreState pre;  // CheckPreState.

  const dag::BlockMeta& main() const { return *parents.front(); }
};

std::optional<Verdict> CheckSeal(const CheckInput& in) {
  const block::Block& b = in.b;
  switch (block::CheckSeal(b)) {
    case block::SealError::kNone:
      return std::nullopt;
    case block::SealError::kHashMismatch:
      return Invalid(R::kInvalidBlockHash,
                     "hash " + Hex(b.hash) + " is not the block's (" +
                         Hex(block::ComputeBlockHash(b)) + ")");
    case block::SealError::kUnknownSigAlgorithm:
      return Invalid(R::kInvalidSignature,
                     "unknown signature algorithm '" + b.sig_algorithm + "'");
    case block::SealError::kBadSignature:
      return Invalid(R::kInvalidSignature,
                     "the signature is not the sender's over the hash");
  }
  return std::nullopt;
}

std::optional<Verdict> CheckFormat(const CheckInput& in) {
  if (in.b.sender == crypto::Secp256k1PublicKey{}) {
    return Invalid(R::kInvalidFormat, "no sender");
  }
  if (in.b.header.version != block::kBlockVersion) {
    return Invalid(R::kInvalidFormat,
                   absl::StrCat("version ", in.b.header.version, ", expected ",
                                block::kBlockVersion));
  }
  if (const size_t bytes = block::EncodedBlockSize(in.b);
      bytes > in.options.max_block_bytes) {
    return Invalid(R::kBlockTooLarge,
                   absl::StrCat("encoded in ", bytes,
                                " bytes, more than the shard's limit of ",
                                in.options.max_block_bytes));
  }
  return std::nullopt;
}

std::optional<Verdict> CheckShardId(const CheckInput& in) {
  if (in.b.shard_id != in.options.shard_id) {
    return Invalid(R::kInvalidShardId, "shard '" + in.b.shard_id +
                                           "', expected '" +
                                           in.options.shard_id + "'");
  }
  return std::nullopt;
}

// Everything the block names must be stored.
std::optional<Verdict> CheckDependencies(const CheckInput& in) {
  const block::Block& b = in.b;
  std::set<Hash32> missing;
  for (const Hash32& p : b.header.parents) {
    if (!in.dag.Contains(p)) missing.insert(p);
  }
  for (const auto& j : b.justifications) {
    if (!in.dag.Contains(j.latest_block)) missing.insert(j.latest_block);
  }
  for (const auto& s : b.body.system_deploys) {
    if (const auto* slash = std::get_if<block::SlashDeploy>(&s.deploy)) {
      if (!in.dag.Contains(slash->invalid_block)) {
        missing.insert(slash->invalid_block);
      }
    }
  }
  if (missing.empty()) return std::nullopt;
  Verdict v;
  v.kind = Verdict::Kind::kMissingDependency;
  v.missing.assign(missing.begin(), missing.end());
  return v;
}

// A block numbered at or below the DAG's floor has every parent below it:
// what it was built on is deleted or was never held here. Checked before
// the dependencies, so such a block is not fetched for. (Its number is
// not checked yet: a sender that lies about it only gets its own block
// dropped.)
std::optional<Verdict> CheckAboveFloor(const CheckInput& in) {
  if (!in.floor.has_value() || in.b.number() > *in.floor) return std::nullopt;
  return Stale(absl::StrCat("its number ", in.b.number(),
                            " is at or below this node's floor ", *in.floor,
                            " (older blocks and states are not kept)"));
}

// Every parent at or above the floor: a parent below it kept its metadata
// (a latest message, or what one justifies) but not the blocks and states
// around it a pre-state reads.
std::optional<Verdict> CheckParentsAboveFloor(const CheckInput& in,
                                              const Found& found) {
  if (!in.floor.has_value()) return std::nullopt;
  for (const auto& p : found.parents) {
    if (p->block_number < *in.floor) {
      return Stale(absl::StrCat("its parent ", Hex(p->hash), " is numbered ",
                                p->block_number, ", below this node's floor ",
                                *in.floor,
                                " (older blocks and states are not kept)"));
    }
  }
  return std::nullopt;
}

// At least one parent, at most max_parents, none twice: checked before
// the dependencies, so a block naming thousands of unknown parents is
// refused, not fetched.
std::optional<Verdict> CheckParentList(const CheckInput& in) {
  const auto& parents = in.b.header.parents;
  if (parents.empty()) return Invalid(R::kInvalidParents, "no parents");
  if (parents.size() > in.options.max_parents) {
    return Invalid(R::kInvalidParents,
                   absl::StrCat(parents.size(), " parents, at most ",
                                in.options.max_parents));
  }
  std::set<Hash32> seen;
  for (const Hash32& p : parents) {
    if (!seen.insert(p).second) {
      return Invalid(R::kInvalidParents, "parent " + Hex(p) + " repeated");
    }
  }
  return std::nullopt;
}

std::optional<Verdict> CheckParents(const CheckInput& in, Found& found) {
  for (const Hash32& p : in.b.header.parents) {
    std::shared_ptr<const dag::BlockMeta> m;
    if (auto v = ReadMeta(in.dag, p, &m)) return v;
    if (m->invalid) {
      return Invalid(R::kInvalidParents, "parent " + Hex(p) + " is invalid");
    }
    found.parents.push_back(std::move(m));
  }
  return std::nullopt;
}

// Bonded in the main parent's state.
std::optional<Verdict> CheckSender(const CheckInput& in, const Found& found) {
  if (block::StakeOf(found.main().bonds, in.b.sender) <= 0) {
    return Invalid(R::kInvalidSender, "sender " + HexEncode(in.b.sender) +
                                          " is not bonded in the main "
                                          "parent's state");
  }
  return std::nullopt;
}

// Exactly the main parent's bonded validators, each once.
std::optional<Verdict> CheckJustifications(const CheckInput& in,
                                           const Found& found) {
  std::set<crypto::Secp256k1PublicKey> justified;
  for (const auto& j : in.b.justifications) {
    if (!justified.insert(j.validator).second) {
      return Invalid(R::kInvalidFollows, "validator " + HexEncode(j.validator) +
                                             " justified twice");
    }
  }
  std::set<crypto::Secp256k1PublicKey> expected;
  for (const auto& bond : found.main().bonds) {
    if (bond.stake > 0) expected.insert(bond.validator);
  }
  if (justified != expected) {
    return Invalid(
        R::kInvalidFollows,
        absl::StrCat("justifies ", justified.size(),
                     " validators; the main parent bonds ", expected.size()));
  }
  return std::nullopt;
}

std::optional<Verdict> CheckBlockNumber(const CheckInput& in, Found& found) {
  for (const auto& m : found.parents) {
    found.number = std::max(found.number, m->block_number + 1);
    found.parent_time = std::max(found.parent_time, m->timestamp);
  }
  if (in.b.number() != found.number) {
    return Invalid(
        R::kInvalidBlockNumber,
        absl::StrCat("number ", in.b.number(), ", expected ", found.number));
  }
  return std::nullopt;
}

// The parents' main-parent chains meet at most max_merge_depth numbers
// below the block, so its merge's scope is bounded (docs/validation.md
// "Parents"). Checked before the pre-state: the walk stops at the bound, so
// a block naming a parent far down costs that walk, not the merge.
std::optional<Verdict> CheckMergeDepth(const CheckInput& in,
                                       const Found& found) {
  if (found.parents.size() < 2) return std::nullopt;
  const int64_t lowest = found.number - in.options.max_merge_depth;
  // Below the floor the walk would read deleted metadata: it stops there,
  // and chains that meet lower are stale here, not invalid.
  const int64_t bound = std::max(lowest, in.floor.value_or(lowest));
  auto meet = dag::MainChainMeetAtOrAbove(in.dag, found.parents, bound);
  if (!meet.ok()) return Internal(meet.status());
  if (*meet == nullptr && bound > lowest) {
    return Stale(
        absl::StrCat("its parents' main-parent chains do not meet "
                     "at or above this node's floor ",
                     bound, " (older blocks and states are not kept)"));
  }
  if (*meet == nullptr) {
    return Invalid(
        R::kInvalidParents,
        absl::StrCat("the parents' main-parent chains meet below "
                     "block number ",
                     lowest, " (more than ", in.options.max_merge_depth,
                     " below the block's ", found.number, ")"));
  }
  return std::nullopt;
}

// One more than the sender's justified block.
std::optional<Verdict> CheckSequenceNumber(const CheckInput& in, Found& found) {
  const block::Block& b = in.b;
  for (const auto& j : b.justifications) {
    if (j.validator != b.sender) continue;
    std::shared_ptr<const dag::BlockMeta> m;
    if (auto v = ReadMeta(in.dag, j.latest_block, &m)) return v;
    if (m->sender == b.sender) found.previous = std::move(m);
  }
  // In 64 bits: a stored (invalid) block may carry INT32_MAX.
  const int64_t expected_seq =
      found.previous == nullptr ? 1 : int64_t{found.previous->seq_num} + 1;
  if (b.seq_num != expected_seq) {
    return Invalid(R::kInvalidSequenceNumber,
                   absl::StrCat("sequence number ", b.seq_num, ", expected ",
                                expected_seq));
  }
  return std::nullopt;
}

// No justification older than the sender's previous block's.
std::optional<Verdict> CheckJustificationRegression(const CheckInput& in,
                                                    const Found& found) {
  if (found.previous == nullptr) return std::nullopt;
  for (const auto& pj : found.previous->justifications) {
    std::shared_ptr<const dag::BlockMeta> before;
    if (auto v = ReadMeta(in.dag, pj.latest_block, &before)) return v;
    for (const auto& j : in.b.justifications) {
      if (j.validator != pj.validator) continue;
      std::shared_ptr<const dag::BlockMeta> now;
      if (auto v = ReadMeta(in.dag, j.latest_block, &now)) return v;
      if (before->sender == pj.validator &&
          (now->sender != pj.validator || now->seq_num < before->seq_num)) {
        return Invalid(R::kJustificationRegression,
                       "justifies " + Hex(j.latest_block) + " of " +
                           HexEncode(j.validator) +
                           ", older than its previous block's " +
                           Hex(pj.latest_block));
      }
    }
  }
  return std::nullopt;
}

std::optional<Verdict> CheckTimestamp(const CheckInput& in,
                                      const Found& found) {
  const int64_t timestamp = in.b.header.timestamp;
  if (timestamp < found.parent_time) {
    return Invalid(R::kInvalidTimestamp,
                   absl::StrCat("timestamp ", timestamp,
                                " is before its parent's ", found.parent_time));
  }
  if (timestamp > in.now_ms + in.options.max_clock_drift_ms) {
    return Invalid(R::kInvalidTimestamp,
                   absl::StrCat("timestamp ", timestamp, " is more than ",
                                in.options.max_clock_drift_ms,
                                " ms ahead of now (", in.now_ms, ")"));
  }
  return std::nullopt;
}

// Each deploy in block order: the shard's rules, paid, its validity
// window, no repeat.
std::optional<Verdict> CheckDeploys(const CheckInput& in, const Found& found) {
  const block::Block& b = in.b;
  const ValidatorOptions& options = in.options;
  // The repeat check reads the block's record of its merge: a block of
  // several parents must name a stored merge base (whether it is the right
  // one is CheckRejectedDeploys').
  if (b.header.parents.size() >= 2 && !b.body.deploys.empty() &&
      (!b.body.merge_base.has_value() ||
       !in.dag.Contains(*b.body.merge_base))) {
    return Invalid(R::kInvalidRejectedDeploy,
                   "a block of several parents names no stored merge base");
  }
  std::set<Bytes> sigs;
  for (size_t i = 0; i < b.body.deploys.size(); ++i) {
    const block::ProcessedDeploy& d = b.body.deploys[i];
    const std::string which =
        absl::StrCat("deploy ", i, " (", HexEncode(d.sig), ")");
    if (std::optional<DeployBreach> breach =
            CheckDeployRules(d.data, options.deploy_rules)) {
      switch (breach->fault) {
        case DeployFault::kWrongShard:
          return Invalid(R::kInvalidShardId,
                         which + " is for shard '" + d.data.shard_id + "'");
        case DeployFault::kLowPhloPrice:
          return Invalid(R::kLowDeployCost, which + ": " + breach->message);
        case DeployFault::kPhloLimit:
        case DeployFault::kTermTooLarge:
          return Invalid(R::kDeployAboveLimits, which + ": " + breach->message);
        case DeployFault::kBeyondHorizon:  // no height given
          return Internal(absl::InternalError(breach->message));
      }
    }
    // The creator's own record that the deployer could not pay. (A record
    // claiming payment that replay contradicts is InvalidTransaction.)
    if (!d.system_deploy_error.empty()) {
      return Invalid(R::kUnpaidDeploy,
                     which +
                         " is recorded as unable to pay its precharge; "
                         "a block leaves such deploys out");
    }
    switch (WindowAt(d.data, found.number, b.header.timestamp,
                     options.deploy_lifespan)) {
      case DeployWindow::kOpen:
        break;
      case DeployWindow::kFuture:
        return Invalid(R::kContainsFutureDeploy,
                       absl::StrCat(which, " is valid after block ",
                                    d.data.valid_after_block_number));
      case DeployWindow::kExpired:
        return Invalid(R::kContainsExpiredDeploy,
                       absl::StrCat(which, " (valid after block ",
                                    d.data.valid_after_block_number,
                                    ") is past its lifespan of ",
                                    options.deploy_lifespan, " blocks"));
      case DeployWindow::kTimeExpired:
        return Invalid(
            R::kContainsTimeExpiredDeploy,
            absl::StrCat(which, " expired at ", d.data.expiration_timestamp));
    }
    if (!sigs.insert(d.sig).second) {
      return Invalid(R::kInvalidRepeatDeploy, which + " appears twice");
    }
    // The block's own record of its merge; CheckRejectedDeploys holds it
    // to the merge's result.
    auto held = prestate::CopyInPreState(
        in.dag, {b.header.parents, b.body.merge_base, b.body.rejected}, d.sig,
        found.number - options.deploy_lifespan);
    if (!held.ok()) return Internal(held.status());
    if (held->has_value()) {
      return Invalid(
          R::kInvalidRepeatDeploy,
          absl::StrCat(which, " already has its effect (block ",
                       HexEncode(**held), ") in the block's pre-state"));
    }
  }
  return std::nullopt;
}

// A slash names a block known invalid and is issued by the sender.
std::optional<Verdict> CheckSlashes(const CheckInput& in, Found& found) {
  for (const auto& s : in.b.body.system_deploys) {
    const auto* slash = std::get_if<block::SlashDeploy>(&s.deploy);
    if (slash == nullptr) continue;
    std::shared_ptr<const dag::BlockMeta> target;
    if (auto v = ReadMeta(in.dag, slash->invalid_block, &target)) return v;
    if (!target->invalid || slash->issuer != in.b.sender) {
      return Invalid(R::kUnauthorizedSlash,
                     "slash for " + Hex(slash->invalid_block) +
                         (target->invalid ? " issued by another key"
                                          : ", which is not invalid"));
    }
    found.slashed.insert(slash->invalid_block);
    found.slash_validators.emplace_back(target->sender.begin(),
                                        target->sender.end());
  }
  return std::nullopt;
}

// An invalid block justified is slashed in this block.
std::optional<Verdict> CheckNeglectedInvalidBlocks(const CheckInput& in,
                                                   const Found& found) {
  for (const auto& j : in.b.justifications) {
    std::shared_ptr<const dag::BlockMeta> justified;
    if (auto v = ReadMeta(in.dag, j.latest_block, &justified)) return v;
    if (justified->invalid && !found.slashed.contains(j.latest_block)) {
      return Invalid(R::kNeglectedInvalidBlock,
                     "justifies invalid block " + Hex(j.latest_block) +
                         " without slashing its sender");
    }
  }
  return std::nullopt;
}

// The parent's post-state, or the merge of the scope: `pre_states` may be
// null for single-parent blocks only.
std::optional<Verdict> CheckPreState(const CheckInput& in,
                                     prestate::PreStateBuilder* pre_states,
                                     Found& found) {
  const auto& parents = in.b.header.parents;
  if (pre_states != nullptr) {
    auto computed = pre_states->Compute(parents);
    if (!computed.ok()) return Internal(computed.status());
    found.pre = *std::move(computed);
  } else if (parents.size() > 1) {
    return Internal(absl::UnimplementedError(
        "no pre-state builder: a multi-parent block cannot be checked"));
  } else {
    found.pre.root = found.main().post_state;
  }
  if (in.b.body.state.pre_state != found.pre.root) {
    return Invalid(R::kInvalidPreState,
                   "pre-state " + Hex(in.b.body.state.pre_state) +
                       " is not the parents' " + Hex(found.pre.root));
  }
  return std::nullopt;
}

// The merge base and the rejected deploys are the merge's.
std::optional<Verdict> CheckRejectedDeploys(const CheckInput& in,
                                            const Found& found) {
  if (in.b.body.merge_base != found.pre.merge_base) {
    return Invalid(R::kInvalidRejectedDeploy,
                   "merge base is not the parents' main-chain meeting point");
  }
  if (in.b.body.rejected != found.pre.rejected) {
    return Invalid(R::kInvalidRejectedDeploy,
                   absl::StrCat("records ", in.b.body.rejected.size(),
                                " rejected deploys; the merge rejects ",
                                found.pre.rejected.size()));
  }
  return std::nullopt;
}

// Whatever the replay found: every signature was checked (SignedReplay).
std::optional<Verdict> CheckDeploySignatures(const CheckInput& in,
                                             const SignedReplayResult& run) {
  if (!run.first_unsigned.has_value()) return std::nullopt;
  const size_t i = *run.first_unsigned;
  return Invalid(
      R::kDeployNotSigned,
      absl::StrCat("deploy ", i, " (", HexEncode(in.b.body.deploys[i].sig),
                   ") does not verify"));
}

std::optional<Verdict> CheckReplay(const SignedReplayResult& run) {
  switch (run.replay.kind) {
    case BlockReplayVerdict::Kind::kOk:
      return std::nullopt;
    case BlockReplayVerdict::Kind::kInternalError:
      return Internal(run.replay.error);
    case BlockReplayVerdict::Kind::kInvalid:
      return Invalid(R::kInvalidTransaction, run.replay.reason);
  }
  return std::nullopt;
}

// The bonds recorded are the post-state's.
std::optional<Verdict> CheckBonds(const CheckInput& in,
                                  contracts::ValidatorsCache& validators) {
  auto post = validators.Get(in.b.body.state.post_state);
  if (!post.ok()) return Internal(post.status());
  if (BlockBonds(**post) != in.b.body.state.bonds) {
    return Invalid(R::kInvalidBondsCache,
                   "bonds are not those of the block's post-state");
  }
  return std::nullopt;
}

// No other block of the sender with this sequence number (or a later one).
std::optional<Verdict> CheckEquivocation(const CheckInput& in) {
  auto latest = in.dag.LatestMessages();
  if (auto it = latest.find(in.b.sender); it != latest.end()) {
    std::shared_ptr<const dag::BlockMeta> mine;
    if (auto v = ReadMeta(in.dag, it->second, &mine)) return v;
    if (mine->seq_num >= in.b.seq_num) {
      return Invalid(
          R::kEquivocation,
          absl::StrCat("the sender already made block ", Hex(mine->hash),
                       " with sequence number ", mine->seq_num));
    }
  }
  return std::nullopt;
}

}  // namespace

Verdict BlockValidator::Validate(const block::Block& b, int64_t now_ms) {
  const CheckInput in{b, now_ms, options_, *dag_, dag_->floor()};
  Found found;
  if (auto v = CheckSeal(in)) return *std::move(v);
  if (auto v = CheckFormat(in)) return *std::move(v);
  if (auto v = CheckShardId(in)) return *std::move(v);
  if (auto v = CheckParentList(in)) return *std::move(v);
  if (auto v = CheckAboveFloor(in)) return *std::move(v);
  if (auto v = CheckDependencies(in)) return *std::move(v);
  if (auto v = CheckParents(in, found)) return *std::move(v);
  if (auto v = CheckParentsAboveFloor(in, found)) return *std::move(v);
  if (auto v = CheckSender(in, found)) return *std::move(v);
  if (auto v = CheckJustifications(in, found)) return *std::move(v);
  if (auto v = CheckBlockNumber(in, found)) return *std::move(v);
  if (auto v = CheckMergeDepth(in, found)) return *std::move(v);
  if (auto v = CheckSequenceNumber(in, found)) return *std::move(v);
  if (auto v = CheckJustificationRegression(in, found)) return *std::move(v);
  if (auto v = CheckTimestamp(in, found)) return *std::move(v);
  if (auto v = CheckDeploys(in, found)) return *std::move(v);
  if (auto v = CheckSlashes(in, found)) return *std::move(v);
  if (auto v = CheckNeglectedInvalidBlocks(in, found)) return *std::move(v);
  if (auto v = CheckPreState(in, pre_states_, found)) return *std::move(v);
  if (auto v = CheckRejectedDeploys(in, found)) return *std::move(v);
  SignedReplayResult run =
      SignedReplay(b).Run(*executor_, found.slash_validators, pool_);
  if (auto v = CheckDeploySignatures(in, run)) return *std::move(v);
  if (auto v = CheckReplay(run)) return *std::move(v);
  if (auto v = CheckBonds(in, *validators_)) return *std::move(v);
  if (auto v = CheckEquivocation(in)) return *std::move(v);
  Verdict ok;
  ok.outcomes = std::move(run.replay.outcomes);
  return ok;
}

}  // namespace rnode::casper::validation

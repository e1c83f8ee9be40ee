// The block validation pipeline.
#include "casper/validation/validator.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "casper/prestate/ancestry.h"

namespace rnode::casper::validation {
namespace {

Verdict Invalid(InvalidReason reason, std::string detail) {
  Verdict v;
  v.kind = Verdict::Kind::kInvalid;
  v.reason = reason;
  v.detail = std::move(detail);
  return v;
}

Verdict Internal(absl::Status error) {
  Verdict v;
  v.kind = Verdict::Kind::kInternal;
  v.error = std::move(error);
  return v;
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
      return false;
    default:
      return true;
  }
}

Verdict BlockValidator::Validate(const block::Block& b, int64_t now_ms) {
  using R = InvalidReason;
  // 1. Seal.
  switch (block::CheckSeal(b)) {
    case block::SealError::kNone:
      break;
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
  // 2. Form and shard.
  if (b.sender == crypto::Secp256k1PublicKey{}) {
    return Invalid(R::kInvalidFormat, "no sender");
  }
  if (b.header.version != block::kBlockVersion) {
    return Invalid(R::kInvalidFormat,
                   absl::StrCat("version ", b.header.version, ", expected ",
                                block::kBlockVersion));
  }
  if (b.shard_id != options_.shard_id) {
    return Invalid(
        R::kInvalidShardId,
        "shard '" + b.shard_id + "', expected '" + options_.shard_id + "'");
  }
  // 3. Dependencies: everything the block names must be stored.
  std::set<Hash32> missing;
  for (const Hash32& p : b.header.parents) {
    if (!dag_->Contains(p)) missing.insert(p);
  }
  for (const auto& j : b.justifications) {
    if (!dag_->Contains(j.latest_block)) missing.insert(j.latest_block);
  }
  for (const auto& s : b.body.system_deploys) {
    if (const auto* slash = std::get_if<block::SlashDeploy>(&s.deploy)) {
      if (!dag_->Contains(slash->invalid_block)) {
        missing.insert(slash->invalid_block);
      }
    }
  }
  if (!missing.empty()) {
    Verdict v;
    v.kind = Verdict::Kind::kMissingDependency;
    v.missing.assign(missing.begin(), missing.end());
    return v;
  }
  // 4. Parents.
  const auto& parents = b.header.parents;
  if (parents.empty()) return Invalid(R::kInvalidParents, "no parents");
  if (parents.size() > options_.max_parents) {
    return Invalid(R::kInvalidParents,
                   absl::StrCat(parents.size(), " parents, at most ",
                                options_.max_parents));
  }
  std::vector<std::shared_ptr<const dag::BlockMeta>> parent_metas;
  for (const Hash32& p : parents) {
    if (std::count(parents.begin(), parents.end(), p) > 1) {
      return Invalid(R::kInvalidParents, "parent " + Hex(p) + " repeated");
    }
    auto m = dag_->Meta(p);
    if (m->invalid) {
      return Invalid(R::kInvalidParents, "parent " + Hex(p) + " is invalid");
    }
    parent_metas.push_back(std::move(m));
  }
  const dag::BlockMeta& main = *parent_metas.front();
  // 5. Sender bonded in the main parent's state.
  if (block::StakeOf(main.bonds, b.sender) <= 0) {
    return Invalid(R::kInvalidSender, "sender " + HexEncode(b.sender) +
                                          " is not bonded in the main "
                                          "parent's state");
  }
  // 6. Justifications: exactly the main parent's bonded validators.
  {
    std::set<crypto::Secp256k1PublicKey> justified;
    for (const auto& j : b.justifications) {
      if (!justified.insert(j.validator).second) {
        return Invalid(
            R::kInvalidFollows,
            "validator " + HexEncode(j.validator) + " justified twice");
      }
    }
    std::set<crypto::Secp256k1PublicKey> expected;
    for (const auto& bond : main.bonds) {
      if (bond.stake > 0) expected.insert(bond.validator);
    }
    if (justified != expected) {
      return Invalid(
          R::kInvalidFollows,
          absl::StrCat("justifies ", justified.size(),
                       " validators; the main parent bonds ", expected.size()));
    }
  }
  // 7. Block number.
  int64_t number = 0;
  int64_t parent_time = 0;
  for (const auto& m : parent_metas) {
    number = std::max(number, m->block_number + 1);
    parent_time = std::max(parent_time, m->timestamp);
  }
  if (b.number() != number) {
    return Invalid(R::kInvalidBlockNumber,
                   absl::StrCat("number ", b.number(), ", expected ", number));
  }
  // 8. Sequence number: one more than the sender's justified block.
  std::shared_ptr<const dag::BlockMeta> previous;
  for (const auto& j : b.justifications) {
    if (j.validator != b.sender) continue;
    auto m = dag_->Meta(j.latest_block);
    if (m->sender == b.sender) previous = std::move(m);
  }
  // In 64 bits: a stored (invalid) block may carry INT32_MAX.
  const int64_t expected_seq =
      previous == nullptr ? 1 : int64_t{previous->seq_num} + 1;
  if (b.seq_num != expected_seq) {
    return Invalid(R::kInvalidSequenceNumber,
                   absl::StrCat("sequence number ", b.seq_num, ", expected ",
                                expected_seq));
  }
  // 9. No justification older than the sender's previous block's.
  if (previous != nullptr) {
    for (const auto& pj : previous->justifications) {
      auto before = dag_->Meta(pj.latest_block);
      for (const auto& j : b.justifications) {
        if (j.validator != pj.validator) continue;
        auto now = dag_->Meta(j.latest_block);
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
  }
  // 10. Timestamp.
  if (b.header.timestamp < parent_time) {
    return Invalid(R::kInvalidTimestamp,
                   absl::StrCat("timestamp ", b.header.timestamp,
                                " is before its parent's ", parent_time));
  }
  if (b.header.timestamp > now_ms + options_.max_clock_drift_ms) {
    return Invalid(R::kInvalidTimestamp,
                   absl::StrCat("timestamp ", b.header.timestamp,
                                " is more than ", options_.max_clock_drift_ms,
                                " ms ahead of now (", now_ms, ")"));
  }
  // 11. Deploys: shard, windows, repeats.
  std::set<Bytes> sigs;
  for (size_t i = 0; i < b.body.deploys.size(); ++i) {
    const block::ProcessedDeploy& d = b.body.deploys[i];
    const std::string which =
        absl::StrCat("deploy ", i, " (", HexEncode(d.sig), ")");
    if (d.data.shard_id != options_.shard_id) {
      return Invalid(R::kInvalidShardId,
                     which + " is for shard '" + d.data.shard_id + "'");
    }
    switch (WindowAt(d.data, number, b.header.timestamp,
                     options_.deploy_lifespan)) {
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
                                    options_.deploy_lifespan, " blocks"));
      case DeployWindow::kTimeExpired:
        return Invalid(
            R::kContainsTimeExpiredDeploy,
            absl::StrCat(which, " expired at ", d.data.expiration_timestamp));
    }
    if (!sigs.insert(d.sig).second) {
      return Invalid(R::kInvalidRepeatDeploy, which + " appears twice");
    }
    auto repeated = prestate::DeployInAncestry(
        *dag_, parents, d.sig, number - options_.deploy_lifespan);
    if (!repeated.ok()) return Internal(repeated.status());
    if (*repeated) {
      return Invalid(R::kInvalidRepeatDeploy,
                     which + " is already in the block's ancestry");
    }
  }
  // 12. Invalid blocks justified must be slashed; slashes must be earned.
  std::set<Hash32> slashed;
  std::vector<Bytes> slash_validators;
  for (const auto& s : b.body.system_deploys) {
    const auto* slash = std::get_if<block::SlashDeploy>(&s.deploy);
    if (slash == nullptr) continue;
    auto target = dag_->Meta(slash->invalid_block);
    if (!target->invalid || slash->issuer != b.sender) {
      return Invalid(R::kUnauthorizedSlash,
                     "slash for " + Hex(slash->invalid_block) +
                         (target->invalid ? " issued by another key"
                                          : ", which is not invalid"));
    }
    slashed.insert(slash->invalid_block);
    slash_validators.emplace_back(target->sender.begin(), target->sender.end());
  }
  for (const auto& j : b.justifications) {
    const std::shared_ptr<const dag::BlockMeta> justified =
        dag_->Meta(j.latest_block);
    if (justified == nullptr) {
      return Internal(absl::DataLossError(
          "justified block " + Hex(j.latest_block) + " is not readable"));
    }
    if (justified->invalid && !slashed.contains(j.latest_block)) {
      return Invalid(R::kNeglectedInvalidBlock,
                     "justifies invalid block " + Hex(j.latest_block) +
                         " without slashing its sender");
    }
  }
  // 13. Pre-state: the parent's post-state, or the merge of the scope.
  prestate::PreState pre;
  if (pre_states_ != nullptr) {
    auto computed = pre_states_->Compute(parents);
    if (!computed.ok()) return Internal(computed.status());
    pre = *std::move(computed);
  } else if (parents.size() > 1) {
    return Internal(absl::UnimplementedError(
        "no pre-state builder: a multi-parent block cannot be checked"));
  } else {
    pre.root = main.post_state;
  }
  if (b.body.state.pre_state != pre.root) {
    return Invalid(R::kInvalidPreState,
                   "pre-state " + Hex(b.body.state.pre_state) +
                       " is not the parents' " + Hex(pre.root));
  }
  if (b.body.merge_base != pre.merge_base) {
    return Invalid(R::kInvalidRejectedDeploy,
                   "merge base is not the parents' main-chain meeting point");
  }
  if (b.body.rejected != pre.rejected) {
    return Invalid(R::kInvalidRejectedDeploy,
                   absl::StrCat("records ", b.body.rejected.size(),
                                " rejected deploys; the merge rejects ",
                                pre.rejected.size()));
  }
  // 14 and 15. Deploy signatures and the replay, overlapped: each deploy's
  // signature is checked when the replay first asks for it, by the thread
  // that asks (a lane of parallel replay, or one of the threads the serial
  // replay's look-ahead runs on: BlockExecutor::Replay), and the ones the
  // replay never asked for are checked after it. Every signature is checked
  // before a verdict, so a bad signature is reported as such whatever the
  // replay found, and the verdict does not depend on timing.
  const size_t n = b.body.deploys.size();
  std::vector<std::optional<SignedDeploy>> verified(n);
  enum : int { kUnchecked, kChecking, kVerified, kNotSigned };
  std::unique_ptr<std::atomic<int>[]> state(new std::atomic<int>[n]);
  for (size_t i = 0; i < n; ++i) state[i].store(kUnchecked);
  // Checks deploy k unless another thread has claimed it; true if this
  // call checked it.
  auto check = [&](size_t k) {
    int expected = kUnchecked;
    if (!state[k].compare_exchange_strong(expected, kChecking,
                                          std::memory_order_acq_rel)) {
      return false;
    }
    const block::ProcessedDeploy& d = b.body.deploys[k];
    auto s = SignedDeploy::Verify(d.data, d.deployer, d.sig,
                                  SigAlgorithmName(d.sig_algorithm));
    if (s.ok()) verified[k] = *std::move(s);
    state[k].store(s.ok() ? kVerified : kNotSigned, std::memory_order_release);
    return true;
  };
  // Where a thread that would wait looks for a deploy to check instead.
  std::atomic<size_t> cursor{0};
  auto source = [&](size_t i) -> const SignedDeploy* {
    if (!check(i)) {
      while (state[i].load(std::memory_order_acquire) == kChecking) {
        bool helped = false;
        for (size_t k = cursor.load(); k < n && !helped; k = cursor.load()) {
          if (state[k].load(std::memory_order_acquire) != kUnchecked) {
            cursor.compare_exchange_weak(k, k + 1);
            continue;
          }
          helped = check(k);
        }
        if (!helped) std::this_thread::yield();
      }
    }
    return state[i].load(std::memory_order_acquire) == kVerified ? &*verified[i]
                                                                 : nullptr;
  };
  BlockReplayVerdict replay = executor_->Replay(b, source, slash_validators);
  if (pool_ != nullptr) {
    pool_->ParallelFor(n, [&](size_t k) { (void)source(k); });
  } else {
    for (size_t k = 0; k < n; ++k) (void)source(k);
  }
  for (size_t i = 0; i < n; ++i) {
    if (state[i].load(std::memory_order_acquire) != kVerified) {
      return Invalid(
          R::kDeployNotSigned,
          absl::StrCat("deploy ", i, " (", HexEncode(b.body.deploys[i].sig),
                       ") does not verify"));
    }
  }
  if (replay.kind == BlockReplayVerdict::Kind::kInternalError) {
    return Internal(replay.error);
  }
  if (replay.kind == BlockReplayVerdict::Kind::kInvalid) {
    return Invalid(R::kInvalidTransaction, replay.reason);
  }
  // 16. Bonds of the post-state.
  auto post = validators_->Get(b.body.state.post_state);
  if (!post.ok()) return Internal(post.status());
  if (BlockBonds(**post) != b.body.state.bonds) {
    return Invalid(R::kInvalidBondsCache,
                   "bonds are not those of the block's post-state");
  }
  // 17. Equivocation: another block of the sender with this number.
  auto latest = dag_->LatestMessages();
  if (auto it = latest.find(b.sender); it != latest.end()) {
    auto mine = dag_->Meta(it->second);
    if (mine->seq_num >= b.seq_num) {
      return Invalid(
          R::kEquivocation,
          absl::StrCat("the sender already made block ", Hex(mine->hash),
                       " with sequence number ", mine->seq_num));
    }
  }
  Verdict ok;
  ok.outcomes = std::move(replay.outcomes);
  return ok;
}

}  // namespace rnode::casper::validation

// Block creation.
#include "casper/proposer/block_creator.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <map>
#include <set>
#include <span>
#include <utility>

#include "absl/strings/str_cat.h"
#include "casper/block/block_codec.h"
#include "casper/consensus/fork_choice.h"
#include "casper/prestate/ancestry.h"
#include "util/status_macros.h"

namespace rnode::casper::proposer {

namespace {

// The root fork choice weighs by: the last finalized block, or the lowest
// (genesis). FailedPrecondition for an empty DAG.
absl::StatusOr<Hash32> ForkChoiceRoot(dag::DagStore& dag) {
  std::optional<Hash32> root = dag.LastFinalized();
  if (root.has_value()) return *root;
  std::vector<Hash32> lowest = dag.AtHeight(0);
  if (lowest.empty()) return absl::FailedPreconditionError("empty DAG");
  return lowest.front();
}

// The parents of a block, main parent first, that keep the merge depth
// rule: those whose main chain meets the main parent's at most
// `max_merge_depth` numbers below the block (docs/validation.md "Parents").
absl::StatusOr<std::vector<Hash32>> KeepWithinMergeDepth(
    dag::DagStore& dag, std::vector<Hash32> parents, int64_t max_merge_depth) {
  std::vector<std::shared_ptr<const dag::BlockMeta>> metas;
  for (const Hash32& p : parents) {
    ASSIGN_OR_RETURN(auto m, dag.Meta(p));
    metas.push_back(std::move(m));
  }
  // The block's number with all of them: leaving some out lowers it, which
  // only loosens the bound for those kept. The meet of a set is the lowest
  // of each one's meet with the main parent (main chains form a tree).
  int64_t number = 0;
  for (const auto& m : metas) number = std::max(number, m->block_number + 1);
  const int64_t lowest = number - max_merge_depth;
  std::vector<Hash32> kept{parents.front()};
  for (size_t i = 1; i < metas.size(); ++i) {
    if (metas[i]->block_number < lowest) continue;  // its chain is lower
    ASSIGN_OR_RETURN(auto meet, dag::MainChainMeetAtOrAbove(
                                    dag, {metas.front(), metas[i]}, lowest));
    if (meet != nullptr) kept.push_back(parents[i]);
  }
  return kept;
}

// The main parent, then, when the block may merge (`merges`), fork
// choice's next ones (`chosen`, main parent first) and every other tip,
// newest first, up to `max_parents`, of those that keep the merge depth
// rule.
absl::StatusOr<std::vector<Hash32>> BlockParents(
    dag::DagStore& dag, const Hash32& main, const std::vector<Hash32>& chosen,
    bool merges, size_t max_parents, int64_t max_merge_depth) {
  if (!merges) return std::vector<Hash32>{main};
  std::vector<Hash32> parents = chosen;  // main first
  // Every other tip too (newest first), so that no valid block is left
  // out of the chain for good: fork choice scores only the blocks on the
  // validators' main-parent chains, and a block made on a stale view (a
  // validator that was paused) would otherwise never be a parent again,
  // its deploys never final. Its conflicts are resolved by the merge. One
  // whose chain meets ours too far down stays out: its deploys wait in
  // the pools that hold them to go in a block again.
  std::vector<std::pair<int64_t, Hash32>> others;
  for (const Hash32& t : dag.Tips()) {
    if (std::find(parents.begin(), parents.end(), t) != parents.end()) {
      continue;
    }
    ASSIGN_OR_RETURN(const auto meta, dag.Meta(t));
    others.emplace_back(meta->block_number, t);
  }
  std::sort(others.begin(), others.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  });
  // In that order, so the first max_parents kept are fork choice's first.
  for (const auto& [number, t] : others) parents.push_back(t);
  ASSIGN_OR_RETURN(parents, KeepWithinMergeDepth(dag, std::move(parents),
                                                 max_merge_depth));
  parents.resize(std::min(parents.size(), max_parents));
  return parents;
}

// Where a block of `parents` made at `now_ms` sits.
struct Placement {
  int64_t number = 0;     // One more than the highest parent's.
  int64_t timestamp = 0;  // The later of now and the parents'.
};

absl::StatusOr<Placement> PlaceBlock(dag::DagStore& dag,
                                     const std::vector<Hash32>& parents,
                                     int64_t now_ms) {
  int64_t number = 0;
  int64_t parent_time = 0;
  for (const Hash32& p : parents) {
    ASSIGN_OR_RETURN(const auto m, dag.Meta(p));
    number = std::max(number, m->block_number + 1);
    parent_time = std::max(parent_time, m->timestamp);
  }
  return Placement{number, std::max(now_ms, parent_time)};
}

// The pool's deploys that fit the block and whose effect its pre-state
// `pre` does not hold (asked only until the block is full). The DAG's
// error, if any.
absl::StatusOr<std::vector<SignedDeploy>> SelectDeploys(
    pool::DeployPool& pool, dag::DagStore& dag,
    const prestate::PreStateRecord& pre, const Placement& at,
    const CreatorOptions& options) {
  absl::Status ancestry_error;
  std::vector<SignedDeploy> deploys = pool.Select(
      at.number, at.timestamp, options.max_deploys, [&](const SignedDeploy& d) {
        if (CheckDeployRules(d.data(), options.deploy_rules).has_value()) {
          return false;
        }
        auto held = prestate::CopyInPreState(
            dag, pre, d.sig(), at.number - options.deploy_lifespan);
        if (!held.ok()) ancestry_error.Update(held.status());
        return held.ok() && !held->has_value();
      });
  RETURN_IF_ERROR(ancestry_error);
  return deploys;
}

// One slash per sender of a block known invalid that is still bonded in
// the main parent's state, issued by `me`.
absl::StatusOr<std::vector<SlashToRun>> Slashes(
    dag::DagStore& dag, const dag::BlockMeta& main,
    const crypto::Secp256k1PublicKey& me) {
  std::vector<SlashToRun> slashes;
  std::set<crypto::Secp256k1PublicKey> slashed;
  for (const Hash32& h : dag.InvalidBlocks()) {
    ASSIGN_OR_RETURN(const auto bad, dag.Meta(h));
    if (block::StakeOf(main.bonds, bad->sender) <= 0 ||
        !slashed.insert(bad->sender).second) {
      continue;
    }
    slashes.push_back(
        SlashToRun{block::SlashDeploy{h, me, 0},
                   Bytes(bad->sender.begin(), bad->sender.end())});
  }
  return slashes;
}

// Every validator bonded in the main parent's state, at its latest block
// (`root` before it has one).
std::vector<block::Justification> Justifications(
    const dag::BlockMeta& main,
    const std::map<crypto::Secp256k1PublicKey, Hash32>& latest,
    const Hash32& root) {
  std::vector<block::Justification> out;
  for (const auto& bond : main.bonds) {
    if (bond.stake <= 0) continue;
    auto it = latest.find(bond.validator);
    out.push_back({bond.validator, it == latest.end() ? root : it->second});
  }
  return out;
}

}  // namespace

absl::StatusOr<std::optional<block::Block>> BlockCreator::Create(
    const crypto::Secp256k1PrivateKey& key, int64_t now_ms, bool allow_empty) {
  const crypto::Secp256k1PublicKey me = crypto::Secp256k1PublicKeyOf(key);
  ASSIGN_OR_RETURN(const Hash32 root, ForkChoiceRoot(*dag_));
  ASSIGN_OR_RETURN(const auto root_meta, dag_->Meta(root));
  const std::map<crypto::Secp256k1PublicKey, Hash32> latest =
      dag_->LatestMessages();
  ASSIGN_OR_RETURN(consensus::ForkChoice fc,
                   consensus::ChooseParents(
                       *dag_, latest, consensus::WeightsOf(root_meta->bonds)));
  ASSIGN_OR_RETURN(const auto main, dag_->Meta(fc.parents.front()));
  if (block::StakeOf(main->bonds, me) <= 0) {
    return absl::FailedPreconditionError("validator " + HexEncode(me) +
                                         " is not bonded in the state of " +
                                         HexEncode(main->hash));
  }
  ASSIGN_OR_RETURN(const std::vector<Hash32> parents,
                   BlockParents(*dag_, main->hash, fc.parents,
                                pre_states_ != nullptr, options_.max_parents,
                                options_.max_merge_depth));
  ASSIGN_OR_RETURN(const Placement at, PlaceBlock(*dag_, parents, now_ms));
  prestate::PreState pre;
  if (pre_states_ != nullptr) {
    ASSIGN_OR_RETURN(pre, pre_states_->Compute(parents));
  } else {
    pre.root = main->post_state;
  }
  ASSIGN_OR_RETURN(
      std::vector<SignedDeploy> deploys,
      SelectDeploys(*pool_, *dag_, {parents, pre.merge_base, pre.rejected}, at,
                    options_));
  ASSIGN_OR_RETURN(std::vector<SlashToRun> slashes, Slashes(*dag_, *main, me));
  if (deploys.empty() && slashes.empty() && !allow_empty) {
    return std::optional<block::Block>();
  }

  BlockEnv env{at.number, at.timestamp, me};
  // What does not depend on the deploys played.
  const std::vector<block::Justification> justifications =
      Justifications(*main, latest, root);
  int32_t seq_num = 1;
  if (auto mine = latest.find(me); mine != latest.end()) {
    ASSIGN_OR_RETURN(const auto latest_meta, dag_->Meta(mine->second));
    seq_num = latest_meta->seq_num + 1;
  }
  for (;;) {
    ASSIGN_OR_RETURN(PlayedBlock played,
                     PlayPaid(pre.root, deploys, slashes, env));
    if (deploys.empty() && slashes.empty() && !allow_empty) {
      return std::optional<block::Block>();  // none could pay, or fit
    }
    ASSIGN_OR_RETURN(auto post_validators, validators_->Get(played.post_state));
    block::Block b;
    b.header.parents = parents;
    b.header.timestamp = at.timestamp;
    b.body.state.pre_state = pre.root;
    b.body.merge_base = pre.merge_base;
    b.body.rejected = pre.rejected;
    b.body.state.post_state = played.post_state;
    b.body.state.bonds = BlockBonds(*post_validators);
    b.body.state.block_number = at.number;
    b.body.deploys = std::move(played.deploys);
    b.body.system_deploys = std::move(played.system_deploys);
    b.justifications = justifications;
    b.seq_num = seq_num;
    b.shard_id = options_.shard_id;
    RETURN_IF_ERROR(block::SignBlock(b, key));
    const size_t bytes = block::EncodedBlockSize(b);
    if (bytes <= options_.max_block_bytes) {
      return std::optional<block::Block>(std::move(b));
    }
    RETURN_IF_ERROR(Shrink(b, bytes, deploys));
  }
}

// `b`, encoded in `bytes` (above the limit), played `deploys`. Drops the
// last of them (the pool's lowest priority: they stay in the pool for a
// later block) until their records cover the excess; a deploy whose block
// is over the limit with it alone leaves the pool. InternalError when
// there is no user deploy to drop.
absl::Status BlockCreator::Shrink(const block::Block& b, size_t bytes,
                                  std::vector<SignedDeploy>& deploys) {
  if (deploys.empty()) {
    return absl::InternalError(absl::StrCat(
        "a block without user deploys is encoded in ", bytes,
        " bytes, more than the limit of ", options_.max_block_bytes));
  }
  if (deploys.size() == 1) {
    const Bytes sig = deploys.front().sig();
    RETURN_IF_ERROR(pool_->Remove(std::span<const Bytes>(&sig, 1)));
    Leave(sig, LeftOut::Why::kTooLarge);
    deploys.clear();
    return absl::OkStatus();
  }
  const size_t excess = bytes - options_.max_block_bytes;
  size_t dropped = 0;
  while (deploys.size() > 1 && dropped < excess) {
    dropped += block::EncodedDeploySize(b.body.deploys[deploys.size() - 1]);
    deploys.pop_back();
  }
  return absl::OkStatus();
}

void BlockCreator::Leave(const Bytes& sig, LeftOut::Why why) {
  left_out_.push_back(LeftOut{sig, why});
  if (left_out_.size() > kLeftOutKept) left_out_.pop_front();
}

// A deploy whose precharge fails on `pre_state` (its deployer cannot pay
// phloLimit x phloPrice there) is left out: a block holding one is invalid
// (validation's UnpaidDeploy), so an unfunded key cannot fill blocks. It
// leaves the pool and the rest play again; a failed precharge moved
// nothing, so they play as before and the loop ends by the second round.
// `deploys` is left holding the deploys played.
absl::StatusOr<PlayedBlock> BlockCreator::PlayPaid(
    const Hash32& pre_state, std::vector<SignedDeploy>& deploys,
    std::span<const SlashToRun> slashes, const BlockEnv& env) {
  for (;;) {
    ASSIGN_OR_RETURN(PlayedBlock played,
                     executor_->Play(pre_state, deploys, slashes, env));
    std::vector<Bytes> unpaid;
    std::vector<SignedDeploy> paid;
    for (size_t i = 0; i < deploys.size(); ++i) {
      if (played.outcomes[i].unpaid()) {
        unpaid.push_back(deploys[i].sig());
      } else {
        paid.push_back(std::move(deploys[i]));
      }
    }
    deploys = std::move(paid);
    if (unpaid.empty()) return played;
    RETURN_IF_ERROR(pool_->Remove(unpaid));
    for (const Bytes& sig : unpaid) Leave(sig, LeftOut::Why::kUnpaid);
  }
}

std::vector<BlockCreator::LeftOut> BlockCreator::TakeLeftOut() {
  std::vector<LeftOut> out(std::make_move_iterator(left_out_.begin()),
                           std::make_move_iterator(left_out_.end()));
  left_out_.clear();
  return out;
}

}  // namespace rnode::casper::proposer

// Block creation.
#include "casper/proposer/block_creator.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "casper/consensus/fork_choice.h"
#include "casper/prestate/ancestry.h"
#include "util/status_macros.h"

namespace rnode::casper::proposer {

absl::StatusOr<std::optional<block::Block>> BlockCreator::Create(
    const crypto::Secp256k1PrivateKey& key, int64_t now_ms, bool allow_empty) {
  const crypto::Secp256k1PublicKey me = crypto::Secp256k1PublicKeyOf(key);
  // The root the fork choice weighs by: the last finalized block, or the
  // lowest (genesis).
  std::optional<Hash32> root = dag_->LastFinalized();
  if (!root.has_value()) {
    std::vector<Hash32> lowest = dag_->AtHeight(0);
    if (lowest.empty()) return absl::FailedPreconditionError("empty DAG");
    root = lowest.front();
  }
  const auto root_meta = dag_->Meta(*root);
  const std::map<crypto::Secp256k1PublicKey, Hash32> latest =
      dag_->LatestMessages();
  ASSIGN_OR_RETURN(consensus::ForkChoice fc,
                   consensus::ChooseParents(
                       *dag_, latest, consensus::WeightsOf(root_meta->bonds)));
  const auto main = dag_->Meta(fc.parents.front());
  if (block::StakeOf(main->bonds, me) <= 0) {
    return absl::FailedPreconditionError("validator " + HexEncode(me) +
                                         " is not bonded in the state of " +
                                         HexEncode(main->hash));
  }
  std::vector<Hash32> parents{main->hash};
  if (pre_states_ != nullptr) {
    for (size_t i = 1; i < fc.parents.size() && i < options_.max_parents; ++i) {
      parents.push_back(fc.parents[i]);
    }
    // Every other tip too (newest first), so that no valid block is left
    // out of the chain for good: fork choice scores only the blocks on the
    // validators' main-parent chains, and a block made on a stale view (a
    // validator that was paused) would otherwise never be a parent again,
    // its deploys never final. Its conflicts are resolved by the merge.
    std::vector<std::pair<int64_t, Hash32>> others;
    for (const Hash32& t : dag_->Tips()) {
      if (std::find(parents.begin(), parents.end(), t) != parents.end()) {
        continue;
      }
      others.emplace_back(dag_->Meta(t)->block_number, t);
    }
    std::sort(others.begin(), others.end(), [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first > y.first : x.second < y.second;
    });
    for (const auto& [number, t] : others) {
      if (parents.size() >= options_.max_parents) break;
      parents.push_back(t);
    }
  }
  int64_t number = 0;
  int64_t parent_time = 0;
  for (const Hash32& p : parents) {
    const auto m = dag_->Meta(p);
    number = std::max(number, m->block_number + 1);
    parent_time = std::max(parent_time, m->timestamp);
  }
  const int64_t timestamp = std::max(now_ms, parent_time);
  prestate::PreState pre;
  if (pre_states_ != nullptr) {
    ASSIGN_OR_RETURN(pre, pre_states_->Compute(parents));
  } else {
    pre.root = main->post_state;
  }

  // Deploys: what fits this block and is not in its ancestry (asked only
  // until the block is full).
  absl::Status ancestry_error;
  std::vector<SignedDeploy> deploys = pool_->Select(
      number, timestamp, options_.max_deploys, [&](const SignedDeploy& d) {
        auto repeated = prestate::DeployInAncestry(
            *dag_, parents, d.sig(), number - options_.deploy_lifespan);
        if (!repeated.ok()) ancestry_error.Update(repeated.status());
        return repeated.ok() && !*repeated;
      });
  RETURN_IF_ERROR(ancestry_error);

  // Slashes: one per still-bonded sender of a block known invalid.
  std::vector<SlashToRun> slashes;
  std::set<crypto::Secp256k1PublicKey> slashed;
  for (const Hash32& h : dag_->InvalidBlocks()) {
    const auto bad = dag_->Meta(h);
    if (block::StakeOf(main->bonds, bad->sender) <= 0 ||
        !slashed.insert(bad->sender).second) {
      continue;
    }
    slashes.push_back(
        SlashToRun{block::SlashDeploy{h, me, 0},
                   Bytes(bad->sender.begin(), bad->sender.end())});
  }
  if (deploys.empty() && slashes.empty() && !allow_empty) {
    return std::optional<block::Block>();
  }

  BlockEnv env{number, timestamp, me};
  ASSIGN_OR_RETURN(PlayedBlock played,
                   executor_->Play(pre.root, deploys, slashes, env));
  ASSIGN_OR_RETURN(auto post_validators, validators_->Get(played.post_state));

  block::Block b;
  b.header.parents = parents;
  b.header.timestamp = timestamp;
  b.body.state.pre_state = pre.root;
  b.body.merge_base = pre.merge_base;
  b.body.rejected = std::move(pre.rejected);
  b.body.state.post_state = played.post_state;
  b.body.state.bonds = BlockBonds(*post_validators);
  b.body.state.block_number = number;
  b.body.deploys = std::move(played.deploys);
  b.body.system_deploys = std::move(played.system_deploys);
  // Every validator bonded in the parent's state, at its latest block (the
  // root before it has one).
  for (const auto& bond : main->bonds) {
    if (bond.stake <= 0) continue;
    auto it = latest.find(bond.validator);
    b.justifications.push_back(
        {bond.validator, it == latest.end() ? *root : it->second});
  }
  auto mine = latest.find(me);
  b.seq_num = 1;
  if (mine != latest.end()) b.seq_num = dag_->Meta(mine->second)->seq_num + 1;
  b.shard_id = options_.shard_id;
  RETURN_IF_ERROR(block::SignBlock(b, key));
  return std::optional<block::Block>(std::move(b));
}

}  // namespace rnode::casper::proposer

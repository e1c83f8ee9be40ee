#include "node/core/chain_queries.h"

#include <algorithm>
#include <memory>
#include <span>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "casper/block/block_codec.h"
#include "casper/consensus/fork_choice.h"
#include "casper/prestate/ancestry.h"
#include "crypto/hash.h"
#include "crypto/rng.h"
#include "node/core/clock.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/channel_codec.h"
#include "rspace/event_log.h"
#include "rspace/storage/kv_store.h"
#include "util/limits.h"
#include "util/status_macros.h"

namespace rnode::node {
namespace {

namespace interp = rholang::interp;
using casper::block::Block;

// Appends each datum's values to `out`, in order.
absl::Status AppendValues(const std::vector<rspace::Datum>& data,
                          std::vector<rholang::ir::ParPtr>* out) {
  for (const rspace::Datum& d : data) {
    std::shared_ptr<const interp::StoredValue> holder;
    ASSIGN_OR_RETURN(const interp::DataValue* v,
                     interp::DataOf(*d.value, holder));
    for (const auto& p : v->pars) out->push_back(p);
  }
  return absl::OkStatus();
}

// The data waiting on `channel` in `space`, each datum's values in order.
absl::Status ReadData(rspace::Space& space, const rholang::ir::ParPtr& channel,
                      std::vector<rholang::ir::ParPtr>* out) {
  ASSIGN_OR_RETURN(rspace::TermPtr term, interp::MakeChannelTerm(channel));
  ASSIGN_OR_RETURN(std::vector<rspace::Datum> data,
                   space.GetData(term->hash()));
  return AppendValues(data, out);
}

// The metadata of the block a client named: NotFound in the API's words
// when it is not stored, the DAG's error when it cannot be read.
absl::StatusOr<std::shared_ptr<const casper::dag::BlockMeta>> MetaOf(
    const casper::dag::DagStore& dag, const Hash32& block) {
  absl::StatusOr<std::shared_ptr<const casper::dag::BlockMeta>> meta =
      dag.Meta(block);
  if (absl::IsNotFound(meta.status())) {
    return absl::NotFoundError(
        absl::StrCat("Block not found: ", HexEncode(block)));
  }
  return meta;
}

// OK when the history holds the state `root` of the block `meta`; the
// pruned error when this node collected it (storage.retain-blocks).
absl::Status StateHeld(rspace::History& history, const Hash32& root,
                       const casper::dag::BlockMeta& meta) {
  ASSIGN_OR_RETURN(bool held, history.HasRoot(root));
  if (held) return absl::OkStatus();
  return rspace::PrunedError(absl::StrCat(
      "the state of block #", meta.block_number, " ", HexEncode(meta.hash),
      " is pruned: this node keeps the states of its last finalized blocks "
      "only (storage.retain-blocks); an archive node has it"));
}

// A block `hash` this node does not hold. Where its DAG has a floor, a
// block below it may have been deleted (or never held): said, so that a
// client knows to ask an archive node.
absl::Status BlockNotFound(const casper::dag::DagStore& dag,
                           const Hash32& hash) {
  const std::optional<int64_t> floor = dag.floor();
  if (!floor.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("Block not found: ", HexEncode(hash)));
  }
  return absl::NotFoundError(absl::StrCat(
      "Block not found: ", HexEncode(hash),
      "; this node keeps the blocks numbered from ", *floor,
      " up (storage.retain-blocks), an older block may be pruned: an "
      "archive node has it"));
}

}  // namespace

absl::StatusOr<Block> ChainQueries::GetBlock(const Hash32& hash) {
  ASSIGN_OR_RETURN(std::optional<Block> b, d_.dag->GetBlock(hash));
  if (!b.has_value()) return BlockNotFound(*d_.dag, hash);
  return *std::move(b);
}

absl::StatusOr<Block> ChainQueries::FindBlock(std::string_view hex) {
  std::string h(hex);
  absl::StripAsciiWhitespace(&h);
  absl::AsciiStrToLower(&h);
  const bool is_hex =
      !h.empty() && std::all_of(h.begin(), h.end(), [](char ch) {
        return absl::ascii_isxdigit(static_cast<unsigned char>(ch));
      });
  if (!is_hex || h.size() < 6 || h.size() > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", std::string(hex),
                     "' is not a valid block hash (minimum 6 hex characters)"));
  }
  if (h.size() == 64) {
    ASSIGN_OR_RETURN(Hash32 full, HexDecodeFixed<32>(h));
    return GetBlock(full);
  }
  // A seek in the store (issue 43: a walk of every height made each
  // lookup cost the whole chain).
  ASSIGN_OR_RETURN(std::vector<Hash32> found,
                   d_.dag->HashesWithPrefix(h, /*max=*/2));
  if (found.size() > 1) {
    return absl::NotFoundError(
        absl::StrCat("Block hash prefix '", h, "' names several blocks"));
  }
  if (found.empty()) {
    return absl::NotFoundError(absl::StrCat("Block not found: ", h));
  }
  return GetBlock(found.front());
}

absl::StatusOr<std::vector<Block>> ChainQueries::BlocksByHeight(int64_t from,
                                                                int64_t to) {
  const int64_t limit = d_.config->max_blocks_limit;
  to = std::min(to, d_.dag->MaxHeight());
  from = std::max<int64_t>(from, 0);
  // Below the floor, the blocks are gone (or were never held here).
  if (const std::optional<int64_t> floor = d_.dag->floor()) {
    if (to < *floor) {
      return rspace::PrunedError(absl::StrCat(
          "the blocks numbered ", from, " to ", to,
          " are pruned: this node keeps the blocks numbered from ", *floor,
          " up (storage.retain-blocks); an archive node has them"));
    }
    from = std::max(from, *floor);
  }
  if (to - from + 1 > limit) from = to - limit + 1;
  std::vector<Hash32> hashes;
  for (int64_t n = to; n >= from; --n) {
    std::vector<Hash32> at = d_.dag->AtHeight(n);
    hashes.insert(hashes.end(), at.rbegin(), at.rend());
  }
  return ReadBlocks(hashes,
                    absl::StrCat("the blocks of numbers ", from, " to ", to));
}

absl::StatusOr<std::vector<Block>> ChainQueries::ReadBlocks(
    std::span<const Hash32> hashes, std::string_view what) {
  const size_t budget = static_cast<size_t>(d_.config->max_blocks_bytes);
  size_t read = 0;
  std::vector<Block> out;
  out.reserve(hashes.size());
  for (const Hash32& h : hashes) {
    ASSIGN_OR_RETURN(std::optional<Bytes> bytes, d_.dag->GetBlockBytes(h));
    if (!bytes.has_value()) return BlockNotFound(*d_.dag, h);
    read += bytes->size();
    if (read > budget) {
      return absl::InvalidArgumentError(absl::StrCat(
          std::string(what), " hold more than api-server.max-blocks-bytes (",
          budget, " bytes); ask for fewer"));
    }
    absl::StatusOr<Block> b = casper::block::DecodeBlock(*bytes);
    if (!b.ok()) {
      return absl::DataLossError(absl::StrCat(
          "stored block ", HexEncode(h),
          " does not decode: ", std::string(b.status().message())));
    }
    out.push_back(*std::move(b));
  }
  return out;
}

absl::StatusOr<std::vector<Block>> ChainQueries::MainChain(int64_t depth) {
  casper::dag::DagStore& dag = *d_.dag;
  depth = std::clamp<int64_t>(depth, 1, d_.config->max_blocks_limit);
  std::optional<Hash32> lfb = dag.LastFinalized();
  if (!lfb.has_value()) return std::vector<Block>{};
  ASSIGN_OR_RETURN(const auto lfb_meta, dag.Meta(*lfb));
  const casper::consensus::Weights weights =
      casper::consensus::WeightsOf(lfb_meta->bonds);
  ASSIGN_OR_RETURN(
      casper::consensus::ForkChoice choice,
      casper::consensus::ChooseParents(dag, dag.LatestMessages(), weights));
  const Hash32 tip = choice.parents.front();
  ASSIGN_OR_RETURN(const auto tip_meta, dag.Meta(tip));
  const int64_t floor = tip_meta->block_number - depth + 1;
  ASSIGN_OR_RETURN(const std::vector<Hash32> chain,
                   casper::consensus::MainChain(dag, tip, floor));
  const size_t n = std::min(chain.size(), static_cast<size_t>(depth));
  return ReadBlocks(std::span<const Hash32>(chain.data(), n),
                    absl::StrCat("the main chain's last ", n, " blocks"));
}

absl::StatusOr<Block> ChainQueries::LastFinalizedBlock() {
  std::optional<Hash32> lfb = d_.dag->LastFinalized();
  if (!lfb.has_value()) return absl::UnavailableError("no finalized block");
  return GetBlock(*lfb);
}

absl::StatusOr<DeployStatus> ChainQueries::FindDeploy(ByteView sig) {
  casper::dag::DagStore& dag = *d_.dag;
  DeployStatus s;
  ASSIGN_OR_RETURN(const std::vector<Hash32> rejecting,
                   dag.BlocksRejectingDeploy(sig));
  s.rejection_count = static_cast<uint32_t>(rejecting.size());
  // The valid blocks holding it, the newest first.
  ASSIGN_OR_RETURN(const std::vector<Hash32> in, dag.BlocksWithDeploy(sig));
  std::vector<std::pair<int64_t, Hash32>> copies;
  for (const Hash32& h : in) {
    ASSIGN_OR_RETURN(const auto meta, dag.Meta(h));
    if (!meta->invalid) copies.emplace_back(meta->block_number, h);
  }
  std::sort(copies.begin(), copies.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  if (!copies.empty()) s.block = copies.front().second;
  // What the deploy says of its window: from a block holding it, or the
  // pool.
  std::optional<casper::DeployData> data;
  const std::optional<Hash32> lfb = dag.LastFinalized();
  if (lfb.has_value() && !copies.empty()) {
    // Its effect in the finalized state decides: FINALIZED, or FAILED for
    // a copy that ran with an error (its charge is kept).
    ASSIGN_OR_RETURN(const std::optional<Hash32> kept,
                     casper::prestate::CopyInPostState(dag, *lfb, sig, 0));
    const Hash32& from = kept.has_value() ? *kept : copies.front().second;
    ASSIGN_OR_RETURN(const Block b, GetBlock(from));
    for (const casper::block::ProcessedDeploy& d : b.body.deploys) {
      if (!std::equal(d.sig.begin(), d.sig.end(), sig.begin(), sig.end())) {
        continue;
      }
      if (kept.has_value()) {
        s.state = d.errored ? DeployStatus::State::kFailed
                            : DeployStatus::State::kFinalized;
        s.block = from;
        return s;
      }
      data = d.data;
    }
  }
  if (!data.has_value()) {
    if (std::optional<casper::SignedDeploy> waiting = d_.pool->Get(sig)) {
      data = waiting->data();
    }
  }
  if (data.has_value()) {
    if (lfb.has_value()) {
      ASSIGN_OR_RETURN(const auto lfb_meta, dag.Meta(*lfb));
      // No block above the last finalized one may hold it any more.
      const casper::DeployWindow w = casper::WindowAt(
          *data, lfb_meta->block_number + 1, lfb_meta->timestamp);
      if (w == casper::DeployWindow::kExpired ||
          w == casper::DeployWindow::kTimeExpired) {
        s.state = DeployStatus::State::kExpired;
      }
    }
    return s;  // pending: waiting, in blocks not final, or rejected
  }
  ASSIGN_OR_RETURN(const std::optional<DeployLeft> left, d_.left->Get(sig));
  if (left.has_value()) {
    s.state = *left == DeployLeft::kLeftOut ? DeployStatus::State::kFailed
                                            : DeployStatus::State::kExpired;
    return s;
  }
  return absl::NotFoundError(absl::StrCat(
      "Couldn't find block containing deploy with id: ", HexEncode(sig)));
}

absl::StatusOr<std::vector<rholang::ir::ParPtr>> ChainQueries::DataAtName(
    const rholang::ir::ParPtr& channel, const Hash32& block,
    bool use_pre_state) {
  ASSIGN_OR_RETURN(const std::shared_ptr<const casper::dag::BlockMeta> meta,
                   MetaOf(*d_.dag, block));
  ASSIGN_OR_RETURN(rspace::TermPtr term, interp::MakeChannelTerm(channel));
  const Hash32 root = use_pre_state ? meta->pre_state : meta->post_state;
  RETURN_IF_ERROR(StateHeld(d_.space->history(), root, *meta));
  ASSIGN_OR_RETURN(std::optional<Bytes> blob,
                   d_.space->history().ReadLeaf(root, term->hash()));
  std::vector<rholang::ir::ParPtr> out;
  if (!blob.has_value()) return out;
  ASSIGN_OR_RETURN(
      rspace::ChannelState state,
      rspace::DecodeChannelState(*blob, interp::StoredTermFactory()));
  RETURN_IF_ERROR(AppendValues(state.data, &out));
  return out;
}

absl::StatusOr<Exploration> ChainQueries::Explore(std::string term,
                                                  std::optional<Hash32> block,
                                                  bool use_pre_state) {
  if (d_.identity->is_validator() && !d_.config->dev_mode) {
    return absl::FailedPreconditionError(
        "Exploratory deploy can only be executed on read-only RNode (or a "
        "validator in dev mode).");
  }
  if (term.size() > limits::kMaxDeployTermBytes) {
    return absl::InvalidArgumentError("the term is too large");
  }
  Hash32 at{};
  if (block.has_value()) {
    at = *block;
  } else {
    std::optional<Hash32> lfb = d_.dag->LastFinalized();
    if (!lfb.has_value()) return absl::UnavailableError("no finalized block");
    at = *lfb;
  }
  ASSIGN_OR_RETURN(const std::shared_ptr<const casper::dag::BlockMeta> meta,
                   MetaOf(*d_.dag, at));
  const Hash32 root = use_pre_state ? meta->pre_state : meta->post_state;
  RETURN_IF_ERROR(StateHeld(d_.space->history(), root, *meta));
  return d_.scheduler->Call<Exploration>(
      [this, term = std::move(term), root, meta] {
        return ExploreOn(term, root, meta);
      });
}

absl::StatusOr<Exploration> ChainQueries::ExploreOn(
    const std::string& term, const Hash32& root,
    const std::shared_ptr<const casper::dag::BlockMeta>& meta) {
  rspace::Space& space = *d_.space;
  RETURN_IF_ERROR(space.Reset(root));
  interp::DeployInfo info;
  info.timestamp = UnixMs();
  const crypto::Secp256k1PublicKey& self = d_.identity->public_key;
  info.deployer_public_key.assign(self.begin(), self.end());
  const Hash32 id = crypto::Blake2b256(AsBytes(absl::StrCat(
      "rnode/explore/", ++explore_counter_, "/", info.timestamp, "/", term)));
  info.deploy_id.assign(id.begin(), id.end());
  interp::BlockInfo block_info;
  block_info.block_number = meta->block_number;
  block_info.timestamp = meta->timestamp;
  block_info.sender_public_key.assign(meta->sender.begin(), meta->sender.end());
  rspace::EventLog log;
  interp::EvalResult r = d_.runtime->EvaluateSource(
      term, info, d_.config->exploratory_deploy_phlo_limit, &log, &block_info);
  if (r.static_error) {
    (void)space.Reset(root);
    return absl::InvalidArgumentError(r.error.message());
  }
  Exploration e;
  e.cost = r.cost;
  e.block = meta->hash;
  // The term's first `new` name: the deploy's first random name.
  crypto::SplittableRng rng = crypto::SplittableRng::FromSeed(info.deploy_id);
  const Hash32 name_id = rng.Next();
  rholang::ir::ParPtr name =
      rholang::ir::ParBuilder()
          .Add(rholang::ir::Unforgeable::Make(
              rholang::ir::UnforgeableKind::kPrivate, name_id))
          .Build();
  absl::Status read = ReadData(space, name, &e.data);
  // The exploration's changes are dropped with the overlay.
  RETURN_IF_ERROR(space.Reset(root));
  RETURN_IF_ERROR(read);
  return e;
}

absl::StatusOr<bool> ChainQueries::IsBonded(ByteView public_key) const {
  ASSIGN_OR_RETURN(crypto::Secp256k1PublicKey key,
                   crypto::ParseSecp256k1PublicKey(public_key));
  return BondedAtLastFinalized(*d_.dag, key);
}

}  // namespace rnode::node

#include "node/core/consensus_driver.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "casper/deploy.h"
#include "casper/prestate/ancestry.h"
#include "node/core/clock.h"
#include "rspace/storage/kv_store.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace rnode::node {
namespace {

// The deploy `sig` as a block of validator `me` holds it (verified again);
// nullopt when none of its copies is in a block of `me`.
absl::StatusOr<std::optional<casper::SignedDeploy>> OwnCopy(
    casper::dag::DagStore& dag, const crypto::Secp256k1PublicKey& me,
    ByteView sig) {
  ASSIGN_OR_RETURN(const std::optional<casper::block::ProcessedDeploy> d,
                   casper::prestate::StoredCopy(dag, sig, &me));
  if (!d.has_value()) return std::optional<casper::SignedDeploy>();
  absl::StatusOr<casper::SignedDeploy> s = casper::SignedDeploy::Verify(
      d->data, d->deployer, d->sig, casper::SigAlgorithmName(d->sig_algorithm));
  if (!s.ok()) return std::optional<casper::SignedDeploy>();
  return std::optional<casper::SignedDeploy>(*std::move(s));
}

// Empty blocks a validator makes in a row for finality that does not move
// before it leaves the rest to the heartbeat.
constexpr int kMaxEmptyStreak = 6;

}  // namespace

ConsensusDriver::ConsensusDriver(const DriverDeps& deps,
                                 std::span<const Hash32> unfinalized)
    : d_(deps),
      unfinalized_work_(unfinalized.begin(), unfinalized.end()),
      last_lfb_(deps.dag->LastFinalized()) {}

void ConsensusDriver::OnPeerBlock(const casper::block::Block& block) {
  absl::StatusOr<casper::engine::Received> r =
      d_.engine->OnBlock(block, UnixMs());
  NoteBuffer();
  if (!r.ok()) {
    // Not taken is not invalid: it is fetched again (regression: a block
    // dropped while the disk was full was never asked for again, as the
    // buffered blocks waiting for it counted it as on its way; the node
    // stayed behind for good).
    d_.network->NotTaken(block.hash);
    if (absl::IsResourceExhausted(r.status())) {
      d_.metrics->BlocksNotBuffered("full");
    }
    if (rspace::IsNoSpace(r.status())) {
      d_.disk->Full(r.status());
    } else {
      peer_log_.Warn("block {} from a peer not taken: {}",
                     HexEncode(block.hash), LogText(r.status().ToString()));
    }
    return;
  }
  d_.network->Delivered(block.hash);
  using Kind = casper::engine::Received::Kind;
  if (r->kind == Kind::kRefused) {
    d_.metrics->BlocksNotBuffered("unbonded");
    peer_log_.Warn("block {} by {} not kept: {}", HexEncode(block.hash),
                   HexEncode(block.sender), r->verdict.detail);
    return;
  }
  if (r->kind == Kind::kStale) {
    // Late, built on blocks this node no longer keeps: not fetched again.
    d_.metrics->BlocksNotBuffered("stale");
    peer_log_.Warn("block {} by {} not validated: {}", HexEncode(block.hash),
                   HexEncode(block.sender), r->verdict.detail);
    return;
  }
  if (r->kind == Kind::kAhead) {
    // A tip far above this node: it catches up by height (ChainSync), so
    // a peer's announcements need no word each.
    d_.metrics->BlocksNotBuffered("ahead");
    return;
  }
  if (r->kind == Kind::kAdded) d_.disk->Ok();
  if (r->kind == Kind::kInvalid) {
    peer_log_.Warn("block {} by {} is invalid: {}", HexEncode(block.hash),
                   HexEncode(block.sender), LogText(r->verdict.detail));
    // Its sender is slashed in this validator's next block, made now: with
    // no deploys coming there would be no next block (found by chaos
    // bad-peer under TSan: an equivocation that came after the stream's
    // last deploy was never slashed).
    d_.scheduler->WantSlash();
    return;
  }
  if (r->kind == Kind::kAdded && empty_streak_ < kMaxEmptyStreak &&
      NeedsOwnBlock()) {
    d_.scheduler->WantFinality();
  }
}

void ConsensusDriver::NoteBuffer() {
  d_.catch_up->set_engine_buffered(d_.engine->buffered());
  const uint64_t expired = d_.engine->counters().expired;
  d_.metrics->BlocksNotBuffered("expired", expired - expired_seen_);
  expired_seen_ = expired;
}

bool ConsensusDriver::NeedsOwnBlock() const {
  if (!d_.identity->is_validator() || !d_.config->autopropose ||
      !HasUnfinalizedWork()) {
    return false;
  }
  if (!SelfBonded(*d_.dag, *d_.identity)) return false;
  return !casper::dag::LatestJustifiesOthers(*d_.dag, d_.identity->public_key);
}

void ConsensusDriver::Housekeeping() {
  const auto now = Clock::now();
  // A long gap since the last look: the process was paused (SIGSTOP, a
  // suspended machine). Its peers moved on; ask them for their tips.
  if (d_.network != nullptr && now - last_housekeeping_ > kPauseNoticed) {
    Log("p2p")->info("paused for {} ms; asking peers for their tips",
                     std::chrono::duration_cast<std::chrono::milliseconds>(
                         now - last_housekeeping_)
                         .count());
    d_.network->AskTips();
  }
  last_housekeeping_ = now;
  // Blocks whose dependencies nobody served in the time to live.
  d_.engine->ExpireBuffered(UnixMs());
  NoteBuffer();
  Heartbeat(now);
  // Gossiped deploys whose validator did not include them in time.
  d_.admission->TakeOverDue(now);
}

void ConsensusDriver::Heartbeat(Clock::time_point now) {
  const std::optional<Hash32> lfb = d_.dag->LastFinalized();
  if (lfb != last_lfb_) {
    last_lfb_ = lfb;
    lfb_moved_ = now;
  }
  const NodeConfig& c = *d_.config;
  if (c.heartbeat_enabled && d_.identity->is_validator() && c.autopropose &&
      HasUnfinalizedWork() &&
      now - lfb_moved_ >=
          std::chrono::milliseconds(c.heartbeat_check_interval_ms)) {
    lfb_moved_ = now;  // once per interval
    d_.scheduler->WantFinality();
  }
}

absl::StatusOr<Hash32> ConsensusDriver::ProposeScheduled(bool empty) {
  // A proposal for finality asked for earlier (a peer's block, the
  // heartbeat) is due a batch window later, and may find nothing left to
  // finalize: the blocks that wanted it were finalized meanwhile, or, on a
  // node catching up, it was asked for while a block was momentarily the
  // top and ran once the node had caught up. An empty block then only
  // moves this node's finality past its peers' (found by js_catch_up under
  // ASan: the restarted validator made a block 48 ms after catching up on
  // an idle shard).
  if (empty && !HasUnfinalizedWork()) {
    return absl::FailedPreconditionError("nothing waits for finality");
  }
  absl::StatusOr<Hash32> made = ProposeNow(empty);
  if (made.ok() && empty) {
    absl::StatusOr<std::shared_ptr<const casper::dag::BlockMeta>> meta =
        d_.dag->Meta(*made);
    empty_streak_ =
        meta.ok() && (*meta)->deploy_count == 0 ? empty_streak_ + 1 : 0;
  }
  return made;
}

absl::Status ConsensusDriver::CheckCanPropose() {
  if (!d_.identity->is_validator()) {
    return absl::FailedPreconditionError("Propose error: read-only node.");
  }
  if (!SelfBonded(*d_.dag, *d_.identity)) {
    return absl::FailedPreconditionError(
        "Propose error: this validator is not bonded.");
  }
  // The same backlog test as deploy admission: with blocks streaming in
  // at tens a second, "nothing asked for" is rarely true even of a node
  // that is up to date, and its deploys would wait out their window.
  if (!caught_up_ && d_.network != nullptr) {
    if ((has_bootstrap_ && transport_->Connected().empty()) ||
        d_.catch_up->CatchingUp()) {
      return absl::UnavailableError(
          "Propose error: this node is still catching up with its peers.");
    }
  }
  caught_up_ = true;
  if (!SynchronyAllows()) {
    return absl::UnavailableError(
        "Propose error: the synchrony constraint waits for blocks of other "
        "validators.");
  }
  return absl::OkStatus();
}

void ConsensusDriver::PruneExpired(int64_t now_ms) {
  absl::StatusOr<std::vector<Bytes>> pruned =
      d_.pool->PruneExpired(d_.dag->MaxHeight(), now_ms);
  if (!pruned.ok() || pruned->empty()) return;
  d_.metrics->DeploysExpired(pruned->size());
  if (absl::Status s = d_.left->Put(*pruned, DeployLeft::kExpired, now_ms);
      !s.ok()) {
    Log("casper")->warn("recording {} expired deploys: {}", pruned->size(),
                        s.ToString());
  }
  Log("casper")->info(
      "{} deploys expired unincluded (their validity window closed)",
      pruned->size());
}

void ConsensusDriver::NoteLeftOut() {
  if (d_.creator == nullptr) return;
  using Why = casper::proposer::BlockCreator::LeftOut::Why;
  const auto left_out = d_.creator->TakeLeftOut();
  std::vector<Bytes> sigs;
  for (const auto& l : left_out) {
    d_.metrics->DeployLeftOut(l.why == Why::kUnpaid ? "unpaid" : "too_large");
    sigs.push_back(l.sig);
  }
  if (absl::Status s = d_.left->Put(sigs, DeployLeft::kLeftOut, UnixMs());
      !s.ok()) {
    Log("casper")->warn("recording {} deploys left out: {}", sigs.size(),
                        s.ToString());
  }
  if (!left_out.empty()) {
    Log("casper")->info(
        "{} deploys left out of the block and dropped from the pool: their "
        "deployer could not pay phloLimit x phloPrice, or a block holding "
        "one alone is over casper.max-block-bytes",
        left_out.size());
  }
}

absl::StatusOr<Hash32> ConsensusDriver::ProposeNow(bool allow_empty) {
  RETURN_IF_ERROR(CheckCanPropose());
  const int64_t now = UnixMs();
  PruneExpired(now);
  const auto t0 = Clock::now();
  absl::StatusOr<std::optional<Hash32>> made =
      d_.engine->Propose(now, allow_empty);
  NoteLeftOut();
  const double seconds =
      std::chrono::duration<double>(Clock::now() - t0).count();
  if (!made.ok()) {
    d_.metrics->Proposed("error", seconds);
    if (made.status().code() == absl::StatusCode::kFailedPrecondition) {
      // The block creator's "not bonded in the state of ...": expected of
      // a validator that was just slashed; said once, not per attempt.
      if (!said_no_stake_) {
        said_no_stake_ = true;
        Log("casper")->warn("this validator proposes no blocks: {}",
                            std::string(made.status().message()));
      }
    } else if (rspace::IsNoSpace(made.status())) {
      d_.disk->Full(made.status());
    } else {
      Log("casper")->error("propose failed: {}", made.status().ToString());
    }
    return made.status();
  }
  said_no_stake_ = false;
  if (!made->has_value()) {
    d_.metrics->Proposed("empty", seconds);
    return absl::FailedPreconditionError("No new deploys to propose.");
  }
  d_.metrics->Proposed("created", seconds);
  d_.disk->Ok();
  Log("casper")->info("Success! Block {} created and added.",
                      HexEncode(**made));
  return **made;
}

bool ConsensusDriver::SynchronyAllows() const {
  const double threshold = d_.config->synchrony_constraint_threshold;
  if (threshold <= 0) return true;
  const crypto::Secp256k1PublicKey& self = d_.identity->public_key;
  const std::map<crypto::Secp256k1PublicKey, Hash32> latest =
      d_.dag->LatestMessages();
  auto mine = latest.find(self);
  const std::optional<Hash32> lfb = d_.dag->LastFinalized();
  if (mine == latest.end() || !lfb.has_value()) return true;  // first block
  absl::StatusOr<std::shared_ptr<const casper::dag::BlockMeta>> my_read =
      d_.dag->Meta(mine->second);
  absl::StatusOr<std::shared_ptr<const casper::dag::BlockMeta>> lfb_read =
      d_.dag->Meta(*lfb);
  // Unreadable: the engine's own checks meet the same failure and say so.
  if (!my_read.ok() || !lfb_read.ok()) return true;
  const casper::dag::BlockMeta* my_meta = my_read->get();
  const casper::dag::BlockMeta* lfb_meta = lfb_read->get();
  double others = 0;
  double seen = 0;
  for (const casper::block::Bond& bond : lfb_meta->bonds) {
    if (bond.validator == self || bond.stake <= 0) continue;
    others += static_cast<double>(bond.stake);
    auto it = latest.find(bond.validator);
    if (it == latest.end()) continue;
    auto justified = std::find_if(my_meta->justifications.begin(),
                                  my_meta->justifications.end(),
                                  [&](const casper::block::Justification& j) {
                                    return j.validator == bond.validator;
                                  });
    if (justified == my_meta->justifications.end() ||
        justified->latest_block != it->second) {
      seen += static_cast<double>(bond.stake);
    }
  }
  return others == 0 || seen >= threshold * others;
}

void ConsensusDriver::NoteAdded(const casper::block::Block& block) {
  // Work to finalize: user deploys, and slashes (a slash that is never
  // final leaves the equivocator its stake).
  if (!block.body.deploys.empty() || casper::block::CarriesSlash(block)) {
    unfinalized_work_.insert(block.hash);
  }
  for (const auto& d : block.body.deploys) d_.admission->Forget(d.sig);
  // Deploys of this pool the block's merge rejected go in a block again:
  // a proposal is due (after the batch window), not at the next retry.
  size_t again = 0;
  for (const auto& r : block.body.rejected) {
    if (d_.pool->Contains(r.sig)) ++again;
  }
  if (again > 0 && d_.scheduler != nullptr) d_.scheduler->DeploysArrived(again);
}

void ConsensusDriver::NoteFinalized(std::span<const Hash32> blocks) {
  for (const Hash32& h : blocks) unfinalized_work_.erase(h);
  empty_streak_ = 0;
  absl::StatusOr<size_t> back = RecoverRejected(blocks);
  if (!back.ok()) {
    Log("casper")->warn(
        "deploys rejected by finalized merges not recovered: {}",
        LogText(back.status().ToString()));
  } else if (*back > 0) {
    Log("casper")->info(
        "{} deploys a finalized merge rejected are proposed again", *back);
    if (d_.scheduler != nullptr) d_.scheduler->DeploysArrived(*back);
  }
}

absl::Status ConsensusDriver::ResumeAwaited() {
  if (!d_.identity->is_validator()) return absl::OkStatus();
  const std::optional<Hash32> lfb = d_.dag->LastFinalized();
  if (!lfb.has_value()) return absl::OkStatus();
  ASSIGN_OR_RETURN(const auto lfb_meta, d_.dag->Meta(*lfb));
  std::vector<Hash32> finalized;
  for (int64_t n = std::max<int64_t>(
           0, lfb_meta->block_number - casper::kDeployLifespanBlocks);
       n <= lfb_meta->block_number; ++n) {
    for (const Hash32& h : d_.dag->AtHeight(n)) {
      if (d_.dag->IsFinalized(h)) finalized.push_back(h);
    }
  }
  ASSIGN_OR_RETURN(const std::vector<Bytes> awaited,
                   awaited_.NoteFinalized(*d_.dag, *lfb, finalized,
                                          d_.dag->MaxHeight() + 1, UnixMs()));
  if (!awaited.empty()) {
    Log("casper")->info(
        "{} deploys finalized merges rejected are awaited again (the "
        "finalized state does not hold them)",
        awaited.size());
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> ConsensusDriver::RecoverRejected(
    std::span<const Hash32> blocks) {
  if (!d_.identity->is_validator()) return 0;
  const std::optional<Hash32> lfb = d_.dag->LastFinalized();
  if (!lfb.has_value()) return 0;
  const int64_t next = d_.dag->MaxHeight() + 1;
  const int64_t now = UnixMs();
  // Awaited deploys the new finalized state holds. The engine took out of
  // the pool those whose held copy it just finalized; one still pooled is
  // held through a copy finalized earlier, and leaves the pool here.
  ASSIGN_OR_RETURN(std::vector<Bytes> settled,
                   awaited_.Settle(*d_.dag, *lfb, next, now));
  std::erase_if(settled,
                [&](const Bytes& sig) { return !d_.pool->Contains(sig); });
  if (!settled.empty()) {
    RETURN_IF_ERROR(d_.pool->Remove(settled));
    Log("casper")->info(
        "{} deploys a finalized merge had rejected are final through a copy "
        "finalized earlier; they leave the pool",
        settled.size());
  }
  ASSIGN_OR_RETURN(const std::vector<Bytes> rejected,
                   awaited_.NoteFinalized(*d_.dag, *lfb, blocks, next, now));
  size_t back = 0;
  for (const Bytes& sig : rejected) {
    if (d_.pool->Contains(sig)) continue;
    ASSIGN_OR_RETURN(std::optional<casper::SignedDeploy> mine,
                     OwnCopy(*d_.dag, d_.identity->public_key, sig));
    if (!mine.has_value()) continue;
    // Refused when its window has closed (or the pool is full): then it
    // reads EXPIRED, as the chain says.
    if (d_.pool->Add(*mine, d_.dag->MaxHeight(), now).ok()) ++back;
  }
  return back;
}

}  // namespace rnode::node

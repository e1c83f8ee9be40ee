// The per-validator Casper engine.
#include "casper/engine/engine.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace rnode::casper::engine {

using validation::Verdict;

absl::StatusOr<Received> Engine::Admit(const block::Block& block,
                                       int64_t now_ms) {
  Received r;
  const auto start = std::chrono::steady_clock::now();
  r.verdict = validator_->Validate(block, now_ms);
  if (options_.listener != nullptr) {
    options_.listener->OnBlockValidated(
        block, r.verdict,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }
  switch (r.verdict.kind) {
    case Verdict::Kind::kInternal:
      return r.verdict.error;
    case Verdict::Kind::kMissingDependency: {
      if (!buffer_.contains(block.hash) &&
          buffer_.size() >= options_.max_buffered) {
        ++counters_.buffer_full;
        return absl::ResourceExhaustedError(
            absl::StrCat("block buffer full (", buffer_.size(),
                         " blocks wait for dependencies)"));
      }
      // Ask for what no buffered block waits for already (and is not
      // itself buffered).
      for (const Hash32& h : r.verdict.missing) {
        if (!buffer_.contains(h) && !Awaited(h)) transport_->Request(h);
      }
      buffer_[block.hash] = Waiting{block, r.verdict.missing};
      ++counters_.buffered;
      r.kind = Received::Kind::kBuffered;
      return r;
    }
    case Verdict::Kind::kInvalid:
      ++counters_.invalid;
      if (validation::IsSlashable(r.verdict.reason)) {
        RETURN_IF_ERROR(dag_->Insert(block, /*invalid=*/true).status());
      }
      r.kind = Received::Kind::kInvalid;
      return r;
    case Verdict::Kind::kValid:
      RETURN_IF_ERROR(dag_->Insert(block).status());
      if (pre_states_ != nullptr) {
        RETURN_IF_ERROR(pre_states_->Remember(block, r.verdict.outcomes));
      }
      ++counters_.added;
      if (options_.listener != nullptr) options_.listener->OnBlockAdded(block);
      r.kind = Received::Kind::kAdded;
      return r;
  }
  return r;
}

bool Engine::Awaited(const Hash32& hash) const {
  for (const auto& [h, w] : buffer_) {
    if (std::find(w.missing.begin(), w.missing.end(), hash) !=
        w.missing.end()) {
      return true;
    }
  }
  return false;
}

absl::Status Engine::DrainBuffer(int64_t now_ms) {
  // A waiting block is retried once everything its verdict named missing is
  // stored; validating it again may name more (then it waits for those).
  bool progress = true;
  while (progress) {
    progress = false;
    for (auto it = buffer_.begin(); it != buffer_.end(); ++it) {
      const std::vector<Hash32>& missing = it->second.missing;
      if (!std::all_of(missing.begin(), missing.end(),
                       [&](const Hash32& h) { return dag_->Contains(h); })) {
        continue;
      }
      Waiting waiting = std::move(it->second);
      buffer_.erase(it);
      // Added, invalid or buffered again (waiting for other blocks): all
      // settled here. An error (the store failed) puts it back for the next
      // drain: dropped, it would be lost to the blocks that wait for it,
      // which do not ask for it again.
      absl::Status s = Admit(waiting.block, now_ms).status();
      if (!s.ok()) {
        buffer_.try_emplace(waiting.block.hash, std::move(waiting));
        return s;
      }
      progress = true;
      break;  // The map changed under Admit; start over.
    }
  }
  return absl::OkStatus();
}

absl::Status Engine::Finalize() {
  ASSIGN_OR_RETURN(std::optional<Hash32> lfb,
                   consensus::FindNewLastFinalized(
                       *dag_, dag_->LatestMessages(), options_.finalizer));
  if (!lfb.has_value() || dag_->LastFinalized() == lfb) return absl::OkStatus();
  // The blocks this finalizes: the new one and its ancestors not yet
  // final, in block-number order.
  ASSIGN_OR_RETURN(std::vector<Hash32> newly, dag_->FinalizedBy(*lfb));
  std::vector<Bytes> done;
  for (const Hash32& h : newly) {
    ASSIGN_OR_RETURN(std::optional<block::Block> b, dag_->GetBlock(h));
    if (!b.has_value()) continue;
    for (const auto& d : b->body.deploys) done.push_back(d.sig);
  }
  // The pool first: should either write fail (a full disk), the next call
  // finds the same blocks newly final and does both again, where a moved
  // last finalized block would leave their deploys in the pool and their
  // finalization unannounced.
  RETURN_IF_ERROR(pool_->Remove(done));
  RETURN_IF_ERROR(dag_->SetLastFinalized(*lfb));
  counters_.finalized += newly.size();
  if (options_.listener != nullptr) {
    options_.listener->OnFinalized(*lfb, newly, done);
  }
  return absl::OkStatus();
}

absl::Status Engine::Settle(int64_t now_ms) {
  unsettled_ = true;
  RETURN_IF_ERROR(DrainBuffer(now_ms));
  RETURN_IF_ERROR(Finalize());
  unsettled_ = false;
  return absl::OkStatus();
}

absl::StatusOr<Received> Engine::OnBlock(const block::Block& block,
                                         int64_t now_ms) {
  // A store failure left buffered blocks undrained (regression: a block
  // whose write failed as it left the buffer was dropped, and the blocks
  // waiting for it, which counted it as on its way, waited for good).
  if (unsettled_) RETURN_IF_ERROR(Settle(now_ms));
  if (dag_->Contains(block.hash) || buffer_.contains(block.hash)) {
    Received r;
    r.kind = Received::Kind::kKnown;
    return r;
  }
  ASSIGN_OR_RETURN(Received r, Admit(block, now_ms));
  // A block stored as invalid (a slashable offence) is what the blocks that
  // slash it wait for, as much as a parent is: both release the buffer.
  // (Found by rnode-badpeer: an equivocation shown to one validator only
  // left every block slashing it buffered on the others for good.)
  const bool stored =
      r.kind == Received::Kind::kAdded ||
      (r.kind == Received::Kind::kInvalid && dag_->Contains(block.hash));
  if (stored) RETURN_IF_ERROR(Settle(now_ms));
  return r;
}

absl::StatusOr<std::optional<Hash32>> Engine::Propose(int64_t now_ms,
                                                      bool allow_empty) {
  if (unsettled_) RETURN_IF_ERROR(Settle(now_ms));
  ASSIGN_OR_RETURN(std::optional<block::Block> created,
                   creator_->Create(key_, now_ms, allow_empty));
  if (!created.has_value()) return std::optional<Hash32>();
  const block::Block& b = *created;
  if (options_.listener != nullptr) options_.listener->OnBlockCreated(b);
  ASSIGN_OR_RETURN(Received r, Admit(b, now_ms));
  if (r.kind != Received::Kind::kAdded) {
    return absl::InternalError(
        "this node's own block did not validate: " +
        std::string(validation::InvalidReasonName(r.verdict.reason)) + ": " +
        r.verdict.detail);
  }
  transport_->Broadcast(b);
  RETURN_IF_ERROR(Finalize());
  return std::optional<Hash32>(b.hash);
}

}  // namespace rnode::casper::engine

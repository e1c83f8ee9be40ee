// The per-validator Casper engine.
#include "casper/engine/engine.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "casper/block/block_codec.h"
#include "casper/prestate/ancestry.h"
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
    case Verdict::Kind::kStale: {
      ++counters_.stale;
      // What waits for it can never be checked either.
      std::vector<Hash32> dependents;
      auto [lo, hi] = waiters_.equal_range(block.hash);
      for (auto w = lo; w != hi; ++w) dependents.push_back(w->second);
      for (const Hash32& h : dependents) DropBuffered(h);
      r.kind = Received::Kind::kStale;
      return r;
    }
    case Verdict::Kind::kMissingDependency: {
      const int64_t highest = dag_->MaxHeight();
      if (!waiters_.contains(block.hash) &&
          block.number() > highest + options_.max_ahead) {
        ++counters_.ahead;
        r.kind = Received::Kind::kAhead;
        r.verdict.detail =
            absl::StrCat("its dependencies are missing and its number ",
                         block.number(), " is more than ", options_.max_ahead,
                         " above this node's highest block (", highest,
                         "); it catches up by height first");
        return r;
      }
      if (!waiters_.contains(block.hash) && !BondedSomewhere(block.sender)) {
        ++counters_.refused;
        r.kind = Received::Kind::kRefused;
        r.verdict.detail =
            "its dependencies are missing and its sender is bonded in no "
            "state this node knows";
        return r;
      }
      // Sized only once it may wait (a refused block costs no encoding).
      const size_t bytes = block::EncodedBlockSize(block);
      const auto held = sender_bytes_.find(block.sender);
      const size_t of_sender = held == sender_bytes_.end() ? 0 : held->second;
      if (buffer_.size() >= options_.max_buffered ||
          buffered_bytes_ + bytes > options_.max_buffered_bytes ||
          of_sender + bytes > options_.max_buffered_bytes_per_sender) {
        ++counters_.buffer_full;
        return absl::ResourceExhaustedError(absl::StrCat(
            "block buffer full: ", buffer_.size(), " blocks of ",
            buffered_bytes_, " bytes wait for dependencies, ", of_sender,
            " of them by this block's sender; this block is ", bytes,
            " bytes"));
      }
      // Ask for what no buffered block waits for already (then it was
      // asked for) and is not itself buffered.
      for (const Hash32& h : r.verdict.missing) {
        if (!buffer_.contains(h) && !waiters_.contains(h)) {
          transport_->Request(h);
        }
      }
      Buffer(Waiting{block, r.verdict.missing, now_ms, bytes});
      ++counters_.buffered;
      r.kind = Received::Kind::kBuffered;
      return r;
    }
    case Verdict::Kind::kInvalid:
      ++counters_.invalid;
      if (validation::IsSlashable(r.verdict.reason)) {
        RETURN_IF_ERROR(dag_->Insert(block, /*invalid=*/true).status());
        ready_.push_back(block.hash);
      }
      r.kind = Received::Kind::kInvalid;
      return r;
    case Verdict::Kind::kValid:
      RETURN_IF_ERROR(dag_->Insert(block).status());
      ready_.push_back(block.hash);
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

bool Engine::BondedSomewhere(const crypto::Secp256k1PublicKey& key) const {
  const auto bonded_at = [&](const Hash32& h) {
    absl::StatusOr<std::shared_ptr<const dag::BlockMeta>> m = dag_->Meta(h);
    return m.ok() && block::StakeOf((*m)->bonds, key) > 0;
  };
  if (std::optional<Hash32> lfb = dag_->LastFinalized()) {
    if (bonded_at(*lfb)) return true;
  } else {
    for (const Hash32& tip : dag_->Tips()) {
      if (bonded_at(tip)) return true;
    }
  }
  for (const auto& [validator, latest] : dag_->LatestMessages()) {
    if (bonded_at(latest)) return true;
  }
  return false;
}

void Engine::Buffer(Waiting waiting) {
  const Hash32 hash = waiting.block.hash;
  for (const Hash32& m : waiting.missing) waiters_.emplace(m, hash);
  by_age_.emplace(waiting.since_ms, hash);
  sender_bytes_[waiting.block.sender] += waiting.bytes;
  buffered_bytes_ += waiting.bytes;
  buffer_.insert_or_assign(hash, std::move(waiting));
}

Engine::Waiting Engine::Unbuffer(std::map<Hash32, Waiting>::iterator it) {
  Waiting waiting = std::move(it->second);
  buffer_.erase(it);
  const Hash32& hash = waiting.block.hash;
  for (const Hash32& m : waiting.missing) {
    auto [lo, hi] = waiters_.equal_range(m);
    for (auto w = lo; w != hi;) {
      w = w->second == hash ? waiters_.erase(w) : std::next(w);
    }
  }
  by_age_.erase({waiting.since_ms, hash});
  auto s = sender_bytes_.find(waiting.block.sender);
  s->second -= waiting.bytes;
  if (s->second == 0) sender_bytes_.erase(s);
  buffered_bytes_ -= waiting.bytes;
  return waiting;
}

void Engine::DropBuffered(const Hash32& hash) {
  std::vector<Hash32> stack{hash};
  std::set<Hash32> needed;   // what the dropped blocks waited for
  std::set<Hash32> dropped;  // received, so not asked for
  while (!stack.empty()) {
    const Hash32 h = stack.back();
    stack.pop_back();
    auto it = buffer_.find(h);
    if (it == buffer_.end()) continue;
    auto [lo, hi] = waiters_.equal_range(h);
    for (auto w = lo; w != hi; ++w) stack.push_back(w->second);
    Waiting gone = Unbuffer(it);
    needed.insert(gone.missing.begin(), gone.missing.end());
    dropped.insert(h);
    ++counters_.expired;
  }
  for (const Hash32& h : needed) {
    if (!dropped.contains(h) && !waiters_.contains(h) && !buffer_.contains(h) &&
        !dag_->Contains(h)) {
      transport_->Cancel(h);
    }
  }
}

void Engine::ExpireBuffered(int64_t now_ms) {
  while (!by_age_.empty() &&
         now_ms - by_age_.begin()->first >= options_.buffer_ttl_ms) {
    DropBuffered(by_age_.begin()->second);
  }
}

absl::Status Engine::DrainBuffer(int64_t now_ms) {
  // A waiting block is retried once everything its verdict named missing is
  // stored; validating it again may name more (then it waits for those).
  // Only the waiters of a block stored since are looked at (the index
  // finds them), so a drain costs what it frees, not the buffer's size.
  while (!ready_.empty()) {
    const Hash32 stored = ready_.back();
    std::vector<Hash32> candidates;
    auto [lo, hi] = waiters_.equal_range(stored);
    for (auto w = lo; w != hi; ++w) candidates.push_back(w->second);
    ready_.pop_back();
    for (const Hash32& c : candidates) {
      auto it = buffer_.find(c);
      if (it == buffer_.end()) continue;  // taken on an earlier turn
      const std::vector<Hash32>& missing = it->second.missing;
      if (!std::all_of(missing.begin(), missing.end(),
                       [&](const Hash32& h) { return dag_->Contains(h); })) {
        continue;
      }
      Waiting waiting = Unbuffer(it);
      // Added, invalid or buffered again (waiting for other blocks): all
      // settled here (a stored one is pushed to ready_). An error (the
      // store failed) puts it back, and its trigger, for the next drain:
      // dropped, it would be lost to the blocks that wait for it, which do
      // not ask for it again.
      absl::Status s = Admit(waiting.block, now_ms).status();
      if (!s.ok()) {
        Buffer(std::move(waiting));
        ready_.push_back(stored);
        return s;
      }
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
  // Their deploys whose copy in them is the one the new last finalized
  // block's state holds. A copy a merge rejected is not done: the deploy
  // stays in the pool, to be proposed again while its window is open.
  std::vector<Bytes> done;
  for (const Hash32& h : newly) {
    ASSIGN_OR_RETURN(std::optional<block::Block> b, dag_->GetBlock(h));
    if (!b.has_value()) continue;
    for (const auto& d : b->body.deploys) {
      ASSIGN_OR_RETURN(std::optional<Hash32> copy,
                       prestate::CopyInPostState(*dag_, *lfb, d.sig, 0));
      if (copy == h) done.push_back(d.sig);
    }
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
  ExpireBuffered(now_ms);
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
  RETURN_IF_ERROR(Settle(now_ms));
  return std::optional<Hash32>(b.hash);
}

}  // namespace rnode::casper::engine

// Step 2: the base prefetch, planned from the scope index and read in one
// batch (docs/merge.md §8).
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "casper/merge/internal/serial_executor.h"
#include "casper/merge/internal/steps.h"
#include "rspace/channel_codec.h"
#include "rspace/term.h"
#include "util/status_macros.h"

namespace rnode::casper::merge::internal {
namespace {

// Base-read records of a scope: one per block's base key and number
// channel.
size_t PlanRecords(const ScopeIndex& index) {
  size_t n = index.numbers.size();
  for (const BlockIndex* b : index.blocks) n += b->flat.base_keys.size();
  return n;
}

// How many entries the scope's flat arrays hold, per leaf map of a plan.
struct FlatCounts {
  size_t removed = 0, produce = 0, change = 0;
};

FlatCounts CountFlat(const ScopeIndex& index) {
  FlatCounts n;
  for (const BlockIndex* b : index.blocks) {
    n.removed += b->flat.removed.all().size();
    n.produce += b->flat.produced_on.all().size();
    n.change += b->flat.raw_changes.all().size();
  }
  return n;
}

// Term::Make: the terms of base states when the caller gives no factory.
rspace::TermFactory DefaultFactory() {
  return [](Bytes b) {
    return absl::StatusOr<rspace::TermPtr>(rspace::Term::Make(std::move(b)));
  };
}

// With the caller's factory, values are built and checked by it; without
// one, datum values take the hashes stored in the blobs (the merger only
// compares and re-encodes base data).
rspace::ValueHashes ValueHashesFor(bool custom_factory) {
  return custom_factory ? rspace::ValueHashes::kVerify
                        : rspace::ValueHashes::kTrust;
}

std::vector<Hash32> KeysOf(const BasePlan& plan) {
  std::vector<Hash32> keys;
  keys.reserve(plan.keys.size());
  for (const KeyRecord& k : plan.keys) keys.push_back(KeyOf(k));
  return keys;
}

// Reads the blobs of `keys` with one call of `read` and decodes them into
// out[0, keys.size()), holding `decode_mu` (when not null) around the
// decoding, that is around the calls of `make`. Errors: the reader's, a
// count mismatch, a decoding error.
absl::Status ReadLeavesInto(const LeafReader& read,
                            std::span<const Hash32> keys,
                            const rspace::TermFactory& make,
                            rspace::ValueHashes value_hashes, Mutex* decode_mu,
                            BaseLeaf* out) {
  ASSIGN_OR_RETURN(std::vector<std::optional<Bytes>> blobs, read(keys));
  if (blobs.size() != keys.size()) {
    return absl::InternalError("merge: base read returned " +
                               std::to_string(blobs.size()) + " leaves for " +
                               std::to_string(keys.size()) + " channels");
  }
  auto decode = [&]() -> absl::Status {
    for (size_t i = 0; i < keys.size(); ++i) {
      BaseLeaf& leaf = out[i];
      leaf.blob = std::move(blobs[i]);
      if (leaf.blob.has_value()) {
        ASSIGN_OR_RETURN(leaf.state, rspace::DecodeChannelState(
                                         *leaf.blob, make, value_hashes));
      }
    }
    return absl::OkStatus();
  };
  if (decode_mu != nullptr) {
    MutexLock lock(decode_mu);
    return decode();
  }
  return decode();
}

}  // namespace

BasePlan PlanBaseReads(const ScopeIndex& index, MergeScratch& scratch) {
  // Every block's base keys and the number channels get consecutive slots;
  // the sorted notes give each slot its leaf, and each flat entry finds its
  // leaf through its block's slot of its base key.
  BasePlan plan;
  std::vector<KeyRecord>& notes = scratch.plan;
  std::vector<uint32_t>& slot_leaf = scratch.slot_leaf;
  notes.clear();
  notes.reserve(PlanRecords(index));
  for (const BlockIndex* b : index.blocks) {
    const uint32_t first = static_cast<uint32_t>(notes.size());
    notes.insert(notes.end(), b->flat.base_keys.begin(),
                 b->flat.base_keys.end());
    for (size_t i = first; i < notes.size(); ++i)
      notes[i].item = static_cast<uint32_t>(i);
  }
  const uint32_t number_slots = static_cast<uint32_t>(notes.size());
  for (uint32_t i = 0; i < index.numbers.size(); ++i)
    notes.push_back(KeyRecord::Make(index.numbers[i], number_slots + i, 0));
  slot_leaf.resize(notes.size());
  SortKeyRecords(notes, scratch.sort);
  DistinctKeys(notes, plan.keys, [&](const KeyRecord& r, uint32_t leaf) {
    slot_leaf[r.item] = leaf;
  });
  const FlatCounts n = CountFlat(index);
  plan.removed_leaf.reserve(n.removed);
  plan.produce_leaf.reserve(n.produce);
  plan.change_leaf.reserve(n.change);
  uint32_t slot = 0;
  for (const BlockIndex* b : index.blocks) {
    const BlockFlat& f = b->flat;
    for (uint32_t k : f.removed_base)
      plan.removed_leaf.push_back(slot_leaf[slot + k]);
    for (uint32_t k : f.produce_base)
      plan.produce_leaf.push_back(slot_leaf[slot + k]);
    for (uint32_t k : f.change_base)
      plan.change_leaf.push_back(slot_leaf[slot + k]);
    slot += static_cast<uint32_t>(f.base_keys.size());
  }
  plan.number_leaf.assign(slot_leaf.begin() + number_slots, slot_leaf.end());
  return plan;
}

absl::Status CheckPlanFits(const BasePlan& plan, const ScopeIndex& index) {
  const FlatCounts n = CountFlat(index);
  if (plan.removed_leaf.size() != n.removed ||
      plan.produce_leaf.size() != n.produce ||
      plan.change_leaf.size() != n.change ||
      plan.number_leaf.size() != index.numbers.size()) {
    return absl::InternalError("merge: base snapshot of another scope");
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> BaseSnapshot::IndexOf(const Hash32& channel) const {
  const KeyRecord key = KeyRecord::Make(channel, 0, 0);
  auto it =
      std::lower_bound(plan.keys.begin(), plan.keys.end(), key, KeyWordsLess);
  if (it == plan.keys.end() || !SameKey(*it, key)) {
    return absl::InternalError("merge: base leaf " + HexEncode(channel) +
                               " not prefetched");
  }
  return it->item;
}

absl::StatusOr<const BaseLeaf*> BaseSnapshot::Find(
    const Hash32& channel) const {
  ASSIGN_OR_RETURN(uint32_t i, IndexOf(channel));
  return &leaves[i];
}

absl::StatusOr<std::unique_ptr<BaseSnapshot>> ReadBase(
    BasePlan plan, const LeafReader& read, const rspace::TermFactory& factory) {
  const auto t0 = std::chrono::steady_clock::now();
  auto snap = std::make_unique<BaseSnapshot>();
  const std::vector<Hash32> keys = KeysOf(plan);
  snap->leaves.resize(keys.size());
  RETURN_IF_ERROR(ReadLeavesInto(read, keys,
                                 factory ? factory : DefaultFactory(),
                                 ValueHashesFor(static_cast<bool>(factory)),
                                 nullptr, snap->leaves.data()));
  snap->plan = std::move(plan);
  snap->read_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
  return snap;
}

// A base read shared by the helper (which plans, then claims chunks from
// the front) and the caller (which claims chunks from the back in Wait).
// `snap`, `keys`, `read`, `make` and `value_hashes` are written by the
// planner before `planned` is set under `mu` and only read afterwards; the
// leaves of a chunk are written only by the thread that claimed it and
// handed over by `finished` under `mu`.
struct PendingBase::State {
  Mutex mu;
  CondVar cv;
  bool planned ABSL_GUARDED_BY(mu) = false;
  size_t front ABSL_GUARDED_BY(mu) = 0;  // Next chunk from the front.
  size_t back ABSL_GUARDED_BY(mu) = 0;   // One past the last unclaimed.
  size_t claimed ABSL_GUARDED_BY(mu) = 0;
  size_t finished ABSL_GUARDED_BY(mu) = 0;
  absl::Status status ABSL_GUARDED_BY(mu);
  // Set when the read ran in one batch (no sharing).
  std::optional<absl::StatusOr<std::unique_ptr<BaseSnapshot>>> whole
      ABSL_GUARDED_BY(mu);
  std::chrono::steady_clock::time_point start ABSL_GUARDED_BY(mu);
  size_t chunk = 1;  // Channels per chunk.

  std::unique_ptr<BaseSnapshot> snap;
  std::vector<Hash32> keys;
  LeafReader read;
  rspace::TermFactory make;     // The caller's factory, or Term::Make.
  bool custom_factory = false;  // Else value hashes come from the blobs.
  Mutex decode_mu;              // Held around calls of a custom factory.

  bool Complete() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return whole.has_value() ||
           (planned && front == back && finished == claimed);
  }
};

namespace {

using State = PendingBase::State;

// Reads and decodes chunk `c` of a planned shared read.
absl::Status ReadChunk(State& s, size_t c) {
  const size_t begin = c * s.chunk;
  const size_t end = std::min(s.keys.size(), begin + s.chunk);
  return ReadLeavesInto(
      s.read, std::span<const Hash32>(s.keys.data() + begin, end - begin),
      s.make, ValueHashesFor(s.custom_factory),
      s.custom_factory ? &s.decode_mu : nullptr, &s.snap->leaves[begin]);
}

// Claims and reads chunks (from the front or the back) until none is left
// or one failed.
void RunChunks(State& s, bool from_front) {
  while (true) {
    size_t c;
    {
      MutexLock lock(&s.mu);
      if (s.front == s.back) return;
      c = from_front ? s.front++ : --s.back;
      ++s.claimed;
    }
    absl::Status status = ReadChunk(s, c);
    MutexLock lock(&s.mu);
    if (!status.ok()) {
      if (s.status.ok()) s.status = std::move(status);
      s.back = s.front;  // Abandon the unclaimed chunks.
    }
    ++s.finished;
    if (s.Complete()) s.cv.SignalAll();
  }
}

}  // namespace

PendingBase::~PendingBase() {
  if (state_ == nullptr) return;
  MutexLock lock(&state_->mu);
  while (!state_->Complete()) state_->cv.Wait(&state_->mu);
}

absl::StatusOr<std::unique_ptr<BaseSnapshot>> PendingBase::Wait() {
  if (state_ == nullptr)
    return absl::InternalError("merge: base read not started or taken");
  std::shared_ptr<State> state = std::move(state_);
  State& s = *state;
  {
    MutexLock lock(&s.mu);
    if (s.whole.has_value()) return std::move(*s.whole);
    while (!s.planned) s.cv.Wait(&s.mu);
  }
  RunChunks(s, /*from_front=*/false);
  MutexLock lock(&s.mu);
  while (!s.Complete()) s.cv.Wait(&s.mu);
  if (!s.status.ok()) return s.status;
  s.snap->read_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now() - s.start)
                        .count();
  return std::move(s.snap);
}

PendingBase StartReadBase(MergeContext& context, const ScopeIndex& index,
                          LeafReader read, rspace::TermFactory factory) {
  PendingBase pending;
  auto state = std::make_shared<State>();
  pending.state_ = state;
  SerialExecutor* helper = context.helper();
  const auto posted = std::chrono::steady_clock::now();
  auto since_posted = [posted] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now() - posted)
        .count();
  };
  if (helper == nullptr ||
      PlanRecords(index) < context.options().background_min) {
    BasePlan plan = PlanBaseReads(index, context.scratch());
    const int64_t plan_ns = since_posted();
    auto r = ReadBase(std::move(plan), read, factory);
    if (r.ok()) (*r)->plan_ns = plan_ns;
    MutexLock lock(&state->mu);
    state->whole = std::move(r);
    return pending;
  }
  MergeScratch* scratch = &context.helper_scratch();
  state->chunk = context.options().base_read_chunk;
  helper->Post([state, &index, scratch, since_posted, read = std::move(read),
                factory = std::move(factory)] {
    State& s = *state;
    BasePlan plan = PlanBaseReads(index, *scratch);
    s.snap = std::make_unique<BaseSnapshot>();
    s.snap->plan_ns = since_posted();
    s.keys = KeysOf(plan);
    s.snap->leaves.resize(plan.keys.size());
    s.snap->plan = std::move(plan);
    s.read = read;
    s.custom_factory = static_cast<bool>(factory);
    s.make = factory ? factory : DefaultFactory();
    {
      MutexLock lock(&s.mu);
      s.start = std::chrono::steady_clock::now();
      s.planned = true;
      s.back = (s.keys.size() + s.chunk - 1) / s.chunk;
      s.cv.SignalAll();
    }
    RunChunks(s, /*from_front=*/true);
  });
  return pending;
}

}  // namespace rnode::casper::merge::internal

// Step 2: the base prefetch, planned from the scope index and read in one
// batch (docs/merge.md §8).
#include <chrono>
#include <utility>

#include "casper/merge/internal/serial_executor.h"
#include "casper/merge/internal/steps.h"
#include "rspace/internal/codec.h"
#include "rspace/term.h"
#include "util/status_macros.h"

namespace rnode::casper::merge::internal {
namespace {

// Tags of the plan's notes: which leaf map an entry fills.
enum : uint32_t { kRemoved = 0, kProduce = 1, kNumber = 2, kChange = 3, kJoin = 4 };

// Base-read records of a scope: what PlanBaseReads notes, join channels
// aside (a few per continuation change).
size_t PlanRecords(const ScopeIndex& index) {
  size_t n = index.numbers.size();
  for (const BlockIndex* b : index.blocks) {
    n += b->flat.removed.all().size() + b->flat.produced_on.all().size() +
         b->flat.raw_changes.all().size();
  }
  return n;
}

}  // namespace

BasePlan PlanBaseReads(const ScopeIndex& index, MergeScratch& scratch) {
  BasePlan plan;
  std::vector<KeyRecord>& notes = scratch.plan;
  notes.clear();
  notes.reserve(PlanRecords(index));
  uint32_t removed = 0, produce = 0, change = 0;
  for (const BlockIndex* b : index.blocks) {
    for (const auto& [item, net] : b->flat.removed.all())
      notes.push_back(KeyRecord::Make(item.channel, removed++, kRemoved));
    for (KeyRecord r : b->flat.produced_on.all()) {
      r.item = produce++;
      r.tag = kProduce;
      notes.push_back(r);
    }
    for (const RawChange& c : b->flat.raw_changes.all()) {
      KeyRecord r = c.key;
      r.item = change++;
      r.tag = kChange;
      notes.push_back(r);
      for (const auto* ks : {&c.added_k, &c.removed_k}) {
        for (const rspace::WaitingContinuation& k : *ks) {
          for (const Hash32& ch : k.group)
            notes.push_back(KeyRecord::Make(ch, 0, kJoin));
        }
      }
    }
  }
  for (uint32_t i = 0; i < index.numbers.size(); ++i)
    notes.push_back(KeyRecord::Make(index.numbers[i], i, kNumber));
  plan.removed_leaf.resize(removed);
  plan.produce_leaf.resize(produce);
  plan.change_leaf.resize(change);
  plan.number_leaf.resize(index.numbers.size());
  SortKeyRecords(notes, scratch.sort);
  for (size_t i = 0; i < notes.size();) {
    const uint32_t leaf = static_cast<uint32_t>(plan.keys.size());
    KeyRecord key = notes[i];
    key.item = leaf;
    key.tag = 0;
    plan.keys.push_back(key);
    size_t j = i;
    for (; j < notes.size() && SameKey(notes[j], notes[i]); ++j) {
      switch (notes[j].tag) {
        case kRemoved:
          plan.removed_leaf[notes[j].item] = leaf;
          break;
        case kProduce:
          plan.produce_leaf[notes[j].item] = leaf;
          break;
        case kNumber:
          plan.number_leaf[notes[j].item] = leaf;
          break;
        case kChange:
          plan.change_leaf[notes[j].item] = leaf;
          break;
        default:
          break;
      }
    }
    i = j;
  }
  return plan;
}

absl::Status CheckPlanFits(const BasePlan& plan, const ScopeIndex& index) {
  size_t removed = 0, produce = 0, change = 0;
  for (const BlockIndex* b : index.blocks) {
    removed += b->flat.removed.all().size();
    produce += b->flat.produced_on.all().size();
    change += b->flat.raw_changes.all().size();
  }
  if (plan.removed_leaf.size() != removed ||
      plan.produce_leaf.size() != produce ||
      plan.change_leaf.size() != change ||
      plan.number_leaf.size() != index.numbers.size()) {
    return absl::InternalError("merge: base snapshot of another scope");
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> BaseSnapshot::IndexOf(const Hash32& channel) const {
  const KeyRecord key = KeyRecord::Make(channel, 0, 0);
  auto it = std::lower_bound(plan.keys.begin(), plan.keys.end(), key,
                             KeyWordsLess);
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
  std::vector<Hash32> keys;
  keys.reserve(plan.keys.size());
  for (const KeyRecord& k : plan.keys) keys.push_back(KeyOf(k));
  ASSIGN_OR_RETURN(std::vector<std::optional<Bytes>> blobs, read(keys));
  if (blobs.size() != keys.size()) {
    return absl::InternalError("merge: base read returned " +
                               std::to_string(blobs.size()) + " leaves for " +
                               std::to_string(keys.size()) + " channels");
  }
  const rspace::internal::ValueHashes value_hashes =
      factory ? rspace::internal::ValueHashes::kVerify
              : rspace::internal::ValueHashes::kTrust;
  const rspace::TermFactory make =
      factory ? factory : rspace::TermFactory([](Bytes b) {
        return absl::StatusOr<rspace::TermPtr>(
            rspace::Term::Make(std::move(b)));
      });
  snap->leaves.resize(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    BaseLeaf& leaf = snap->leaves[i];
    leaf.blob = std::move(blobs[i]);
    if (leaf.blob.has_value()) {
      ASSIGN_OR_RETURN(leaf.state, rspace::internal::DecodeChannelState(
                                       *leaf.blob, make, value_hashes));
    }
  }
  snap->plan = std::move(plan);
  snap->read_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
  return snap;
}

PendingBase::~PendingBase() {
  if (state_ == nullptr) return;
  MutexLock lock(&state_->mu);
  while (!state_->done) state_->cv.Wait(&state_->mu);
}

absl::StatusOr<std::unique_ptr<BaseSnapshot>> PendingBase::Wait() {
  if (state_ == nullptr)
    return absl::InternalError("merge: base read not started or taken");
  std::shared_ptr<State> state = std::move(state_);
  MutexLock lock(&state->mu);
  while (!state->done) state->cv.Wait(&state->mu);
  return std::move(state->result);
}

PendingBase StartReadBase(MergeContext& context, const ScopeIndex& index,
                          LeafReader read, rspace::TermFactory factory) {
  PendingBase pending;
  auto state = std::make_shared<PendingBase::State>();
  pending.state_ = state;
  SerialExecutor* helper = context.helper();
  if (helper == nullptr ||
      PlanRecords(index) < context.options().background_min) {
    auto r = ReadBase(PlanBaseReads(index, context.scratch()), read, factory);
    MutexLock lock(&state->mu);
    state->result = std::move(r);
    state->done = true;
    return pending;
  }
  MergeScratch* scratch = &context.helper_scratch();
  helper->Post([state, &index, scratch, read = std::move(read),
                factory = std::move(factory)] {
    auto r = ReadBase(PlanBaseReads(index, *scratch), read, factory);
    MutexLock lock(&state->mu);
    state->result = std::move(r);
    state->done = true;
    state->cv.SignalAll();
  });
  return pending;
}

}  // namespace rnode::casper::merge::internal

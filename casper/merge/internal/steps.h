// The steps of a merge (docs/merge.md §11) as free functions over explicit
// structs: scope index, base prefetch, branches, conflicts, base checks,
// rejection, combine, trie actions, apply. Merge() in merger.cc calls them in
// that order. Every pointer a struct holds is borrowed from the scope (its
// BlockIndex objects, which the caller keeps alive), from the BaseSnapshot,
// or from a struct named in its comment.
#ifndef RNODE_CASPER_MERGE_INTERNAL_STEPS_H_
#define RNODE_CASPER_MERGE_INTERNAL_STEPS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "casper/merge/block_index.h"
#include "casper/merge/internal/key_sort.h"
#include "casper/merge/internal/rejection.h"
#include "casper/merge/merge_context.h"
#include "casper/merge/merger.h"
#include "casper/merge/number_channel.h"
#include "rspace/history/history.h"
#include "rspace/types.h"
#include "util/bytes.h"
#include "util/mutex.h"
#include "util/worker_pool.h"

namespace rnode::casper::merge::internal {

// The scratch vectors of the steps, reused between merges by a MergeContext
// (each thread of a merge has its own). Not thread-safe.
struct MergeScratch {
  std::vector<KeyRecord> plan;      // PlanBaseReads.
  std::vector<uint32_t> slot_leaf;  // PlanBaseReads.
  std::vector<KeyRecord> depends;   // BuildBranches.
  std::vector<KeyRecord> keys;      // CollectConflicts.
  KeySortScratch sort;

  // Releases each vector whose capacity is above `max_bytes`.
  void Trim(size_t max_bytes);
};

// --- 1. Scope index ---------------------------------------------------------

// The blocks of a scope in hash order and their chains numbered globally:
// chain g is chain g - chain_offset[b] of blocks[b], b = chain_block[g].
struct ScopeIndex {
  std::vector<const BlockIndex*> blocks;  // Borrowed from the scope.
  std::vector<uint32_t> chain_offset;     // blocks.size() + 1 entries.
  std::vector<uint32_t> chain_block;      // Per chain.
  std::vector<Hash32> numbers;  // Every number channel, ascending, unique.
  size_t deploys = 0;

  uint32_t chains() const { return chain_offset.back(); }
  const BlockFlat& flat_of(uint32_t g) const {
    return blocks[chain_block[g]]->flat;
  }
  uint32_t local_of(uint32_t g) const {
    return g - chain_offset[chain_block[g]];
  }
  const ChainIndex& chain(uint32_t g) const {
    return blocks[chain_block[g]]->chains[local_of(g)];
  }
};

// ResourceExhausted above kMaxScopeBlocks; InvalidArgument for a null or
// repeated block, a raw change on a number channel, or number diffs without
// `codec`.
absl::StatusOr<ScopeIndex> IndexScope(
    std::span<const std::shared_ptr<const BlockIndex>> scope,
    const NumberChannelCodec* codec);

// --- 2. Base prefetch -------------------------------------------------------

// Every base channel a merge of the scope may read, known before any
// rejection: the channels of removed items (BlockFlat::removed), produced-on
// channels, number channels, changed channels (BlockFlat::raw_changes) and
// the channels of every join group those changes add or remove. The leaf
// maps give each scope-order entry its index in `keys`.
struct BasePlan {
  std::vector<KeyRecord> keys;         // Ascending, unique; item = index.
  std::vector<uint32_t> removed_leaf;  // Per BlockFlat::removed entry.
  std::vector<uint32_t> produce_leaf;  // Per BlockFlat::produced_on entry.
  std::vector<uint32_t> number_leaf;   // Per ScopeIndex::numbers entry.
  std::vector<uint32_t> change_leaf;   // Per BlockFlat::raw_changes entry.
};

// Entries are in scope order: blocks in hash order, then the block's flat
// arrays in chain order.
BasePlan PlanBaseReads(const ScopeIndex& index, MergeScratch& scratch);

// Internal unless the leaf maps of `plan` have one entry per entry of the
// scope's flat arrays (a snapshot of another scope).
absl::Status CheckPlanFits(const BasePlan& plan, const ScopeIndex& index);

struct BaseLeaf {
  rspace::ChannelState state;
  std::optional<Bytes> blob;  // nullopt: no leaf in the base.
};

// The base states of a plan's channels. Immutable once read, so any thread
// may read it; the later steps take it by const reference.
struct BaseSnapshot {
  BasePlan plan;
  std::vector<BaseLeaf> leaves;  // Parallel to plan.keys.
  int64_t read_ns = 0;           // Reading and decoding.
  int64_t plan_ns = 0;  // From StartReadBase to the plan (MergeMetrics).

  const BaseLeaf& At(uint32_t index) const { return leaves[index]; }
  // Internal if `channel` was not planned: a merge never reads the base
  // outside its prefetch.
  absl::StatusOr<uint32_t> IndexOf(const Hash32& channel) const;
  absl::StatusOr<const BaseLeaf*> Find(const Hash32& channel) const;
};

// Reads the blobs of `channels` (ascending, unique) in one batch; results
// in `channels` order, nullopt for an absent leaf.
using LeafReader =
    std::function<absl::StatusOr<std::vector<std::optional<Bytes>>>(
        std::span<const Hash32> channels)>;

// Reads and decodes the leaves of `plan` with one call of `read`. A null
// `factory` builds terms with Term::Make and datum values from their stored
// hashes (the merger only compares and re-encodes base data). Errors: the
// reader's, or a decoding error.
absl::StatusOr<std::unique_ptr<BaseSnapshot>> ReadBase(
    BasePlan plan, const LeafReader& read, const rspace::TermFactory& factory);

// A base read in flight: the snapshot is only reachable through Wait, so no
// step can touch it early. The destructor waits too, so an early return
// never leaves the read running. Not thread-safe; movable.
class PendingBase {
 public:
  PendingBase() = default;
  PendingBase(PendingBase&&) = default;
  PendingBase& operator=(PendingBase&&) = delete;
  ~PendingBase();

  // The read's snapshot or error. At most once. When the read runs on the
  // helper thread, the caller reads the chunks the helper has not started
  // yet (from the end of the plan) instead of waiting idle.
  absl::StatusOr<std::unique_ptr<BaseSnapshot>> Wait();

  struct State;  // Defined in base_snapshot.cc.

 private:
  friend PendingBase StartReadBase(MergeContext&, const ScopeIndex&, LeafReader,
                                   rspace::TermFactory);
  std::shared_ptr<State> state_;
};

// Plans and reads the base of `index` (PlanBaseReads + ReadBase): on the
// context's helper thread with its helper scratch, in chunks of
// base_read_chunk channels that the caller shares from Wait, when there is
// a helper
// and the scope has at least background_min base-read records; else now on
// the caller's thread in one batch. `read` may run on both threads at once
// (History::ReadLeaves may); a non-null `factory` is never called by two
// threads at once. REQUIRES: `index` and whatever `read` uses outlive the
// returned PendingBase, and nothing else uses the helper scratch meanwhile.
PendingBase StartReadBase(MergeContext& context, const ScopeIndex& index,
                          LeafReader read, rspace::TermFactory factory);

// --- 3. Branches ------------------------------------------------------------

// Branches: the connected components of related chains (docs/merge.md §3),
// numbered in order of their first chain.
struct Branches {
  uint32_t count = 0;
  std::vector<uint32_t> chain_branch;  // Per chain.
  // Chains of each branch, ascending, as one flat list with offsets.
  std::vector<uint32_t> offset;         // count + 1 entries.
  std::vector<uint32_t> chain_list;     // Per chain.
  std::vector<BranchInfo> info;         // Chains and cost; verdicts unset.
  std::vector<uint32_t> multi;          // Branches of more than one chain.
  std::vector<EventFacts> multi_facts;  // Parallel to `multi`.

  std::span<const uint32_t> chains_of(uint32_t b) const {
    return {chain_list.data() + offset[b], offset[b + 1] - offset[b]};
  }
  bool single(uint32_t b) const { return offset[b + 1] - offset[b] == 1; }
};

// InvalidArgument if a branch cost overflows.
absl::StatusOr<Branches> BuildBranches(const ScopeIndex& index,
                                       MergeScratch& scratch);

// --- 4. Conflicts -----------------------------------------------------------

// A deploy id of the scope with its branch and its block (a position in
// the scope index); the id is borrowed from the scope.
struct DeployRef {
  uint64_t prefix = 0;
  const Bytes* id = nullptr;
  uint32_t branch = 0;
  uint32_t block = 0;
};

struct Conflicts {
  std::vector<ConflictGroup> groups;  // Sorted, unique.
  // Per branch: kDuplicateInBranch if a deploy id is twice in it, else
  // kSettledInBase if it holds a deploy the base holds (MarkSettled).
  std::vector<std::optional<RejectReason>> duplicate;
  std::vector<DeployRef> ids;  // Ascending by (id, branch).
  // Per branch when any is preferred (MarkPreferred), else empty.
  std::vector<bool> preferred;
};

// The conflict groups of deploy ids and event keys (docs/merge.md §4): no
// base state needed.
Conflicts CollectConflicts(const ScopeIndex& index, const Branches& branches,
                           MergeScratch& scratch);

// Pre-rejects (kSettledInBase) every branch holding one of `settled`
// (ascending ids whose effect the base holds), unless it is already
// rejected as a duplicate.
void MarkSettled(Conflicts& conflicts, std::span<const Bytes> settled);

// Marks preferred every branch holding one of `preferred` (ascending
// copies the main parent's state holds; docs/merge.md §5.2).
void MarkPreferred(Conflicts& conflicts, const ScopeIndex& index,
                   const Branches& branches,
                   std::span<const DeployCopy> preferred);

struct BaseChecks {
  // Per branch; kDuplicateInBranch wins over kUnavailable.
  std::vector<std::optional<RejectReason>> prerejected;
  std::vector<bool> base_join;  // Per branch: produces on a base join.
};

// Availability of removed items and base joins against the base. Internal
// if a channel was not prefetched or `base` was planned for another scope.
absl::StatusOr<BaseChecks> CheckBase(const ScopeIndex& index,
                                     const Branches& branches,
                                     const Conflicts& conflicts,
                                     const BaseSnapshot& base);

// --- 5. Rejection -----------------------------------------------------------

struct NumberBases {
  std::vector<__int128> values;  // Per ScopeIndex::numbers entry.
  BranchDiffs diffs;             // Per branch, ascending channel index.
};

// FailedPrecondition for a negative base value; the codec's error.
absl::StatusOr<NumberBases> ReadNumberBases(const ScopeIndex& index,
                                            const Branches& branches,
                                            const BaseSnapshot& base,
                                            const NumberChannelCodec* codec);

struct Decision {
  std::vector<bool> rejected;        // Per branch.
  std::vector<RejectReason> reason;  // Per branch, meaningful if rejected.
  size_t rejected_branches = 0;
  // A deploy is rejected when no kept branch holds it, with the reason of
  // the first rejected branch holding it; ascending id.
  std::vector<RejectedDeploy> rejected_deploys;
  size_t components = 0;
  size_t exact_components = 0;
  size_t greedy_components = 0;
};

// The optimal rejected set (SolveRejection: fewest preferred branches
// rejected, then the least cost) and the rejected deploys.
Decision Decide(const Branches& branches, const Conflicts& conflicts,
                const BaseChecks& checks, const NumberBases& numbers);

// --- 6. Combine -------------------------------------------------------------

// A new channel state as pointers to its items (into base leaves, the
// scope's changes and CombinedState::number_states): [begin, end) ranges of
// the item pools, and its joins (into the base or CombinedState::groups).
struct NewState {
  Hash32 channel{};
  const BaseLeaf* leaf = nullptr;
  uint32_t data_begin = 0, data_end = 0;
  uint32_t k_begin = 0, k_end = 0;
  std::vector<const rspace::JoinGroup*> joins;
};

struct ItemPools {
  std::vector<const rspace::Datum*> data;
  std::vector<const rspace::WaitingContinuation*> conts;

  std::span<const rspace::Datum* const> Data(const NewState& s) const {
    return {data.data() + s.data_begin, s.data_end - s.data_begin};
  }
  std::span<const rspace::WaitingContinuation* const> Conts(
      const NewState& s) const {
    return {conts.data() + s.k_begin, s.k_end - s.k_begin};
  }
  // Sets the items of `s` to those of `state`.
  void Assign(NewState& s, const rspace::ChannelState& state);
};

// The combined state of the kept branches. Its pointers go into the base
// snapshot and the scope, which must outlive it, and into its own members
// (whose addresses a move keeps).
struct CombinedState {
  std::vector<NewState> states;  // Touched channels in order, then extras.
  std::vector<uint32_t> order;   // Indices into `states`, channel order.
  ItemPools pools;
  std::set<rspace::JoinGroup> groups;  // Join groups the changes touch.
  std::deque<rspace::ChannelState> number_states;
};

// Base + kept changes per channel, join derivation and the new number
// values; with a `pool` (may be null) and at least `grain` kept changes,
// the touched channels are netted in parallel parts (the result is the
// same). InvalidArgument for an empty join group; Internal if a removal
// finds nothing, a channel was not prefetched or `base` was planned for
// another scope; the codec's error.
absl::StatusOr<CombinedState> Combine(
    const ScopeIndex& index, const Branches& branches, const Decision& decision,
    const NumberBases& numbers, const BaseSnapshot& base,
    const NumberChannelCodec* codec, WorkerPool* pool = nullptr,
    size_t grain = kDefaultMergeParallelGrain);

// Datum identity order (docs/merge.md §6): source, persist, value hash.
bool DatumLess(const rspace::Datum& a, const rspace::Datum& b);

// --- 7. Trie actions --------------------------------------------------------

// Canonicalises each new state and encodes it: its blob and hash, a
// deletion, or nothing when it equals the base; in channel order. Runs on
// `pool` in tasks of `grain` states when there is a pool and more than
// `grain` states (the result does not depend on it).
std::vector<rspace::LeafUpdate> TrieActions(CombinedState& combined,
                                            WorkerPool* pool, size_t grain);

// --- 8. Apply ---------------------------------------------------------------

// Commits `updates` onto `base_root` (nothing when empty: the base root),
// rebuilding a large trie change on `pool` (may be null), with a pipelined
// write (see Merge). The history's error.
absl::StatusOr<Hash32> ApplyUpdates(rspace::History& history,
                                    const Hash32& base_root,
                                    std::vector<rspace::LeafUpdate> updates,
                                    WorkerPool* pool = nullptr);

}  // namespace rnode::casper::merge::internal

#endif  // RNODE_CASPER_MERGE_INTERNAL_STEPS_H_

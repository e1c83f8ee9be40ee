// The merger: the pre-state of a multi-parent block from a base root and the
// indexed blocks in scope, with the rejected deploys (docs/merge.md).
#ifndef RNODE_CASPER_MERGE_MERGER_H_
#define RNODE_CASPER_MERGE_MERGER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/merge/block_index.h"
#include "casper/merge/merge_context.h"
#include "casper/merge/number_channel.h"
#include "rspace/history/history.h"
#include "rspace/types.h"
#include "util/bytes.h"

namespace rnode::casper::merge {

// Largest scope a merge accepts. A scope of thousands of blocks means
// finality has stalled far behind the tips; the caller must not build on it.
inline constexpr size_t kMaxScopeBlocks = 4096;

// Largest conflict component solved exactly (docs/merge.md §5.3): 2^16
// search leaves at worst, well under a millisecond.
inline constexpr size_t kMaxExactComponentBranches = 16;

enum class RejectReason {
  kConflict,           // Conflicts with a kept branch.
  kNumberChannel,      // A number channel would leave [0, 2^63-1].
  kDuplicateInBranch,  // A deploy id twice in one branch.
  kUnavailable,        // Removes an item neither the base nor the branch has.
  kSettledInBase,      // Holds a deploy whose effect the base already has.
};

const char* RejectReasonName(RejectReason reason);

struct RejectedDeploy {
  Bytes id;
  RejectReason reason = RejectReason::kConflict;
  bool operator==(const RejectedDeploy&) const = default;
};

// Chain key: (block hash, first deploy index in the block).
struct ChainKey {
  Hash32 block{};
  uint32_t first_deploy = 0;
  auto operator<=>(const ChainKey&) const = default;
};

struct BranchInfo {
  std::vector<ChainKey> chains;  // Ascending; chains[0] is the branch key.
  uint64_t cost = 0;
  bool rejected = false;
  RejectReason reason = RejectReason::kConflict;  // Meaningful if rejected.
  bool operator==(const BranchInfo&) const = default;
};

// A set of conflicting branch pairs sharing one key (docs/merge.md §4):
// every pair within `a` if `a_clique`, and every (x in a, y in b) with
// x != y. Members are branch numbers, ascending.
struct ConflictGroup {
  std::vector<uint32_t> a;
  std::vector<uint32_t> b;
  bool a_clique = false;
  auto operator<=>(const ConflictGroup&) const = default;
};

struct MergeMetrics {
  // Step durations in nanoseconds.
  int64_t index_ns = 0;
  int64_t branches_ns = 0;
  int64_t conflicts_ns = 0;
  int64_t rejection_ns = 0;
  int64_t combine_ns = 0;
  int64_t trie_actions_ns = 0;
  int64_t apply_ns = 0;
  // Time spent reading and decoding base leaves (on the helper thread when
  // the context has one), and the part of it the caller waited for (inside
  // conflicts_ns).
  int64_t base_read_ns = 0;
  int64_t base_wait_ns = 0;
  // From the start of the base read to its plan being ready: the wait for
  // the helper thread (still freeing an earlier merge's base) and planning.
  int64_t base_plan_ns = 0;
  // Counts.
  size_t blocks = 0;
  size_t deploys = 0;
  size_t chains = 0;
  size_t branches = 0;
  size_t conflict_groups = 0;
  size_t base_join_branches = 0;
  size_t components = 0;
  size_t exact_components = 0;
  size_t greedy_components = 0;
  size_t rejected_branches = 0;
  size_t rejected_deploys = 0;
  size_t channels_read = 0;
  size_t leaves_written = 0;
};

struct MergeResult {
  Hash32 root{};
  std::vector<RejectedDeploy> rejected;  // Ascending id, unique.
  std::vector<BranchInfo> branches;      // Branch number order.
  std::vector<ConflictGroup> conflicts;  // Sorted.
  std::vector<uint32_t>
      base_join_branches;  // Conflict with every other branch.
  MergeMetrics metrics;
};

// A copy of a deploy in the scope: its id and the block holding it.
struct DeployCopy {
  Bytes id;
  Hash32 block{};
  auto operator<=>(const DeployCopy&) const = default;
};

struct MergeOptions {
  // Required when a deploy in scope has number diffs; not owned.
  const NumberChannelCodec* number_codec = nullptr;
  // Builds terms of base states read from history. Default (null):
  // Term::Make, and datum values take the value hash stored in the blob
  // instead of being hashed again (docs/formats/rspace.md).
  // It is called on the context's helper thread when there is one (never
  // two calls at once), and its copy is freed there, possibly after Merge
  // has returned.
  rspace::TermFactory term_factory;
  // Ids of scope deploys whose effect the base state already holds (an
  // earlier copy, below the base), ascending; not owned. A branch holding
  // one is rejected (kSettledInBase): applying the deploy again is never
  // right. The caller computes them from the DAG (prestate/ancestry.h).
  std::span<const Bytes> settled;
  // The scope copies whose effect the main parent's state holds,
  // ascending; not owned. A branch holding one (that copy: another copy
  // of the same deploy does not count) is preferred: the merge rejects as
  // few preferred branches as it can, and only then minimises the cost
  // (docs/merge.md §5.2), so a merge keeps what its main parent kept, and
  // a deploy final on the main chain stays in effect.
  std::span<const DeployCopy> preferred;
};

// Merges `scope` (in any order) onto `base_root` and commits the new state
// to `history` (nothing is committed when the root stays the base root).
// The commit is pipelined (rspace::CommitWrite::kPipelined): on a
// PipelinedStore the root is readable when Merge returns and durable before
// any later write of the store lands (or at its Sync); on other stores it
// is durable on return.
// Errors: InvalidArgument for a malformed scope (duplicate block, number
// channel misuse, missing codec), ResourceExhausted above kMaxScopeBlocks,
// FailedPrecondition for a base number value out of range, the history's
// or codec's error, Internal if the combined state is inconsistent. Threads
// and scratch space come from `context` (see MergeContextOptions); the
// result does not depend on them. Not thread-safe with respect to other
// History::Commit calls or other merges on `context`.
absl::StatusOr<MergeResult> Merge(
    rspace::History& history, const Hash32& base_root,
    std::span<const std::shared_ptr<const BlockIndex>> scope,
    const MergeOptions& options, MergeContext& context);

// Merge on a one-thread context made for this call (tests, tools).
absl::StatusOr<MergeResult> Merge(
    rspace::History& history, const Hash32& base_root,
    std::span<const std::shared_ptr<const BlockIndex>> scope,
    const MergeOptions& options);

// The conflicting pairs (i < j) of a result, ascending. Quadratic in hot
// keys: for tests and diagnostics only.
std::vector<std::pair<uint32_t, uint32_t>> ExpandConflictPairs(
    const MergeResult& result);

}  // namespace rnode::casper::merge

#endif  // RNODE_CASPER_MERGE_MERGER_H_

// Assignment of pattern components to distinct target components, the
// bipartite matching behind the spatial matcher's Par, Set and Map cases.
#ifndef RNODE_RHOLANG_INTERNAL_BIPARTITE_MATCH_H_
#define RNODE_RHOLANG_INTERNAL_BIPARTITE_MATCH_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "util/bytes.h"

namespace rnode::rholang::internal {

// owner[j] for a target left to nobody / taken by a remainder slot.
inline constexpr int32_t kUnassigned = -1;
inline constexpr int32_t kSlotOwner = -2;

// One assignment problem. Rows are the pattern components in priority
// order; `slots` interchangeable remainder slots come before every row.
// Every row and every slot must get a distinct target.
struct AssignmentProblem {
  size_t rows = 0;
  size_t targets = 0;
  size_t slots = 0;
  // closed[j]: a slot may take target j (its locally_free is empty).
  // Size `targets` when slots > 0, else unused.
  std::vector<bool> closed;
  // row_keys[i], if set, is the only target key row i can take (a concrete
  // component, or a map entry with a concrete key); target_keys[j] is the
  // key of target j. Both empty when no row is keyed. Keys only narrow the
  // candidates: the edge oracle still decides.
  std::vector<std::optional<Hash32>> row_keys;
  std::vector<Hash32> target_keys;
};

// Whether row i can take target j. Called at most once per pair (results
// are memoised); may run a nested match.
using EdgeOracle = absl::FunctionRef<absl::StatusOr<bool>(size_t, size_t)>;
// Charges one work unit; a non-OK status aborts the search and is returned.
using StepCharger = absl::FunctionRef<absl::Status()>;

// Returns owner (size targets): for each target, the row that takes it,
// kSlotOwner or kUnassigned; std::nullopt if no assignment gives every row
// and every slot a target.
//
// Search order: slots take the first closed targets; then each row in turn
// claims the first candidate (target order) it matches, displacing an
// earlier claimant along an augmenting path if needed. A first pass
// follows the public node's rule that a displaced claimant only looks at
// targets after the one it held; if that pass fails, a second pass lets a
// displaced claimant look at every target (Kuhn's algorithm), which finds
// an assignment whenever one exists. One work unit per candidate examined.
// Iterative: stack use does not grow with the problem size.
absl::StatusOr<std::optional<std::vector<int32_t>>> AssignTargets(
    const AssignmentProblem& problem, EdgeOracle edge, StepCharger step);

}  // namespace rnode::rholang::internal

#endif  // RNODE_RHOLANG_INTERNAL_BIPARTITE_MATCH_H_

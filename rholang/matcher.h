// Spatial matcher: matches a target process against a pattern over the
// canonical IR, producing the bindings of the pattern's free variables.
#ifndef RNODE_RHOLANG_MATCHER_H_
#define RNODE_RHOLANG_MATCHER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "rholang/ir.h"

namespace rnode::rholang {

// Upper bound on matcher work units per SpatialMatch call (one per Par
// comparison, connective check and candidate tried in an assignment). A
// pattern with n interchangeable components can need n! tries; realistic
// patterns (dozens of components, nested) need a few hundred steps, and
// 200000 steps cost about 16 ms (bench_rholang_matcher), which bounds what
// one hostile match can burn before it is refused.
inline constexpr uint64_t kMaxMatchSteps = 200000;

// Per-call settings; the default is what consensus code must use.
struct MatchOptions {
  uint64_t max_steps = kMaxMatchSteps;
};

// bindings[i] is the process bound to free variable i (nullptr if the
// variable was never bound, e.g. inside an `\/` alternative or a `~`).
using Bindings = std::vector<ir::ParPtr>;

// Matches `target` against `pattern`, whose free variables are numbered
// 0..free_count-1 (MatchCase::free_count / ReceiveBind::free_count).
// Returns the bindings on a match, std::nullopt on no match. Deterministic:
// the first solution in a fixed search order (canonical component order)
// wins. Pure and thread-safe.
//
// Supported:
//  * patterns with connective_used == false: equality by hash;
//  * free variables and wildcards (process or name position) capturing any
//    process, including Nil;
//  * lists and tuples element-wise; list remainders `[a ...rest]` (rest is
//    bound to the tail as a List);
//  * sends, receives, news, matches, ifs and operator / method exprs
//    structurally (flags and kinds equal, children matched recursively;
//    receive bind patterns and match case patterns compared by hash);
//  * simple-type connectives Bool Int String Uri ByteArray (the target is
//    one expr of that kind); `/\` (all conjuncts match, bindings merged);
//    `\/` (first alternative that matches; its bindings are discarded);
//    `~` (the operand must not match; bindings discarded);
//  * sets and maps with variables, connectives and remainders
//    (`Set(a ...rest)`, `{k: v ...rest}`): each pattern element (key and
//    value together for maps) takes a distinct target element by a
//    backtracking search in canonical order; leftovers go to the remainder
//    as a Set / Map, else the sizes must be equal;
//  * a Par pattern with several components: each structural component is
//    assigned to a distinct target component of the same kind by a
//    backtracking search in canonical order; the leftovers go to the single
//    top-level free variable (bound to their Par), are accepted by a
//    wildcard, or else must not exist; a single connective component is
//    matched against the leftovers (the whole target if there are no other
//    components).
//
// Fails with:
//  * kResourceExhausted when more than options.max_steps work units are
//    needed;
//  * kUnimplemented for what this version does not cover: a Par pattern with
//  two or more top-level free variables, or
//    two or more connectives, or a connective together with a top-level
//    free variable or wildcard; a `=x` var-ref connective beside other
//    components of a pattern Par (substitution must replace var-refs
//    first; a Par holding only var-refs has connective_used == false, is
//    compared by hash and so matches no process);
//  * kInvalidArgument when a free variable's index is >= free_count.
absl::StatusOr<std::optional<Bindings>> SpatialMatch(
    const ir::Par& target, const ir::Par& pattern, uint32_t free_count,
    const MatchOptions& options = {});

}  // namespace rnode::rholang

#endif  // RNODE_RHOLANG_MATCHER_H_

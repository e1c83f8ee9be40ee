// Spatial matcher: matches a target process against a pattern over the
// canonical IR, producing the bindings of the pattern's free variables.
#ifndef RNODE_RHOLANG_MATCHER_H_
#define RNODE_RHOLANG_MATCHER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "rholang/frontend/ir.h"

namespace rnode::rholang {

// Upper bound on matcher work units per SpatialMatch call: one per Par
// comparison, connective check, assignment candidate examined and sub-Par
// tried, plus one per component sorted into a sub-Par. The assignment of
// components is polynomial (bipartite matching), but the sub-Pars a
// connective can take are exponential in the target size; realistic
// patterns (dozens of components, nested) need a few hundred steps, and
// 200000 steps of the worst case cost about 20-25 ms
// (bench_rholang_matcher, BM_HostileParUntilStepLimit), which bounds what
// one hostile match can burn before it is refused.
inline constexpr uint64_t kMaxMatchSteps = 200000;

// Per-call settings; the default is what consensus code must use.
struct MatchOptions {
  uint64_t max_steps = kMaxMatchSteps;
};

// bindings[i] is the process bound to free variable i, or nullptr if the
// variable was never bound: inside an `\/` alternative or a `~`, or a
// top-level free variable of a Par other than the one that takes the
// leftovers (see below). The public node binds Nil there.
using Bindings = std::vector<ir::ParPtr>;

// Matches `target` against `pattern`, whose free variables are numbered
// 0..free_count-1 (MatchCase::free_count / ReceiveBind::free_count).
// Returns the bindings on a match, std::nullopt on no match. Deterministic
// (the first solution in the search order below wins), pure and
// thread-safe. The whole pattern language of issue #5 is covered; the
// semantics are the public node's (rholang.md section 4.4) except where
// listed under "Differences".
//
// A Par pattern with connective_used == false matches by equality (hash).
// Otherwise its top-level components split into
//  * structure: sends, receives, news, exprs (other than free variables and
//    wildcards), matches, unforgeables, bundles and ifs;
//  * free variables and wildcards: the free variable with the lowest level
//    is the "rest" and takes the leftovers; other top-level free variables
//    stay unbound; a wildcard (or any free variable) allows leftovers;
//  * connectives, in canonical order.
// Each connective in turn takes a sub-Par of what the earlier ones left:
// the candidates are the public node's ParCount bounds (per component kind:
// a simple type takes exactly one expr, `~` any number, `/\` the
// intersection and `\/` the union of its operands' bounds, a Par operand
// its structure plus any number if it has a free variable or wildcard),
// narrowed so that enough is left for the later connectives and the
// structure, and tried per kind in increasing bitmask order of the chosen
// components (first component varies fastest), sends slowest, ifs
// fastest. Then the structure of each kind is assigned to distinct target
// components of that kind (see "Assignment"); with a rest variable every
// leftover must have an empty locally_free and all leftovers, across
// kinds, are bound to it as one Par (Nil if none); with only a wildcard
// they are dropped; otherwise there must be none. If any later step fails
// the search backtracks to the next sub-Par of the latest connective.
//
// Assignment (Par structure, Set elements, Map entries, Receive binds): the
// public node's listMatchSingle. Each pattern component's match against
// each target component is computed once, in isolation, with its first
// solution's bindings. With a rest variable, tlen - plen interchangeable
// remainder slots (taking only components with an empty locally_free) come
// first and hold the first such targets; then each pattern component in
// canonical order claims the first target it matches, displacing earlier
// claimants along an augmenting path. A displaced claimant first only
// looks at targets after the one it held (the public node's rule, so the
// same orders give the same choice); if that fails, a second pass lets it
// look at all targets, which finds an assignment whenever one exists.
//
// Other forms:
//  * connectives: `/\` all operands match, bindings merged; `\/` the first
//    operand that matches, its bindings discarded; `~` the operand must not
//    match, bindings discarded (the operands of both bind nothing, so the
//    free variables the normalizer numbers afresh there need not fit
//    free_count); Bool Int String Uri ByteArray: the target is exactly one
//    expr of that kind;
//  * lists and tuples element-wise; a list remainder `[a ...rest]` binds the
//    tail as a List (every tail element closed, i.e. empty locally_free),
//    `[a ..._]` accepts any tail;
//  * sets and maps: Assignment over elements (a map entry is key and value);
//    a remainder variable takes the (closed) leftovers as a Set / Map, a
//    wildcard remainder drops them, else the sizes must be equal;
//  * sends, receives (binds by Assignment, bind patterns by equality),
//    news, matches (case patterns by equality), ifs, operators and methods
//    structurally: flags, kinds and arities equal, children matched;
//    unforgeables and bundles by equality;
//  * a free variable never captures a term with a non-empty locally_free.
//
// Differences from the public node (RUST f1r3node; the orders differ in any
// case, since our canonical order is by hash, docs/adr/0004):
//  * it commits to the first sub-Par that satisfies each connective; we
//    backtrack (as the CLASSIC node does), so we also match when a later
//    connective or the structure needs another split; whenever it matches
//    (given the same component order, and outside the defect below) we
//    make the same choices;
//  * its sub-Par enumeration puts a component in both parts for bounds of
//    two or more (a port defect); ours is the intended subset enumeration;
//  * its assignment can miss an existing assignment (the first pass
//    above); ours falls back to a complete search;
//  * its rest variable also takes every copy of a leftover that equals a
//    matched component (`1 | 1` against `1 | x` binds `1 | 1`); ours takes
//    exactly the leftovers;
//  * it ignores the target's ifs under a pattern with connective_used and
//    has no structural case for `-`, comparisons, `and`/`or`, `matches` and
//    methods (no match); we match them like other components;
//  * it compares news by binder count only; we also compare URIs and
//    injections;
//  * its "any number" is 1000 per kind; ours is unbounded;
//  * it keeps bindings made by a failed sub-match (e.g. the first operand
//    of a failed `/\`); we undo them.
//
// Fails with:
//  * kResourceExhausted when more than options.max_steps work units are
//    needed;
//  * kUnimplemented for a `=x` var-ref connective among the top-level
//    components of a pattern Par with connective_used: the interpreter
//    substitutes var-refs before matching, so none should reach the
//    matcher (a Par holding only var-refs has connective_used == false, is
//    compared by hash and so matches no process);
//  * kInvalidArgument when a free variable's index is >= free_count
//    (outside `\/` and `~` operands).
absl::StatusOr<std::optional<Bindings>> SpatialMatch(
    const ir::Par& target, const ir::Par& pattern, uint32_t free_count,
    const MatchOptions& options = {});

}  // namespace rnode::rholang

#endif  // RNODE_RHOLANG_MATCHER_H_

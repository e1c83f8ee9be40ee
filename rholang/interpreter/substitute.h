// Substitution: closing a term over an environment.
#ifndef RNODE_RHOLANG_INTERPRETER_SUBSTITUTE_H_
#define RNODE_RHOLANG_INTERPRETER_SUBSTITUTE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "rholang/frontend/ir.h"
#include "rholang/interpreter/cost.h"
#include "rholang/interpreter/env.h"

namespace rnode::rholang::interp {

// Replaces the variables of `term` that refer to `env`.
//
// Walking `term`, a bound variable with de Bruijn index i, seen under b
// binders opened inside `term` itself plus the `keep` binders the caller
// keeps open (e.g. a receive body keeps its bind_count captures), stays as it
// is if i < b + keep, else it is replaced by env.Get(i - b - keep): in
// process position the value's components are merged into the enclosing Par,
// in name position (`*x`, a channel) the value is used as the quoted process.
// Var refs (`=x`) that point outside every pattern are replaced the same way
// (by their value as a pattern component). Free variables and wildcards are
// left alone. The result is canonical again (re-sorted, hashes recomputed,
// a bundle substituted into a bundle merged); unchanged subtrees are shared,
// not copied.
//
// Charges cost::kSubstituteNode per node rebuilt to `meter`.
//
// Fails with kInternal when an index points past `env` (the normalizer never
// produces such a term), kResourceExhausted when the result would be deeper
// than kMaxIrDepth, or the meter's out-of-phlo error.
absl::StatusOr<ir::ParPtr> Substitute(const ir::ParPtr& term, const Env& env,
                                      uint32_t keep, PhloMeter& meter);

// Substitutes a pattern (a receive bind pattern, a match case pattern, the
// right side of `matches`). Patterns are normalized in a fresh scope, so only
// their var refs reach `env`; everything else (captures, wildcards, binders
// inside the pattern) is kept. Same errors as Substitute.
absl::StatusOr<ir::ParPtr> SubstitutePattern(const ir::ParPtr& pattern,
                                             const Env& env,
                                             PhloMeter& meter);

}  // namespace rnode::rholang::interp

#endif  // RNODE_RHOLANG_INTERPRETER_SUBSTITUTE_H_

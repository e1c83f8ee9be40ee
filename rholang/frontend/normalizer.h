// Rholang normalizer: AST to the canonical IR (de Bruijn indices, desugared
// sugar, canonical order), with the public free-variable rules as positioned
// errors.
#ifndef RNODE_RHOLANG_NORMALIZER_H_
#define RNODE_RHOLANG_NORMALIZER_H_

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "rholang/frontend/ast.h"
#include "rholang/frontend/ir.h"

namespace rnode::rholang {

// Values a deploy's environment binds to URIs in `new x(`uri`)`, such as
// `rho:system:deployId`. Each New that declares one of these URIs carries
// the value in New::injections.
struct NormalizerEnv {
  std::map<std::string, ir::ParPtr> injections;
};

// Normalizes a parsed program. Fails with kInvalidArgument and a Diagnostic
// (diagnostic.h) at the offending node for: free variables outside patterns,
// wildcards or logical connectives outside patterns, a variable reused in
// one pattern or join, a name variable used as a process or the reverse,
// `=x` of an unbound variable or of the wrong sort, `\/` or `~` in receive
// patterns, a join receiving twice on one channel, free variables,
// wildcards or connectives inside a bundle. kResourceExhausted if the
// result would be deeper than kMaxIrDepth. Thread-safe (pure).
absl::StatusOr<ir::ParPtr> Normalize(const ast::Proc& root,
                                     const NormalizerEnv& env = {});

// Parse and Normalize in one call; errors as for each.
absl::StatusOr<ir::ParPtr> Compile(std::string_view source,
                                   const NormalizerEnv& env = {});

}  // namespace rnode::rholang

#endif  // RNODE_RHOLANG_NORMALIZER_H_

// Named limits of the Rholang front end (parser, normalizer, IR walks).
#ifndef RNODE_RHOLANG_LIMITS_H_
#define RNODE_RHOLANG_LIMITS_H_

#include <cstddef>
#include <cstdint>

#include "util/limits.h"

namespace rnode::rholang {

// Deepest syntax tree the parser accepts (longest chain of nested nodes).
// Real contracts nest a few dozen levels (the genesis contracts stay under
// 60); 512 leaves room for generated code while keeping every recursive walk
// (parser, normalizer, encoder, printer) far from the thread stack limit,
// including under sanitizers.
inline constexpr uint32_t kMaxNestingDepth = 512;

// Deepest IR term any recursive IR walk (encoder, decoder, printer) accepts.
// Normalization adds at most a few IR levels per syntax level (a Par, an
// Expr and a collection or desugared binder), so 4x the syntax bound plus
// slack for desugarings covers every normalized program; the interpreter
// must keep substituted terms under it too.
inline constexpr uint32_t kMaxIrDepth = 4 * kMaxNestingDepth + 64;

// Largest source accepted: the deploy term limit, so the tool and the node
// accept the same programs.
inline constexpr size_t kMaxSourceBytes = limits::kMaxDeployTermBytes;

}  // namespace rnode::rholang

#endif  // RNODE_RHOLANG_LIMITS_H_

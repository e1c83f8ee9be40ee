// The binary operators' precedence levels (reference rholang.md §1.5), by
// which the parser climbs: the lowest binding first.
#ifndef RNODE_RHOLANG_INTERNAL_PRECEDENCE_H_
#define RNODE_RHOLANG_INTERNAL_PRECEDENCE_H_

#include "rholang/frontend/ast.h"
#include "rholang/frontend/lexer.h"

namespace rnode::rholang::internal {

// Precedence levels, lowest binding first (reference rholang.md §1.5).
inline constexpr int kLevelPar = 0;
inline constexpr int kLevelNew = 1;
inline constexpr int kLevelFor = 2;
inline constexpr int kLevelSend = 3;
inline constexpr int kLevelUnary = 10;
inline constexpr int kLevelMethod = 11;
inline constexpr int kLevelEval = 12;
inline constexpr int kLevelNegation = 15;
inline constexpr int kLevelAtom = 16;

// A binary operator's level and the node it builds.
struct BinaryInfo {
  int level;
  ast::BinaryOp op;
};

// Whether `t` is a binary operator; if so its level and node in `*info`.
// `.` is a method call at kLevelMethod (its op is unused) and `|` is a Par
// at kLevelPar.
bool BinaryLevel(Tok t, BinaryInfo* info);

}  // namespace rnode::rholang::internal

#endif  // RNODE_RHOLANG_INTERNAL_PRECEDENCE_H_

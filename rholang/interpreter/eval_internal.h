// Private helpers shared by eval_expr.cc (operators) and methods.cc
// (methods and collection operations). Not part of the library API.
#ifndef RNODE_RHOLANG_INTERPRETER_EVAL_INTERNAL_H_
#define RNODE_RHOLANG_INTERPRETER_EVAL_INTERNAL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rholang/frontend/ir.h"
#include "rholang/interpreter/eval_expr.h"

namespace rnode::rholang::interp::expr_internal {

// A readable name of the type of a value, for error messages: "Nil",
// "Bool", "Int", "String", "Uri", "ByteArray", "List", "Tuple", "Set",
// "Map", "unforgeable name", "bundle" or "process".
std::string TypeName(const ir::Par& p);
const char* KindName(ir::ExprKind k);

// InvalidArgument "<what>: <detail>".
absl::Status Error(const std::string& what, const std::string& detail);

inline absl::Status Charge(ExprContext& ctx, int64_t amount) {
  return ctx.meter->Charge(amount);
}

// Saturating product for size-dependent charges (sizes are bounded by the
// term size, but a cost must never wrap).
int64_t Times(int64_t unit, uint64_t n);

// Evaluates one non-method expression to an expression value (methods go
// through EvalMethod, whose value may be any Par).
absl::StatusOr<ir::ExprPtr> EvalToExpr(const ir::ExprPtr& e, ExprContext& ctx);

// Calls the method expression `m` (kind kMethod): evaluates the receiver
// and the arguments, checks types and arity, charges and applies it.
absl::StatusOr<ir::ParPtr> EvalMethod(const ir::Expr& m, ExprContext& ctx);

// Collection helpers over canonical Set / Map exprs (elements and keys in
// ComparePars order). Positions are element indices (map: pair indices),
// or -1 when absent. Binary search: O(log n).
int64_t FindInSet(const ir::Expr& set, const ir::Par& x);
int64_t FindKey(const ir::Expr& map, const ir::Par& key);
size_t MapSize(const ir::Expr& map);
ir::ExprPtr SetAdd(const ir::Expr& set, const ir::ParPtr& x);
ir::ExprPtr SetRemove(const ir::Expr& set, const ir::Par& x);
ir::ExprPtr SetUnion(const ir::Expr& a, const ir::Expr& b);
ir::ExprPtr SetDiff(const ir::Expr& a, const ir::Expr& b);
ir::ExprPtr MapRemove(const ir::Expr& map, const ir::Par& key);
// The right side wins on equal keys.
ir::ExprPtr MapUnion(const ir::Expr& a, const ir::Expr& b);
// The pairs of `a` whose key is not a key of `b`.
ir::ExprPtr MapDiff(const ir::Expr& a, const ir::Expr& b);

}  // namespace rnode::rholang::interp::expr_internal

#endif  // RNODE_RHOLANG_INTERPRETER_EVAL_INTERNAL_H_

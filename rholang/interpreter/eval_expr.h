// Expression evaluation: operators, collections, `matches`, `%%` and every
// method, over closed (substituted) terms.
#ifndef RNODE_RHOLANG_INTERPRETER_EVAL_EXPR_H_
#define RNODE_RHOLANG_INTERPRETER_EVAL_EXPR_H_

#include <string>

#include "absl/status/statusor.h"
#include "rholang/frontend/ir.h"
#include "rholang/interpreter/cost.h"

namespace rnode::rholang::interp {

// What expression evaluation may use besides the term. The meter is the
// caller's; evaluation is pure otherwise (no space access), deterministic and
// thread-safe for distinct meters.
struct ExprContext {
  PhloMeter* meter = nullptr;  // required
};

// Evaluates the top-level expressions of the closed Par `term` to values and
// returns the Par with each expression replaced by its value (a value that is
// itself a Par, e.g. a method returning a process, is merged in). Collections
// are evaluated element by element (map keys and values, set elements, list
// and tuple items), operands before operators. Sends, receives, news,
// matches, ifs, bundles and unforgeables are left unevaluated (only their
// top level is a value). Used for send data, channels, match targets,
// conditions and method receivers/arguments.
//
// Errors (all kInvalidArgument unless noted; the message names the operator
// or method and the offending type): a type mismatch, an unknown method, a
// wrong argument count, integer overflow in + - * unary - (not
// wrap-around), division or modulo by zero, an index out of range, `%%` with
// a non-String key or a value that cannot be printed, bad hex; a matcher
// limit (kResourceExhausted); out of phlo.
absl::StatusOr<ir::ParPtr> EvalPar(const ir::ParPtr& term, ExprContext& ctx);

// Evaluates a Par that must be exactly one expression (an operand, a
// condition): InvalidArgument "expected a single expression" otherwise.
absl::StatusOr<ir::ExprPtr> EvalSingleExpr(const ir::ParPtr& term,
                                           ExprContext& ctx);

// Evaluates `term` to a Bool (the condition of `if`): InvalidArgument
// "condition is not a Bool" for anything else.
absl::StatusOr<bool> EvalBool(const ir::ParPtr& term, ExprContext& ctx);

// A readable name of the type of a value, for error messages anywhere in
// the interpreter: "Nil", "Bool", "Int", "String", "Uri", "ByteArray",
// "List", "Tuple", "Set", "Map", "unforgeable name", "bundle" or "process".
std::string ValueTypeName(const ir::Par& value);

}  // namespace rnode::rholang::interp

#endif  // RNODE_RHOLANG_INTERPRETER_EVAL_EXPR_H_

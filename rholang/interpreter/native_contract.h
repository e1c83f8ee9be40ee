// The interface a native contract is written against: a handler receives
// its arguments as IR (`Args`) and a ProcessContext, checks them with the
// functions here (errors in the texts of docs/system_processes.md
// "Argument rules"), charges phlo through Charge, and answers with
// ReplyWith and the value builders. The interpreter's system processes and
// the native system contracts (casper/contracts: registry, vault, proof of
// stake) use it alike; REV address derivation and checks are crypto's
// (crypto/rev_address.h). Pure functions; thread-safe.
#ifndef RNODE_RHOLANG_INTERPRETER_NATIVE_CONTRACT_H_
#define RNODE_RHOLANG_INTERPRETER_NATIVE_CONTRACT_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rholang/frontend/ir.h"
#include "rholang/interpreter/system_processes.h"
#include "util/bytes.h"

namespace rnode::rholang::interp {

// `s` in double quotes, cut to 64 bytes (so a deploy cannot make an error
// message large).
std::string Quoted(std::string_view s);

// "<uri>: argument <index+1> (<name>) must be <expected>, got <type>".
absl::Status ArgError(std::string_view uri, size_t index, std::string_view name,
                      std::string_view expected, const ir::Par& got);
// InvalidArgument unless args.size() == arity.
absl::Status CheckArity(std::string_view uri, std::span<const ir::ParPtr> args,
                        size_t arity);
// Charges ctx.meter (Internal error when the context has none).
absl::Status Charge(ProcessContext& ctx, int64_t amount);

// The single expression `p` consists of (unforgeables beside it ignored),
// as the public node's singleExpr; null otherwise.
const ir::Expr* ValueExpr(const ir::Par& p);
// ValueExpr if it has `kind`, else null.
const ir::Expr* SingleOfKind(const ir::Par& p, ir::ExprKind kind);
// The unforgeable of `kind` if `p` is exactly that one name, else null.
const ir::Unforgeable* SingleUnforgeable(const ir::Par& p,
                                         ir::UnforgeableKind kind);

// args[index] as a ByteArray / String, else ArgError.
absl::StatusOr<ByteView> ByteArrayArg(std::string_view uri,
                                      std::span<const ir::ParPtr> args,
                                      size_t index, std::string_view name);
absl::StatusOr<std::string_view> StringArg(std::string_view uri,
                                           std::span<const ir::ParPtr> args,
                                           size_t index, std::string_view name);
// args[0] as one of `ops`, else InvalidArgument listing them.
absl::StatusOr<std::string_view> OpArg(
    std::string_view uri, std::span<const ir::ParPtr> args,
    std::initializer_list<std::string_view> ops);

ir::ParPtr BoolPar(bool v);
ir::ParPtr IntPar(int64_t v);
ir::ParPtr StringPar(std::string v);
ir::ParPtr BytesPar(ByteView v);
ir::ParPtr UnforgeablePar(ir::UnforgeableKind kind, ByteView id);
ir::ParPtr EmptyMapPar();
// One reply: ack!(data...).
std::vector<Reply> ReplyWith(const ir::ParPtr& ack,
                             std::vector<ir::ParPtr> data);

// The REV address of a GPrivate with `id` (rho:vault:address
// fromUnforgeable).
std::string AddressOfPrivateName(ByteView id);

}  // namespace rnode::rholang::interp

#endif  // RNODE_RHOLANG_INTERPRETER_NATIVE_CONTRACT_H_

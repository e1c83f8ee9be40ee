// Rholang values at the client API boundary: a client's rhoapi.Par (the
// name of getDataAtName / listenForDataAtName) to our IR and back, the Web
// API's tagged RhoExpr JSON, and its RhoUnforg name form.
//
// Every function here is pure and thread-safe; the IR it returns is
// immutable and may be shared.
#ifndef RNODE_NODE_VIEWS_PAR_VIEWS_H_
#define RNODE_NODE_VIEWS_PAR_VIEWS_H_

#include <cstdint>

#include <nlohmann/json.hpp>

#include "RhoTypes.pb.h"
#include "absl/status/statusor.h"
#include "rholang/frontend/ir.h"
#include "rholang/frontend/limits.h"

namespace rnode::node::views {

// Deepest value ParFromProto accepts, counted in nested Pars (the top Par is
// 1). Each Par level adds at most two IR levels (the Par and its Expr or
// Bundle), so a decoded value stays within rholang::kMaxIrDepth, which every
// IR walk downstream (encoders, printer, RSpace hashing) requires. A name a
// client sends is a few levels deep; the gRPC parser alone already stops at
// 100 message levels (about 33 nested lists).
inline constexpr uint32_t kMaxValueParDepth = rholang::kMaxIrDepth / 2;

// Most nodes (Pars, Exprs, unforgeables, bundles) ParFromProto decodes in
// one value. Names are an unforgeable or a short tuple; 65,536 nodes is far
// above any real one and bounds the work and memory a hostile request costs
// (building the IR hashes every node).
inline constexpr uint64_t kMaxValueNodes = uint64_t{1} << 16;

// Largest term RhoExprJson renders, in the IR's expanded size
// (ir::NodeInfo::size: one per node plus the bytes of its text). A value
// built by sharing subterms can expand exponentially; this bounds the JSON
// (a few tens of bytes per node, two per byte of a byte array) to tens of
// MiB, above which no HTTP client is served anyway.
inline constexpr uint64_t kMaxRhoExprJsonSize = uint64_t{4} << 20;

// Decodes a client-supplied closed value: ground values (g_bool, g_int,
// g_string, g_uri, g_byte_array), lists, tuples, sets and maps without
// remainders, unforgeables (GPrivate, GDeployId, GDeployerId,
// GSysAuthToken), bundles of these, and parallel compositions of all of
// them. `locallyFree` and `connective_used` are derived data and ignored.
// Errors:
//  - InvalidArgument naming the construct for anything that is not such a
//    value ("a name must be a closed value: sends are not supported"):
//    sends, receives, news, matches, connectives, conditionals, variables,
//    operators, method calls, remainders, the F1R3FLY numeric extras (no IR
//    form yet), path maps, and an Expr or GUnforgeable holding nothing;
//  - ResourceExhausted beyond kMaxValueParDepth nested Pars or
//    kMaxValueNodes nodes. Recursion is bounded by the depth check, never
//    by the thread stack.
// Sets drop duplicates and maps keep the last value of a repeated key (the
// IR's canonical forms).
absl::StatusOr<rholang::ir::ParPtr> ParFromProto(const ::rhoapi::Par& par);

// The public node's rhoapi.Par of `par` (rholang::EncodePublicPar, exact for
// closed values: see docs/formats/public_par.md for the gaps with binders).
// ResourceExhausted if `par` is deeper than rholang::kMaxIrDepth; Internal
// should the encoding not parse back (a bug).
absl::StatusOr<::rhoapi::Par> ParToProto(const rholang::ir::Par& par);

// The Web API's RhoExpr of `par`, as the F1R3FLY Rust node renders it
// (node/src/rust/api/web_api.rs, expr_from_par_proto):
//  - Nil is JSON null (the Rust node drops it from responses);
//  - the exprs, unforgeables and bundles of a Par, in that order: one is
//    itself, several are {"ExprPar": {"data": [...]}};
//  - {"ExprBool"|"ExprInt"|"ExprString"|"ExprUri": {"data": v}},
//    {"ExprBytes": {"data": hex}};
//  - {"ExprList"|"ExprTuple"|"ExprSet": {"data": [...]}} and
//    {"ExprMap": {"data": {key: value}}}, Nil elements, keys and values
//    left out (as the Rust node does); a key is a string's own text, the
//    decimal of an int, "true"/"false", a URI, the hex of bytes or an
//    unforgeable, "SysAuthToken", and the compact JSON text of anything
//    else; of two elements with the same key text the later wins;
//  - {"ExprUnforg": {"data": {"UnforgPrivate"|"UnforgDeploy"|
//    "UnforgDeployer": {"data": hex}}}}, {"ExprUnforg": {"data":
//    "UnforgSysAuthToken"}};
//  - {"ExprBundle": {"data": body, "read": b, "write": b}};
//  - operators {"ExprNot"|"ExprNeg": {"data": p}}, {"ExprPlus": {"left",
//    "right"}} (also ExprMinus, ExprMult, ExprDiv, ExprMod, ExprLt, ExprLte,
//    ExprGt, ExprGte, ExprEq, ExprNeq, ExprAnd, ExprOr, ExprConcat for ++,
//    ExprInterpolate for %%, ExprDiff for --), {"ExprMatches": {"target",
//    "pattern"}}, {"ExprMethod": {"target", "name", "args": [...]}},
//    {"ExprVar": {"index": i}} (-1 for a wildcard); a Nil operand, target or
//    bundle body is {"ExprUnknown": {"type_name": "Nil"}};
//  - a Par with only processes (sends, receives, news, matches,
//    connectives, conditionals) is {"ExprUnknown": {"type_name":
//    "Process"}}; processes beside values are left out. (The Rust node
//    forgets conditionals there and renders an `if` alone as null.)
//  - a term deeper than rholang::kMaxIrDepth or larger than
//    kMaxRhoExprJsonSize is {"ExprUnknown": {"type_name": "TooDeep"}} or
//    {"ExprUnknown": {"type_name": "TooLarge"}}.
// Elements are in our canonical order, which for sets and parallel
// components can differ from the public node's. Strings have invalid UTF-8
// replaced by U+FFFD, so dump() never throws.
nlohmann::json RhoExprJson(const rholang::ir::Par& par);

// The HTTP API's name (RhoUnforg): {"UnforgPrivate"|"UnforgDeploy"|
// "UnforgDeployer": {"data": hex}} (hex of either case; other keys inside
// are ignored, as serde does), or the string "UnforgSysAuthToken" (which the
// Rust node also accepts), as a Par of that one unforgeable. InvalidArgument
// with a message a client can act on for any other shape, tag or bad hex.
absl::StatusOr<rholang::ir::ParPtr> ParFromRhoUnforgJson(
    const nlohmann::json& name);

}  // namespace rnode::node::views

#endif  // RNODE_NODE_VIEWS_PAR_VIEWS_H_

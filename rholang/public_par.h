// The public node's wire form of an evaluated term: what `toByteArray()`
// returns on the public (F1R3FLY Rust) node, so that signatures made
// off-chain over `(...).toByteArray()` verify here. Format, rules and gaps:
// docs/formats/public_par.md.
#ifndef RNODE_RHOLANG_PUBLIC_PAR_H_
#define RNODE_RHOLANG_PUBLIC_PAR_H_

#include "absl/status/statusor.h"
#include "rholang/ir.h"
#include "util/bytes.h"

namespace rnode::rholang {

// The protobuf encoding of `par` as a public `rhoapi.Par`, for a term that
// has been evaluated and substituted at the top level (the state in which
// `toByteArray()` serializes its receiver):
//  - every Par group, set and map is ordered by the public score tree
//    (ties keep our canonical order);
//  - `locally_free` is empty outside binders and, inside a receive, `new`
//    or match case, holds the indices bound by those enclosing binders, one
//    byte per index;
//  - `connective_used` follows the public normalizer's rules;
//  - `if` is a Par.conditionals entry; fields are emitted in field-number
//    order with proto3 default elision (a set oneof is always emitted).
// Exact for closed values (ground values, collections, tuples,
// unforgeables, bundles, and processes without binders). Inside binders
// and for joins, see the gaps in docs/formats/public_par.md.
// Fails with kResourceExhausted if `par` is deeper than kMaxIrDepth.
// Thread-safe (pure).
absl::StatusOr<Bytes> EncodePublicPar(const ir::Par& par);

}  // namespace rnode::rholang

#endif  // RNODE_RHOLANG_PUBLIC_PAR_H_

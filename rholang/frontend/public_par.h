// The public node's wire form of an evaluated term: what `toByteArray()`
// returns on the public (F1R3FLY Rust) node, so that signatures made
// off-chain over `(...).toByteArray()` verify here. Format, rules and gaps:
// docs/formats/public_par.md.
#ifndef RNODE_RHOLANG_PUBLIC_PAR_H_
#define RNODE_RHOLANG_PUBLIC_PAR_H_

#include "absl/status/statusor.h"
#include "rholang/frontend/ir.h"
#include "util/bytes.h"

namespace rnode::rholang {

// The protobuf encoding of `par` as a public `rhoapi.Par`, for a term that
// has been evaluated and substituted at the top level (the state in which
// `toByteArray()` serializes its receiver):
//  - every Par group, set and map is ordered by the public score tree
//    (ties keep our canonical order);
//  - `locally_free` is empty outside binders and, inside a receive, `new`
//    or match case, holds the indices bound by those enclosing binders (one
//    byte per index, with the public normalizer's binder quirk);
//  - `connective_used` follows the public normalizer's rules;
//  - `if` is a Par.conditionals entry; fields are emitted in field-number
//    order with proto3 default elision (a set oneof is always emitted);
//  - a join lists its binds in public score order and its body's variables
//    are renumbered to match.
// Exact for closed values (ground values, collections, tuples,
// unforgeables, bundles) and for processes whose binders reference only
// their own variables. Known gaps (docs/formats/public_par.md): inside a
// binder, a reference to an outer variable that substitution has already
// replaced can lengthen the public `locally_free` vectors (we no longer see
// it); `=x` refs to join variables in nested patterns are not renumbered;
// terms with equal public scores keep our order (the public node's order is
// hash-set dependent there); a Nil `new` injection value would be emitted.
// Fails with kResourceExhausted if `par` is deeper than kMaxIrDepth.
// Thread-safe (pure).
absl::StatusOr<Bytes> EncodePublicPar(const ir::Par& par);

}  // namespace rnode::rholang

#endif  // RNODE_RHOLANG_PUBLIC_PAR_H_

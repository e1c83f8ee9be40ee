// Pretty-printer from the canonical IR back to Rholang source.
#ifndef RNODE_RHOLANG_PRINTER_H_
#define RNODE_RHOLANG_PRINTER_H_

#include <string>

#include "absl/status/statusor.h"
#include "rholang/frontend/ir.h"

namespace rnode::rholang {

// Prints `par` as Rholang source with generated variable names (`x0`, `x1`,
// ... for names bound by `new`, `a0`, ... for pattern variables), one
// process per line under each binder. For any term produced by Normalize,
// normalizing the printed text again yields an identical term (equal hash),
// with one known exception documented in docs/formats/rholang_ir.md (free
// variables in the sources of a join nested inside a pattern). ByteArray
// values and unforgeable names have no source syntax and print as
// `"<hex>".hexToBytes()` and `Unforgeable(...)` respectively (not
// re-parsable to the same term). Fails with kResourceExhausted if the term
// is deeper than kMaxIrDepth. Thread-safe (pure).
absl::StatusOr<std::string> Print(const ir::Par& par);

}  // namespace rnode::rholang

#endif  // RNODE_RHOLANG_PRINTER_H_

// Canonical binary encoding of the Rholang IR, its decoder, and the node
// hashes the IR factories cache. Byte layout: docs/formats/rholang_ir.md.
#ifndef RNODE_RHOLANG_IR_ENCODING_H_
#define RNODE_RHOLANG_IR_ENCODING_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "rholang/frontend/ir.h"
#include "util/bytes.h"

namespace rnode::rholang::ir {

// First byte of every top-level encoding; bumped on any layout change.
inline constexpr uint8_t kEncodingVersion = 1;

// The full canonical encoding of `par` (version byte, then the Par).
// Equal terms have equal encodings. Fails with kResourceExhausted if the
// term is deeper than kMaxIrDepth. Thread-safe.
absl::StatusOr<Bytes> EncodePar(const Par& par);

// Decodes a buffer produced by EncodePar. Fails with kInvalidArgument for a
// wrong version, truncation, trailing bytes, unknown tags, or any encoding
// that is not canonical (components out of order, duplicate set elements or
// map keys, non-minimal varints); kResourceExhausted for terms deeper than
// kMaxIrDepth. Thread-safe.
absl::StatusOr<ParPtr> DecodePar(ByteView bytes);

// The hash of a whole program: the root Par's node hash.
inline const Hash32& ProgramHash(const Par& par) { return par.hash; }

// Node hashes: Blake2b-256 over a domain tag byte and the node's shallow
// encoding (children by their hashes). Used by the factories in ir.cc;
// callers read node.hash instead.
namespace internal {
Hash32 HashNode(const Send& n);
Hash32 HashNode(const Receive& n);
Hash32 HashNode(const New& n);
Hash32 HashNode(const Expr& n);
Hash32 HashNode(const Match& n);
Hash32 HashNode(const Unforgeable& n);
Hash32 HashNode(const Bundle& n);
Hash32 HashNode(const Connective& n);
Hash32 HashNode(const If& n);
Hash32 HashNode(const Par& n);
Hash32 HashBind(const ReceiveBind& b);
}  // namespace internal

}  // namespace rnode::rholang::ir

#endif  // RNODE_RHOLANG_IR_ENCODING_H_

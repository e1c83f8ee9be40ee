// Named limits on the size of one value a deploy can build by evaluating
// expressions. Phlo alone does not bound memory tightly enough: a list
// element costs one phlo but holds a 16-byte pointer, and values share
// subterms, so a value whose canonical encoding is exponentially larger than
// the phlo spent on it takes a few dozen cheap steps (`[l, l]` repeated).
// Exceeding a limit fails the deploy with kResourceExhausted (not "out of
// phlo"). docs/costs.md "Value size limits".
#ifndef RNODE_RHOLANG_INTERPRETER_LIMITS_H_
#define RNODE_RHOLANG_INTERPRETER_LIMITS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "rholang/frontend/ir.h"

namespace rnode::rholang::interp {

// Most elements (pairs for a Map) in a List, Set or Map built by `++`, `+`,
// `union`, `add` or `set`. A collection literal comes from a source of at
// most 1 MiB, so real programs stay far below 2^20; at 2^20 one collection
// is 16 MiB of pointers (32 MiB for a Map), which keeps a 10^7-phlo deploy
// from holding more than a few such values at once.
inline constexpr size_t kMaxCollectionElements = size_t{1} << 20;

// Most bytes in a String or ByteArray built by `++`, `%%`, `bytesToHex`,
// `toUtf8Bytes` or `toByteArray`: 16 MiB. Text costs one phlo per byte, so
// phlo already bounds it; the limit keeps any single value far below the
// largest message the node exchanges (limits::kMaxGrpcMessageBytes, 256 MiB)
// so that it can still be stored, replayed and sent.
inline constexpr size_t kMaxTextBytes = size_t{1} << 24;

// Largest weight of the fully expanded tree of one term (ir::NodeInfo::size:
// one per node plus the bytes of its text and ids): 2^25. Shared subterms let
// a few dozen cheap steps build a term whose expansion is exponential (`[l,
// l]` repeated, or a list holding the same 16 MiB string a million times);
// every encoder, printer and walk over the expansion would then run for
// ever. Legitimate values fit: a collection of kMaxCollectionElements small
// values is 2-4 nodes per element (a Map of 2^20 Int pairs is 2^22), a
// string of kMaxTextBytes is 2^24 + 2 (so twice that fits with room for the
// rest of a term), and a deploy term (at most 1 MiB of source) normalizes to
// far less. A term at the limit encodes to about 100 MiB at most (a few
// bytes per node), under limits::kMaxGrpcMessageBytes.
inline constexpr uint64_t kMaxTermNodes = uint64_t{1} << 25;

// kResourceExhausted "<what>: result of <n> elements exceeds the limit of
// <kMaxCollectionElements>" when n is over the limit, else OK.
inline absl::Status CheckCollectionSize(const std::string& what, size_t n) {
  if (n <= kMaxCollectionElements) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat(what, ": result of ", n, " elements exceeds the limit of ",
                   kMaxCollectionElements));
}

// The same for the bytes of a String or ByteArray and kMaxTextBytes.
inline absl::Status CheckTextSize(const std::string& what, size_t n) {
  if (n <= kMaxTextBytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      what, ": result of ", n, " bytes exceeds the limit of ", kMaxTextBytes));
}

// kResourceExhausted "<what>: term of <n> nodes exceeds the limit of
// <kMaxTermNodes>" when the expanded weight of `par` (nodes plus text bytes)
// is over the limit, else OK.
inline absl::Status CheckTermSize(const std::string& what, const ir::Par& par) {
  if (par.size <= kMaxTermNodes) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat(what, ": term of ", par.size, " nodes exceeds the limit of ",
                   kMaxTermNodes));
}

}  // namespace rnode::rholang::interp

#endif  // RNODE_RHOLANG_INTERPRETER_LIMITS_H_

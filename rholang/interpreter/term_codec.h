// The values the reducer stores in RSpace (channels, data, bind patterns,
// continuations) as self-describing rspace::Terms, their decoder, the
// TermFactory for terms read back from history, and the rspace::Matcher
// adapter over the spatial matcher. Byte layout: docs/interpreter.md.
//
// Every term is one kind tag byte followed by its body:
//   kChannel       EncodePar(channel)
//   kData          varint n, n x (varint len, EncodePar(datum)), rng
//   kPattern       varint n, n x (varint len, EncodePar(pattern)),
//                  remainder (0 none | 1 free + varint level | 2 wildcard),
//                  varint free_count
//   kContinuation  0 (Rholang): varint len, EncodePar(body), rng
//                  1 (system):  varint body_ref
// where rng is the 32-byte generator state and its 8-byte big-endian
// counter. Varints are minimal unsigned LEB128. Term::decoded() points to a
// StoredValue; the bytes are canonical (decoding then encoding gives the
// same bytes), so equal values have equal term hashes.
#ifndef RNODE_RHOLANG_INTERPRETER_TERM_CODEC_H_
#define RNODE_RHOLANG_INTERPRETER_TERM_CODEC_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "crypto/rng.h"
#include "rholang/frontend/ir.h"
#include "rspace/matcher.h"
#include "rspace/term.h"
#include "rspace/types.h"
#include "util/bytes.h"

namespace rnode::rholang::interp {

enum class TermKind : uint8_t {
  kChannel = 1,
  kData = 2,
  kPattern = 3,
  kContinuation = 4,
};

// A generator as stored: its state and counter. A stored generator is used
// again as SplittableRng::FromSeed(these 40 bytes), the same whether the
// term was just made or read back from history (SplittableRng cannot be
// rebuilt from its state).
struct StoredRng {
  Hash32 state{};
  uint64_t counter = 0;
  static StoredRng Of(const crypto::SplittableRng& rng) {
    return StoredRng{rng.state(), rng.counter()};
  }
  crypto::SplittableRng Restore() const;
};

// The data of one send: `chan!(pars...)`.
struct DataValue {
  std::vector<ir::ParPtr> pars;
  StoredRng rng;
};

// The patterns of one receive bind.
struct BindPattern {
  std::vector<ir::ParPtr> patterns;
  std::optional<ir::Var> remainder;  // kFree or kWildcard
  uint32_t free_count = 0;
};

// A stored receive: a Rholang body (already substituted, so its only free
// indices are the bind_count captures) or a system process.
struct ContinuationValue {
  bool system = false;
  ir::ParPtr body;        // Rholang
  StoredRng rng;          // Rholang
  uint32_t body_ref = 0;  // system
};

using StoredValue =
    std::variant<ir::ParPtr, DataValue, BindPattern, ContinuationValue>;

// Builders: encode, hash and attach the decoded form. Fail only when a Par
// is deeper than kMaxIrDepth (kResourceExhausted).
absl::StatusOr<rspace::TermPtr> MakeChannelTerm(const ir::ParPtr& channel);
absl::StatusOr<rspace::TermPtr> MakeDataTerm(DataValue data);
absl::StatusOr<rspace::TermPtr> MakePatternTerm(BindPattern pattern);
absl::StatusOr<rspace::TermPtr> MakeContinuationTerm(ContinuationValue k);

// Decodes a term's bytes; kInvalidArgument for malformed or non-canonical
// bytes (unknown tag, truncation, trailing bytes, bad IR encoding).
absl::StatusOr<std::shared_ptr<const StoredValue>> DecodeStoredValue(
    ByteView bytes);

// The TermFactory for SpaceOptions::term_factory: decodes and attaches.
rspace::TermFactory StoredTermFactory();

// The decoded value of `term`: its attached form, or decoded from its bytes
// when none is attached. kInvalidArgument when the bytes are malformed; the
// typed accessors also when the term holds another kind of value. `holder`
// keeps the decoded value alive for the returned pointer.
absl::StatusOr<std::shared_ptr<const StoredValue>> ValueOf(
    const rspace::Term& term);
absl::StatusOr<ir::ParPtr> ChannelOf(const rspace::Term& term);
absl::StatusOr<const DataValue*> DataOf(
    const rspace::Term& term, std::shared_ptr<const StoredValue>& holder);
absl::StatusOr<const BindPattern*> PatternOf(
    const rspace::Term& term, std::shared_ptr<const StoredValue>& holder);
absl::StatusOr<const ContinuationValue*> ContinuationOf(
    const rspace::Term& term, std::shared_ptr<const StoredValue>& holder);

// The captures of one bind, indexed by free variable level (nullptr: never
// bound). This is the MatchResult the matcher hands to RSpace.
using Captures = std::vector<ir::ParPtr>;

// Matches a datum term (DataValue) against a bind pattern term
// (BindPattern): the data list element-wise against the patterns with
// SpatialMatch (kMaxMatchSteps per element), a remainder capturing the tail
// as a List. A different arity without a remainder is no match. The result
// is a std::shared_ptr<const Captures>. Errors: malformed terms
// (kInvalidArgument) and the spatial matcher's errors. Stateless and
// thread-safe.
class StoredMatcher final : public rspace::Matcher {
 public:
  absl::StatusOr<std::optional<rspace::MatchResult>> Match(
      const rspace::Term& pattern, const rspace::TermPtr& datum) const override;
};

}  // namespace rnode::rholang::interp

#endif  // RNODE_RHOLANG_INTERPRETER_TERM_CODEC_H_

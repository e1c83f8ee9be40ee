// Stored-term codec and the matcher adapter (layout in term_codec.h).
#include "rholang/interpreter/term_codec.h"

#include <string>
#include <utility>

#include "rholang/frontend/ir_encoding.h"
#include "rholang/frontend/matcher.h"
#include "rholang/interpreter/limits.h"
#include "util/status_macros.h"

namespace rnode::rholang::interp {
namespace {

constexpr uint8_t kContinuationRholang = 0;
constexpr uint8_t kContinuationSystem = 1;
constexpr uint8_t kRemainderNone = 0;
constexpr uint8_t kRemainderFree = 1;
constexpr uint8_t kRemainderWildcard = 2;
constexpr size_t kRngBytes = 40;

void PutVarint(uint64_t v, Bytes& out) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

void PutRng(const StoredRng& rng, Bytes& out) {
  out.insert(out.end(), rng.state.begin(), rng.state.end());
  for (int i = 7; i >= 0; --i) {
    out.push_back(static_cast<uint8_t>(rng.counter >> (8 * i)));
  }
}

// Fails (kResourceExhausted) before encoding a term over kMaxTermNodes:
// evaluation and substitution reject such terms, this keeps any that slip
// through from an encoding exponential in the term's memory size.
absl::Status PutPar(const ir::Par& par, Bytes& out) {
  RETURN_IF_ERROR(CheckTermSize("stored term", par));
  ASSIGN_OR_RETURN(Bytes enc, ir::EncodePar(par));
  PutVarint(enc.size(), out);
  out.insert(out.end(), enc.begin(), enc.end());
  return absl::OkStatus();
}

absl::Status Malformed(std::string what) {
  return absl::InvalidArgumentError("malformed stored term: " + what);
}

class Reader {
 public:
  explicit Reader(ByteView b) : b_(b) {}
  bool done() const { return pos_ == b_.size(); }
  size_t remaining() const { return b_.size() - pos_; }

  absl::StatusOr<uint8_t> Byte() {
    if (pos_ >= b_.size()) return Malformed("truncated");
    return b_[pos_++];
  }
  absl::StatusOr<uint64_t> Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      ASSIGN_OR_RETURN(uint8_t byte, Byte());
      if (shift == 63 && byte > 1) return Malformed("varint overflow");
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        if (byte == 0 && shift > 0) return Malformed("non-minimal varint");
        return v;
      }
    }
    return Malformed("varint too long");
  }
  absl::StatusOr<ByteView> Take(uint64_t n) {
    if (n > remaining()) return Malformed("truncated");
    ByteView v = b_.subspan(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return v;
  }
  absl::StatusOr<ir::ParPtr> Par() {
    ASSIGN_OR_RETURN(uint64_t n, Varint());
    ASSIGN_OR_RETURN(ByteView v, Take(n));
    return ir::DecodePar(v);
  }
  absl::StatusOr<StoredRng> Rng() {
    ASSIGN_OR_RETURN(ByteView v, Take(kRngBytes));
    StoredRng r;
    for (size_t i = 0; i < 32; ++i) r.state[i] = v[i];
    for (size_t i = 32; i < kRngBytes; ++i) r.counter = (r.counter << 8) | v[i];
    return r;
  }

 private:
  ByteView b_;
  size_t pos_ = 0;
};

absl::StatusOr<Bytes> Encode(const StoredValue& value) {
  Bytes out;
  if (const auto* chan = std::get_if<ir::ParPtr>(&value)) {
    out.push_back(static_cast<uint8_t>(TermKind::kChannel));
    RETURN_IF_ERROR(CheckTermSize("stored channel", **chan));
    ASSIGN_OR_RETURN(Bytes enc, ir::EncodePar(**chan));
    out.insert(out.end(), enc.begin(), enc.end());
  } else if (const auto* data = std::get_if<DataValue>(&value)) {
    out.push_back(static_cast<uint8_t>(TermKind::kData));
    PutVarint(data->pars.size(), out);
    for (const auto& p : data->pars) RETURN_IF_ERROR(PutPar(*p, out));
    PutRng(data->rng, out);
  } else if (const auto* pat = std::get_if<BindPattern>(&value)) {
    out.push_back(static_cast<uint8_t>(TermKind::kPattern));
    PutVarint(pat->patterns.size(), out);
    for (const auto& p : pat->patterns) RETURN_IF_ERROR(PutPar(*p, out));
    if (!pat->remainder.has_value()) {
      out.push_back(kRemainderNone);
    } else if (pat->remainder->kind == ir::VarKind::kFree) {
      out.push_back(kRemainderFree);
      PutVarint(pat->remainder->index, out);
    } else {
      out.push_back(kRemainderWildcard);
    }
    PutVarint(pat->free_count, out);
  } else {
    const auto& k = std::get<ContinuationValue>(value);
    out.push_back(static_cast<uint8_t>(TermKind::kContinuation));
    if (k.system) {
      out.push_back(kContinuationSystem);
      PutVarint(k.body_ref, out);
    } else {
      out.push_back(kContinuationRholang);
      RETURN_IF_ERROR(PutPar(*k.body, out));
      PutRng(k.rng, out);
    }
  }
  return out;
}

absl::StatusOr<rspace::TermPtr> MakeTerm(StoredValue value) {
  ASSIGN_OR_RETURN(Bytes bytes, Encode(value));
  auto decoded = std::make_shared<const StoredValue>(std::move(value));
  return rspace::Term::Make(std::move(bytes), std::move(decoded));
}

absl::StatusOr<uint32_t> U32(uint64_t v) {
  if (v > UINT32_MAX) return Malformed("count out of range");
  return static_cast<uint32_t>(v);
}

}  // namespace

crypto::SplittableRng StoredRng::Restore() const {
  uint8_t seed[40];
  for (size_t i = 0; i < 32; ++i) seed[i] = state[i];
  for (int i = 0; i < 8; ++i) {
    seed[32 + i] = static_cast<uint8_t>(counter >> (8 * (7 - i)));
  }
  return crypto::SplittableRng::FromSeed(ByteView(seed, sizeof(seed)));
}

absl::StatusOr<rspace::TermPtr> MakeChannelTerm(const ir::ParPtr& channel) {
  return MakeTerm(StoredValue(channel));
}
absl::StatusOr<rspace::TermPtr> MakeDataTerm(DataValue data) {
  return MakeTerm(StoredValue(std::move(data)));
}
absl::StatusOr<rspace::TermPtr> MakePatternTerm(BindPattern pattern) {
  return MakeTerm(StoredValue(std::move(pattern)));
}
absl::StatusOr<rspace::TermPtr> MakeContinuationTerm(ContinuationValue k) {
  return MakeTerm(StoredValue(std::move(k)));
}

absl::StatusOr<std::shared_ptr<const StoredValue>> DecodeStoredValue(
    ByteView bytes) {
  Reader r(bytes);
  ASSIGN_OR_RETURN(uint8_t tag, r.Byte());
  std::shared_ptr<const StoredValue> out;
  switch (tag) {
    case static_cast<uint8_t>(TermKind::kChannel): {
      ASSIGN_OR_RETURN(ByteView rest, r.Take(r.remaining()));
      ASSIGN_OR_RETURN(ir::ParPtr p, ir::DecodePar(rest));
      out = std::make_shared<const StoredValue>(std::move(p));
      break;
    }
    case static_cast<uint8_t>(TermKind::kData): {
      DataValue d;
      ASSIGN_OR_RETURN(uint64_t n, r.Varint());
      if (n > r.remaining()) return Malformed("data count");
      for (uint64_t i = 0; i < n; ++i) {
        ASSIGN_OR_RETURN(ir::ParPtr p, r.Par());
        d.pars.push_back(std::move(p));
      }
      ASSIGN_OR_RETURN(d.rng, r.Rng());
      out = std::make_shared<const StoredValue>(std::move(d));
      break;
    }
    case static_cast<uint8_t>(TermKind::kPattern): {
      BindPattern b;
      ASSIGN_OR_RETURN(uint64_t n, r.Varint());
      if (n > r.remaining()) return Malformed("pattern count");
      for (uint64_t i = 0; i < n; ++i) {
        ASSIGN_OR_RETURN(ir::ParPtr p, r.Par());
        b.patterns.push_back(std::move(p));
      }
      ASSIGN_OR_RETURN(uint8_t rem, r.Byte());
      if (rem == kRemainderFree) {
        ASSIGN_OR_RETURN(uint64_t level, r.Varint());
        ASSIGN_OR_RETURN(uint32_t l32, U32(level));
        b.remainder = ir::Var{ir::VarKind::kFree, l32};
      } else if (rem == kRemainderWildcard) {
        b.remainder = ir::Var{ir::VarKind::kWildcard, 0};
      } else if (rem != kRemainderNone) {
        return Malformed("remainder tag");
      }
      ASSIGN_OR_RETURN(uint64_t fc, r.Varint());
      ASSIGN_OR_RETURN(b.free_count, U32(fc));
      if (b.remainder.has_value() && b.remainder->kind == ir::VarKind::kFree &&
          b.remainder->index >= b.free_count) {
        return Malformed("remainder level out of range");
      }
      out = std::make_shared<const StoredValue>(std::move(b));
      break;
    }
    case static_cast<uint8_t>(TermKind::kContinuation): {
      ContinuationValue k;
      ASSIGN_OR_RETURN(uint8_t sub, r.Byte());
      if (sub == kContinuationSystem) {
        k.system = true;
        ASSIGN_OR_RETURN(uint64_t ref, r.Varint());
        ASSIGN_OR_RETURN(k.body_ref, U32(ref));
      } else if (sub == kContinuationRholang) {
        ASSIGN_OR_RETURN(k.body, r.Par());
        ASSIGN_OR_RETURN(k.rng, r.Rng());
      } else {
        return Malformed("continuation kind");
      }
      out = std::make_shared<const StoredValue>(std::move(k));
      break;
    }
    default:
      return Malformed("unknown kind tag " + std::to_string(tag));
  }
  if (!r.done()) return Malformed("trailing bytes");
  return out;
}

rspace::TermFactory StoredTermFactory() {
  return [](Bytes bytes) -> absl::StatusOr<rspace::TermPtr> {
    ASSIGN_OR_RETURN(std::shared_ptr<const StoredValue> v,
                     DecodeStoredValue(bytes));
    return rspace::Term::Make(std::move(bytes), std::move(v));
  };
}

absl::StatusOr<std::shared_ptr<const StoredValue>> ValueOf(
    const rspace::Term& term) {
  if (term.decoded() != nullptr) {
    return std::static_pointer_cast<const StoredValue>(term.decoded());
  }
  return DecodeStoredValue(term.bytes());
}

absl::StatusOr<ir::ParPtr> ChannelOf(const rspace::Term& term) {
  ASSIGN_OR_RETURN(auto v, ValueOf(term));
  const auto* p = std::get_if<ir::ParPtr>(v.get());
  if (p == nullptr) return Malformed("expected a channel");
  return *p;
}

namespace {
template <typename T>
absl::StatusOr<const T*> Typed(const rspace::Term& term,
                               std::shared_ptr<const StoredValue>& holder,
                               const char* what) {
  ASSIGN_OR_RETURN(holder, ValueOf(term));
  const T* p = std::get_if<T>(holder.get());
  if (p == nullptr) return Malformed(std::string("expected ") + what);
  return p;
}
}  // namespace

absl::StatusOr<const DataValue*> DataOf(
    const rspace::Term& term, std::shared_ptr<const StoredValue>& holder) {
  return Typed<DataValue>(term, holder, "data");
}
absl::StatusOr<const BindPattern*> PatternOf(
    const rspace::Term& term, std::shared_ptr<const StoredValue>& holder) {
  return Typed<BindPattern>(term, holder, "a pattern");
}
absl::StatusOr<const ContinuationValue*> ContinuationOf(
    const rspace::Term& term, std::shared_ptr<const StoredValue>& holder) {
  return Typed<ContinuationValue>(term, holder, "a continuation");
}

absl::StatusOr<std::optional<rspace::MatchResult>> StoredMatcher::Match(
    const rspace::Term& pattern, const rspace::TermPtr& datum) const {
  std::shared_ptr<const StoredValue> ph, dh;
  ASSIGN_OR_RETURN(const BindPattern* bind, PatternOf(pattern, ph));
  ASSIGN_OR_RETURN(const DataValue* data, DataOf(*datum, dh));
  const size_t n = bind->patterns.size();
  if (data->pars.size() < n) return std::optional<rspace::MatchResult>();
  if (data->pars.size() > n && !bind->remainder.has_value()) {
    return std::optional<rspace::MatchResult>();
  }
  auto captures = std::make_shared<Captures>(bind->free_count);
  for (size_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(
        std::optional<Bindings> b,
        SpatialMatch(*data->pars[i], *bind->patterns[i], bind->free_count));
    if (!b.has_value()) return std::optional<rspace::MatchResult>();
    for (size_t j = 0; j < b->size() && j < captures->size(); ++j) {
      if ((*b)[j] != nullptr) (*captures)[j] = (*b)[j];
    }
  }
  if (bind->remainder.has_value() &&
      bind->remainder->kind == ir::VarKind::kFree) {
    std::vector<ir::ParPtr> tail(data->pars.begin() + n, data->pars.end());
    (*captures)[bind->remainder->index] =
        ir::ParOf(ir::Expr::List(std::move(tail), std::nullopt));
  }
  return std::optional<rspace::MatchResult>(
      std::shared_ptr<const Captures>(std::move(captures)));
}

}  // namespace rnode::rholang::interp

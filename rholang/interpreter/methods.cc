// Rholang methods (`P.name(args)`) and the Set / Map operations they share
// with the collection operators. Costs: docs/costs.md.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "rholang/frontend/ir_encoding.h"
#include "rholang/frontend/public_par.h"
#include "rholang/interpreter/eval_expr.h"
#include "rholang/interpreter/eval_internal.h"
#include "rholang/interpreter/limits.h"
#include "util/bytes.h"
#include "util/status_macros.h"

namespace rnode::rholang::interp::expr_internal {

using ir::ExprKind;
using ir::ExprPtr;
using ir::ParPtr;

// ---- Set / Map helpers ----

namespace {

// Lower bound of `x` among `n` items whose i-th key is key(i).
template <typename KeyAt>
int64_t BinarySearch(size_t n, const ir::Par& x, KeyAt key) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = ir::ComparePars(*key(mid), x);
    if (c == 0) return static_cast<int64_t>(mid);
    if (c < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return -1;
}

std::vector<std::pair<ParPtr, ParPtr>> Pairs(const ir::Expr& map) {
  std::vector<std::pair<ParPtr, ParPtr>> kvs;
  kvs.reserve(MapSize(map));
  for (size_t i = 0; i + 1 < map.operands.size(); i += 2) {
    kvs.emplace_back(map.operands[i], map.operands[i + 1]);
  }
  return kvs;
}

}  // namespace

size_t MapSize(const ir::Expr& map) { return map.operands.size() / 2; }

int64_t FindInSet(const ir::Expr& set, const ir::Par& x) {
  return BinarySearch(set.operands.size(), x,
                      [&](size_t i) { return set.operands[i].get(); });
}

int64_t FindKey(const ir::Expr& map, const ir::Par& key) {
  return BinarySearch(MapSize(map), key,
                      [&](size_t i) { return map.operands[2 * i].get(); });
}

namespace {

// SetAdd and SetUnion keep the elements in canonical order so that Expr::Set
// need not sort them again.
bool ParLess(const ParPtr& a, const ParPtr& b) {
  return ir::ComparePars(*a, *b) < 0;
}

}  // namespace

ExprPtr SetAdd(const ir::Expr& set, const ParPtr& x) {
  std::vector<ParPtr> ps;
  ps.reserve(set.operands.size() + 1);
  auto at =
      std::lower_bound(set.operands.begin(), set.operands.end(), x, ParLess);
  ps.insert(ps.end(), set.operands.begin(), at);
  ps.push_back(x);
  ps.insert(ps.end(), at, set.operands.end());
  return ir::Expr::Set(std::move(ps), std::nullopt);
}

ExprPtr SetRemove(const ir::Expr& set, const ir::Par& x) {
  std::vector<ParPtr> ps;
  ps.reserve(set.operands.size());
  for (const ParPtr& p : set.operands) {
    if (p->hash != x.hash) ps.push_back(p);
  }
  return ir::Expr::Set(std::move(ps), std::nullopt);
}

ExprPtr SetUnion(const ir::Expr& a, const ir::Expr& b) {
  std::vector<ParPtr> ps;
  ps.reserve(a.operands.size() + b.operands.size());
  std::merge(a.operands.begin(), a.operands.end(), b.operands.begin(),
             b.operands.end(), std::back_inserter(ps), ParLess);
  return ir::Expr::Set(std::move(ps), std::nullopt);
}

ExprPtr SetDiff(const ir::Expr& a, const ir::Expr& b) {
  std::vector<ParPtr> ps;
  for (const ParPtr& p : a.operands) {
    if (FindInSet(b, *p) < 0) ps.push_back(p);
  }
  return ir::Expr::Set(std::move(ps), std::nullopt);
}

ExprPtr MapRemove(const ir::Expr& map, const ir::Par& key) {
  std::vector<std::pair<ParPtr, ParPtr>> kvs;
  for (size_t i = 0; i + 1 < map.operands.size(); i += 2) {
    if (map.operands[i]->hash != key.hash) {
      kvs.emplace_back(map.operands[i], map.operands[i + 1]);
    }
  }
  return ir::Expr::Map(std::move(kvs), std::nullopt);
}

ExprPtr MapUnion(const ir::Expr& a, const ir::Expr& b) {
  std::vector<std::pair<ParPtr, ParPtr>> kvs = Pairs(a);
  std::vector<std::pair<ParPtr, ParPtr>> more = Pairs(b);
  kvs.insert(kvs.end(), more.begin(), more.end());
  return ir::Expr::Map(std::move(kvs), std::nullopt);
}

ExprPtr MapDiff(const ir::Expr& a, const ir::Expr& b) {
  std::vector<std::pair<ParPtr, ParPtr>> kvs;
  for (size_t i = 0; i + 1 < a.operands.size(); i += 2) {
    if (FindKey(b, *a.operands[i]) < 0) {
      kvs.emplace_back(a.operands[i], a.operands[i + 1]);
    }
  }
  return ir::Expr::Map(std::move(kvs), std::nullopt);
}

// ---- Methods ----

namespace {

struct Call {
  std::string what;          // "method `name`", for errors
  ParPtr target;             // evaluated receiver
  const ir::Expr* t;         // target->SingleExpr(), or nullptr
  std::vector<ParPtr> args;  // evaluated
  ExprContext* ctx;

  absl::Status Charge(int64_t amount) const {
    return ctx->meter->Charge(amount);
  }
  bool Is(ExprKind k) const { return t != nullptr && t->kind == k; }
  absl::Status NotDefined() const {
    return Error(what, absl::StrCat("not defined on ", TypeName(*target)));
  }
  absl::StatusOr<int64_t> IntArg(size_t i) const {
    const ir::Expr* e = args[i]->SingleExpr();
    if (e == nullptr || e->kind != ExprKind::kInt) {
      return Error(what,
                   absl::StrCat("argument ", i + 1, " must be an Int, got ",
                                TypeName(*args[i])));
    }
    return e->int_value;
  }
  // Argument i as a collection of kind k.
  absl::StatusOr<const ir::Expr*> CollectionArg(size_t i, ExprKind k) const {
    const ir::Expr* e = args[i]->SingleExpr();
    if (e == nullptr || e->kind != k) {
      return Error(what,
                   absl::StrCat("argument ", i + 1, " must be a ", KindName(k),
                                ", got ", TypeName(*args[i])));
    }
    return e;
  }
};

ParPtr Value(ExprPtr e) { return ir::ParOf(std::move(e)); }

// True when byte `i` of `s` starts a UTF-8 code point (or is the end).
bool IsBoundary(const std::string& s, size_t i) {
  if (i >= s.size()) return true;
  auto c = static_cast<uint8_t>(s[i]);
  return (c & 0xC0) != 0x80;
}

absl::StatusOr<ParPtr> Nth(const Call& c) {
  ASSIGN_OR_RETURN(int64_t i, c.IntArg(0));
  RETURN_IF_ERROR(c.Charge(cost::kLookup));
  size_t n = 0;
  if (c.Is(ExprKind::kList) || c.Is(ExprKind::kTuple)) {
    n = c.t->operands.size();
  } else if (c.Is(ExprKind::kByteArray)) {
    n = c.t->text.size();
  } else {
    return c.NotDefined();
  }
  if (i < 0 || static_cast<uint64_t>(i) >= n) {
    return Error(c.what, absl::StrCat("index ", i, " out of range for ",
                                      KindName(c.t->kind), " of length ", n));
  }
  if (c.Is(ExprKind::kByteArray)) {
    return Value(ir::Expr::Int(static_cast<uint8_t>(c.t->text[i])));
  }
  return c.t->operands[static_cast<size_t>(i)];
}

absl::StatusOr<ParPtr> Length(const Call& c) {
  if (c.Is(ExprKind::kString) || c.Is(ExprKind::kByteArray)) {
    RETURN_IF_ERROR(c.Charge(cost::kLookup));
    return Value(ir::Expr::Int(static_cast<int64_t>(c.t->text.size())));
  }
  if (c.Is(ExprKind::kList)) {
    RETURN_IF_ERROR(c.Charge(cost::kLookup));
    return Value(ir::Expr::Int(static_cast<int64_t>(c.t->operands.size())));
  }
  return c.NotDefined();
}

absl::StatusOr<ParPtr> Size(const Call& c) {
  if (c.Is(ExprKind::kSet)) {
    RETURN_IF_ERROR(c.Charge(cost::kLookup));
    return Value(ir::Expr::Int(static_cast<int64_t>(c.t->operands.size())));
  }
  if (c.Is(ExprKind::kMap)) {
    RETURN_IF_ERROR(c.Charge(cost::kLookup));
    return Value(ir::Expr::Int(static_cast<int64_t>(MapSize(*c.t))));
  }
  return c.NotDefined();
}

// slice(from, to): the items [from, to) after raising negative bounds to 0;
// empty when to < from or to > length (as the public node). A String is
// sliced by UTF-8 bytes and a bound inside a code point is an error (the
// result would not be UTF-8).
absl::StatusOr<ParPtr> Slice(const Call& c) {
  bool text = c.Is(ExprKind::kString) || c.Is(ExprKind::kByteArray);
  if (!text && !c.Is(ExprKind::kList)) return c.NotDefined();
  ASSIGN_OR_RETURN(int64_t from, c.IntArg(0));
  ASSIGN_OR_RETURN(int64_t to, c.IntArg(1));
  size_t n = text ? c.t->text.size() : c.t->operands.size();
  from = std::max<int64_t>(from, 0);
  to = std::max<int64_t>(to, 0);
  bool valid = to >= from && static_cast<uint64_t>(to) <= n;
  size_t a = valid ? static_cast<size_t>(from) : 0;
  size_t b = valid ? static_cast<size_t>(to) : 0;
  RETURN_IF_ERROR(
      c.Charge(Times(text ? cost::kPerByte : cost::kPerElement, b - a)));
  if (c.Is(ExprKind::kString)) {
    if (!IsBoundary(c.t->text, a) || !IsBoundary(c.t->text, b)) {
      return Error(c.what, absl::StrCat("bounds ", from, "..", to,
                                        " cut a UTF-8 code point"));
    }
    return Value(ir::Expr::String(c.t->text.substr(a, b - a)));
  }
  if (c.Is(ExprKind::kByteArray)) {
    return Value(ir::Expr::ByteArray(
        AsBytes(std::string_view(c.t->text).substr(a, b - a))));
  }
  std::vector<ParPtr> ps(c.t->operands.begin() + static_cast<ptrdiff_t>(a),
                         c.t->operands.begin() + static_cast<ptrdiff_t>(b));
  return Value(ir::Expr::List(std::move(ps), std::nullopt));
}

absl::StatusOr<ParPtr> Take(const Call& c) {
  if (!c.Is(ExprKind::kList)) return c.NotDefined();
  ASSIGN_OR_RETURN(int64_t k, c.IntArg(0));
  // A negative count takes the whole list (the public node reads it as a
  // huge unsigned count).
  size_t n = c.t->operands.size();
  if (k >= 0) n = std::min(n, static_cast<size_t>(k));
  RETURN_IF_ERROR(c.Charge(Times(cost::kPerElement, n)));
  std::vector<ParPtr> ps(c.t->operands.begin(),
                         c.t->operands.begin() + static_cast<ptrdiff_t>(n));
  return Value(ir::Expr::List(std::move(ps), std::nullopt));
}

absl::StatusOr<ParPtr> Get(const Call& c) {
  if (!c.Is(ExprKind::kMap)) return c.NotDefined();
  RETURN_IF_ERROR(c.Charge(cost::kLookup));
  int64_t i = FindKey(*c.t, *c.args[0]);
  if (i >= 0) return c.t->operands[2 * static_cast<size_t>(i) + 1];
  return c.args.size() > 1 ? c.args[1] : ir::Nil();
}

absl::StatusOr<ParPtr> Set(const Call& c) {
  if (!c.Is(ExprKind::kMap)) return c.NotDefined();
  RETURN_IF_ERROR(
      c.Charge(cost::kInsert + Times(cost::kPerElement, MapSize(*c.t))));
  std::vector<std::pair<ParPtr, ParPtr>> kvs = Pairs(*c.t);
  kvs.emplace_back(c.args[0], c.args[1]);
  ExprPtr map = ir::Expr::Map(std::move(kvs), std::nullopt);
  RETURN_IF_ERROR(CheckCollectionSize(c.what, MapSize(*map)));
  return Value(std::move(map));
}

absl::StatusOr<ParPtr> Keys(const Call& c) {
  if (!c.Is(ExprKind::kMap)) return c.NotDefined();
  RETURN_IF_ERROR(c.Charge(Times(cost::kPerElement, MapSize(*c.t))));
  std::vector<ParPtr> ks;
  ks.reserve(MapSize(*c.t));
  for (size_t i = 0; i + 1 < c.t->operands.size(); i += 2) {
    ks.push_back(c.t->operands[i]);
  }
  return Value(ir::Expr::Set(std::move(ks), std::nullopt));
}

absl::StatusOr<ParPtr> Contains(const Call& c) {
  if (c.Is(ExprKind::kSet)) {
    RETURN_IF_ERROR(c.Charge(cost::kLookup));
    return Value(ir::Expr::Bool(FindInSet(*c.t, *c.args[0]) >= 0));
  }
  if (c.Is(ExprKind::kMap)) {
    RETURN_IF_ERROR(c.Charge(cost::kLookup));
    return Value(ir::Expr::Bool(FindKey(*c.t, *c.args[0]) >= 0));
  }
  return c.NotDefined();
}

absl::StatusOr<ParPtr> Add(const Call& c) {
  if (!c.Is(ExprKind::kSet)) return c.NotDefined();
  RETURN_IF_ERROR(
      c.Charge(cost::kInsert + Times(cost::kPerElement, c.t->operands.size())));
  ExprPtr set = SetAdd(*c.t, c.args[0]);
  RETURN_IF_ERROR(CheckCollectionSize(c.what, set->operands.size()));
  return Value(std::move(set));
}

absl::StatusOr<ParPtr> Delete(const Call& c) {
  if (c.Is(ExprKind::kSet)) {
    RETURN_IF_ERROR(c.Charge(cost::kRemove +
                             Times(cost::kPerElement, c.t->operands.size())));
    return Value(SetRemove(*c.t, *c.args[0]));
  }
  if (c.Is(ExprKind::kMap)) {
    RETURN_IF_ERROR(
        c.Charge(cost::kRemove + Times(cost::kPerElement, MapSize(*c.t))));
    return Value(MapRemove(*c.t, *c.args[0]));
  }
  return c.NotDefined();
}

absl::StatusOr<ParPtr> UnionOrDiff(const Call& c, bool is_union) {
  if (c.Is(ExprKind::kSet)) {
    ASSIGN_OR_RETURN(const ir::Expr* o, c.CollectionArg(0, ExprKind::kSet));
    RETURN_IF_ERROR(c.Charge(
        Times(cost::kPerElement, c.t->operands.size() + o->operands.size())));
    ExprPtr set = is_union ? SetUnion(*c.t, *o) : SetDiff(*c.t, *o);
    RETURN_IF_ERROR(CheckCollectionSize(c.what, set->operands.size()));
    return Value(std::move(set));
  }
  if (c.Is(ExprKind::kMap)) {
    ASSIGN_OR_RETURN(const ir::Expr* o, c.CollectionArg(0, ExprKind::kMap));
    RETURN_IF_ERROR(
        c.Charge(Times(cost::kPerElement, MapSize(*c.t) + MapSize(*o))));
    ExprPtr map = is_union ? MapUnion(*c.t, *o) : MapDiff(*c.t, *o);
    RETURN_IF_ERROR(CheckCollectionSize(c.what, MapSize(*map)));
    return Value(std::move(map));
  }
  return c.NotDefined();
}

std::vector<ParPtr> PairTuples(const ir::Expr& map) {
  std::vector<ParPtr> ps;
  ps.reserve(MapSize(map));
  for (size_t i = 0; i + 1 < map.operands.size(); i += 2) {
    ps.push_back(
        Value(ir::Expr::Tuple({map.operands[i], map.operands[i + 1]})));
  }
  return ps;
}

absl::StatusOr<ParPtr> ToList(const Call& c) {
  if (c.Is(ExprKind::kList)) return c.target;
  if (c.Is(ExprKind::kTuple) || c.Is(ExprKind::kSet)) {
    RETURN_IF_ERROR(c.Charge(Times(cost::kPerElement, c.t->operands.size())));
    return Value(ir::Expr::List(c.t->operands, std::nullopt));
  }
  if (c.Is(ExprKind::kMap)) {
    RETURN_IF_ERROR(c.Charge(Times(cost::kPerElement, MapSize(*c.t))));
    return Value(ir::Expr::List(PairTuples(*c.t), std::nullopt));
  }
  return c.NotDefined();
}

absl::StatusOr<ParPtr> ToSet(const Call& c) {
  if (c.Is(ExprKind::kSet)) return c.target;
  if (c.Is(ExprKind::kList)) {
    RETURN_IF_ERROR(c.Charge(Times(cost::kPerElement, c.t->operands.size())));
    return Value(ir::Expr::Set(c.t->operands, std::nullopt));
  }
  if (c.Is(ExprKind::kMap)) {
    RETURN_IF_ERROR(c.Charge(Times(cost::kPerElement, MapSize(*c.t))));
    return Value(ir::Expr::Set(PairTuples(*c.t), std::nullopt));
  }
  return c.NotDefined();
}

// toMap on a Set or List of pairs (two-element tuples); a later duplicate
// key wins (List order; Set canonical order).
absl::StatusOr<ParPtr> ToMap(const Call& c) {
  if (c.Is(ExprKind::kMap)) return c.target;
  if (!c.Is(ExprKind::kSet) && !c.Is(ExprKind::kList)) return c.NotDefined();
  RETURN_IF_ERROR(c.Charge(Times(cost::kPerElement, c.t->operands.size())));
  std::vector<std::pair<ParPtr, ParPtr>> kvs;
  kvs.reserve(c.t->operands.size());
  for (const ParPtr& p : c.t->operands) {
    const ir::Expr* e = p->SingleExpr();
    if (e == nullptr || e->kind != ExprKind::kTuple ||
        e->operands.size() != 2) {
      return Error(c.what, absl::StrCat("element is not a pair (got ",
                                        TypeName(*p), ")"));
    }
    kvs.emplace_back(e->operands[0], e->operands[1]);
  }
  return Value(ir::Expr::Map(std::move(kvs), std::nullopt));
}

// toByteArray: the public node's bytes for the evaluated receiver (the
// protobuf encoding of its rhoapi Par, rholang/frontend/public_par.h), so that
// signatures computed by clients over `toByteArray` (registry insertSigned)
// verify here. Charged per encoded byte. A receiver over kMaxTermNodes (one
// that shares subterms: `[l, l]` nested n times encodes 2^n copies) fails
// before anything is encoded, so the encoding is O(kMaxTermNodes) work.
absl::StatusOr<ParPtr> ToByteArray(const Call& c) {
  RETURN_IF_ERROR(CheckTermSize(c.what, *c.target));
  ASSIGN_OR_RETURN(Bytes bytes, EncodePublicPar(*c.target));
  RETURN_IF_ERROR(c.Charge(Times(cost::kPerByte, bytes.size())));
  RETURN_IF_ERROR(CheckTextSize(c.what, bytes.size()));
  return Value(ir::Expr::ByteArray(bytes));
}

// The public rule: every character that is not a hex digit is skipped, and
// an odd number of digits is read as if a `0` led them ("a" is 0x0a,
// "0x1f" is 0x00 0x1f, "zz" is empty). It never fails on a String.
absl::StatusOr<ParPtr> HexToBytes(const Call& c) {
  if (!c.Is(ExprKind::kString)) return c.NotDefined();
  RETURN_IF_ERROR(c.Charge(Times(cost::kPerByte, c.t->text.size())));
  std::string digits;
  digits.reserve(c.t->text.size() + 1);
  for (char ch : c.t->text) {
    if (absl::ascii_isxdigit(static_cast<unsigned char>(ch))) {
      digits.push_back(ch);
    }
  }
  if (digits.size() % 2 != 0) digits.insert(digits.begin(), '0');
  absl::StatusOr<Bytes> bytes = HexDecode(digits);
  if (!bytes.ok()) return absl::InternalError(bytes.status().message());
  return Value(ir::Expr::ByteArray(*bytes));
}

absl::StatusOr<ParPtr> BytesToHex(const Call& c) {
  if (!c.Is(ExprKind::kByteArray)) return c.NotDefined();
  RETURN_IF_ERROR(CheckTextSize(c.what, 2 * c.t->text.size()));
  RETURN_IF_ERROR(c.Charge(Times(cost::kPerByte, 2 * c.t->text.size())));
  return Value(ir::Expr::String(HexEncode(AsBytes(c.t->text))));
}

absl::StatusOr<ParPtr> ToUtf8Bytes(const Call& c) {
  if (!c.Is(ExprKind::kString)) return c.NotDefined();
  RETURN_IF_ERROR(c.Charge(Times(cost::kPerByte, c.t->text.size())));
  return Value(ir::Expr::ByteArray(AsBytes(c.t->text)));
}

// toString: a deploy id's bytes in hex; a String is returned as is.
absl::StatusOr<ParPtr> ToString(const Call& c) {
  if (c.Is(ExprKind::kString)) return c.target;
  const ir::Par& p = *c.target;
  if (p.ComponentCount() == 1 && p.unforgeables.size() == 1 &&
      p.unforgeables[0]->kind == ir::UnforgeableKind::kDeployId) {
    const Bytes& id = p.unforgeables[0]->id;
    RETURN_IF_ERROR(c.Charge(Times(cost::kPerByte, 2 * id.size())));
    return Value(ir::Expr::String(HexEncode(id)));
  }
  return c.NotDefined();
}

using Impl = absl::StatusOr<ParPtr> (*)(const Call&);

struct MethodSpec {
  std::string_view name;
  size_t arity;
  Impl impl;
};

absl::StatusOr<ParPtr> Union(const Call& c) { return UnionOrDiff(c, true); }
absl::StatusOr<ParPtr> Diff(const Call& c) { return UnionOrDiff(c, false); }

constexpr MethodSpec kMethods[] = {
    {"nth", 1, Nth},
    {"length", 0, Length},
    {"slice", 2, Slice},
    {"take", 1, Take},
    {"size", 0, Size},
    {"get", 1, Get},
    {"getOrElse", 2, Get},
    {"set", 2, Set},
    {"keys", 0, Keys},
    {"contains", 1, Contains},
    {"add", 1, Add},
    {"delete", 1, Delete},
    {"union", 1, Union},
    {"diff", 1, Diff},
    {"toList", 0, ToList},
    {"toSet", 0, ToSet},
    {"toMap", 0, ToMap},
    {"toByteArray", 0, ToByteArray},
    {"hexToBytes", 0, HexToBytes},
    {"bytesToHex", 0, BytesToHex},
    {"toUtf8Bytes", 0, ToUtf8Bytes},
    {"toString", 0, ToString},
};

}  // namespace

absl::StatusOr<ParPtr> EvalMethod(const ir::Expr& m, ExprContext& ctx) {
  std::string what = absl::StrCat("method `", m.text, "`");
  const MethodSpec* spec = nullptr;
  for (const MethodSpec& s : kMethods) {
    if (s.name == m.text) spec = &s;
  }
  if (spec == nullptr) {
    return Error(what, "unknown method");
  }
  if (m.operands.size() != spec->arity) {
    return Error(what, absl::StrCat("expects ", spec->arity, " argument",
                                    spec->arity == 1 ? "" : "s", ", got ",
                                    m.operands.size()));
  }
  RETURN_IF_ERROR(Charge(ctx, cost::kMethodCall));
  Call c;
  c.what = std::move(what);
  c.ctx = &ctx;
  ASSIGN_OR_RETURN(c.target, EvalPar(m.target, ctx));
  c.t = c.target->SingleExpr();
  c.args.reserve(m.operands.size());
  for (const ParPtr& a : m.operands) {
    ASSIGN_OR_RETURN(ParPtr v, EvalPar(a, ctx));
    c.args.push_back(std::move(v));
  }
  return spec->impl(c);
}

}  // namespace rnode::rholang::interp::expr_internal

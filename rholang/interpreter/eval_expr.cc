// Expression evaluation: values, collections and operators. Methods and
// the collection operations they share with operators live in methods.cc.
#include "rholang/interpreter/eval_expr.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "rholang/frontend/limits.h"
#include "rholang/frontend/matcher.h"
#include "rholang/interpreter/eval_internal.h"
#include "rholang/interpreter/limits.h"
#include "util/status_macros.h"

namespace rnode::rholang::interp {
namespace expr_internal {

using ir::ExprKind;
using ir::ExprPtr;
using ir::ParPtr;

const char* KindName(ExprKind k) {
  switch (k) {
    case ExprKind::kBool:
      return "Bool";
    case ExprKind::kInt:
      return "Int";
    case ExprKind::kString:
      return "String";
    case ExprKind::kUri:
      return "Uri";
    case ExprKind::kByteArray:
      return "ByteArray";
    case ExprKind::kList:
      return "List";
    case ExprKind::kTuple:
      return "Tuple";
    case ExprKind::kSet:
      return "Set";
    case ExprKind::kMap:
      return "Map";
    case ExprKind::kVar:
      return "variable";
    default:
      return "expression";
  }
}

std::string TypeName(const ir::Par& p) {
  if (p.IsNil()) return "Nil";
  if (const ir::Expr* e = p.SingleExpr()) return std::string(KindName(e->kind));
  if (p.ComponentCount() == 1 && p.unforgeables.size() == 1) {
    return "unforgeable name";
  }
  if (p.ComponentCount() == 1 && p.bundles.size() == 1) return "bundle";
  return "process";
}

absl::Status Error(const std::string& what, const std::string& detail) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", detail));
}

int64_t Times(int64_t unit, uint64_t n) {
  constexpr int64_t kMax = INT64_MAX;
  if (unit <= 0 || n == 0) return 0;
  if (n > static_cast<uint64_t>(kMax / unit)) return kMax;
  return unit * static_cast<int64_t>(n);
}

namespace {

std::string OpName(ExprKind k) {
  switch (k) {
    case ExprKind::kNot:
      return "operator `not`";
    case ExprKind::kNeg:
      return "operator unary `-`";
    case ExprKind::kMul:
      return "operator `*`";
    case ExprKind::kDiv:
      return "operator `/`";
    case ExprKind::kMod:
      return "operator `%`";
    case ExprKind::kAdd:
      return "operator `+`";
    case ExprKind::kSub:
      return "operator `-`";
    case ExprKind::kLt:
      return "operator `<`";
    case ExprKind::kLte:
      return "operator `<=`";
    case ExprKind::kGt:
      return "operator `>`";
    case ExprKind::kGte:
      return "operator `>=`";
    case ExprKind::kEq:
      return "operator `==`";
    case ExprKind::kNeq:
      return "operator `!=`";
    case ExprKind::kAnd:
      return "operator `and`";
    case ExprKind::kOr:
      return "operator `or`";
    case ExprKind::kShortAnd:
      return "operator `&&`";
    case ExprKind::kShortOr:
      return "operator `||`";
    case ExprKind::kMatches:
      return "operator `matches`";
    case ExprKind::kPercentPercent:
      return "operator `%%`";
    case ExprKind::kPlusPlus:
      return "operator `++`";
    case ExprKind::kMinusMinus:
      return "operator `--`";
    default:
      return absl::StrCat("expression kind ", static_cast<int>(k));
  }
}

absl::Status TypeError(ExprKind op, const char* want, const ir::Par& a) {
  return Error(OpName(op),
               absl::StrCat("expected ", want, ", got ", TypeName(a)));
}

absl::Status TypeError2(ExprKind op, const char* want, const ir::Par& a,
                        const ir::Par& b) {
  return Error(OpName(op), absl::StrCat("expected ", want, ", got ",
                                        TypeName(a), " and ", TypeName(b)));
}

// An operand that must be one expression: evaluated; the value must be one
// expression too.
absl::StatusOr<ExprPtr> Operand(ExprKind op, const ParPtr& p,
                                ExprContext& ctx) {
  if (p->SingleExpr() == nullptr) {
    return Error(OpName(op), absl::StrCat("operand is not an expression (got ",
                                          TypeName(*p), ")"));
  }
  const ExprPtr& e = p->exprs[0];
  if (e->kind != ExprKind::kMethod) return EvalToExpr(e, ctx);
  ASSIGN_OR_RETURN(ParPtr v, EvalMethod(*e, ctx));
  if (v->SingleExpr() == nullptr) {
    return Error(OpName(op), absl::StrCat("operand is not an expression (got ",
                                          TypeName(*v), ")"));
  }
  return v->exprs[0];
}

// The free variables of the pattern at its own level: every Free var and
// remainder outside nested patterns (receive bind patterns, match case
// patterns, the right side of a nested `matches`). Returns max level + 1.
class FreeCounter {
 public:
  void Par(const ir::Par& p) {
    for (const auto& s : p.sends) {
      Par(*s->chan);
      for (const auto& d : s->data) Par(*d);
    }
    for (const auto& r : p.receives) {
      for (const auto& b : r->binds) Par(*b.source);
      Par(*r->body);
    }
    for (const auto& n : p.news) Par(*n->body);
    for (const auto& e : p.exprs) Expr(*e);
    for (const auto& m : p.matches) {
      Par(*m->target);
      for (const auto& c : m->cases) Par(*c.body);
    }
    for (const auto& b : p.bundles) Par(*b->body);
    for (const auto& c : p.connectives) {
      for (const auto& q : c->ps) Par(*q);
    }
    for (const auto& i : p.conditionals) {
      Par(*i->condition);
      Par(*i->if_true);
      Par(*i->if_false);
    }
  }
  uint32_t count() const { return count_; }

 private:
  void Note(const ir::Var& v) {
    if (v.kind == ir::VarKind::kFree) count_ = std::max(count_, v.index + 1);
  }
  void Expr(const ir::Expr& e) {
    if (e.kind == ExprKind::kVar) Note(e.var);
    if (e.remainder) Note(*e.remainder);
    if (e.target) Par(*e.target);
    if (e.kind == ExprKind::kMatches) {
      Par(*e.operands[0]);
      return;
    }
    for (const auto& o : e.operands) Par(*o);
  }
  uint32_t count_ = 0;
};

bool CheckedAdd(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}
bool CheckedSub(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_sub_overflow(a, b, out);
}
bool CheckedMul(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

absl::StatusOr<ExprPtr> Arith(ExprKind op, const ParPtr& pa, const ParPtr& pb,
                              ExprContext& ctx) {
  ASSIGN_OR_RETURN(ExprPtr a, Operand(op, pa, ctx));
  ASSIGN_OR_RETURN(ExprPtr b, Operand(op, pb, ctx));
  if (a->kind != ExprKind::kInt || b->kind != ExprKind::kInt) {
    return TypeError2(op, "Int and Int", *ir::ParOf(a), *ir::ParOf(b));
  }
  RETURN_IF_ERROR(Charge(ctx, op == ExprKind::kAdd || op == ExprKind::kSub
                                  ? cost::kSum
                                  : cost::kMultiply));
  int64_t x = a->int_value, y = b->int_value, r = 0;
  switch (op) {
    case ExprKind::kAdd:
      if (!CheckedAdd(x, y, &r)) return Error(OpName(op), "integer overflow");
      break;
    case ExprKind::kSub:
      if (!CheckedSub(x, y, &r)) return Error(OpName(op), "integer overflow");
      break;
    case ExprKind::kMul:
      if (!CheckedMul(x, y, &r)) return Error(OpName(op), "integer overflow");
      break;
    case ExprKind::kDiv:
    case ExprKind::kMod:
      if (y == 0) {
        return Error(OpName(op), op == ExprKind::kDiv ? "division by zero"
                                                      : "modulo by zero");
      }
      if (x == INT64_MIN && y == -1) {
        return Error(OpName(op), "integer overflow");
      }
      r = op == ExprKind::kDiv ? x / y : x % y;
      break;
    default:
      return absl::InternalError("Arith: not an arithmetic operator");
  }
  return ir::Expr::Int(r);
}

// `e` (a Set or Map just built from operands within the limit, so at most
// twice it) if its size is within kMaxCollectionElements.
absl::StatusOr<ExprPtr> Limited(const std::string& what, ExprPtr e) {
  size_t n = e->kind == ExprKind::kMap ? MapSize(*e) : e->operands.size();
  RETURN_IF_ERROR(CheckCollectionSize(what, n));
  return e;
}

// `+` and `-`: Int arithmetic, or Set + element, Set - element, Map - key.
absl::StatusOr<ExprPtr> PlusMinus(ExprKind op, const ParPtr& pa,
                                  const ParPtr& pb, ExprContext& ctx) {
  ASSIGN_OR_RETURN(ExprPtr a, Operand(op, pa, ctx));
  bool set = a->kind == ExprKind::kSet;
  bool map = a->kind == ExprKind::kMap && op == ExprKind::kSub;
  if (!set && !map) {
    if (a->kind != ExprKind::kInt) {
      return TypeError(op,
                       op == ExprKind::kAdd ? "Int or Set" : "Int, Set or Map",
                       *ir::ParOf(a));
    }
    return Arith(op, ir::ParOf(a), pb, ctx);
  }
  ASSIGN_OR_RETURN(ParPtr b, EvalPar(pb, ctx));
  size_t n = set ? a->operands.size() : MapSize(*a);
  RETURN_IF_ERROR(Charge(ctx, cost::kOpCall + Times(cost::kPerElement, n)));
  if (map) return MapRemove(*a, *b);
  if (op == ExprKind::kAdd) return Limited(OpName(op), SetAdd(*a, b));
  return SetRemove(*a, *b);
}

absl::StatusOr<ExprPtr> Compare(ExprKind op, const ParPtr& pa, const ParPtr& pb,
                                ExprContext& ctx) {
  ASSIGN_OR_RETURN(ExprPtr a, Operand(op, pa, ctx));
  ASSIGN_OR_RETURN(ExprPtr b, Operand(op, pb, ctx));
  bool comparable = a->kind == b->kind &&
                    (a->kind == ExprKind::kBool || a->kind == ExprKind::kInt ||
                     a->kind == ExprKind::kString);
  if (!comparable) {
    return TypeError2(op, "two Bools, two Ints or two Strings", *ir::ParOf(a),
                      *ir::ParOf(b));
  }
  RETURN_IF_ERROR(Charge(ctx, cost::kCompare));
  int c = 0;
  switch (a->kind) {
    case ExprKind::kBool:
      c = static_cast<int>(a->bool_value) - static_cast<int>(b->bool_value);
      break;
    case ExprKind::kInt:
      c = a->int_value < b->int_value   ? -1
          : a->int_value > b->int_value ? 1
                                        : 0;
      break;
    default:
      // std::string compares chars as unsigned: bytewise UTF-8 order.
      c = a->text.compare(b->text);
      break;
  }
  bool r = false;
  switch (op) {
    case ExprKind::kLt:
      r = c < 0;
      break;
    case ExprKind::kLte:
      r = c <= 0;
      break;
    case ExprKind::kGt:
      r = c > 0;
      break;
    default:
      r = c >= 0;
      break;
  }
  return ir::Expr::Bool(r);
}

absl::StatusOr<ExprPtr> Logic(ExprKind op, const ParPtr& pa, const ParPtr& pb,
                              ExprContext& ctx) {
  ASSIGN_OR_RETURN(ExprPtr a, Operand(op, pa, ctx));
  ASSIGN_OR_RETURN(ExprPtr b, Operand(op, pb, ctx));
  if (a->kind != ExprKind::kBool || b->kind != ExprKind::kBool) {
    return TypeError2(op, "Bool and Bool", *ir::ParOf(a), *ir::ParOf(b));
  }
  RETURN_IF_ERROR(Charge(ctx, cost::kBoolean));
  return ir::Expr::Bool(op == ExprKind::kAnd ? a->bool_value && b->bool_value
                                             : a->bool_value || b->bool_value);
}

// `a && b`, `a || b`: `b` is evaluated (and must be a Bool) only when `a`
// does not decide the result; one boolean charge either way.
absl::StatusOr<ExprPtr> ShortCircuit(ExprKind op, const ParPtr& pa,
                                     const ParPtr& pb, ExprContext& ctx) {
  ASSIGN_OR_RETURN(ExprPtr a, Operand(op, pa, ctx));
  if (a->kind != ExprKind::kBool) return TypeError(op, "Bool", *ir::ParOf(a));
  bool decided = op == ExprKind::kShortAnd ? !a->bool_value : a->bool_value;
  if (!decided) {
    ASSIGN_OR_RETURN(a, Operand(op, pb, ctx));
    if (a->kind != ExprKind::kBool) {
      return TypeError(op, "Bool", *ir::ParOf(a));
    }
  }
  RETURN_IF_ERROR(Charge(ctx, cost::kBoolean));
  return a;
}

absl::StatusOr<ExprPtr> Equality(ExprKind op, const ParPtr& pa,
                                 const ParPtr& pb, ExprContext& ctx) {
  ASSIGN_OR_RETURN(ParPtr a, EvalPar(pa, ctx));
  ASSIGN_OR_RETURN(ParPtr b, EvalPar(pb, ctx));
  RETURN_IF_ERROR(Charge(ctx, cost::kCompare));
  bool eq = a->hash == b->hash;
  return ir::Expr::Bool(op == ExprKind::kEq ? eq : !eq);
}

absl::StatusOr<ExprPtr> Matches(const ParPtr& target, const ParPtr& pattern,
                                ExprContext& ctx) {
  ASSIGN_OR_RETURN(ParPtr t, EvalPar(target, ctx));
  RETURN_IF_ERROR(Charge(ctx, cost::kOpCall));
  FreeCounter fc;
  fc.Par(*pattern);
  absl::StatusOr<std::optional<Bindings>> m =
      SpatialMatch(*t, *pattern, fc.count());
  if (!m.ok()) {
    if (m.status().code() == absl::StatusCode::kResourceExhausted) {
      return absl::ResourceExhaustedError(absl::StrCat(
          OpName(ExprKind::kMatches), ": ", std::string(m.status().message())));
    }
    return Error(OpName(ExprKind::kMatches), std::string(m.status().message()));
  }
  return ir::Expr::Bool(m->has_value());
}

// Prints an interpolated value: String and Uri raw, Int in decimal, Bool as
// true / false.
bool Printable(const ir::Par& p, std::string* out) {
  const ir::Expr* e = p.SingleExpr();
  if (e == nullptr) return false;
  switch (e->kind) {
    case ExprKind::kString:
    case ExprKind::kUri:
      *out = e->text;
      return true;
    case ExprKind::kInt:
      *out = std::to_string(e->int_value);
      return true;
    case ExprKind::kBool:
      *out = e->bool_value ? "true" : "false";
      return true;
    default:
      return false;
  }
}

absl::StatusOr<ExprPtr> Interpolate(const ParPtr& pa, const ParPtr& pb,
                                    ExprContext& ctx) {
  constexpr ExprKind op = ExprKind::kPercentPercent;
  ASSIGN_OR_RETURN(ExprPtr a, Operand(op, pa, ctx));
  ASSIGN_OR_RETURN(ExprPtr b, Operand(op, pb, ctx));
  if (a->kind != ExprKind::kString || b->kind != ExprKind::kMap) {
    return TypeError2(op, "String and Map", *ir::ParOf(a), *ir::ParOf(b));
  }
  size_t n = MapSize(*b);
  RETURN_IF_ERROR(Charge(ctx, cost::kOpCall +
                                  Times(cost::kPerByte, a->text.size()) +
                                  Times(cost::kPerElement, n)));
  std::vector<std::pair<std::string, std::string>> table;
  table.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const ir::Expr* k = b->operands[2 * i]->SingleExpr();
    if (k == nullptr || k->kind != ExprKind::kString) {
      return Error(OpName(op),
                   absl::StrCat("map key is not a String (got ",
                                TypeName(*b->operands[2 * i]), ")"));
    }
    std::string v;
    if (!Printable(*b->operands[2 * i + 1], &v)) {
      return Error(OpName(op),
                   absl::StrCat("value of key \"", k->text,
                                "\" is not a String, Int, Bool or Uri (got ",
                                TypeName(*b->operands[2 * i + 1]), ")"));
    }
    table.emplace_back(k->text, std::move(v));
  }
  // Left to right: at each `${`, the first key (in map order) whose
  // `${key}` starts there is replaced by its value; any other byte is
  // copied. Each key comparison at a `${` is charged one element.
  const std::string& s = a->text;
  uint64_t openings = 0;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] == '$' && s[i + 1] == '{') ++openings;
  }
  // openings <= template bytes and n <= term size: the product fits.
  RETURN_IF_ERROR(Charge(ctx, Times(cost::kPerElement, openings * n)));
  // Two passes: the first measures the result, which is charged before the
  // second builds it (a short template can expand a large value many times).
  auto scan = [&](std::string* out) {
    size_t size = 0;
    size_t i = 0;
    while (i < s.size()) {
      const std::string* value = nullptr;
      if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '{') {
        for (const auto& [key, v] : table) {
          size_t end = i + 2 + key.size();
          if (end < s.size() && s[end] == '}' &&
              s.compare(i + 2, key.size(), key) == 0) {
            value = &v;
            i = end + 1;
            break;
          }
        }
      }
      if (value != nullptr) {
        size += value->size();
        if (out != nullptr) out->append(*value);
      } else {
        ++size;
        if (out != nullptr) out->push_back(s[i]);
        ++i;
      }
    }
    return size;
  };
  size_t size = scan(nullptr);
  RETURN_IF_ERROR(CheckTextSize(OpName(op), size));
  RETURN_IF_ERROR(Charge(ctx, Times(cost::kPerByte, size)));
  std::string out;
  out.reserve(size);
  scan(&out);
  return ir::Expr::String(std::move(out));
}

absl::StatusOr<ExprPtr> Concat(const ParPtr& pa, const ParPtr& pb,
                               ExprContext& ctx) {
  constexpr ExprKind op = ExprKind::kPlusPlus;
  ASSIGN_OR_RETURN(ExprPtr a, Operand(op, pa, ctx));
  ASSIGN_OR_RETURN(ExprPtr b, Operand(op, pb, ctx));
  bool same = a->kind == b->kind;
  switch (same ? a->kind : ExprKind::kBool) {
    case ExprKind::kString:
    case ExprKind::kByteArray: {
      RETURN_IF_ERROR(
          CheckTextSize(OpName(op), a->text.size() + b->text.size()));
      RETURN_IF_ERROR(Charge(
          ctx, cost::kOpCall +
                   Times(cost::kPerByte, a->text.size() + b->text.size())));
      std::string s = a->text + b->text;
      if (a->kind == ExprKind::kString) return ir::Expr::String(std::move(s));
      return ir::Expr::ByteArray(AsBytes(s));
    }
    case ExprKind::kList: {
      RETURN_IF_ERROR(CheckCollectionSize(
          OpName(op), a->operands.size() + b->operands.size()));
      RETURN_IF_ERROR(Charge(
          ctx, cost::kOpCall + Times(cost::kPerElement,
                                     a->operands.size() + b->operands.size())));
      std::vector<ParPtr> ps = a->operands;
      ps.insert(ps.end(), b->operands.begin(), b->operands.end());
      return ir::Expr::List(std::move(ps), std::nullopt);
    }
    case ExprKind::kSet:
      RETURN_IF_ERROR(Charge(
          ctx, cost::kOpCall + Times(cost::kPerElement,
                                     a->operands.size() + b->operands.size())));
      return Limited(OpName(op), SetUnion(*a, *b));
    case ExprKind::kMap:
      RETURN_IF_ERROR(Charge(
          ctx,
          cost::kOpCall + Times(cost::kPerElement, MapSize(*a) + MapSize(*b))));
      return Limited(OpName(op), MapUnion(*a, *b));
    default:
      return TypeError2(op, "two Strings, ByteArrays, Lists, Sets or Maps",
                        *ir::ParOf(a), *ir::ParOf(b));
  }
}

absl::StatusOr<ExprPtr> Difference(const ParPtr& pa, const ParPtr& pb,
                                   ExprContext& ctx) {
  constexpr ExprKind op = ExprKind::kMinusMinus;
  ASSIGN_OR_RETURN(ExprPtr a, Operand(op, pa, ctx));
  ASSIGN_OR_RETURN(ExprPtr b, Operand(op, pb, ctx));
  if (a->kind != ExprKind::kSet || b->kind != ExprKind::kSet) {
    return TypeError2(op, "Set and Set", *ir::ParOf(a), *ir::ParOf(b));
  }
  RETURN_IF_ERROR(Charge(
      ctx, cost::kOpCall + Times(cost::kPerElement,
                                 a->operands.size() + b->operands.size())));
  return SetDiff(*a, *b);
}

using ValueSet = std::unordered_set<Hash32, Hash32Hasher>;

// Hashes of the Pars found to be values (evaluating them returned them
// unchanged and charged nothing) during the outermost Collection call on
// this thread. Evaluation is pure, so such a Par evaluates to itself for
// free every time: skipping it changes neither a result nor a charge, and a
// value that shares subterms (`[l, l]` nested n times) is walked once per
// distinct subterm instead of 2^n times.
thread_local ValueSet* t_values = nullptr;

absl::StatusOr<ExprPtr> Collection(const ExprPtr& e, ExprContext& ctx) {
  ValueSet own;
  struct Scope {
    bool outermost;
    ~Scope() {
      if (outermost) t_values = nullptr;
    }
  } scope{t_values == nullptr};
  if (scope.outermost) t_values = &own;
  bool changed = false;
  std::vector<ParPtr> ps;
  ps.reserve(e->operands.size());
  for (const ParPtr& p : e->operands) {
    if (t_values->count(p->hash) != 0) {
      ps.push_back(p);
      continue;
    }
    int64_t before = ctx.meter->spent();
    ASSIGN_OR_RETURN(ParPtr v, EvalPar(p, ctx));
    if (v == p && ctx.meter->spent() == before) t_values->insert(p->hash);
    changed = changed || v != p;
    ps.push_back(std::move(v));
  }
  if (!changed) return e;
  switch (e->kind) {
    case ExprKind::kList:
      return ir::Expr::List(std::move(ps), e->remainder);
    case ExprKind::kTuple:
      return ir::Expr::Tuple(std::move(ps));
    case ExprKind::kSet:
      return ir::Expr::Set(std::move(ps), e->remainder);
    default: {
      std::vector<std::pair<ParPtr, ParPtr>> kvs;
      kvs.reserve(ps.size() / 2);
      for (size_t i = 0; i + 1 < ps.size(); i += 2) {
        kvs.emplace_back(std::move(ps[i]), std::move(ps[i + 1]));
      }
      return ir::Expr::Map(std::move(kvs), e->remainder);
    }
  }
}

absl::StatusOr<ParPtr> CheckDepth(ParPtr p) {
  if (p->height > kMaxIrDepth) {
    return absl::ResourceExhaustedError(
        absl::StrCat("expression value deeper than ", kMaxIrDepth, " levels"));
  }
  return p;
}

}  // namespace

absl::StatusOr<ExprPtr> EvalToExpr(const ExprPtr& e, ExprContext& ctx) {
  const std::vector<ParPtr>& ops = e->operands;
  switch (e->kind) {
    case ExprKind::kBool:
    case ExprKind::kInt:
    case ExprKind::kString:
    case ExprKind::kUri:
    case ExprKind::kByteArray:
      return e;
    case ExprKind::kVar:
      if (e->var.kind == ir::VarKind::kBound) {
        return absl::InternalError(
            "expression evaluation: unsubstituted bound variable");
      }
      return Error("expression evaluation",
                   "free variable or wildcard outside a pattern");
    case ExprKind::kNot: {
      ASSIGN_OR_RETURN(ExprPtr a, Operand(e->kind, ops[0], ctx));
      if (a->kind != ExprKind::kBool) {
        return TypeError(e->kind, "Bool", *ir::ParOf(a));
      }
      RETURN_IF_ERROR(Charge(ctx, cost::kBoolean));
      return ir::Expr::Bool(!a->bool_value);
    }
    case ExprKind::kNeg: {
      ASSIGN_OR_RETURN(ExprPtr a, Operand(e->kind, ops[0], ctx));
      if (a->kind != ExprKind::kInt) {
        return TypeError(e->kind, "Int", *ir::ParOf(a));
      }
      RETURN_IF_ERROR(Charge(ctx, cost::kSum));
      if (a->int_value == INT64_MIN) {
        return Error(OpName(e->kind), "integer overflow");
      }
      return ir::Expr::Int(-a->int_value);
    }
    case ExprKind::kMul:
    case ExprKind::kDiv:
    case ExprKind::kMod:
      return Arith(e->kind, ops[0], ops[1], ctx);
    case ExprKind::kAdd:
    case ExprKind::kSub:
      return PlusMinus(e->kind, ops[0], ops[1], ctx);
    case ExprKind::kLt:
    case ExprKind::kLte:
    case ExprKind::kGt:
    case ExprKind::kGte:
      return Compare(e->kind, ops[0], ops[1], ctx);
    case ExprKind::kEq:
    case ExprKind::kNeq:
      return Equality(e->kind, ops[0], ops[1], ctx);
    case ExprKind::kAnd:
    case ExprKind::kOr:
      return Logic(e->kind, ops[0], ops[1], ctx);
    case ExprKind::kShortAnd:
    case ExprKind::kShortOr:
      return ShortCircuit(e->kind, ops[0], ops[1], ctx);
    case ExprKind::kMatches:
      return Matches(ops[0], ops[1], ctx);
    case ExprKind::kPercentPercent:
      return Interpolate(ops[0], ops[1], ctx);
    case ExprKind::kPlusPlus:
      return Concat(ops[0], ops[1], ctx);
    case ExprKind::kMinusMinus:
      return Difference(ops[0], ops[1], ctx);
    case ExprKind::kList:
    case ExprKind::kTuple:
    case ExprKind::kSet:
    case ExprKind::kMap:
      return Collection(e, ctx);
    case ExprKind::kMethod: {
      ASSIGN_OR_RETURN(ParPtr v, EvalMethod(*e, ctx));
      if (v->SingleExpr() == nullptr) {
        return Error(absl::StrCat("method `", e->text, "`"),
                     absl::StrCat("result is not an expression (got ",
                                  TypeName(*v), ")"));
      }
      return v->exprs[0];
    }
  }
  return absl::InternalError("expression evaluation: unknown expression kind");
}

}  // namespace expr_internal

absl::StatusOr<ir::ParPtr> EvalPar(const ir::ParPtr& term, ExprContext& ctx) {
  if (term->exprs.empty()) {
    RETURN_IF_ERROR(CheckTermSize("expression value", *term));
    return term;
  }
  bool changed = false;
  ir::ParBuilder out;
  for (const ir::ExprPtr& e : term->exprs) {
    if (ir::IsGround(e->kind)) {
      out.Add(e);
      continue;
    }
    if (e->kind == ir::ExprKind::kMethod) {
      ASSIGN_OR_RETURN(ir::ParPtr v, expr_internal::EvalMethod(*e, ctx));
      out.AddAll(*v);
      changed = true;
      continue;
    }
    ASSIGN_OR_RETURN(ir::ExprPtr v, expr_internal::EvalToExpr(e, ctx));
    changed = changed || v != e;
    out.Add(std::move(v));
  }
  if (!changed) {
    RETURN_IF_ERROR(CheckTermSize("expression value", *term));
    return term;
  }
  for (const auto& s : term->sends) out.Add(s);
  for (const auto& r : term->receives) out.Add(r);
  for (const auto& n : term->news) out.Add(n);
  for (const auto& m : term->matches) out.Add(m);
  for (const auto& u : term->unforgeables) out.Add(u);
  for (const auto& b : term->bundles) out.Add(b);
  for (const auto& c : term->connectives) out.Add(c);
  for (const auto& i : term->conditionals) out.Add(i);
  ir::ParPtr result = out.Build();
  RETURN_IF_ERROR(CheckTermSize("expression value", *result));
  return expr_internal::CheckDepth(std::move(result));
}

absl::StatusOr<ir::ExprPtr> EvalSingleExpr(const ir::ParPtr& term,
                                           ExprContext& ctx) {
  if (term->SingleExpr() == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected a single expression, got ", expr_internal::TypeName(*term)));
  }
  const ir::ExprPtr& e = term->exprs[0];
  ir::ExprPtr v;
  if (e->kind == ir::ExprKind::kMethod) {
    ASSIGN_OR_RETURN(ir::ParPtr p, expr_internal::EvalMethod(*e, ctx));
    if (p->SingleExpr() == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "expected a single expression, got ", expr_internal::TypeName(*p)));
    }
    v = p->exprs[0];
  } else {
    ASSIGN_OR_RETURN(v, expr_internal::EvalToExpr(e, ctx));
  }
  if (v->height > kMaxIrDepth) {
    return absl::ResourceExhaustedError(
        absl::StrCat("expression value deeper than ", kMaxIrDepth, " levels"));
  }
  return v;
}

absl::StatusOr<bool> EvalBool(const ir::ParPtr& term, ExprContext& ctx) {
  if (term->SingleExpr() == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "condition is not a Bool (got ", expr_internal::TypeName(*term), ")"));
  }
  const ir::ExprPtr& e = term->exprs[0];
  ir::ParPtr v;
  if (e->kind == ir::ExprKind::kMethod) {
    ASSIGN_OR_RETURN(v, expr_internal::EvalMethod(*e, ctx));
  } else {
    ASSIGN_OR_RETURN(ir::ExprPtr x, expr_internal::EvalToExpr(e, ctx));
    if (x->kind == ir::ExprKind::kBool) return x->bool_value;
    v = ir::ParOf(std::move(x));
  }
  const ir::Expr* b = v->SingleExpr();
  if (b == nullptr || b->kind != ir::ExprKind::kBool) {
    return absl::InvalidArgumentError(absl::StrCat(
        "condition is not a Bool (got ", expr_internal::TypeName(*v), ")"));
  }
  return b->bool_value;
}

std::string ValueTypeName(const ir::Par& value) {
  return expr_internal::TypeName(value);
}

}  // namespace rnode::rholang::interp

// Randomized agreement tests: substituting a value and evaluating gives the
// same result as evaluating the program with the value written in, and Int
// arithmetic agrees with a checked reference evaluator.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "rholang/frontend/limits.h"
#include "rholang/frontend/normalizer.h"
#include "rholang/frontend/printer.h"
#include "rholang/interpreter/cost.h"
#include "rholang/interpreter/env.h"
#include "rholang/interpreter/eval_expr.h"
#include "rholang/interpreter/substitute.h"
#include "tests/test_seed.h"

namespace rnode::rholang::interp {
namespace {

using ir::ParPtr;

// A random Int expression over literals and the process variable `*x`,
// with its value under x = `xv` (nullopt when evaluation must fail:
// overflow, division or modulo by zero).
struct Gen {
  std::mt19937_64 rng;
  int64_t xv;

  int64_t Literal() {
    switch (rng() % 4) {
      case 0:
        return static_cast<int64_t>(rng() % 10);
      case 1:
        return static_cast<int64_t>(rng() % 2000) - 1000;
      case 2:
        return static_cast<int64_t>(rng() >> 1);  // large positive
      default:
        return static_cast<int64_t>(rng() % 7) - 3;
    }
  }

  std::string Text(int64_t v) {
    // The lexer reads non-negative literals; a negative one is `(0 - n)`
    // unless it is MIN, which only arithmetic can produce.
    if (v >= 0) return std::to_string(v);
    return absl::StrCat("(0 - ", std::to_string(-v), ")");
  }

  std::string Expr(int depth, std::optional<int64_t>* value) {
    if (depth == 0 || rng() % 4 == 0) {
      if (rng() % 3 == 0) {
        *value = xv;
        return "*x";
      }
      int64_t v = Literal();
      if (v == INT64_MIN) v = 0;
      *value = v;
      return Text(v);
    }
    std::optional<int64_t> a, b;
    std::string sa = Expr(depth - 1, &a);
    std::string sb = Expr(depth - 1, &b);
    static const char* const kOps[] = {"+", "-", "*", "/", "%"};
    int op = static_cast<int>(rng() % 5);
    *value = std::nullopt;
    if (a && b) {
      int64_t r = 0;
      bool ok = true;
      switch (op) {
        case 0:
          ok = !__builtin_add_overflow(*a, *b, &r);
          break;
        case 1:
          ok = !__builtin_sub_overflow(*a, *b, &r);
          break;
        case 2:
          ok = !__builtin_mul_overflow(*a, *b, &r);
          break;
        default:
          ok = *b != 0 && !(*a == INT64_MIN && *b == -1);
          if (ok) r = op == 3 ? *a / *b : *a % *b;
          break;
      }
      if (ok) *value = r;
    }
    return absl::StrCat("(", sa, " ", kOps[op], " ", sb, ")");
  }
};

absl::StatusOr<ParPtr> EvalDatum(const ParPtr& program_body) {
  PhloMeter meter(-1);
  ExprContext ctx{&meter};
  return EvalPar(program_body->sends[0]->data[0], ctx);
}

TEST(ExprPropertyTest, SubstitutionThenEvaluationAgreesWithReference) {
  const uint64_t seed = ::rnode::testing::TestSeed(103);
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 seeder(seed);
  for (int iter = 0; iter < 300; ++iter) {
    Gen g{std::mt19937_64(seeder()), 0};
    g.xv = g.Literal();
    std::optional<int64_t> want;
    std::string expr = g.Expr(4, &want);
    absl::StatusOr<ParPtr> prog =
        Compile(absl::StrCat("new x in { @0!(", expr, ") }"));
    ASSERT_TRUE(prog.ok()) << expr << ": " << prog.status();
    PhloMeter meter(-1);
    absl::StatusOr<ParPtr> body =
        Substitute((*prog)->news[0]->body,
                   Env({ir::ParOf(ir::Expr::Int(g.xv))}), 0, meter);
    ASSERT_TRUE(body.ok()) << body.status();
    absl::StatusOr<ParPtr> got = EvalDatum(*body);
    if (!want) {
      ASSERT_FALSE(got.ok()) << expr << " with x = " << g.xv;
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
      continue;
    }
    ASSERT_TRUE(got.ok()) << expr << " with x = " << g.xv << ": "
                          << got.status();
    const ir::Expr* e = (*got)->SingleExpr();
    ASSERT_NE(e, nullptr);
    ASSERT_EQ(e->kind, ir::ExprKind::kInt);
    EXPECT_EQ(e->int_value, *want) << expr << " with x = " << g.xv;

    // The same program with the value written in evaluates the same way.
    std::string written = expr;
    for (size_t pos; (pos = written.find("*x")) != std::string::npos;) {
      written.replace(pos, 2, g.Text(g.xv));
    }
    absl::StatusOr<ParPtr> direct = Compile(absl::StrCat("@0!(", written, ")"));
    ASSERT_TRUE(direct.ok()) << written;
    absl::StatusOr<ParPtr> direct_value = EvalDatum(*direct);
    ASSERT_TRUE(direct_value.ok()) << written << ": " << direct_value.status();
    EXPECT_TRUE(ir::Equal(**got, **direct_value)) << written;
  }
}

// Deeply nested terms stay within the recursion bound of every walk.
TEST(ExprPropertyTest, DeepTermsSubstituteAndEvaluate) {
  constexpr int kDepth = 500;  // below the parser's kMaxNestingDepth
  std::string open, close;
  for (int i = 0; i < kDepth; ++i) {
    open += "[";
    close += "]";
  }
  absl::StatusOr<ParPtr> prog =
      Compile(absl::StrCat("new x in { @0!(", open, "*x + 1", close, ") }"));
  ASSERT_TRUE(prog.ok()) << prog.status();
  PhloMeter meter(-1);
  absl::StatusOr<ParPtr> body = Substitute(
      (*prog)->news[0]->body, Env({ir::ParOf(ir::Expr::Int(41))}), 0, meter);
  ASSERT_TRUE(body.ok()) << body.status();
  // One Par and one List per level, plus the `+` and its operand Par, the
  // datum, the Send and the body Par.
  EXPECT_EQ(meter.spent(), (2 * kDepth + 2 + 3) * cost::kSubstituteNode);
  absl::StatusOr<ParPtr> got = EvalDatum(*body);
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<ParPtr> want =
      Compile(absl::StrCat("@0!(", open, "42", close, ")"));
  ASSERT_TRUE(want.ok());
  EXPECT_TRUE(ir::Equal(**got, *(*want)->sends[0]->data[0]));
}

}  // namespace
}  // namespace rnode::rholang::interp

namespace rnode::rholang::interp {
namespace {

std::string SetText(const std::set<int>& s) {
  std::string out = "Set(";
  bool first = true;
  for (int x : s) {
    absl::StrAppend(&out, first ? "" : ", ", x);
    first = false;
  }
  return out + ")";
}

std::string MapText(const std::map<int, int>& m) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : m) {
    absl::StrAppend(&out, first ? "" : ", ", k, ": ", v);
    first = false;
  }
  return out + "}";
}

absl::StatusOr<ParPtr> EvalText(const std::string& expr) {
  absl::StatusOr<ParPtr> p = Compile(absl::StrCat("@0!(", expr, ")"));
  if (!p.ok()) return p.status();
  return EvalDatum(*p);
}

// Random chains of Set operations agree with std::set.
TEST(ExprPropertyTest, SetOperationsAgreeWithModel) {
  const uint64_t seed = ::rnode::testing::TestSeed(206);
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  auto small = [&] { return static_cast<int>(rng() % 12); };
  auto random_set = [&] {
    std::set<int> s;
    for (int i = static_cast<int>(rng() % 5); i > 0; --i) s.insert(small());
    return s;
  };
  for (int iter = 0; iter < 60; ++iter) {
    std::set<int> model = random_set();
    std::string expr = SetText(model);
    for (int step = 0; step < 12; ++step) {
      int k = small();
      std::set<int> other = random_set();
      switch (rng() % 8) {
        case 0:
          expr = absl::StrCat("(", expr, ").add(", k, ")");
          model.insert(k);
          break;
        case 1:
          expr = absl::StrCat("(", expr, ").delete(", k, ")");
          model.erase(k);
          break;
        case 2:
          expr = absl::StrCat("(", expr, " + ", k, ")");
          model.insert(k);
          break;
        case 3:
          expr = absl::StrCat("(", expr, " - ", k, ")");
          model.erase(k);
          break;
        case 4:
          expr = absl::StrCat("(", expr, ").union(", SetText(other), ")");
          model.insert(other.begin(), other.end());
          break;
        case 5:
          expr = absl::StrCat("(", expr, ").diff(", SetText(other), ")");
          for (int x : other) model.erase(x);
          break;
        case 6:
          expr = absl::StrCat("(", expr, " ++ ", SetText(other), ")");
          model.insert(other.begin(), other.end());
          break;
        default:
          expr = absl::StrCat("(", expr, " -- ", SetText(other), ")");
          for (int x : other) model.erase(x);
          break;
      }
    }
    absl::StatusOr<ParPtr> got = EvalText(expr);
    ASSERT_TRUE(got.ok()) << expr << ": " << got.status();
    absl::StatusOr<ParPtr> want = EvalText(SetText(model));
    ASSERT_TRUE(want.ok());
    EXPECT_TRUE(ir::Equal(**got, **want)) << expr;
    int probe = small();
    absl::StatusOr<ParPtr> size = EvalText(absl::StrCat("(", expr, ").size()"));
    absl::StatusOr<ParPtr> has =
        EvalText(absl::StrCat("(", expr, ").contains(", probe, ")"));
    ASSERT_TRUE(size.ok() && has.ok());
    EXPECT_EQ((*size)->SingleExpr()->int_value,
              static_cast<int64_t>(model.size()));
    EXPECT_EQ((*has)->SingleExpr()->bool_value, model.count(probe) > 0);
  }
}

// Random chains of Map operations agree with std::map (right side wins).
TEST(ExprPropertyTest, MapOperationsAgreeWithModel) {
  const uint64_t seed = ::rnode::testing::TestSeed(275);
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  auto small = [&] { return static_cast<int>(rng() % 12); };
  auto random_map = [&] {
    std::map<int, int> m;
    for (int i = static_cast<int>(rng() % 5); i > 0; --i) m[small()] = small();
    return m;
  };
  for (int iter = 0; iter < 60; ++iter) {
    std::map<int, int> model = random_map();
    std::string expr = MapText(model);
    for (int step = 0; step < 12; ++step) {
      int k = small(), v = small();
      std::map<int, int> other = random_map();
      switch (rng() % 6) {
        case 0:
          expr = absl::StrCat("(", expr, ").set(", k, ", ", v, ")");
          model[k] = v;
          break;
        case 1:
          expr = absl::StrCat("(", expr, ").delete(", k, ")");
          model.erase(k);
          break;
        case 2:
          expr = absl::StrCat("(", expr, " - ", k, ")");
          model.erase(k);
          break;
        case 3:
          expr = absl::StrCat("(", expr, ").union(", MapText(other), ")");
          for (const auto& [ok, ov] : other) model[ok] = ov;
          break;
        case 4:
          expr = absl::StrCat("(", expr, ").diff(", MapText(other), ")");
          for (const auto& [ok, ov] : other) model.erase(ok);
          break;
        default:
          expr = absl::StrCat("(", expr, " ++ ", MapText(other), ")");
          for (const auto& [ok, ov] : other) model[ok] = ov;
          break;
      }
    }
    absl::StatusOr<ParPtr> got = EvalText(expr);
    ASSERT_TRUE(got.ok()) << expr << ": " << got.status();
    absl::StatusOr<ParPtr> want = EvalText(MapText(model));
    ASSERT_TRUE(want.ok());
    EXPECT_TRUE(ir::Equal(**got, **want)) << expr;
    int probe = small();
    absl::StatusOr<ParPtr> value =
        EvalText(absl::StrCat("(", expr, ").getOrElse(", probe, ", -1)"));
    ASSERT_TRUE(value.ok()) << value.status();
    auto it = model.find(probe);
    EXPECT_EQ((*value)->SingleExpr()->int_value,
              it == model.end() ? -1 : it->second);
  }
}

}  // namespace
}  // namespace rnode::rholang::interp

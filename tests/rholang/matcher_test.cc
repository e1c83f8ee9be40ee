// Spatial matcher: table-driven matches with expected bindings, non-matches,
// documented unimplemented cases, the step limit and determinism.
#include "rholang/matcher.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "rholang/ir.h"
#include "rholang/normalizer.h"
#include "rholang/printer.h"
#include "util/bytes.h"

namespace rnode::rholang {
namespace {

struct Compiled {
  ir::ParPtr target;
  ir::ParPtr pattern;
  uint32_t free_count = 0;
};

// Compiles `match TARGET { PATTERN => Nil }` and extracts both sides.
bool CompileMatch(const std::string& target, const std::string& pattern,
                  Compiled& out) {
  std::string src = "match {" + target + "} { {" + pattern + "} => Nil }";
  auto r = Compile(src);
  if (!r.ok()) {
    ADD_FAILURE() << src << ": " << r.status();
    return false;
  }
  if ((*r)->matches.size() != 1) {
    ADD_FAILURE() << src << ": not a single match";
    return false;
  }
  const ir::Match& m = *(*r)->matches[0];
  out.target = m.target;
  out.pattern = m.cases[0].pattern;
  out.free_count = m.cases[0].free_count;
  return true;
}

std::string Show(const ir::ParPtr& p) {
  if (p == nullptr) return "<unbound>";
  auto s = Print(*p);
  return s.ok() ? *s : s.status().ToString();
}

enum class Outcome { kMatch, kNoMatch, kUnimplemented };

struct MatchCase {
  const char* name;
  const char* target;
  const char* pattern;
  Outcome outcome;
  // Source of the expected binding of each free variable, in free-variable
  // order; nullptr for a variable left unbound.
  std::vector<const char*> bindings;
};

void PrintTo(const MatchCase& c, std::ostream* os) { *os << c.name; }

class SpatialMatchTest : public ::testing::TestWithParam<MatchCase> {};

TEST_P(SpatialMatchTest, GivesExpectedOutcomeAndBindings) {
  const MatchCase& c = GetParam();
  Compiled m;
  ASSERT_TRUE(CompileMatch(c.target, c.pattern, m));
  auto r = SpatialMatch(*m.target, *m.pattern, m.free_count);
  if (c.outcome == Outcome::kUnimplemented) {
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented)
        << r.status();
    return;
  }
  ASSERT_TRUE(r.ok()) << r.status();
  if (c.outcome == Outcome::kNoMatch) {
    EXPECT_FALSE(r->has_value());
    return;
  }
  ASSERT_TRUE(r->has_value());
  const Bindings& b = **r;
  ASSERT_EQ(b.size(), c.bindings.size());
  for (size_t i = 0; i < b.size(); ++i) {
    if (c.bindings[i] == nullptr) {
      EXPECT_EQ(b[i], nullptr) << "variable " << i << ": " << Show(b[i]);
      continue;
    }
    ASSERT_NE(b[i], nullptr) << "variable " << i;
    auto expected = Compile(c.bindings[i]);
    ASSERT_TRUE(expected.ok()) << expected.status();
    EXPECT_EQ(HexEncode(b[i]->hash), HexEncode((*expected)->hash))
        << "variable " << i << ": got " << Show(b[i]) << ", want "
        << Show(*expected);
  }
}

using O = Outcome;

const MatchCase kCases[] = {
    {"GroundIntEqual", "5", "5", O::kMatch, {}},
    {"GroundIntDiffers", "5", "6", O::kNoMatch, {}},
    {"GroundStringEqual", "\"a\"", "\"a\"", O::kMatch, {}},
    {"GroundKindsDiffer", "1", "\"1\"", O::kNoMatch, {}},
    {"ConcreteParEqualInAnyOrder",
     "@0!(1) | @1!(2)",
     "@1!(2) | @0!(1)",
     O::kMatch,
     {}},
    {"ProcessVarCapturesInt", "5", "x", O::kMatch, {"5"}},
    {"ProcessVarCapturesNil", "Nil", "x", O::kMatch, {"Nil"}},
    {"ProcessVarCapturesWholePar",
     "@0!(1) | @1!(2)",
     "x",
     O::kMatch,
     {"@0!(1) | @1!(2)"}},
    {"WildcardMatchesAnything", "@0!(1) | 7", "_", O::kMatch, {}},
    {"ListElementwise", "[1, 2, 3]", "[x, 2, y]", O::kMatch, {"1", "3"}},
    {"ListWrongLength", "[1, 2]", "[x]", O::kNoMatch, {}},
    {"ListElementMismatch", "[1, 2]", "[x, 3]", O::kNoMatch, {}},
    {"ListRemainderGetsTail",
     "[1, 2, 3]",
     "[x ...r]",
     O::kMatch,
     {"1", "[2, 3]"}},
    {"ListRemainderEmptyTail", "[1]", "[x ...r]", O::kMatch, {"1", "[]"}},
    {"ListRemainderTooShort", "[]", "[x ...r]", O::kNoMatch, {}},
    {"ListWildcardRemainder", "[1, 2]", "[1 ..._]", O::kMatch, {}},
    {"TupleElementwise", "(1, \"a\")", "(x, y)", O::kMatch, {"1", "\"a\""}},
    {"TupleArityDiffers", "(1, 2)", "(x, y, z)", O::kNoMatch, {}},
    {"SendData", "@0!(1, 2)", "@0!(x, y)", O::kMatch, {"1", "2"}},
    {"SendChannelNameVar", "@\"ch\"!(5)", "c!(5)", O::kMatch, {"\"ch\""}},
    {"SendPersistenceDiffers", "@0!!(1)", "@0!(x)", O::kNoMatch, {}},
    {"SendArityDiffers", "@0!(1, 2)", "@0!(x)", O::kNoMatch, {}},
    {"NestedQuoteNameVar",
     "@{@0!(1)}!(2)",
     "@{@0!(x)}!(y)",
     O::kMatch,
     {"1", "2"}},
    {"ParAssignsComponents",
     "@0!(1) | @1!(2)",
     "@0!(x) | @1!(y)",
     O::kMatch,
     {"1", "2"}},
    {"ParBacktracksOverAssignment",
     "@0!(1, 2) | @0!(1, 3)",
     "@0!(x, 3) | @0!(1, y)",
     O::kMatch,
     {"1", "2"}},
    {"ParRestVarTakesLeftovers",
     "@0!(1) | @1!(2) | 7",
     "@0!(x) | rest",
     O::kMatch,
     {"1", "@1!(2) | 7"}},
    {"ParRestVarEmpty", "@0!(1)", "@0!(x) | rest", O::kMatch, {"1", "Nil"}},
    {"ParWildcardTakesLeftovers", "@0!(1) | 5", "@0!(1) | _", O::kMatch, {}},
    {"ParMissingComponent", "@0!(1)", "@0!(1) | @1!(x)", O::kNoMatch, {}},
    {"ParExtraComponentWithoutRest",
     "@0!(1) | @1!(2)",
     "@0!(x)",
     O::kNoMatch,
     {}},
    {"IntConnective", "5", "Int", O::kMatch, {}},
    {"IntConnectiveRejectsString", "\"a\"", "Int", O::kNoMatch, {}},
    {"StringConnective", "\"a\"", "String", O::kMatch, {}},
    {"BoolConnective", "true", "Bool", O::kMatch, {}},
    {"UriConnective", "`rho:io:stdout`", "Uri", O::kMatch, {}},
    {"ByteArrayConnectiveRejectsInt", "5", "ByteArray", O::kNoMatch, {}},
    {"SimpleTypeRejectsPar", "1 | 2", "Int", O::kNoMatch, {}},
    {"AndBindsAndChecks", "5", "x /\\ Int", O::kMatch, {"5"}},
    {"AndFailsOnOneConjunct", "\"a\"", "x /\\ Int", O::kNoMatch, {}},
    {"OrTakesAlternative", "\"a\"", "Int \\/ String", O::kMatch, {}},
    {"OrNoAlternative", "true", "Int \\/ String", O::kNoMatch, {}},
    {"NotAccepts", "5", "~String", O::kMatch, {}},
    {"NotRejects", "\"a\"", "~String", O::kNoMatch, {}},
    {"NotNilAcceptsProcess", "@0!(1)", "~Nil", O::kMatch, {}},
    {"NotNilRejectsNil", "Nil", "~Nil", O::kNoMatch, {}},
    {"ConnectivesInsideList",
     "[1, \"a\"]",
     "[Int, x /\\ String]",
     O::kMatch,
     {"\"a\""}},
    {"ReceiveSourceNameVar",
     "for (@a <- @0) { Nil }",
     "for (@a <- c) { Nil }",
     O::kMatch,
     {"0"}},
    {"ReceiveBodyWithBoundVarNotCaptured",
     "for (@a <- @0) { @1!(a) }",
     "for (@a <- @0) { b }",
     O::kNoMatch,
     {}},
    {"ReceivePatternsDiffer",
     "for (@1 <- @0) { Nil }",
     "for (@2 <- c) { Nil }",
     O::kNoMatch,
     {}},
    {"NewBody", "new x in { x!(1) }", "new y in { y!(z) }", O::kMatch, {"1"}},
    {"NewBindCountDiffers",
     "new x, y in { x!(1) | y!(1) }",
     "new x in { x!(z) }",
     O::kNoMatch,
     {}},
    {"MatchProcessStructural",
     "match 1 { 2 => @0!(3) }",
     "match 1 { 2 => @0!(x) }",
     O::kMatch,
     {"3"}},
    {"MatchProcessCasePatternDiffers",
     "match 1 { 2 => @0!(3) }",
     "match 1 { 4 => @0!(x) }",
     O::kNoMatch,
     {}},
    {"BundleEqual", "bundle+ { @0!(1) }", "bundle+ { @0!(1) }", O::kMatch, {}},
    {"PersistentReceiveDiffers",
     "for (@a <= @0) { Nil }",
     "for (@a <- c) { Nil }",
     O::kNoMatch,
     {}},
    {"MethodStructural",
     "@0!([1].length())",
     "@0!(x.length())",
     O::kMatch,
     {"[1]"}},
    {"OperatorStructural", "@0!(1 + 2)", "@0!(x + 2)", O::kMatch, {"1"}},
    {"OperatorKindDiffers", "@0!(1 + 2)", "@0!(x - 2)", O::kNoMatch, {}},
    {"GroundSetEqual", "Set(1, 2)", "Set(2, 1)", O::kMatch, {}},
    {"SetElementVar", "Set(1, 2)", "Set(1, x)", O::kMatch, {"2"}},
    {"SetSizeDiffersWithoutRemainder",
     "Set(1, 2, 3)",
     "Set(1, x)",
     O::kNoMatch,
     {}},
    {"SetRemainderGetsRest",
     "Set(1, 2, 3)",
     "Set(2 ...r)",
     O::kMatch,
     {"Set(1, 3)"}},
    {"SetConnectiveElements",
     "Set(1, \"a\")",
     "Set(x /\\ String, Int)",
     O::kMatch,
     {"\"a\""}},
    {"MapValueVar", "{1: 2, 3: 4}", "{3: v, 1: 2}", O::kMatch, {"4"}},
    {"MapRemainderGetsRest",
     "{1: 2, 3: 4}",
     "{1: v ...r}",
     O::kMatch,
     {"2", "{3: 4}"}},
    {"MapMissingKey", "{1: 2}", "{5: v ...r}", O::kNoMatch, {}},
    {"MapRemainderEmpty", "{1: 2}", "{k: v ...r}", O::kMatch, {"1", "2", "{}"}},
    {"ParConnectiveMatchesLeftovers",
     "@0!(1) | 5",
     "@0!(x) | Int",
     O::kMatch,
     {"1"}},
    {"ParConnectiveRejectsLeftovers",
     "@0!(1) | \"a\"",
     "@0!(x) | Int",
     O::kNoMatch,
     {}},
    {"ConnectiveWithRestVarUnimplemented",
     "1 | 2",
     "Int | x",
     O::kUnimplemented,
     {}},
    {"TwoConnectivesUnimplemented",
     "1 | \"a\"",
     "Int | String",
     O::kUnimplemented,
     {}},
    {"TwoParFreeVarsUnimplemented", "1 | 2", "x | y", O::kUnimplemented, {}},
};

INSTANTIATE_TEST_SUITE_P(Cases, SpatialMatchTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<MatchCase>& info) {
                           return std::string(info.param.name);
                         });

// n identical sends against n send patterns plus a connective that fails
// on the (empty) leftovers: every one of the n! assignments is tried.
void ExplosiveCase(int n, Compiled& m) {
  std::string target = "@0!(1)";
  std::string pattern = "@0!(a0)";
  for (int i = 1; i < n; ++i) {
    target += " | @0!(1)";
    pattern += " | @0!(a" + std::to_string(i) + ")";
  }
  pattern += " | ~Nil";
  ASSERT_TRUE(CompileMatch(target, pattern, m));
}

TEST(SpatialMatchLimitTest, FactorialSearchStopsAtStepLimit) {
  Compiled m;
  ASSERT_NO_FATAL_FAILURE(ExplosiveCase(10, m));
  auto r = SpatialMatch(*m.target, *m.pattern, m.free_count);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted)
      << r.status();
}

TEST(SpatialMatchLimitTest, SmallSearchFinishesWithinDefaultLimit) {
  Compiled m;
  ASSERT_NO_FATAL_FAILURE(ExplosiveCase(3, m));
  auto r = SpatialMatch(*m.target, *m.pattern, m.free_count);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->has_value());
}

TEST(SpatialMatchLimitTest, ExplicitStepLimitIsHonoured) {
  Compiled m;
  ASSERT_TRUE(CompileMatch("[[[[1]]]]", "[[[[x]]]]", m));
  auto tight = SpatialMatch(*m.target, *m.pattern, m.free_count,
                            MatchOptions{.max_steps = 3});
  EXPECT_EQ(tight.status().code(), absl::StatusCode::kResourceExhausted);
  auto enough = SpatialMatch(*m.target, *m.pattern, m.free_count,
                             MatchOptions{.max_steps = 100});
  ASSERT_TRUE(enough.ok()) << enough.status();
  EXPECT_TRUE(enough->has_value());
}

TEST(SpatialMatchTest, FreeVariableBeyondFreeCountIsInvalidArgument) {
  Compiled m;
  ASSERT_TRUE(CompileMatch("5", "x", m));
  auto r = SpatialMatch(*m.target, *m.pattern, 0);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SpatialMatchTest, UnsubstitutedVarRefMatchesNoProcess) {
  ir::ParPtr var_ref =
      ir::ParBuilder().Add(ir::Connective::VarRef(0, 0, false)).Build();
  auto alone = SpatialMatch(*ir::ParOf(ir::Expr::Int(5)), *var_ref, 0);
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_FALSE(alone->has_value());
  // `[_] | =v`: the var-ref is the connective that gets the leftovers.
  ir::ParPtr wildcard_list = ir::ParOf(ir::Expr::List(
      {ir::VarPar(ir::Var{ir::VarKind::kWildcard, 0})}, std::nullopt));
  ir::ParPtr pattern = ir::ParBuilder()
                           .AddAll(*wildcard_list)
                           .Add(ir::Connective::VarRef(0, 0, false))
                           .Build();
  ir::ParPtr target =
      ir::ParBuilder()
          .Add(ir::Expr::List({ir::ParOf(ir::Expr::Int(1))}, std::nullopt))
          .Add(ir::Expr::Int(5))
          .Build();
  auto nested = SpatialMatch(*target, *pattern, 0);
  EXPECT_EQ(nested.status().code(), absl::StatusCode::kUnimplemented)
      << nested.status();
}

TEST(SpatialMatchTest, SameInputsGiveSameBindingsTwice) {
  Compiled m;
  ASSERT_TRUE(CompileMatch("@0!(1, 2) | @0!(1, 3) | @0!(4, 3) | 9",
                           "@0!(x, 3) | @0!(1, y) | rest", m));
  auto a = SpatialMatch(*m.target, *m.pattern, m.free_count);
  auto b = SpatialMatch(*m.target, *m.pattern, m.free_count);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(a->has_value() && b->has_value());
  ASSERT_EQ((*a)->size(), 3u);
  ASSERT_EQ((*a)->size(), (*b)->size());
  for (size_t i = 0; i < (*a)->size(); ++i) {
    ASSERT_NE((**a)[i], nullptr);
    ASSERT_NE((**b)[i], nullptr);
    EXPECT_EQ(HexEncode((**a)[i]->hash), HexEncode((**b)[i]->hash));
  }
}

}  // namespace
}  // namespace rnode::rholang

// Spatial matcher: table-driven matches with expected bindings and
// non-matches (several free variables, wildcards and connectives in one
// Par, remainders, ambiguous and nested patterns), the var-ref error, the
// step limit, determinism, the internal subset enumeration and assignment,
// and randomized checks (recomposition, brute-force oracle).
#include "rholang/frontend/matcher.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "rholang/frontend/internal/bipartite_match.h"
#include "rholang/frontend/internal/sized_subsets.h"
#include "rholang/frontend/ir.h"
#include "rholang/frontend/normalizer.h"
#include "rholang/frontend/printer.h"
#include "tests/test_seed.h"
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

enum class Outcome { kMatch, kNoMatch };

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
    {"ConnectiveWithRestVar", "1 | 2", "Int | x", O::kMatch, {"2"}},
    {"TwoConnectives", "1 | \"a\"", "Int | String", O::kMatch, {}},
    {"TwoParFreeVarsFirstTakesAll",
     "1 | 2",
     "x | y",
     O::kMatch,
     {"1 | 2", nullptr}},

    // Several top-level free variables and wildcards: the lowest-level free
    // variable takes the leftovers, the others stay unbound.
    {"ThreeFreeVarsFirstTakesAll",
     "1",
     "x | y | z",
     O::kMatch,
     {"1", nullptr, nullptr}},
    {"TwoFreeVarsOnNil", "Nil", "x | y", O::kMatch, {"Nil", nullptr}},
    {"FreeVarsBesideStructure",
     "@0!(1) | 5 | 6",
     "@0!(a) | x | y",
     O::kMatch,
     {"1", "5 | 6", nullptr}},
    {"FreeVarAndWildcard", "1 | 2 | 3", "x | _", O::kMatch, {"1 | 2 | 3"}},
    {"WildcardThenFreeVar", "1 | 2", "_ | x", O::kMatch, {"1 | 2"}},
    {"TwoWildcards", "1 | @0!(2)", "_ | _", O::kMatch, {}},
    {"ExtrasWithFreeVar", "7 | 8 | 9", "8 | x", O::kMatch, {"7 | 9"}},
    {"ExtrasWithWildcardAndFreeVar",
     "7 | 8 | 9",
     "8 | x | _",
     O::kMatch,
     {"7 | 9"}},
    {"EqualTargetsToTwoVars", "1 | 1", "x | y", O::kMatch, {"1 | 1", nullptr}},
    {"DuplicateTargetOneTakenByStructure", "1 | 1", "1 | x", O::kMatch, {"1"}},
    {"DuplicateTargetsBothTaken", "1 | 1", "1 | 1 | x", O::kMatch, {"Nil"}},
    {"FreeVarsStructureMissing", "5 | 6", "@0!(a) | x | y", O::kNoMatch, {}},

    // Connectives beside free variables, wildcards, structure and each
    // other: each connective takes a sub-Par (first in canonical order).
    {"IntTakesFirstInt", "\"a\" | 1 | 2", "Int | x", O::kMatch, {"2 | \"a\""}},
    {"StringSkipsInts", "1 | \"a\" | 2", "String | x", O::kMatch, {"1 | 2"}},
    {"BoolConnectiveWithRest", "true | 1", "Bool | x", O::kMatch, {"1"}},
    {"UriConnectiveWithRest", "`rho:a` | 1", "Uri | x", O::kMatch, {"1"}},
    {"ConnectiveWithWildcard", "1 | @0!(2)", "Int | _", O::kMatch, {}},
    {"ConnectiveWithWildcardNoCandidate",
     "\"a\" | @0!(2)",
     "Int | _",
     O::kNoMatch,
     {}},
    {"ConnectiveWithRestNoCandidate",
     "\"a\" | \"b\"",
     "Int | x",
     O::kNoMatch,
     {}},
    {"NotNilWithRestTakesFirst", "1 | 2", "~Nil | x", O::kMatch, {"2"}},
    {"NotNilWithRestOnSingle", "5", "~Nil | x", O::kMatch, {"Nil"}},
    {"NotNilWithRestOnNil", "Nil", "~Nil | x", O::kNoMatch, {}},
    {"AndWithRestRetriesSubPar",
     "1 | \"a\"",
     "(y /\\ String) | x",
     O::kMatch,
     {"\"a\"", "1"}},
    {"OrWithRest",
     "1 | \"a\" | true",
     "(Int \\/ String) | x",
     O::kMatch,
     {"true | \"a\""}},
    {"TwoConnectivesWrongKinds", "1 | 2", "Int | String", O::kNoMatch, {}},
    {"TwoIntConnectives", "1 | 2", "Int | Int", O::kMatch, {}},
    {"TwoIntConnectivesTooManyInts", "1 | 2 | 3", "Int | Int", O::kNoMatch, {}},
    {"TwoIntConnectivesWithRest",
     "1 | 2 | 3",
     "Int | Int | x",
     O::kMatch,
     {"3"}},
    {"TwoNotNilOverTwoSends", "@0!(1) | @1!(2)", "~Nil | ~Nil", O::kMatch, {}},
    {"ThreeNotNilOverTwoSends",
     "@0!(1) | @1!(2)",
     "~Nil | ~Nil | ~Nil",
     O::kNoMatch,
     {}},
    {"ConnectiveStructureAndRest",
     "@0!(1) | 5 | \"a\"",
     "@0!(x) | Int | r",
     O::kMatch,
     {"1", "\"a\""}},
    {"NotBesideStructure",
     "@0!(1) | @1!(2)",
     "@0!(x) | ~{@1!(3)}",
     O::kMatch,
     {"1"}},
    {"NotBesideStructureRejects",
     "@0!(1) | @1!(3)",
     "@0!(x) | ~{@1!(3)}",
     O::kNoMatch,
     {}},
    {"ConnectiveBacktracksToLaterSubPar",
     "1 | [2]",
     "1 | (y /\\ (Int \\/ [_]))",
     O::kMatch,
     {"[2]"}},
    {"OrBindingsDiscardedBesideRest",
     "1 | 2",
     "(x \\/ Int) | y",
     O::kMatch,
     {"1 | 2"}},
    {"OrOperandVarsNeedNoFreeCount", "[1, 2]", "[a, b] \\/ Int", O::kMatch, {}},
    {"NotOperandVarsNeedNoFreeCount",
     "[1, 2]",
     "~([a, b, c] /\\ Int)",
     O::kMatch,
     {}},
    {"NotOperandVarsRejectWhenMatched", "[1, 2]", "~[a, b]", O::kNoMatch, {}},
    {"NotBindingsDiscardedBesideRest",
     "1 | \"a\"",
     "~(x /\\ String) | y",
     O::kMatch,
     {"1 | \"a\""}},
    {"PrimeAndCaptureConnectives",
     "@1!(6) | @2!(7) | @3!(8)",
     "(x /\\ {@y!(7)}) | (~Nil /\\ ~(~Nil | ~Nil)) | ({@_!(7)} \\/ {@_!(8)})",
     O::kMatch,
     {"@2!(7)", "2"}},
    {"PrimeAndCaptureConnectivesReject",
     "@1!(6) | @2!(9) | @3!(8)",
     "(x /\\ {@y!(7)}) | (~Nil /\\ ~(~Nil | ~Nil)) | ({@_!(7)} \\/ {@_!(8)})",
     O::kNoMatch,
     {}},

    // Nested Pars with several variables and connectives.
    {"NestedConnectiveInSend", "@0!(1 | 2)", "@0!(Int | x)", O::kMatch, {"2"}},
    {"NestedTwoVarsInSend",
     "@0!(1 | 2)",
     "@0!(x | y)",
     O::kMatch,
     {"1 | 2", nullptr}},
    {"NestedInList", "[1 | 2, 3]", "[Int | x, y]", O::kMatch, {"2", "3"}},
    {"NestedInSetElement", "Set(1 | 2)", "Set(Int | x)", O::kMatch, {"2"}},
    {"NestedInReceiveBody",
     "for (@a <- @0) { @1!(1) | @2!(2) }",
     "for (@a <- @0) { @2!(x) | r }",
     O::kMatch,
     {"2", "@1!(1)"}},
    {"ReceiveBodyWildcardTakesOpenTerms",
     "for (@a <- @0) { @1!(a) | 5 }",
     "for (@a <- @0) { _ }",
     O::kMatch,
     {}},
    {"ReceiveBodyRestVarRejectsOpenTerms",
     "for (@a <- @0) { @1!(a) | 5 }",
     "for (@a <- @0) { x | _ }",
     O::kNoMatch,
     {}},
    {"ReceiveBodyStructureTakesOpenTerm",
     "for (@a <- @0) { @1!(a) | 5 }",
     "for (@a <- @0) { @1!(a) | x }",
     O::kMatch,
     {"5"}},
    {"NewBodyRestTakesClosedTerm",
     "new c in { c!(1) | @0!(2) }",
     "new d in { d!(x) | y | z }",
     O::kMatch,
     {"1", "@0!(2)", nullptr}},
    {"NewBodyRestRejectsOpenTerm",
     "new c in { c!(1) | @0!(2) }",
     "new d in { @0!(x) | y }",
     O::kNoMatch,
     {}},
    {"NewBodyWildcardAcceptsOpenTerm",
     "new c in { c!(1) | @0!(2) }",
     "new d in { @0!(x) | _ }",
     O::kMatch,
     {"2"}},
    {"IfComponentsMatchStructurally",
     "if (true) { @0!(1) } | 5",
     "if (true) { @0!(x) } | r",
     O::kMatch,
     {"1", "5"}},
    {"IfCapturedByRestVar",
     "if (true) { Nil } | 5",
     "5 | r",
     O::kMatch,
     {"if (true) { Nil }"}},
    {"MixedGroupsWithRest",
     "@0!(1) | 5 | for (@a <- @2) { Nil }",
     "@0!(x) | for (@b <- c) { Nil } | r",
     O::kMatch,
     {"1", "2", "5"}},
    {"RestTakesClosedWildcardTakesOpen",
     "for (@a <- @0) { [a] | [1] }",
     "for (@a <- @0) { x | [_] }",
     O::kMatch,
     {"[1]"}},
    {"JoinBindsPairedBySource",
     "for (@a <- @0 & @[b] <- @1) { Nil }",
     "for (@[b] <- @1 & @a <- x) { Nil }",
     O::kMatch,
     {"0"}},

    // Assignments that must revise an earlier choice (the public node's
    // matcher tests).
    {"RevisionOfPriorMatch",
     "[1, [3]] | [1, [2]]",
     "[x, [2]] | [1, [y]]",
     O::kMatch,
     {"1", "3"}},
    {"RevisionOfPriorMatchWithRemainder",
     "[1, [3]] | [1, [2]]",
     "[x, [2]] | [1, [...r]]",
     O::kMatch,
     {"1", "[3]"}},
    {"RevisionOfPriorMatchWithOtherTerms",
     "[1, [3, 2]] | [1, [2, 2]]",
     "[x, [2, 2]] | [1, [y, 2]]",
     O::kMatch,
     {"1", "3"}},
    {"SetMatchRevisesEarlierChoice",
     "Set(1, \"a\")",
     "Set(Int \\/ String, Int)",
     O::kMatch,
     {}},

    // Collections: remainders, wildcards, ambiguity.
    {"SetVarTakesFirstElement",
     "Set(1, 2, 3)",
     "Set(x ...r)",
     O::kMatch,
     {"1", "Set(2, 3)"}},
    {"SetWildcardRemainder", "Set(1, 2, 3)", "Set(2 ..._)", O::kMatch, {}},
    {"SetOnlyRemainder", "Set(1, 2)", "Set(...r)", O::kMatch, {"Set(1, 2)"}},
    {"MapKeyVarTakesFirstEntry",
     "{1: 2, 3: 4}",
     "{k: v ...r}",
     O::kMatch,
     {"1", "2", "{3: 4}"}},
    {"MapConcreteKeyAmongMany",
     "{1: \"a\", 2: \"b\", 3: \"c\"}",
     "{2: v ...r}",
     O::kMatch,
     {"\"b\"", "{1: \"a\", 3: \"c\"}"}},
    {"MapWildcardRemainder", "{1: 2, 3: 4}", "{3: v ..._}", O::kMatch, {"4"}},
    {"MapValueConnective",
     "{1: \"a\", 2: 3}",
     "{k: Int ...r}",
     O::kMatch,
     {"2", "{1: \"a\"}"}},
    {"MapRestRejectsOpenLeftover",
     "for (@a <- @0) { @1!({1: a, 2: 3}) }",
     "for (@a <- @0) { @1!({2: v ...r}) }",
     O::kNoMatch,
     {}},
    {"MapWildcardAcceptsOpenLeftover",
     "for (@a <- @0) { @1!({1: a, 2: 3}) }",
     "for (@a <- @0) { @1!({2: v ..._}) }",
     O::kMatch,
     {"3"}},
    {"ListWildcardRemainderAcceptsOpenTail",
     "for (@a <- @0) { @1!([1, a]) }",
     "for (@a <- @0) { @1!([1 ..._]) }",
     O::kMatch,
     {}},
    {"ListRestRejectsOpenTail",
     "for (@a <- @0) { @1!([1, a]) }",
     "for (@a <- @0) { @1!([1 ...r]) }",
     O::kNoMatch,
     {}},
};

INSTANTIATE_TEST_SUITE_P(Cases, SpatialMatchTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<MatchCase>& info) {
                           return std::string(info.param.name);
                         });

// n identical sends against n send patterns plus `~Nil`: the assignment
// is a bipartite matching (polynomial), and `~Nil` gets only what the
// sends leave (Nil), so it fails at once.
void IdenticalSendsCase(int n, Compiled& m) {
  std::string target = "@0!(1)";
  std::string pattern = "@0!(a0)";
  for (int i = 1; i < n; ++i) {
    target += " | @0!(1)";
    pattern += " | @0!(a" + std::to_string(i) + ")";
  }
  pattern += " | ~Nil";
  ASSERT_TRUE(CompileMatch(target, pattern, m));
}

TEST(SpatialMatchLimitTest, IdenticalComponentsNeedFewSteps) {
  Compiled m;
  ASSERT_NO_FATAL_FAILURE(IdenticalSendsCase(10, m));
  auto r = SpatialMatch(*m.target, *m.pattern, m.free_count,
                        MatchOptions{.max_steps = 2000});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->has_value());
}

TEST(SpatialMatchLimitTest, IdenticalComponentsMatchWithinFewSteps) {
  Compiled m;
  std::string target = "@0!(1)";
  std::string pattern = "@0!(a0)";
  for (int i = 1; i < 32; ++i) {
    target += " | @0!(1)";
    pattern += " | @0!(a" + std::to_string(i) + ")";
  }
  ASSERT_TRUE(CompileMatch(target, pattern, m));
  auto r = SpatialMatch(*m.target, *m.pattern, m.free_count,
                        MatchOptions{.max_steps = 20000});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->has_value());
  for (const ir::ParPtr& b : **r) {
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(Show(b), "1");
  }
}

// n distinct sends against `~Nil | ~Nil | @99!(99)`: every way to split
// the sends between the two connectives is tried before the structural
// part fails, 3^n in all.
void ConnectivePartitionCase(int n, Compiled& m) {
  std::string target = "@0!(0)";
  for (int i = 1; i < n; ++i) {
    target += " | @" + std::to_string(i) + "!(" + std::to_string(i) + ")";
  }
  ASSERT_TRUE(CompileMatch(target, "~Nil | ~Nil | @99!(99)", m));
}

TEST(SpatialMatchLimitTest, ExponentialSubParSearchStopsAtStepLimit) {
  Compiled m;
  ASSERT_NO_FATAL_FAILURE(ConnectivePartitionCase(20, m));
  auto r = SpatialMatch(*m.target, *m.pattern, m.free_count);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted)
      << r.status();
}

TEST(SpatialMatchLimitTest, SmallSubParSearchFinishesWithinDefaultLimit) {
  Compiled m;
  ASSERT_NO_FATAL_FAILURE(ConnectivePartitionCase(4, m));
  auto r = SpatialMatch(*m.target, *m.pattern, m.free_count);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->has_value());
}

TEST(SpatialMatchLimitTest, ManyTopLevelConnectivesDoNotRecurse) {
  // 3000 `Int` connectives against 3000 ints: one search level per
  // connective, kept on the heap (built directly: the parser would refuse
  // a Par this deep).
  ir::ParBuilder target;
  ir::ParBuilder pattern;
  for (int i = 0; i < 3000; ++i) {
    target.Add(ir::Expr::Int(i));
    pattern.Add(ir::Connective::Make(ir::ConnectiveKind::kInt, {}));
  }
  Compiled m{target.Build(), pattern.Build(), 0};
  auto r = SpatialMatch(*m.target, *m.pattern, m.free_count,
                        MatchOptions{.max_steps = 50000000});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->has_value());
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
  // `[_] | =v`: a var-ref beside other components is refused, whatever
  // the target.
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

// Three assignments fit (x=1 y=2, x=4 y=2, x=4 y=3); the matcher must
// always pick the same one, so the bindings are pinned (x=1, y=2, the rest).
TEST(SpatialMatchTest, OverlappingSendPatternsGivePinnedBindings) {
  Compiled m;
  ASSERT_TRUE(CompileMatch("@0!(1, 2) | @0!(1, 3) | @0!(4, 3) | 9",
                           "@0!(x, 3) | @0!(1, y) | rest", m));
  auto a = SpatialMatch(*m.target, *m.pattern, m.free_count);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(a->has_value());
  ASSERT_EQ((*a)->size(), 3u);
  std::vector<std::string> shown;
  for (const ir::ParPtr& b : **a) {
    ASSERT_NE(b, nullptr);
    shown.push_back(Show(b));
  }
  EXPECT_EQ(shown, (std::vector<std::string>{"1", "2", "@0!(4, 3) |\n9"}));
}

// The data of the single send in `p`.
ir::ParPtr SendDatum(const ir::Send& s) { return s.data.at(0); }

TEST(SpatialMatchTest, AmbiguousSendPatternTakesFirstTargetInCanonicalOrder) {
  Compiled m;
  ASSERT_TRUE(CompileMatch("@0!(1) | @0!(2) | @0!(3)", "@0!(x) | r", m));
  auto r = SpatialMatch(*m.target, *m.pattern, m.free_count);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->has_value());
  const Bindings& b = **r;
  ASSERT_EQ(b.size(), 2u);
  ASSERT_EQ(m.target->sends.size(), 3u);
  EXPECT_EQ(HexEncode(b[0]->hash),
            HexEncode(SendDatum(*m.target->sends[0])->hash));
  ir::ParPtr rest =
      ir::ParBuilder().Add(m.target->sends[1]).Add(m.target->sends[2]).Build();
  EXPECT_EQ(HexEncode(b[1]->hash), HexEncode(rest->hash)) << Show(b[1]);
}

TEST(SpatialMatchTest, SetRemainderLeavesOpenElementToPattern) {
  // The remainder slot first holds `1`, then `~String` takes `1` and the
  // slot cannot move to the open `a`; `~String` takes `a` instead.
  Compiled m;
  ASSERT_TRUE(CompileMatch("for (@a <- @0) { @1!(Set(a, 1)) }",
                           "for (@a <- @0) { @1!(Set(~String ...r)) }", m));
  auto r = SpatialMatch(*m.target, *m.pattern, m.free_count);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->has_value());
  const Bindings& b = **r;
  ASSERT_EQ(b.size(), 1u);
  ASSERT_NE(b[0], nullptr);
  auto set1 = Compile("Set(1)");
  ASSERT_TRUE(set1.ok());
  EXPECT_EQ(HexEncode(b[0]->hash), HexEncode((*set1)->hash)) << Show(b[0]);
}

TEST(SpatialMatchTest, FreeVariableNeverCapturesAnOpenTerm) {
  for (const char* pattern :
       {"for (@a <- @0) { @1!(x) }", "for (@a <- @0) { @1!(Set(x, y)) }",
        "for (@a <- @0) { @1!(Set(x ...r)) }"}) {
    Compiled m;
    ASSERT_TRUE(CompileMatch("for (@a <- @0) { @1!(Set(a, 1)) }", pattern, m));
    auto r = SpatialMatch(*m.target, *m.pattern, m.free_count);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->has_value()) << pattern;
  }
}

TEST(SpatialMatchTest, VarRefBesideOtherComponentsIsUnimplemented) {
  ir::ParPtr pattern = ir::ParBuilder()
                           .Add(ir::Expr::Variable({ir::VarKind::kFree, 0}))
                           .Add(ir::Connective::VarRef(0, 0, false))
                           .Build();
  auto r = SpatialMatch(*ir::ParOf(ir::Expr::Int(5)), *pattern, 1);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented) << r.status();
}

TEST(SpatialMatchTest, SecondFreeVariableBeyondFreeCountIsInvalidArgument) {
  Compiled m;
  ASSERT_TRUE(CompileMatch("1 | 2", "x | y", m));
  auto r = SpatialMatch(*m.target, *m.pattern, 1);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
      << r.status();
}

// Ambiguous patterns give the same bindings on every run and whatever the
// source order of the target.
TEST(SpatialMatchTest, AmbiguousBindingsIndependentOfSourceOrder) {
  struct Case {
    std::vector<std::string> target_parts;
    std::string pattern;
  };
  const Case cases[] = {
      {{"@0!(1)", "@0!(2)", "@0!(3)"}, "@0!(x) | @0!(y) | r"},
      {{"[1]", "[2]", "[3]", "4"}, "[x] | [y] | r"},
      {{"Set(1, 2, 3)"}, "Set(x, y ...r)"},
      {{"{1: 2, 3: 4, 5: 6}"}, "{k: v, j: w ...r}"},
      {{"1", "2", "\"a\"", "\"b\""}, "Int | String | x"},
      {{"@0!(1)", "@1!(2)", "@2!(3)"}, "~Nil | ~Nil | x"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> parts = c.target_parts;
    std::string forward;
    std::string backward;
    for (size_t i = 0; i < parts.size(); ++i) {
      forward += (i ? " | " : "") + parts[i];
      backward += (i ? " | " : "") + parts[parts.size() - 1 - i];
    }
    Compiled a;
    Compiled b;
    ASSERT_TRUE(CompileMatch(forward, c.pattern, a));
    ASSERT_TRUE(CompileMatch(backward, c.pattern, b));
    auto ra = SpatialMatch(*a.target, *a.pattern, a.free_count);
    auto rb = SpatialMatch(*b.target, *b.pattern, b.free_count);
    auto ra2 = SpatialMatch(*a.target, *a.pattern, a.free_count);
    ASSERT_TRUE(ra.ok() && rb.ok() && ra2.ok()) << c.pattern;
    ASSERT_TRUE(ra->has_value() && rb->has_value() && ra2->has_value())
        << c.pattern;
    ASSERT_EQ((*ra)->size(), (*rb)->size());
    for (size_t i = 0; i < (*ra)->size(); ++i) {
      EXPECT_EQ(Show((**ra)[i]), Show((**rb)[i])) << c.pattern << " var " << i;
      EXPECT_EQ(Show((**ra)[i]), Show((**ra2)[i])) << c.pattern;
    }
  }
}

// --- internal::SizedSubsets -------------------------------------------

std::vector<std::string> AllSubsets(size_t n, size_t lo, size_t hi) {
  std::vector<std::string> out;
  internal::SizedSubsets s(n, lo, hi);
  if (!s.valid()) return out;
  do {
    std::string one;
    for (size_t i = 0; i < n; ++i) {
      if (s.in_subset()[i]) one += static_cast<char>('a' + i);
    }
    out.push_back("{" + one + "}");
  } while (s.Next());
  return out;
}

TEST(SizedSubsetsTest, EnumeratesInBitmaskOrder) {
  EXPECT_EQ(AllSubsets(3, 0, 3),
            (std::vector<std::string>{"{}", "{a}", "{b}", "{ab}", "{c}", "{ac}",
                                      "{bc}", "{abc}"}));
}

TEST(SizedSubsetsTest, RespectsSizeBounds) {
  EXPECT_EQ(AllSubsets(3, 2, 2),
            (std::vector<std::string>{"{ab}", "{ac}", "{bc}"}));
  EXPECT_EQ(AllSubsets(4, 1, 1),
            (std::vector<std::string>{"{a}", "{b}", "{c}", "{d}"}));
  EXPECT_EQ(
      AllSubsets(3, 1, 2),
      (std::vector<std::string>{"{a}", "{b}", "{ab}", "{c}", "{ac}", "{bc}"}));
}

TEST(SizedSubsetsTest, EmptyRangesAndEmptySets) {
  EXPECT_TRUE(AllSubsets(2, 3, 5).empty());
  EXPECT_TRUE(AllSubsets(3, 2, 1).empty());
  EXPECT_EQ(AllSubsets(0, 0, 4), (std::vector<std::string>{"{}"}));
  EXPECT_EQ(AllSubsets(2, 0, 0), (std::vector<std::string>{"{}"}));
}

TEST(SizedSubsetsTest, CountsMatchBinomials) {
  internal::SizedSubsets s(12, 3, 5);
  size_t count = 0;
  do {
    ASSERT_GE(s.size(), 3u);
    ASSERT_LE(s.size(), 5u);
    ++count;
  } while (s.Next());
  EXPECT_EQ(count, 220u + 495u + 792u);
}

// --- internal::AssignTargets ------------------------------------------

struct EdgeTable {
  std::vector<std::vector<bool>> ok;  // ok[row][target]
  int calls = 0;
};

absl::StatusOr<std::optional<std::vector<int32_t>>> RunAssign(
    const internal::AssignmentProblem& p, EdgeTable& t, uint64_t max_steps) {
  uint64_t steps = 0;
  return internal::AssignTargets(
      p,
      [&t](size_t i, size_t j) -> absl::StatusOr<bool> {
        ++t.calls;
        return static_cast<bool>(t.ok[i][j]);
      },
      [&steps, max_steps]() {
        return ++steps > max_steps ? absl::ResourceExhaustedError("steps")
                                   : absl::OkStatus();
      });
}

TEST(AssignTargetsTest, FindsAssignmentThePublicFirstPassMisses) {
  // Row 0 fits targets {0, 1}, row 1 {0, 2}, row 2 {1}: a displaced row
  // that only looks further on fails; full augmenting paths succeed.
  internal::AssignmentProblem p;
  p.rows = 3;
  p.targets = 3;
  EdgeTable t{{{true, true, false}, {true, false, true}, {false, true, false}}};
  auto r = RunAssign(p, t, 1000);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(**r, (std::vector<int32_t>{0, 2, 1}));
  EXPECT_LE(t.calls, 9);  // memoised: each pair asked at most once
}

TEST(AssignTargetsTest, SlotsTakeFirstClosedTargetsAndMoveForRows) {
  internal::AssignmentProblem p;
  p.rows = 1;
  p.targets = 3;
  p.slots = 2;
  p.closed = {true, true, true};
  EdgeTable t{{{true, true, true}}};
  auto r = RunAssign(p, t, 1000);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(**r, (std::vector<int32_t>{0, internal::kSlotOwner,
                                       internal::kSlotOwner}));
}

TEST(AssignTargetsTest, OpenTargetMustGoToARow) {
  internal::AssignmentProblem p;
  p.rows = 1;
  p.targets = 3;
  p.slots = 2;
  p.closed = {true, false, true};
  EdgeTable t{{{true, true, true}}};
  auto r = RunAssign(p, t, 1000);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(**r, (std::vector<int32_t>{internal::kSlotOwner, 0,
                                       internal::kSlotOwner}));
  // Two open targets cannot both be placed.
  p.closed = {false, false, true};
  auto none = RunAssign(p, t, 1000);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(AssignTargetsTest, KeyedRowsOnlySeeEqualKeys) {
  internal::AssignmentProblem p;
  p.rows = 2;
  p.targets = 3;
  Hash32 k1{};
  Hash32 k2{};
  k2[0] = 1;
  p.row_keys = {k2, std::nullopt};
  p.target_keys = {k1, k1, k2};
  EdgeTable t{{{true, true, true}, {true, true, true}}};
  auto r = RunAssign(p, t, 1000);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(**r, (std::vector<int32_t>{1, internal::kUnassigned, 0}));
}

TEST(AssignTargetsTest, StepLimitAbortsSearch) {
  internal::AssignmentProblem p;
  p.rows = 40;
  p.targets = 40;
  EdgeTable t;
  t.ok.assign(40, std::vector<bool>(40, true));
  auto r = RunAssign(p, t, 50);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(AssignTargetsTest, MoreRowsThanTargetsHasNoAssignment) {
  internal::AssignmentProblem p;
  p.rows = 3;
  p.targets = 2;
  EdgeTable t;
  t.ok.assign(3, std::vector<bool>(2, true));
  auto r = RunAssign(p, t, 1000);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(t.calls, 0);
}

// --- Randomized checks ------------------------------------------------

// A closed target component the generators draw from.
struct Comp {
  enum Kind { kInt, kStr, kSend, kList } kind;
  int a = 0;
  int b = 0;
  std::string Source() const {
    switch (kind) {
      case kInt:
        return std::to_string(a);
      case kStr:
        return "\"s" + std::to_string(a) + "\"";
      case kSend:
        return "@" + std::to_string(a) + "!(" + std::to_string(b) + ")";
      case kList:
        return "[" + std::to_string(a) + "]";
    }
    return "";
  }
  bool operator==(const Comp& o) const {
    return kind == o.kind && a == o.a && (kind != kSend || b == o.b);
  }
};

Comp RandomComp(std::mt19937_64& rng) {
  Comp c{static_cast<Comp::Kind>(rng() % 4)};
  c.a = static_cast<int>(rng() % 3);
  c.b = static_cast<int>(rng() % 3);
  return c;
}

std::string JoinPar(const std::vector<std::string>& parts) {
  if (parts.empty()) return "Nil";
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? " | " : "") + parts[i];
  return s;
}

// Patterns `x | [y] | [_] | structure` where the structure is drawn from
// the target (concrete, or with a variable in a send's data or a list's
// element): the match must succeed, `y` stays unbound, and the bindings
// substituted back recompose the target exactly (by hash).
TEST(SpatialMatchRandomTest, BindingsRecomposeTheTarget) {
  const uint64_t seed = ::rnode::testing::TestSeed(20261230);
  std::mt19937_64 rng(seed);
  for (int iter = 0; iter < 400; ++iter) {
    std::vector<Comp> target(1 + rng() % 6);
    for (Comp& c : target) c = RandomComp(rng);
    std::vector<std::string> target_src;
    for (const Comp& c : target) target_src.push_back(c.Source());
    // Structure: a random subset of the target, each part concrete or
    // with a hole `v<i>`.
    struct Part {
      Comp comp;
      int hole = -1;  // variable number, or -1 if concrete
    };
    std::vector<Part> parts;
    std::vector<std::string> pattern_src;
    int holes = 0;
    for (const Comp& c : target) {
      if (rng() % 2 == 0) continue;
      Part part{c};
      bool holeable = c.kind == Comp::kSend || c.kind == Comp::kList;
      if (holeable && rng() % 2 == 0) {
        part.hole = holes++;
        std::string v = "v" + std::to_string(part.hole);
        pattern_src.push_back(c.kind == Comp::kSend
                                  ? "@" + std::to_string(c.a) + "!(" + v + ")"
                                  : "[" + v + "]");
      } else {
        pattern_src.push_back(c.Source());
      }
      parts.push_back(part);
    }
    pattern_src.push_back("x");
    const bool with_y = rng() % 2 == 0;
    if (with_y) pattern_src.push_back("y");
    if (rng() % 2 == 0) pattern_src.push_back("_");
    std::string tsrc = JoinPar(target_src);
    std::string psrc = JoinPar(pattern_src);
    SCOPED_TRACE("seed " + std::to_string(seed) + " iteration " +
                 std::to_string(iter) + ": " + tsrc + " vs " + psrc);
    Compiled m;
    ASSERT_TRUE(CompileMatch(tsrc, psrc, m));
    ASSERT_EQ(m.free_count, static_cast<uint32_t>(holes + 1 + with_y));
    auto r = SpatialMatch(*m.target, *m.pattern, m.free_count);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->has_value());
    const Bindings& b = **r;
    // Free variables are numbered in order of first occurrence.
    const ir::ParPtr& rest = b[holes];
    ASSERT_NE(rest, nullptr);
    if (with_y) {
      EXPECT_EQ(b[holes + 1], nullptr);
    }
    ir::ParBuilder recomposed;
    recomposed.AddAll(*rest);
    for (const Part& part : parts) {
      if (part.hole < 0) {
        auto c = Compile(part.comp.Source());
        ASSERT_TRUE(c.ok());
        recomposed.AddAll(**c);
        continue;
      }
      const ir::ParPtr& v = b[part.hole];
      ASSERT_NE(v, nullptr);
      if (part.comp.kind == Comp::kSend) {
        recomposed.Add(
            ir::Send::Make(ir::ParOf(ir::Expr::Int(part.comp.a)), {v}, false));
      } else {
        recomposed.Add(ir::Expr::List({v}, std::nullopt));
      }
    }
    EXPECT_EQ(HexEncode(recomposed.Build()->hash), HexEncode(m.target->hash))
        << "rest " << Show(rest);
  }
}

TEST(SpatialMatchRandomTest, HoleReconstructionMatchesCompiler) {
  auto send = Compile("@2!(7)");
  auto list = Compile("[7]");
  ASSERT_TRUE(send.ok() && list.ok());
  ir::ParPtr seven = ir::ParOf(ir::Expr::Int(7));
  EXPECT_EQ(HexEncode(ir::ParBuilder()
                          .Add(ir::Send::Make(ir::ParOf(ir::Expr::Int(2)),
                                              {seven}, false))
                          .Build()
                          ->hash),
            HexEncode((*send)->hash));
  EXPECT_EQ(HexEncode(ir::ParOf(ir::Expr::List({seven}, std::nullopt))->hash),
            HexEncode((*list)->hash));
}

// A pattern part for the brute-force oracle.
struct OraclePart {
  enum Kind {
    kConcrete,
    kSendHole,
    kListHole,
    kInt,
    kString,
    kNotNil,
    kNotInt,
    kIntOrString,
    kCaptureNonNil,
  };
  Kind kind;
  Comp comp;  // kConcrete; kSendHole uses comp.a as the channel
  bool structural() const { return kind <= kListHole; }
  bool Fits(const Comp& c) const {
    switch (kind) {
      case kConcrete:
        return c == comp;
      case kSendHole:
        return c.kind == Comp::kSend && c.a == comp.a;
      case kListHole:
        return c.kind == Comp::kList;
      default:
        return false;
    }
  }
  // Whether a connective accepts exactly the components `set`.
  bool Accepts(const std::vector<const Comp*>& set) const {
    const bool one_int = set.size() == 1 && set[0]->kind == Comp::kInt;
    switch (kind) {
      case kInt:
        return one_int;
      case kString:
        return set.size() == 1 && set[0]->kind == Comp::kStr;
      case kNotNil:
        return !set.empty();
      case kNotInt:
        return !one_int;
      case kIntOrString:
        return one_int || (set.size() == 1 && set[0]->kind == Comp::kStr);
      case kCaptureNonNil:
        return !set.empty();
      default:
        return false;
    }
  }
};

// Tries every assignment of target components to pattern parts (or to the
// leftovers when the pattern has a free variable or wildcard).
bool OracleMatches(const std::vector<Comp>& target,
                   const std::vector<OraclePart>& parts, bool open) {
  const size_t choices = parts.size() + 1;
  size_t total = 1;
  for (size_t i = 0; i < target.size(); ++i) total *= choices;
  for (size_t code = 0; code < total; ++code) {
    std::vector<std::vector<const Comp*>> sets(choices);
    size_t c = code;
    for (const Comp& comp : target) {
      sets[c % choices].push_back(&comp);
      c /= choices;
    }
    if (!open && !sets[parts.size()].empty()) continue;
    bool ok = true;
    for (size_t k = 0; k < parts.size() && ok; ++k) {
      if (parts[k].structural()) {
        ok = sets[k].size() == 1 && parts[k].Fits(*sets[k][0]);
      } else {
        ok = parts[k].Accepts(sets[k]);
      }
    }
    if (ok) return true;
  }
  return false;
}

// Random Par patterns mixing structure, holes, connectives, a free
// variable and a wildcard: the matcher finds a match exactly when one
// exists (it backtracks over connective sub-Pars and its assignment is a
// maximum matching).
TEST(SpatialMatchRandomTest, AgreesWithBruteForceOracle) {
  const uint64_t seed = ::rnode::testing::TestSeed(20261330);
  std::mt19937_64 rng(seed);
  int matched = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    std::vector<Comp> target(rng() % 6);
    for (Comp& c : target) c = RandomComp(rng);
    std::vector<OraclePart> parts(rng() % 5);
    std::vector<std::string> pattern_src;
    int holes = 0;
    for (OraclePart& part : parts) {
      part.kind = static_cast<OraclePart::Kind>(rng() % 9);
      part.comp = RandomComp(rng);
      switch (part.kind) {
        case OraclePart::kConcrete:
          pattern_src.push_back(part.comp.Source());
          break;
        case OraclePart::kSendHole:
          pattern_src.push_back("@" + std::to_string(part.comp.a) + "!(h" +
                                std::to_string(holes++) + ")");
          break;
        case OraclePart::kListHole:
          pattern_src.push_back("[h" + std::to_string(holes++) + "]");
          break;
        case OraclePart::kInt:
          pattern_src.push_back("Int");
          break;
        case OraclePart::kString:
          pattern_src.push_back("String");
          break;
        case OraclePart::kNotNil:
          pattern_src.push_back("~Nil");
          break;
        case OraclePart::kNotInt:
          pattern_src.push_back("~Int");
          break;
        case OraclePart::kIntOrString:
          pattern_src.push_back("(Int \\/ String)");
          break;
        case OraclePart::kCaptureNonNil:
          pattern_src.push_back("(h" + std::to_string(holes++) + " /\\ ~Nil)");
          break;
      }
    }
    const int open_kind = static_cast<int>(rng() % 4);  // none, x, _, x | _
    if (open_kind == 1 || open_kind == 3) pattern_src.push_back("x");
    if (open_kind >= 2) pattern_src.push_back("_");
    std::vector<std::string> target_src;
    for (const Comp& c : target) target_src.push_back(c.Source());
    std::string tsrc = JoinPar(target_src);
    std::string psrc = JoinPar(pattern_src);
    SCOPED_TRACE("seed " + std::to_string(seed) + " iteration " +
                 std::to_string(iter) + ": " + tsrc + " vs " + psrc);
    Compiled m;
    ASSERT_TRUE(CompileMatch(tsrc, psrc, m));
    auto r = SpatialMatch(*m.target, *m.pattern, m.free_count);
    ASSERT_TRUE(r.ok()) << r.status();
    const bool expected = OracleMatches(target, parts, open_kind != 0);
    EXPECT_EQ(r->has_value(), expected);
    if (r->has_value()) {
      ++matched;
      // Hole bindings are data of the target's sends or list elements.
      for (const ir::ParPtr& v : **r) {
        if (v == nullptr) continue;
        EXPECT_TRUE(v->locally_free.empty());
      }
    }
  }
  // The generator produces both outcomes in earnest.
  EXPECT_GT(matched, 200);
  EXPECT_LT(matched, 1800);
}

}  // namespace
}  // namespace rnode::rholang

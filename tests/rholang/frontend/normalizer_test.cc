// Normalizer semantics: equivalences that must hash equal (ordering,
// alpha-equivalence, desugarings), differences that must not, and the exact
// IR shape of binders, indices and flags.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "rholang/frontend/diagnostic.h"
#include "rholang/frontend/ir.h"
#include "rholang/frontend/normalizer.h"
#include "tests/rholang/compile_util.h"
#include "util/bytes.h"

namespace rnode::rholang {
namespace {

struct PairCase {
  const char* name;
  const char* a;
  const char* b;
};

using rnode::testing::MustCompile;

class EquivalentProgramsTest : public ::testing::TestWithParam<PairCase> {};

TEST_P(EquivalentProgramsTest, HaveEqualIrAndHash) {
  auto a = Compile(GetParam().a);
  auto b = Compile(GetParam().b);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(HexEncode((*a)->hash), HexEncode((*b)->hash));
}

const PairCase kEquivalent[] = {
    {"ParCommutes", "@0!(1) | @1!(2)", "@1!(2) | @0!(1)"},
    {"ParCommutesAcrossKinds", "for (_ <- @0) { Nil } | @1!(2) | 7",
     "7 | @1!(2) | for (_ <- @0) { Nil }"},
    {"ParAssociates", "{@0!(1) | @1!(2)} | @2!(3)",
     "@0!(1) | {@1!(2) | @2!(3)}"},
    {"NilIsParUnit", "@0!(1) | Nil", "@0!(1)"},
    {"ParCommutesInsideBodies", "new x in { x!(1) | x!(2) }",
     "new x in { x!(2) | x!(1) }"},
    {"ParCommutesInsideQuotes", "@{@0!(1) | @1!(2)}!(3)",
     "@{@1!(2) | @0!(1)}!(3)"},
    {"AlphaNew", "new x in { x!(1) }", "new y in { y!(1) }"},
    {"AlphaNewSeveral", "new a, b in { a!(*b) }", "new c, d in { c!(*d) }"},
    {"AlphaFor", "for (@a <- @0) { @1!(a) }", "for (@b <- @0) { @1!(b) }"},
    {"AlphaMatch", "match 1 { x => @0!(x) }", "match 1 { y => @0!(y) }"},
    {"AlphaContract", "contract @0(@a, r) = { r!(a) }",
     "contract @0(@b, k) = { k!(b) }"},
    {"AlphaMatches", "@0!(1 matches x)", "@0!(1 matches y)"},
    {"AlphaShadowing", "new x in { new x in { x!(1) } }",
     "new y in { new x in { x!(1) } }"},
    {"JoinOrder", "for (@a <- @0 & @b <- @1) { @2!(a, b) }",
     "for (@b <- @1 & @a <- @0) { @2!(a, b) }"},
    {"JoinOrderThree", "for (@a <- @0 & @b <- @1 & @c <- @2) { @3!(a, b, c) }",
     "for (@c <- @2 & @a <- @0 & @b <- @1) { @3!(a, b, c) }"},
    {"ContractIsPersistentReceive", "contract @0(@a) = { @1!(a) }",
     "for (@a <= @0) { @1!(a) }"},
    {"IfWithoutElseHasNilElse", "if (true) @0!(1)",
     "if (true) { @0!(1) } else { Nil }"},
    {"SequentialReceiptsNest", "for (@a <- @0 ; @b <- @1) { @2!(a, b) }",
     "for (@a <- @0) { for (@b <- @1) { @2!(a, b) } }"},
    {"SendSyncDesugars", "new x in { x!?(1) ; @0!(2) }",
     "new x in { new r in { x!(*r, 1) | for (_ <- r) { @0!(2) } } }"},
    {"SendSyncDotDesugars", "new x in { x!?(1). }",
     "new x in { new r in { x!(*r, 1) | for (_ <- r) { Nil } } }"},
    {"SendReceiveSourceDesugars", "new x in { for (@a <- x!?(1)) { @0!(a) } }",
     "new x in { new r in { x!(*r, 1) | for (@a <- r) { @0!(a) } } }"},
    {"ReceiveSendSourceDesugars", "for (@a <- @0?!) { @1!(a) }",
     "for (@a, r <- @0) { r!() | @1!(a) }"},
    {"LetSingleIsMatch", "let @x <- 1 in { @0!(x) }",
     "match [1] { [x] => @0!(x) }"},
    {"LetNameIsMatchOnEval", "let x <- 1 in { @0!(*x) }",
     "match [1] { [*x] => @0!(*x) }"},
    {"LetSequentialNests", "let @x <- 1 ; @y <- 2 in { @0!(x, y) }",
     "match [1] { [x] => match [2] { [y] => @0!(x, y) } }"},
    {"LetConcurrentIsSendsAndReceives",
     "let @x <- 1 & @y <- 2 in { @0!(x, y) }",
     "new a, b in { a!(1) | b!(2) | for (@x <- a ; @y <- b) { @0!(x, y) } "
     "}"},
    {"LetEqualsIsArrow", "let @x = 5 in { @0!(x) }",
     "let @x <- 5 in { @0!(x) }"},
    {"BundlesMerge", "bundle+ { bundle- { @0!(1) } }", "bundle0 { @0!(1) }"},
    {"BundleReadWriteMerge", "bundle { bundle+ { @0!(1) } }",
     "bundle+ { @0!(1) }"},
    {"SetSortsAndDeduplicates", "@0!(Set(3, 1, 2, 1))", "@0!(Set(1, 2, 3))"},
    {"MapSortsKeys", "@0!({\"b\": 2, \"a\": 1})", "@0!({\"a\": 1, \"b\": 2})"},
    {"MapLaterKeyWins", "@0!({\"a\": 1, \"a\": 2})", "@0!({\"a\": 2})"},
    {"EvalOfQuoteIsProcess", "*@{@0!(1)}", "@0!(1)"},
    {"QuoteOfEvalIsName", "new x in { @{*x}!(1) }", "new x in { x!(1) }"},
    {"ParenthesesVanish", "@0!((((1))))", "@0!(1)"},
    {"BlocksVanish", "{ { @0!(1) } }", "@0!(1)"},
    {"CommentsVanish", "/* a */ @0!(1) // b", "@0!(1)"},
    {"WhitespaceVanishes", "@0 ! ( 1 )", "@0!(1)"},
    {"NewUrisSortedByUri",
     "new a(`rho:io:stdout`), b(`rho:io:stderr`) in { a!(1) | b!(2) }",
     "new b(`rho:io:stderr`), a(`rho:io:stdout`) in { a!(1) | b!(2) }"},
    {"NewUrisAfterPlainNames", "new a(`rho:io:stdout`), b in { a!(1) | b!(2) }",
     "new b, a(`rho:io:stdout`) in { a!(1) | b!(2) }"},
    {"DisjunctionFlattens", "match 1 { 1 \\/ 2 \\/ 3 => Nil }",
     "match 1 { {1 \\/ 2} \\/ 3 => Nil }"},
    {"ConjunctionFlattens", "match 1 { x /\\ Int /\\ ~2 => @0!(x) }",
     "match 1 { {x /\\ Int} /\\ ~2 => @0!(x) }"},
    {"NegativeLiteralFolds", "@0!(-5)", "@0!(-5)"},
    {"AlphaJoinBody", "for (@a <- @0 & @b <- @1) { @2!(a) }",
     "for (@x <- @0 & @y <- @1) { @2!(x) }"},
    {"ProcVarAsQuotedName", "for (@x <- @0) { @x!(1) }",
     "for (@y <- @0) { @{y}!(1) }"},
    {"PeekJoinOrder", "for (@a <<- @0 & @b <<- @1) { @2!(a, b) }",
     "for (@b <<- @1 & @a <<- @0) { @2!(a, b) }"},
    {"SetElementsCommute", "@0!(Set(@1!(1), @2!(2)))",
     "@0!(Set({@2!(2)}, {@1!(1)}))"},
};

INSTANTIATE_TEST_SUITE_P(Pairs, EquivalentProgramsTest,
                         ::testing::ValuesIn(kEquivalent),
                         [](const ::testing::TestParamInfo<PairCase>& info) {
                           return std::string(info.param.name);
                         });

class DistinctProgramsTest : public ::testing::TestWithParam<PairCase> {};

TEST_P(DistinctProgramsTest, HaveDifferentHashes) {
  auto a = Compile(GetParam().a);
  auto b = Compile(GetParam().b);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE((*a)->hash, (*b)->hash);
}

const PairCase kDistinct[] = {
    {"SendVsPersistentSend", "@0!(1)", "@0!!(1)"},
    {"LinearVsPeek", "for (_ <- @0) { Nil }", "for (_ <<- @0) { Nil }"},
    {"LinearVsPersistent", "for (_ <- @0) { Nil }", "for (_ <= @0) { Nil }"},
    {"DifferentInts", "@0!(1)", "@0!(2)"},
    {"IntVsString", "@0!(1)", "@0!(\"1\")"},
    {"StringVsUri", "@0!(\"a\")", "@0!(`a`)"},
    {"TrueVsFalse", "@0!(true)", "@0!(false)"},
    {"NilVsEmptyList", "@0!(Nil)", "@0!([])"},
    {"ListOrderMatters", "@0!([1, 2])", "@0!([2, 1])"},
    {"TupleVsList", "@0!((1, 2))", "@0!([1, 2])"},
    {"SetVsList", "@0!(Set(1, 2))", "@0!([1, 2])"},
    {"DataOrderMatters", "@0!(1, 2)", "@0!(2, 1)"},
    {"ChannelMatters", "@0!(1)", "@1!(1)"},
    {"NewOrderMatters", "new a, b in { a!(*b) }", "new a, b in { b!(*a) }"},
    {"BoundIndexMatters", "new a, b in { a!(1) }", "new a, b in { b!(1) }"},
    {"BundleFlagsMatter", "bundle+ { @0!(1) }", "bundle- { @0!(1) }"},
    {"BundleVsPlain", "bundle { @0!(1) }", "@0!(1)"},
    {"MatchCaseOrderMatters", "match 1 { 1 => @0!(1)  _ => @0!(2) }",
     "match 1 { _ => @0!(2)  1 => @0!(1) }"},
    {"IfBranchesMatter", "if (true) { @0!(1) } else { @0!(2) }",
     "if (true) { @0!(2) } else { @0!(1) }"},
    {"IfVsMatch", "if (true) { @0!(1) }",
     "match true { true => @0!(1)  false => Nil }"},
    {"MethodNameMatters", "@0!([1].length())", "@0!([1].size())"},
    {"OperandOrderMatters", "@0!(1 - 2)", "@0!(2 - 1)"},
    {"OperatorMatters", "@0!(1 + 2)", "@0!(1 * 2)"},
    {"ConcatVsPlus", "@0!(\"a\" ++ \"b\")", "@0!(\"a\" + \"b\")"},
    {"VarRefVsFreeVariable", "for (@v <- @0) { match 1 { =v => Nil } }",
     "for (@v <- @0) { match 1 { w => Nil } }"},
    {"ConjunctionVsDisjunction", "match 1 { Int /\\ String => Nil }",
     "match 1 { Int \\/ String => Nil }"},
    {"RemainderMatters", "match [1] { [a] => Nil }",
     "match [1] { [a ...b] => Nil }"},
    {"UriMatters", "new a(`rho:io:stdout`) in { a!(1) }",
     "new a(`rho:io:stderr`) in { a!(1) }"},
    {"JoinVsSequential", "for (@a <- @0 & @b <- @1) { Nil }",
     "for (@a <- @0 ; @b <- @1) { Nil }"},
    {"NegVsNegativeLiteral", "@0!(-(5))", "@0!(-5)"},
    {"NotVsTrue", "@0!(not false)", "@0!(true)"},
    {"SendVsSendSync", "new x in { x!(1) }", "new x in { x!?(1) }"},
};

INSTANTIATE_TEST_SUITE_P(Pairs, DistinctProgramsTest,
                         ::testing::ValuesIn(kDistinct),
                         [](const ::testing::TestParamInfo<PairCase>& info) {
                           return std::string(info.param.name);
                         });

TEST(NormalizerShapeTest, NewBindsPlainNamesThenUrisSorted) {
  ir::ParPtr p = MustCompile("new b(`rho:z`), a, c(`rho:a`) in { a!(1) }");
  ASSERT_EQ(p->news.size(), 1u);
  const ir::New& n = *p->news[0];
  EXPECT_EQ(n.bind_count, 3u);
  EXPECT_EQ(n.uris, (std::vector<std::string>{"rho:a", "rho:z"}));
  // a is bound first, then `rho:a` (c), then `rho:z` (b): a has index 2.
  const ir::Send& s = *n.body->sends.at(0);
  ASSERT_NE(s.chan->SingleExpr(), nullptr);
  EXPECT_EQ(s.chan->SingleExpr()->var.kind, ir::VarKind::kBound);
  EXPECT_EQ(s.chan->SingleExpr()->var.index, 2u);
}

TEST(NormalizerShapeTest, ReceiveBindsCountAndIndices) {
  ir::ParPtr p = MustCompile("for (@a, @b <- @0) { @1!(a, b) }");
  ASSERT_EQ(p->receives.size(), 1u);
  const ir::Receive& r = *p->receives[0];
  EXPECT_EQ(r.bind_count, 2u);
  ASSERT_EQ(r.binds.size(), 1u);
  EXPECT_EQ(r.binds[0].free_count, 2u);
  EXPECT_FALSE(r.persistent);
  EXPECT_FALSE(r.peek);
  const ir::Send& s = *r.body->sends.at(0);
  EXPECT_EQ(s.data[0]->SingleExpr()->var.index, 1u);  // a: bound first
  EXPECT_EQ(s.data[1]->SingleExpr()->var.index, 0u);  // b: most recent
  EXPECT_EQ(r.binds[0].patterns[0]->SingleExpr()->var.kind, ir::VarKind::kFree);
  EXPECT_EQ(r.binds[0].patterns[1]->SingleExpr()->var.index, 1u);
  EXPECT_TRUE(r.binds[0].patterns[0]->connective_used);
  EXPECT_TRUE(r.locally_free.empty());
}

TEST(NormalizerShapeTest, ContractAndPeekFlags) {
  ir::ParPtr c = MustCompile("contract @0(x) = { Nil }");
  ASSERT_EQ(c->receives.size(), 1u);
  EXPECT_TRUE(c->receives[0]->persistent);
  ir::ParPtr k = MustCompile("for (x <<- @0) { Nil }");
  ASSERT_EQ(k->receives.size(), 1u);
  EXPECT_TRUE(k->receives[0]->peek);
  EXPECT_FALSE(k->receives[0]->persistent);
}

TEST(NormalizerShapeTest, MixedJoinTakesKindOfFirstBind) {
  ir::ParPtr p = MustCompile("for (@a <= @0 & @b <- @1) { Nil }");
  ASSERT_EQ(p->receives.size(), 1u);
  EXPECT_TRUE(p->receives[0]->persistent);
}

TEST(NormalizerShapeTest, LocallyFreeTracksFreeIndices) {
  ir::ParPtr p = MustCompile("new x, y in { x!(*y) | for (z <- x) { *z } }");
  const ir::New& n = *p->news.at(0);
  EXPECT_TRUE(n.locally_free.empty());
  EXPECT_EQ(n.body->locally_free.ToVector(), (std::vector<uint32_t>{0, 1}));
  const ir::Receive& r = *n.body->receives.at(0);
  // The body's z (index 0) is bound by the receive; x is index 1 outside.
  EXPECT_EQ(r.locally_free.ToVector(), (std::vector<uint32_t>{1}));
  EXPECT_EQ(r.body->locally_free.ToVector(), (std::vector<uint32_t>{0}));
}

TEST(NormalizerShapeTest, MatchCaseFreeCountAndBodyIndices) {
  ir::ParPtr p = MustCompile("match [1, 2] { [a, b] => @0!(b) }");
  const ir::Match& m = *p->matches.at(0);
  ASSERT_EQ(m.cases.size(), 1u);
  EXPECT_EQ(m.cases[0].free_count, 2u);
  EXPECT_EQ(m.cases[0].body->sends.at(0)->data[0]->SingleExpr()->var.index, 0u);
  EXPECT_TRUE(m.cases[0].pattern->connective_used);
  EXPECT_FALSE(m.connective_used);
}

TEST(NormalizerShapeTest, VarRefRecordsIndexAndDepth) {
  ir::ParPtr p =
      MustCompile("new c in { for (@v <- c) { match 1 { =v => Nil } } }");
  const ir::Receive& r = *p->news.at(0)->body->receives.at(0);
  const ir::Match& m = *r.body->matches.at(0);
  const ir::Connective& ref = *m.cases[0].pattern->connectives.at(0);
  EXPECT_EQ(ref.kind, ir::ConnectiveKind::kVarRef);
  EXPECT_EQ(ref.var_ref_index, 0u);
  EXPECT_EQ(ref.var_ref_depth, 1u);
  EXPECT_EQ(m.locally_free.ToVector(), (std::vector<uint32_t>{0}));
  EXPECT_EQ(m.cases[0].free_count, 0u);
}

// A free-here var ref counts from the pattern boundary: binders opened
// inside the pattern (new, receive, match case) do not lower it, and it
// reaches the locally_free of the node holding the pattern.
TEST(NormalizerShapeTest, VarRefUnderPatternBinderStaysLocallyFree) {
  const std::vector<std::pair<std::string, std::vector<uint32_t>>> cases = {
      {"new a, b in { match 1 { [new y in { =*a }] => Nil } }", {1}},
      {"new a, b in { match 1 { [new y in { =*b }] => Nil } }", {0}},
      {"new a, b in { match 1 { [new y, z in { =*a | *y }] => Nil } }", {1}},
      {"new a, b in { match 1 { [for (y <- @0) { =*a }] => Nil } }", {1}},
      {"new a, b in { match 1 { [match 2 { z => =*a }] => Nil } }", {1}},
      {"new a, b in { match 1 { [new y in { match *y { =*a => Nil } }] => "
       "Nil } }",
       {1}},
      {"new a, b in { for (@[new y in { =*a }] <- @0) { Nil } }", {1}},
      {"new a, b in { @0!(1 matches [new y in { =*a }]) }", {1}},
      {"new a, b in { match 1 { [new y in { *y }] => Nil } }", {}},
  };
  for (const auto& [src, want] : cases) {
    ir::ParPtr p = MustCompile(src);
    ASSERT_EQ(p->news.size(), 1u) << src;
    EXPECT_EQ(p->news[0]->body->locally_free.ToVector(), want) << src;
    EXPECT_TRUE(p->locally_free.empty()) << src;
  }
}

// `=*x /\ P` (var ref first) normalizes like `P /\ =*x` with the operands
// in source order.
TEST(NormalizerShapeTest, VarRefAsFirstConnectiveOperand) {
  const std::vector<std::pair<std::string, ir::ConnectiveKind>> cases = {
      {"new x in { match 5 { =*x /\\ Int => Nil } }", ir::ConnectiveKind::kAnd},
      {"new x in { match 5 { =*x \\/ Int => Nil } }", ir::ConnectiveKind::kOr},
      {"new x in { match 5 { ~=*x => Nil } }", ir::ConnectiveKind::kNot},
  };
  for (const auto& [src, kind] : cases) {
    ir::ParPtr p = MustCompile(src);
    ASSERT_EQ(p->news.size(), 1u) << src;
    const ir::Match& m = *p->news[0]->body->matches.at(0);
    const ir::Connective& c = *m.cases.at(0).pattern->connectives.at(0);
    EXPECT_EQ(c.kind, kind) << src;
    const ir::Connective& ref = *c.ps.at(0)->connectives.at(0);
    EXPECT_EQ(ref.kind, ir::ConnectiveKind::kVarRef) << src;
    EXPECT_EQ(ref.var_ref_index, 0u) << src;
    EXPECT_TRUE(ref.var_ref_free) << src;
    EXPECT_EQ(m.locally_free.ToVector(), (std::vector<uint32_t>{0})) << src;
  }
}

TEST(NormalizerShapeTest, IfCarriesBothBranches) {
  ir::ParPtr p = MustCompile("if (true) @0!(1)");
  ASSERT_EQ(p->conditionals.size(), 1u);
  EXPECT_TRUE(p->conditionals[0]->if_false->IsNil());
  EXPECT_EQ(p->conditionals[0]->condition->SingleExpr()->kind,
            ir::ExprKind::kBool);
}

TEST(NormalizerShapeTest, BundleFlags) {
  struct {
    const char* src;
    bool write, read;
  } cases[] = {{"bundle { @0!(1) }", true, true},
               {"bundle+ { @0!(1) }", true, false},
               {"bundle- { @0!(1) }", false, true},
               {"bundle0 { @0!(1) }", false, false}};
  for (const auto& c : cases) {
    ir::ParPtr p = MustCompile(c.src);
    ASSERT_EQ(p->bundles.size(), 1u) << c.src;
    EXPECT_EQ(p->bundles[0]->write_flag, c.write) << c.src;
    EXPECT_EQ(p->bundles[0]->read_flag, c.read) << c.src;
  }
}

TEST(NormalizerShapeTest, TopLevelExprsSortNaturally) {
  ir::ParPtr p = MustCompile("3 | \"b\" | 1 | true | \"a\" | 2");
  ASSERT_EQ(p->exprs.size(), 6u);
  EXPECT_EQ(p->exprs[0]->kind, ir::ExprKind::kBool);
  EXPECT_EQ(p->exprs[1]->int_value, 1);
  EXPECT_EQ(p->exprs[2]->int_value, 2);
  EXPECT_EQ(p->exprs[3]->int_value, 3);
  EXPECT_EQ(p->exprs[4]->text, "a");
  EXPECT_EQ(p->exprs[5]->text, "b");
}

TEST(NormalizerShapeTest, StringEscapesAreDecoded) {
  ir::ParPtr p = MustCompile("@0!(\"a\\n\\\"\\u00e9\")");
  EXPECT_EQ(p->sends.at(0)->data[0]->SingleExpr()->text, "a\n\"\xc3\xa9");
}

TEST(NormalizerShapeTest, InjectionsComeFromTheEnvironment) {
  NormalizerEnv env;
  Bytes sig = {1, 2, 3};
  env.injections["rho:system:deployId"] =
      ir::ParBuilder()
          .Add(ir::Unforgeable::Make(ir::UnforgeableKind::kDeployId, sig))
          .Build();
  auto p = Compile(
      "new d(`rho:system:deployId`), o(`rho:io:stdout`) in { o!(*d) }", env);
  ASSERT_TRUE(p.ok()) << p.status();
  const ir::New& n = *(*p)->news.at(0);
  ASSERT_EQ(n.injections.size(), 1u);
  EXPECT_EQ(n.injections[0].first, "rho:system:deployId");
  auto without =
      Compile("new d(`rho:system:deployId`), o(`rho:io:stdout`) in { o!(*d) }");
  ASSERT_TRUE(without.ok());
  EXPECT_NE((*without)->hash, (*p)->hash);
}

TEST(NormalizerShapeTest, DesugaredNamesNeverCaptureUserNames) {
  // The fresh name of `!?` must not shadow the user's `x` in the
  // continuation.
  ir::ParPtr p = MustCompile("new x in { x!?(1) ; x!(2) }");
  ir::ParPtr q = MustCompile(
      "new x in { new r in { x!(*r, 1) | for (_ <- r) { x!(2) } } }");
  EXPECT_EQ(p->hash, q->hash);
}

TEST(NormalizerShapeTest, DisjunctionVariablesAreNotBound) {
  // Free variables inside `\/` do not count as captures of the case.
  ir::ParPtr p = MustCompile("match 1 { x \\/ y => Nil }");
  EXPECT_EQ(p->matches.at(0)->cases[0].free_count, 0u);
}

TEST(NormalizerShapeTest, ConnectiveUsedMarksPatternsOnly) {
  ir::ParPtr p = MustCompile("match [1] { [_ ...r] => Nil }");
  EXPECT_TRUE(p->matches.at(0)->cases[0].pattern->connective_used);
  EXPECT_FALSE(p->connective_used);
  EXPECT_EQ(p->matches.at(0)->cases[0].free_count, 1u);
}

TEST(NormalizerShapeTest, ReceiveSendSourceAppendsAckName) {
  ir::ParPtr p = MustCompile("for (@a <- @0?!) { Nil }");
  const ir::Receive& r = *p->receives.at(0);
  EXPECT_EQ(r.binds.at(0).patterns.size(), 2u);
  EXPECT_EQ(r.bind_count, 2u);
  EXPECT_EQ(r.body->sends.size(), 1u);
}

}  // namespace
}  // namespace rnode::rholang

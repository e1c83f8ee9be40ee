// Tests of substitution (rholang/interpreter/substitute.h).
#include "rholang/interpreter/substitute.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "rholang/frontend/limits.h"
#include "rholang/frontend/normalizer.h"
#include "rholang/frontend/printer.h"
#include "rholang/interpreter/cost.h"
#include "rholang/interpreter/env.h"
#include "tests/rholang/compile_util.h"

namespace rnode::rholang::interp {
namespace {

using ir::ParPtr;

using rnode::testing::MustCompile;

std::string Show(const ParPtr& p) {
  absl::StatusOr<std::string> s = Print(*p);
  return s.ok() ? *s : std::string(s.status().message());
}

// The body of the single top-level `new` of `src`.
ParPtr NewBody(const std::string& src) {
  ParPtr p = MustCompile(src);
  EXPECT_EQ(p->news.size(), 1u) << src;
  return p->news.empty() ? ir::Nil() : p->news[0]->body;
}

Env EnvOf(const std::vector<std::string>& values) {
  std::vector<ParPtr> v;
  for (const std::string& s : values) v.push_back(MustCompile(s));
  return Env(std::move(v));
}

struct SubstCase {
  std::string name;
  std::string program;              // `new ... in { term }`
  std::vector<std::string> values;  // env values, last = index 0
  std::string expected;             // the substituted term
};

void PrintTo(const SubstCase& c, std::ostream* os) { *os << c.name; }

class SubstituteTableTest : public ::testing::TestWithParam<SubstCase> {};

TEST_P(SubstituteTableTest, ReplacesBoundVariables) {
  const SubstCase& c = GetParam();
  PhloMeter meter(-1);
  absl::StatusOr<ParPtr> got =
      Substitute(NewBody(c.program), EnvOf(c.values), 0, meter);
  ASSERT_TRUE(got.ok()) << got.status();
  ParPtr want = MustCompile(c.expected);
  EXPECT_TRUE(ir::Equal(*got, want)) << "got:\n"
                                     << Show(*got) << "\nwant:\n"
                                     << Show(want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SubstituteTableTest,
    ::testing::Values(
        SubstCase{
            "ProcessPosition", "new x in { *x | 7 }", {"1 | 2"}, "1 | 2 | 7"},
        SubstCase{"NamePosition", "new x in { x!(1) }", {"5"}, "@5!(1)"},
        SubstCase{"NameAndProcess", "new x in { x!(*x) }", {"5"}, "@5!(5)"},
        SubstCase{
            "TwoNamesOrder", "new a, b in { a!(*b) }", {"1", "2"}, "@1!(2)"},
        SubstCase{"InsideReceiveBody",
                  "new x in { for (y <- @0) { x!(*y) } }",
                  {"9"},
                  "for (y <- @0) { @9!(*y) }"},
        SubstCase{"ReceiveSource",
                  "new x in { for (y <- x) { Nil } }",
                  {"9"},
                  "for (y <- @9) { Nil }"},
        SubstCase{"NestedNew",
                  "new x in { new y in { x!(*y) } }",
                  {"9"},
                  "new y in { @9!(*y) }"},
        SubstCase{"MatchCaseBody",
                  "new x in { match 5 { z => x!(z) } }",
                  {"9"},
                  "match 5 { z => @9!(z) }"},
        SubstCase{"MatchTarget",
                  "new x in { match *x { 9 => Nil } }",
                  {"9"},
                  "match 9 { 9 => Nil }"},
        SubstCase{"VarRefInReceivePattern",
                  "new x in { for (@{=*x} <- @0) { Nil } }",
                  {"9"},
                  "for (@9 <- @0) { Nil }"},
        SubstCase{"VarRefBesideCapture",
                  "new x in { match [1, 2] { [=*x, y] => y } }",
                  {"1"},
                  "match [1, 2] { [1, y] => y }"},
        SubstCase{"VarRefInMatches",
                  "new x in { @0!(5 matches =*x) }",
                  {"5"},
                  "@0!(5 matches 5)"},
        SubstCase{"BoundVarInsidePatternKept",
                  "new x in { match *x { [new y in { y!(1) }] => Nil } }",
                  {"9"},
                  "match 9 { [new y in { y!(1) }] => Nil }"},
        SubstCase{"VarRefUnderPatternBinder",
                  "new x in { match *x { [new y in { =*x }] => Nil } }",
                  {"9"},
                  "match 9 { [new y in { 9 }] => Nil }"},
        SubstCase{"InnerPatternVarRefKept",
                  "new x in { match *x { for (y <- @0) { match 2 { =*y => "
                  "Nil } } => Nil } }",
                  {"9"},
                  "match 9 { for (y <- @0) { match 2 { =*y => Nil } } => Nil "
                  "}"},
        SubstCase{"BundleMerge",
                  "new x in { bundle+{*x} }",
                  {"bundle-{1}"},
                  "bundle0{1}"},
        SubstCase{"ParFlattenIntoSendData",
                  "new x in { @0!(*x | 3) }",
                  {"1 | 2"},
                  "@0!(1 | 2 | 3)"},
        SubstCase{"MapKeysResorted",
                  "new x in { @0!({*x: 1, 5: 2}) }",
                  {"7"},
                  "@0!({5: 2, 7: 1})"},
        SubstCase{"SetDeduplicated",
                  "new x in { @0!(Set(*x, 5)) }",
                  {"5"},
                  "@0!(Set(5))"},
        SubstCase{"ListAndTuple",
                  "new x in { @0!([*x, (*x, 1)]) }",
                  {"4"},
                  "@0!([4, (4, 1)])"},
        SubstCase{"MethodTargetAndArgs",
                  "new x in { @0!((*x).nth(*x)) }",
                  {"0"},
                  "@0!((0).nth(0))"},
        SubstCase{"OperatorsAndIf",
                  "new x in { if (*x > 1) { @0!(-*x) } else { @1!(not *x) } }",
                  {"3"},
                  "if (3 > 1) { @0!(-(3)) } else { @1!(not 3) }"},
        SubstCase{"JoinBodyAndSources",
                  "new x in { for (a <- x & b <- @1) { x!(*a, *b) } }",
                  {"8"},
                  "for (a <- @8 & b <- @1) { @8!(*a, *b) }"},
        SubstCase{"PersistentSend", "new x in { x!!(1) }", {"2"}, "@2!!(1)"},
        SubstCase{"ContractBody",
                  "new x in { contract x(@y) = { x!(y) } }",
                  {"3"},
                  "contract @3(@y) = { @3!(y) }"},
        SubstCase{"ValueIsProcess",
                  "new x in { @0!(*x) }",
                  {"for (y <- @1) { Nil }"},
                  "@0!(for (y <- @1) { Nil })"},
        SubstCase{
            "NilValueVanishes", "new x in { *x | @0!(1) }", {"Nil"}, "@0!(1)"},
        SubstCase{"VarRefInsideAnd",
                  "new x in { match 5 { Int /\\ =*x => Nil } }",
                  {"9"},
                  "match 5 { Int /\\ 9 => Nil }"},
        SubstCase{"VarRefFirstInAnd",
                  "new x in { match 5 { =*x /\\ Int => Nil } }",
                  {"9"},
                  "match 5 { 9 /\\ Int => Nil }"},
        SubstCase{"VarRefInsideNot",
                  "new x in { match 5 { ~=*x => Nil } }",
                  {"9"},
                  "match 5 { ~9 => Nil }"},
        SubstCase{"VarRefInsideOr",
                  "new x in { match 5 { =*x \\/ 1 => Nil } }",
                  {"9"},
                  "match 5 { 9 \\/ 1 => Nil }"},
        SubstCase{"VarRefUnderReceiveBinder",
                  "new x in { for (y <- @0) { match *y { =*x => Nil } } }",
                  {"9"}, "for (y <- @0) { match *y { 9 => Nil } }"},
        SubstCase{"VarRefToInnerBinderKept",
                  "new x in { for (y <- x) { match 1 { =*y => Nil } } }",
                  {"9"}, "for (y <- @9) { match 1 { =*y => Nil } }"},
        SubstCase{"VarRefUnderNewInsidePattern",
                  "new x in { match 1 { [new y in { =*x }] => Nil } }",
                  {"9"}, "match 1 { [new y in { 9 }] => Nil }"},
        SubstCase{"VarRefUnderNewInsidePatternPicksItsOwnName",
                  "new a, b in { match 1 { [new y in { =*a }] => Nil } }",
                  {"1", "2"}, "match 1 { [new y in { 1 }] => Nil }"},
        SubstCase{"VarRefUnderReceiveInsidePattern",
                  "new x in { match 1 { [for (y <- @0) { =*x }] => Nil } }",
                  {"9"}, "match 1 { [for (y <- @0) { 9 }] => Nil }"},
        SubstCase{"VarRefInCaseBodyInsidePattern",
                  "new x in { match 1 { [match 2 { z => =*x }] => Nil } }",
                  {"9"}, "match 1 { [match 2 { z => 9 }] => Nil }"},
        SubstCase{"VarRefInNestedPatternUnderBinder",
                  "new x in { match 1 { [new y in { match *y { =*x => Nil } "
                  "}] => Nil } }",
                  {"9"},
                  "match 1 { [new y in { match *y { 9 => Nil } }] => Nil }"},
        SubstCase{"VarRefUnderNewInsideReceivePattern",
                  "new x in { for (@[new y in { =*x }] <- @0) { Nil } }",
                  {"9"}, "for (@[new y in { 9 }] <- @0) { Nil }"},
        SubstCase{"VarRefUnderNewInsideMatchesPattern",
                  "new x in { @0!(1 matches [new y in { =*x }]) }",
                  {"9"}, "@0!(1 matches [new y in { 9 }])"},
        SubstCase{"PeekReceive",
                  "new x in { for (y <<- x) { Nil } }",
                  {"9"},
                  "for (y <<- @9) { Nil }"},
        SubstCase{"PersistentReceive",
                  "new x in { for (y <= x) { *y } }",
                  {"9"},
                  "for (y <= @9) { *y }"},
        SubstCase{"TwoMatchCases",
                  "new x in { match 1 { 1 => x!(1) _ => x!(2) } }",
                  {"9"},
                  "match 1 { 1 => @9!(1) _ => @9!(2) }"},
        SubstCase{"DeepBinderNesting",
                  "new x in { new a in { new b in { for (c <- a) { x!(*b, *c) "
                  "} } } }",
                  {"9"},
                  "new a in { new b in { for (c <- a) { @9!(*b, *c) } } }"},
        SubstCase{"MatchCaptureBesideOuterVar",
                  "new x in { match [1] { [y] => x!(y) } }",
                  {"9"},
                  "match [1] { [y] => @9!(y) }"},
        SubstCase{"ListRemainderKept",
                  "new x in { match [1, 2] { [a ...r] => x!(r) } }",
                  {"9"},
                  "match [1, 2] { [a ...r] => @9!(r) }"},
        SubstCase{"BundleValueAsChannel",
                  "new x in { x!(1) }",
                  {"bundle+{1}"},
                  "@{bundle+{1}}!(1)"},
        SubstCase{"OuterIndexSkipsInnerBinders",
                  "new a, b in { new c in { a!(*b, *c) } }",
                  {"1", "2"},
                  "new c in { @1!(2, *c) }"},
        SubstCase{"SendInsideNestedBody",
                  "new x in { for (y <- @0) { for (z <- @1) { x!(*y, *z) } } }",
                  {"9"},
                  "for (y <- @0) { for (z <- @1) { @9!(*y, *z) } }"}),
    [](const ::testing::TestParamInfo<SubstCase>& info) {
      return info.param.name;
    });

TEST(SubstituteTest, UnforgeableValueBecomesTheChannel) {
  const uint8_t id[] = {7, 7};
  ParPtr name = ir::ParBuilder()
                    .Add(ir::Unforgeable::Make(ir::UnforgeableKind::kPrivate,
                                               ByteView(id, 2)))
                    .Build();
  PhloMeter meter(-1);
  absl::StatusOr<ParPtr> got =
      Substitute(NewBody("new x in { x!(1) }"), Env({name}), 0, meter);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ((*got)->sends.size(), 1u);
  EXPECT_TRUE(ir::Equal((*got)->sends[0]->chan, name));
  EXPECT_TRUE((*got)->locally_free.empty());
}

TEST(SubstituteTest, ResultHasNoFreeIndicesLeft) {
  ParPtr body = NewBody(
      "new a, b in { for (y <- a) { b!(*y) | match *b { z => a!(z) } } }");
  PhloMeter meter(-1);
  absl::StatusOr<ParPtr> got = Substitute(body, EnvOf({"1", "2"}), 0, meter);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE((*got)->locally_free.empty()) << Show(*got);
}

// What a send does to its data and a receive then does to the value: the
// first substitution must leave no reference to the sender's env behind,
// even when a var ref sits under a binder opened inside a pattern.
TEST(SubstituteTest, VarRefUnderPatternBinderDoesNotOutliveItsEnv) {
  ParPtr body = NewBody(
      "new v in { @0!({ match [new z in { 5 }] { [new z in { =*v }] => Nil } "
      "}) }");
  ASSERT_EQ(body->locally_free.ToVector(), (std::vector<uint32_t>{0}));
  PhloMeter meter(-1);
  absl::StatusOr<ParPtr> sent = Substitute(body, EnvOf({"5"}), 0, meter);
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_TRUE((*sent)->locally_free.empty()) << Show(*sent);
  EXPECT_TRUE(ir::Equal(
      *sent, MustCompile("@0!({ match [new z in { 5 }] { [new z in { 5 }] => "
                         "Nil } })")))
      << Show(*sent);
  absl::StatusOr<ParPtr> again = Substitute(*sent, Env(), 0, meter);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *sent);
}

TEST(SubstituteTest, KeepLeavesTheReceiveCapturesBound) {
  ParPtr body = NewBody("new x in { for (y <- @0) { x!(*y) } }");
  ASSERT_EQ(body->receives.size(), 1u);
  PhloMeter meter(-1);
  absl::StatusOr<ParPtr> got =
      Substitute(body->receives[0]->body, EnvOf({"9"}), 1, meter);
  ASSERT_TRUE(got.ok()) << got.status();
  ParPtr want = MustCompile("for (y <- @0) { @9!(*y) }")->receives[0]->body;
  EXPECT_TRUE(ir::Equal(*got, want)) << Show(*got);
}

TEST(SubstituteTest, ClosedTermIsReturnedAsIsAndFree) {
  ParPtr term = MustCompile("@0!(1) | for (y <- @1) { *y }");
  PhloMeter meter(-1);
  absl::StatusOr<ParPtr> got = Substitute(term, EnvOf({"9"}), 0, meter);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->get(), term.get());
  EXPECT_EQ(meter.spent(), 0);
}

TEST(SubstituteTest, UnchangedSubtreesAreShared) {
  ParPtr body = NewBody("new x in { @0!([1, 2, 3]) | x!(2) }");
  PhloMeter meter(-1);
  absl::StatusOr<ParPtr> got = Substitute(body, EnvOf({"9"}), 0, meter);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ((*got)->sends.size(), 2u);
  const ir::Send* untouched = nullptr;
  for (const ir::SendPtr& s : body->sends) {
    if (s->locally_free.empty()) untouched = s.get();
  }
  ASSERT_NE(untouched, nullptr);
  bool found = false;
  for (const ir::SendPtr& s : (*got)->sends)
    found = found || s.get() == untouched;
  EXPECT_TRUE(found);
}

TEST(SubstituteTest, ChargesOnePerRebuiltNode) {
  // Rebuilt: the channel Par, the Send and the enclosing Par.
  ParPtr body = NewBody("new x in { x!(1) }");
  PhloMeter meter(-1);
  ASSERT_TRUE(Substitute(body, EnvOf({"9"}), 0, meter).ok());
  EXPECT_EQ(meter.spent(), 3 * cost::kSubstituteNode);
}

TEST(SubstituteTest, OutOfPhloIsReported) {
  ParPtr body = NewBody("new x in { x!(1) }");
  PhloMeter meter(1);
  absl::StatusOr<ParPtr> got = Substitute(body, EnvOf({"9"}), 0, meter);
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(IsOutOfPhlo(got.status())) << got.status();
}

TEST(SubstituteTest, IndexOutsideEnvIsInternal) {
  ParPtr body = NewBody("new x, y in { x!(*y) }");
  PhloMeter meter(-1);
  absl::StatusOr<ParPtr> got = Substitute(body, EnvOf({"9"}), 0, meter);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInternal);
}

TEST(SubstituteTest, TooDeepResultIsResourceExhausted) {
  ParPtr deep = MustCompile("0");
  while (deep->height + 2 <= kMaxIrDepth) {
    deep = ir::ParOf(ir::Expr::List({deep}, std::nullopt));
  }
  ParPtr body = NewBody("new x in { @0!([[*x]]) }");
  PhloMeter meter(-1);
  absl::StatusOr<ParPtr> got = Substitute(body, Env({deep}), 0, meter);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(SubstitutePatternTest, ReplacesVarRefsOnly) {
  ParPtr body = NewBody("new x in { for (@[=*x, y] <- @0) { Nil } }");
  ASSERT_EQ(body->receives.size(), 1u);
  ParPtr pattern = body->receives[0]->binds[0].patterns[0];
  PhloMeter meter(-1);
  absl::StatusOr<ParPtr> got = SubstitutePattern(pattern, EnvOf({"9"}), meter);
  ASSERT_TRUE(got.ok()) << got.status();
  ParPtr want = MustCompile("for (@[9, y] <- @0) { Nil }")
                    ->receives[0]
                    ->binds[0]
                    .patterns[0];
  EXPECT_TRUE(ir::Equal(*got, want)) << Show(*got);
  EXPECT_GT(meter.spent(), 0);
}

TEST(SubstitutePatternTest, PatternWithoutVarRefsIsShared) {
  ParPtr body = NewBody("new x in { for (@[1, y, _] <- x) { Nil } }");
  ParPtr pattern = body->receives[0]->binds[0].patterns[0];
  PhloMeter meter(-1);
  absl::StatusOr<ParPtr> got = SubstitutePattern(pattern, EnvOf({"9"}), meter);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->get(), pattern.get());
  EXPECT_EQ(meter.spent(), 0);
}

TEST(SubstitutePatternTest, SecondVarRefUsesItsIndex) {
  ParPtr body = NewBody("new a, b in { match 1 { [=*a, =*b] => Nil } }");
  ParPtr pattern = body->matches[0]->cases[0].pattern;
  PhloMeter meter(-1);
  absl::StatusOr<ParPtr> got =
      SubstitutePattern(pattern, EnvOf({"1", "2"}), meter);
  ASSERT_TRUE(got.ok());
  ParPtr want =
      MustCompile("match 1 { [1, 2] => Nil }")->matches[0]->cases[0].pattern;
  EXPECT_TRUE(ir::Equal(*got, want)) << Show(*got);
}

}  // namespace
}  // namespace rnode::rholang::interp

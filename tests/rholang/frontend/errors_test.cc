// Every syntax and normalization error class reports its position and what
// was expected; later public-node features give "unsupported" errors.
#include <gtest/gtest.h>

#include <string>

#include "rholang/frontend/diagnostic.h"
#include "rholang/frontend/normalizer.h"

namespace rnode::rholang {
namespace {

struct ErrorCase {
  const char* name;
  const char* source;
  uint32_t line;
  uint32_t col;
  const char* message;  // substring of the diagnostic message
};

class CompileErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(CompileErrorTest, ReportsPositionAndMessage) {
  const ErrorCase& c = GetParam();
  auto result = Compile(c.source);
  ASSERT_FALSE(result.ok()) << c.source;
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  auto d = DiagnosticFromStatus(result.status());
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->line, c.line) << d->message;
  EXPECT_EQ(d->col, c.col) << d->message;
  EXPECT_NE(d->message.find(c.message), std::string::npos) << d->message;
}

const ErrorCase kErrorCases[] = {
    // Lexer.
    {"UnterminatedString", "@0!(\"abc)", 1, 5, "unterminated string"},
    {"UnterminatedUri", "@0!(`rho:io", 1, 5, "unterminated URI"},
    {"UnterminatedComment", "@0!(1) /* never", 1, 8,
     "unterminated block comment"},
    {"BadEscape", "@0!(\"a\\qb\")", 1, 7, "unknown escape"},
    {"ShortUnicodeEscape", "@0!(\"\\u12\")", 1, 6, "four hex digits"},
    {"UnexpectedCharacter", "@0!(1) $", 1, 8, "unexpected character '$'"},
    {"UnexpectedByte", "@0!(1) \x01", 1, 8, "unexpected byte 0x01"},
    {"IntTooLarge", "@0!(9223372036854775808)", 1, 5, "64-bit range"},
    {"IntWayTooLarge", "@0!(99999999999999999999)", 1, 5, "64-bit range"},
    {"PositionOnLaterLine", "new x in {\n  x!(1) |\n  $\n}", 3, 3,
     "unexpected character"},
    // Parser.
    {"EmptyProgram", "", 1, 1, "expected a process"},
    {"TrailingGarbage", "Nil Nil", 1, 5, "expected an operator"},
    {"MissingSendParen", "@0!1", 1, 4, "expected `(`"},
    {"UnclosedArgs", "@0!(1, 2", 1, 9, "expected `,` or `)`"},
    {"MissingIn", "new x { Nil }", 1, 7, "expected `in`"},
    {"NewWithoutName", "new in Nil", 1, 5, "expected a name to declare"},
    {"NewUriNotBackticked", "new x(\"a\") in Nil", 1, 7,
     "expected a URI in backticks"},
    {"ForMissingArrow", "for (x y) { Nil }", 1, 8, "expected `<-`"},
    {"ForMissingBody", "for (x <- y) Nil", 1, 14, "expected `{`"},
    {"ContractMissingEquals", "contract c(x) { Nil }", 1, 15, "expected `=`"},
    {"MatchMissingArrow", "match 1 { 1 Nil }", 1, 13, "expected `=>`"},
    {"MatchMissingBrace", "match 1 1 => Nil", 1, 9, "expected `{`"},
    {"IfMissingParen", "if true { Nil }", 1, 4, "expected `(`"},
    {"UnitUnsupported", "@0!(())", 1, 5, "unsupported: the unit value"},
    {"MapMissingColon", "@0!({1: 2, 3})", 1, 13, "expected `:`"},
    {"ListBadRemainder", "@0!([1 ...2])", 1, 11,
     "expected a variable or `_` after `...`"},
    {"SendOperandOfPlus", "@0!(1) + 1", 1, 8, "expected an operator"},
    {"QuoteNotAProcess", "@0!(1 + @x)", 1, 9, "quoted name"},
    {"MethodNameMissing", "@0!(1.)", 1, 7, "expected a method name"},
    {"VarRefNeedsName", "match 1 { =1 => Nil }", 1, 12,
     "expected a variable name after `=`"},
    {"LetMixedSeparators", "let @a <- 1 ; @b <- 2 & @c <- 3 in Nil", 1, 23,
     "either `;` or `&`"},
    {"BundleNeedsBlock", "bundle+ Nil", 1, 9, "expected `{`"},
    {"ComplexSourcePersistent", "new x in { for (a <= x?!) { Nil } }", 1, 17,
     "only with `<-`"},
    // Unsupported later features.
    {"SelectUnsupported", "select { x <- y => Nil }", 1, 1,
     "unsupported: `select`"},
    {"PathMapUnsupported", "@0!({| [1] |})", 1, 5, "unsupported: PathMap"},
    {"BigIntUnsupported", "@0!(10n)", 1, 5, "unsupported: numeric literal"},
    {"FloatUnsupported", "@0!(1.5)", 1, 5, "unsupported: numeric literal"},
    {"TypedIntUnsupported", "@0!(42i32)", 1, 5, "unsupported: numeric literal"},
    {"MatchGuardUnsupported", "match 1 { x where x > 0 => Nil }", 1, 13,
     "unsupported: match guards"},
    {"ReceiveGuardUnsupported", "for (@x <- @0 where x > 0) { Nil }", 1, 15,
     "unsupported: receive guards"},
    {"MethodSendUnsupported", "new x in { x!get(1) }", 1, 14,
     "unsupported: method sends"},
    // Normalizer: free variables, wildcards, connectives at top level.
    {"TopLevelFreeVariable", "@0!(x)", 1, 5, "unbound variable `x`"},
    {"TopLevelFreeName", "x!(1)", 1, 1, "unbound variable `x`"},
    {"FreeVariableInBody", "for (_ <- @0) { x }", 1, 17,
     "unbound variable `x`"},
    {"TopLevelWildcard", "@0!(_)", 1, 5, "wildcard `_` outside a pattern"},
    {"TopLevelWildcardName", "_!(1)", 1, 1, "wildcard"},
    {"TopLevelConjunction", "@0!(1 /\\ 2)", 1, 7, "`/\\` outside a pattern"},
    {"TopLevelDisjunction", "@0!(1 \\/ 2)", 1, 7, "`\\/` outside a pattern"},
    {"TopLevelNegation", "@0!(~1)", 1, 5, "`~` outside a pattern"},
    {"TopLevelSimpleType", "@0!(Int)", 1, 5, "simple type"},
    {"ListRemainderOutsidePattern", "@0!([1 ...rest])", 1, 11,
     "unbound variable `rest`"},
    // Sorts.
    {"NameUsedAsProcess", "new x in { @0!(x) }", 1, 16,
     "name variable `x` used as a process"},
    {"ProcUsedAsName", "for (@y <- @0) { y!(1) }", 1, 18,
     "process variable `y` used as a name"},
    {"VarRefWrongSortProc", "new x in { match 1 { =x => Nil } }", 1, 22,
     "refers to a name variable"},
    {"VarRefWrongSortName", "for (@y <- @0) { match 1 { =*y => Nil } }", 1, 28,
     "refers to a process variable"},
    {"VarRefUnbound", "match 1 { =z => Nil }", 1, 11,
     "refers to an unbound variable"},
    // Reuse in patterns and joins.
    {"ReuseInPattern", "match [1, 1] { [a, a] => Nil }", 1, 20,
     "bound twice in one pattern"},
    {"ReuseAcrossReceivePatterns", "for (@a, @a <- @0) { Nil }", 1, 11,
     "bound twice in one pattern"},
    {"ReuseAcrossJoin", "for (@a <- @0 & @a <- @1) { Nil }", 1, 18,
     "bound twice in one join"},
    {"ReuseNameRemainder", "for (@a ...@a <- @0) { Nil }", 1, 13,
     "bound twice"},
    {"JoinSameChannel", "new x in { for (a <- x & b <- x) { Nil } }", 1, 26,
     "same channel"},
    // Receive pattern connectives.
    {"DisjunctionInReceivePattern", "for (@{1 \\/ 2} <- @0) { Nil }", 1, 10,
     "`\\/` is not allowed in receive patterns"},
    {"NegationInReceivePattern", "for (@{~1} <- @0) { Nil }", 1, 8,
     "`~` is not allowed in receive patterns"},
    // Bundles.
    {"BundleWithFreeVariable", "match 1 { bundle+ { x } => Nil }", 1, 11,
     "bundle contents"},
    {"BundleWithWildcard", "match 1 { bundle0 { _ } => Nil }", 1, 11,
     "bundle contents"},
};

INSTANTIATE_TEST_SUITE_P(Errors, CompileErrorTest,
                         ::testing::ValuesIn(kErrorCases),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) {
                           return std::string(info.param.name);
                         });

TEST(CompileErrorTest, FormatsAsFileLineColumn) {
  auto result = Compile("new x in {\n  @0!(y)\n}");
  ASSERT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  auto d = DiagnosticFromStatus(result.status());
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(FormatDiagnostic("a.rho", *d),
            "a.rho:2:7: error: unbound variable `y` (free variables are "
            "allowed only in patterns)");
}

TEST(CompileErrorTest, StatusMessageCarriesPosition) {
  auto result = Compile("@0!(");
  ASSERT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(result.status().message()).rfind("1:5: ", 0), 0u)
      << result.status().message();
}

TEST(CompileErrorTest, NonDiagnosticStatusHasNoPosition) {
  auto d = DiagnosticFromStatus(absl::InternalError("boom"));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->line, 0u);
  EXPECT_EQ(d->message, "boom");
  EXPECT_EQ(FormatDiagnostic("f", *d), "f: error: boom");
  EXPECT_FALSE(DiagnosticFromStatus(absl::OkStatus()).has_value());
}

}  // namespace
}  // namespace rnode::rholang

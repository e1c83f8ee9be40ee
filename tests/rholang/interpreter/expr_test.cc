// Tests of expression evaluation (rholang/interpreter/eval_expr.h):
// operators, collections, `matches`, `%%` and every method, their errors
// and their costs.
#include "rholang/interpreter/eval_expr.h"

#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "rholang/frontend/ir_encoding.h"
#include "rholang/frontend/normalizer.h"
#include "rholang/frontend/printer.h"
#include "rholang/frontend/public_par.h"
#include "rholang/interpreter/cost.h"
#include "rholang/interpreter/env.h"
#include "rholang/interpreter/limits.h"
#include "rholang/interpreter/substitute.h"
#include "util/status_macros.h"

namespace rnode::rholang::interp {
namespace {

using ir::ParPtr;

std::string Show(const ParPtr& p) {
  absl::StatusOr<std::string> s = Print(*p);
  return s.ok() ? *s : std::string(s.status().message());
}

// The datum of `@0!(<expr>)`, unevaluated.
ParPtr Datum(const std::string& expr) {
  std::string src = "@0!(" + expr + ")";
  absl::StatusOr<ParPtr> p = Compile(src);
  EXPECT_TRUE(p.ok()) << src << ": " << p.status();
  if (!p.ok() || (*p)->sends.size() != 1) return ir::Nil();
  return (*p)->sends[0]->data[0];
}

absl::StatusOr<ParPtr> Eval(const std::string& expr, PhloMeter& meter) {
  ExprContext ctx{&meter};
  return EvalPar(Datum(expr), ctx);
}

absl::StatusOr<ParPtr> Eval(const std::string& expr) {
  PhloMeter meter(-1);
  return Eval(expr, meter);
}

struct ValueCase {
  std::string expr;
  std::string expected;  // also evaluated (e.g. `"0a".hexToBytes()`)
};
void PrintTo(const ValueCase& c, std::ostream* os) {
  *os << c.expr << " => " << c.expected;
}

class ExprValueTest : public testing::TestWithParam<ValueCase> {};

TEST_P(ExprValueTest, EvaluatesToExpectedValue) {
  const ValueCase& c = GetParam();
  absl::StatusOr<ParPtr> got = Eval(c.expr);
  ASSERT_TRUE(got.ok()) << c.expr << ": " << got.status();
  absl::StatusOr<ParPtr> want = Eval(c.expected);
  ASSERT_TRUE(want.ok()) << c.expected << ": " << want.status();
  EXPECT_TRUE(ir::Equal(*got, *want))
      << c.expr << "\n got: " << Show(*got) << "\nwant: " << Show(*want);
}

INSTANTIATE_TEST_SUITE_P(
    Arithmetic, ExprValueTest,
    testing::Values(
        ValueCase{"1 + 2 * 3", "7"}, ValueCase{"(1 + 2) * 3", "9"},
        ValueCase{"10 - 3 - 2", "5"}, ValueCase{"7 / 2", "3"},
        ValueCase{"-7 / 2", "-3"}, ValueCase{"7 % 3", "1"},
        ValueCase{"-7 % 3", "-1"}, ValueCase{"7 % -3", "1"},
        ValueCase{"-(5)", "-5"}, ValueCase{"-(-5)", "5"},
        ValueCase{"0 - 0", "0"},
        ValueCase{"1000000 * 1000000", "1000000000000"},
        ValueCase{"9223372036854775807 - 1", "9223372036854775806"},
        ValueCase{"9223372036854775806 + 1", "9223372036854775807"},
        ValueCase{"(4611686018427387904 * -2) == (-9223372036854775807 - 1)",
                  "true"},
        ValueCase{"(-9223372036854775807 - 1) / 1 == -9223372036854775807 - 1",
                  "true"},
        ValueCase{"(-9223372036854775807 - 1) % 2", "0"},
        ValueCase{"100 / -7", "-14"}, ValueCase{"0 / 5", "0"},
        ValueCase{"2 * 3 + 4 * 5", "26"}, ValueCase{"-(2 * 3)", "-6"}));

INSTANTIATE_TEST_SUITE_P(
    Comparison, ExprValueTest,
    testing::Values(
        ValueCase{"1 < 2", "true"}, ValueCase{"2 <= 2", "true"},
        ValueCase{"3 > 4", "false"}, ValueCase{"4 >= 5", "false"},
        ValueCase{"-1 < 0", "true"}, ValueCase{"false < true", "true"},
        ValueCase{"true <= true", "true"}, ValueCase{"true > false", "true"},
        ValueCase{"\"abc\" < \"abd\"", "true"},
        ValueCase{"\"b\" > \"abc\"", "true"}, ValueCase{"\"\" < \"a\"", "true"},
        ValueCase{"\"\xc3\xa9\" > \"z\"", "true"},
        ValueCase{"\"a\" >= \"a\"", "true"}, ValueCase{"\"Z\" < \"a\"", "true"},
        ValueCase{"1 + 1 < 3", "true"}));

INSTANTIATE_TEST_SUITE_P(
    Equality, ExprValueTest,
    testing::Values(
        ValueCase{"1 == 1", "true"}, ValueCase{"1 != 1", "false"},
        ValueCase{"[1, 2] == [1, 2]", "true"},
        ValueCase{"[1, 2] == [2, 1]", "false"},
        ValueCase{"Set(1, 2) == Set(2, 1)", "true"},
        ValueCase{"{1: 2} == {1: 3}", "false"},
        ValueCase{"{1: 2, 3: 4} == {3: 4, 1: 2}", "true"},
        ValueCase{"Nil == Nil", "true"}, ValueCase{"(1 + 1) == 2", "true"},
        ValueCase{"\"a\" == \"a\"", "true"}, ValueCase{"1 == \"1\"", "false"},
        ValueCase{"[1 + 1] == [2]", "true"}, ValueCase{"1 != 2", "true"},
        ValueCase{"`rho:a` == `rho:a`", "true"},
        ValueCase{"\"0a\".hexToBytes() == \"0A\".hexToBytes()", "true"},
        ValueCase{"(1, 2) != (1, 2)", "false"}));

INSTANTIATE_TEST_SUITE_P(Boolean, ExprValueTest,
                         testing::Values(ValueCase{"true and false", "false"},
                                         ValueCase{"true and true", "true"},
                                         ValueCase{"true or false", "true"},
                                         ValueCase{"false or false", "false"},
                                         ValueCase{"not true", "false"},
                                         ValueCase{"not (1 < 2)", "false"},
                                         ValueCase{"not not true", "true"},
                                         ValueCase{"1 < 2 and 2 < 3", "true"},
                                         ValueCase{"1 > 2 or 2 > 3", "false"}));

// `&&` and `||`: the right side runs only when the left does not decide, so
// a right side that would fail (or is not a Bool) is never looked at then.
INSTANTIATE_TEST_SUITE_P(
    ShortCircuit, ExprValueTest,
    testing::Values(
        ValueCase{"true && true", "true"}, ValueCase{"true && false", "false"},
        ValueCase{"false && true", "false"},
        ValueCase{"false || false", "false"},
        ValueCase{"false || true", "true"}, ValueCase{"true || false", "true"},
        ValueCase{"false && (1 / 0 == 1)", "false"},
        ValueCase{"true || (1 % 0 == 1)", "true"},
        ValueCase{"false && 7", "false"}, ValueCase{"true || \"x\"", "true"},
        // `&&` binds tighter than `||`, both looser than `==`.
        ValueCase{"true || false && false", "true"},
        ValueCase{"(true || false) && false", "false"},
        ValueCase{"1 == 1 && 2 < 3", "true"},
        ValueCase{"false and true || true", "true"},
        ValueCase{"not false && true", "true"}));

INSTANTIATE_TEST_SUITE_P(
    Matches, ExprValueTest,
    testing::Values(ValueCase{"5 matches Int", "true"},
                    ValueCase{"5 matches String", "false"},
                    ValueCase{"[1, 2] matches [_, x]", "true"},
                    ValueCase{"[1, 2] matches [1]", "false"},
                    ValueCase{"{\"a\": 1} matches {\"a\": _}", "true"},
                    ValueCase{"(1 + 1) matches 2", "true"},
                    ValueCase{"\"s\" matches _", "true"},
                    ValueCase{"Nil matches Nil", "true"},
                    ValueCase{"[1, 2, 3] matches [1 ...rest]", "true"},
                    ValueCase{"[1, 2, 3] matches [2 ...rest]", "false"},
                    ValueCase{"1 matches 1 \\/ 2", "true"},
                    ValueCase{"3 matches ~Int", "false"},
                    ValueCase{"(1, \"a\") matches (Int, String)", "true"},
                    ValueCase{"Set(1, 2) matches Set(2 ...r)", "true"},
                    ValueCase{"[[1], 2] matches [[a], b]", "true"}));

INSTANTIATE_TEST_SUITE_P(
    Interpolation, ExprValueTest,
    testing::Values(
        ValueCase{"\"hello ${name}\" %% {\"name\": \"world\"}",
                  "\"hello world\""},
        ValueCase{"\"${a}${b}\" %% {\"a\": 1, \"b\": true}", "\"1true\""},
        ValueCase{"\"${x}\" %% {\"y\": 1}", "\"${x}\""},
        ValueCase{"\"${a} ${a}\" %% {\"a\": `rho:x`}", "\"rho:x rho:x\""},
        ValueCase{"\"plain\" %% {}", "\"plain\""},
        ValueCase{"\"${open\" %% {\"open\": 1}", "\"${open\""},
        ValueCase{"\"${a}\" %% {\"a\": \"${b}\", \"b\": 2}", "\"${b}\""},
        ValueCase{"\"${a}\" %% {\"a\": -5}", "\"-5\""},
        ValueCase{"\"$a {a} ${a}\" %% {\"a\": false}", "\"$a {a} false\""},
        ValueCase{"\"${}\" %% {\"\": 1}", "\"1\""},
        ValueCase{"\"x${a}y\" %% {\"a\": 1 + 1}", "\"x2y\""},
        ValueCase{"\"${${a}}\" %% {\"a\": 1}", "\"${1}\""},
        ValueCase{"\"${a}b}\" %% {\"a\": 1, \"a}b\": 2}", "\"1b}\""},
        ValueCase{"\"$${a}\" %% {\"a\": 1}", "\"$1\""},
        ValueCase{"\"${a\" %% {\"a\": 1}", "\"${a\""}));

INSTANTIATE_TEST_SUITE_P(
    Concatenation, ExprValueTest,
    testing::Values(ValueCase{"\"ab\" ++ \"cd\"", "\"abcd\""},
                    ValueCase{"\"\" ++ \"\"", "\"\""},
                    ValueCase{"[1] ++ [2, 3]", "[1, 2, 3]"},
                    ValueCase{"[] ++ []", "[]"},
                    ValueCase{"Set(1) ++ Set(2, 1)", "Set(1, 2)"},
                    ValueCase{"{1: 1} ++ {1: 2, 3: 4}", "{1: 2, 3: 4}"},
                    ValueCase{"\"0a\".hexToBytes() ++ \"0b\".hexToBytes()",
                              "\"0a0b\".hexToBytes()"},
                    ValueCase{"[1 + 1] ++ [2 * 2]", "[2, 4]"}));

INSTANTIATE_TEST_SUITE_P(
    SetAndMapOperators, ExprValueTest,
    testing::Values(
        ValueCase{"Set(1, 2, 3) -- Set(2)", "Set(1, 3)"},
        ValueCase{"Set(1) -- Set(1)", "Set()"},
        ValueCase{"Set(1) -- Set(5)", "Set(1)"},
        ValueCase{"Set(1) + 2", "Set(1, 2)"}, ValueCase{"Set(1) + 1", "Set(1)"},
        ValueCase{"Set(1, 2) - 1", "Set(2)"}, ValueCase{"Set(1) - 5", "Set(1)"},
        ValueCase{"{1: 2, 3: 4} - 1", "{3: 4}"},
        ValueCase{"{1: 2} - 7", "{1: 2}"}, ValueCase{"Set() + [1]", "Set([1])"},
        ValueCase{"Set() + (1 + 1)", "Set(2)"}));

INSTANTIATE_TEST_SUITE_P(
    Collections, ExprValueTest,
    testing::Values(
        ValueCase{"[1 + 1, 2 * 2]", "[2, 4]"},
        ValueCase{"(1 + 1, 3)", "(2, 3)"}, ValueCase{"Set(1 + 1, 2)", "Set(2)"},
        ValueCase{"{\"a\": 1 + 1}", "{\"a\": 2}"},
        ValueCase{"[[1 + 1]]", "[[2]]"},
        ValueCase{"{\"k\": [1 * 5]}", "{\"k\": [5]}"},
        ValueCase{"{1 + 2: 0, 1: 1}", "{1: 1, 3: 0}"}, ValueCase{"[]", "[]"},
        ValueCase{"{}", "{}"}, ValueCase{"1 + 1 | 2 + 2", "2 | 4"},
        ValueCase{"Nil", "Nil"}, ValueCase{"[Nil, 1]", "[Nil, 1]"}));

INSTANTIATE_TEST_SUITE_P(
    ListMethods, ExprValueTest,
    testing::Values(
        ValueCase{"[1, 2, 3].nth(0)", "1"}, ValueCase{"[1, 2, 3].nth(2)", "3"},
        ValueCase{"(4, 5).nth(1)", "5"},
        ValueCase{"\"ff01\".hexToBytes().nth(0)", "255"},
        ValueCase{"\"ff01\".hexToBytes().nth(1)", "1"},
        ValueCase{"[[1]].nth(0)", "[1]"}, ValueCase{"[1 + 1].nth(0)", "2"},
        ValueCase{"[1, 2].nth(1 - 1)", "1"}, ValueCase{"[Nil].nth(0)", "Nil"},
        ValueCase{"[1, 2].length()", "2"}, ValueCase{"[].length()", "0"},
        ValueCase{"[1, 2, 3, 4].slice(1, 3)", "[2, 3]"},
        ValueCase{"[1].slice(2, 1)", "[]"},
        ValueCase{"[1, 2].slice(0, 2)", "[1, 2]"},
        ValueCase{"[1, 2].slice(0, 3)", "[]"},
        ValueCase{"[1, 2, 3].take(2)", "[1, 2]"},
        ValueCase{"[1].take(5)", "[1]"}, ValueCase{"[1, 2].take(0)", "[]"},
        ValueCase{"[1, 2].take(-1)", "[1, 2]"},
        ValueCase{"[1, 2, 3].slice(-2, 2)", "[1, 2]"},
        ValueCase{"[1, 2].toList()", "[1, 2]"},
        ValueCase{"(1, 2).toList()", "[1, 2]"},
        ValueCase{"[1, 1, 2].toSet()", "Set(1, 2)"},
        ValueCase{"[(1, 2), (3, 4)].toMap()", "{1: 2, 3: 4}"},
        ValueCase{"[(1, 2), (1, 3)].toMap()", "{1: 3}"},
        ValueCase{"[].toMap()", "{}"}));

INSTANTIATE_TEST_SUITE_P(
    StringAndBytesMethods, ExprValueTest,
    testing::Values(
        ValueCase{"\"abc\".length()", "3"},
        ValueCase{"\"\xc3\xa9\".length()", "2"},
        ValueCase{"\"\".length()", "0"},
        ValueCase{"\"0102\".hexToBytes().length()", "2"},
        ValueCase{"\"hello\".slice(1, 3)", "\"el\""},
        ValueCase{"\"hello\".slice(0, 5)", "\"hello\""},
        ValueCase{"\"hello\".slice(3, 2)", "\"\""},
        ValueCase{"\"hello\".slice(-1, 2)", "\"he\""},
        ValueCase{"\"hello\".slice(-3, -1)", "\"\""},
        ValueCase{"\"hello\".slice(0, 9)", "\"\""},
        ValueCase{"\"hello\".slice(5, 5)", "\"\""},
        ValueCase{"\"a\xc3\xa9"
                  "b\".slice(1, 3)",
                  "\"\xc3\xa9\""},
        ValueCase{"\"a\xc3\xa9"
                  "b\".slice(3, 4)",
                  "\"b\""},
        ValueCase{"\"010203\".hexToBytes().slice(1, 2)", "\"02\".hexToBytes()"},
        ValueCase{"\"010203\".hexToBytes().slice(2, 9)", "\"\".hexToBytes()"},
        ValueCase{"\"DEADbeef\".hexToBytes().bytesToHex()", "\"deadbeef\""},
        ValueCase{"\"\".hexToBytes().length()", "0"},
        // The public rule: non-hex characters are skipped, an odd count of
        // digits gets a leading `0`.
        ValueCase{"\"abc\".hexToBytes()", "\"0abc\".hexToBytes()"},
        ValueCase{"\"a\".hexToBytes().nth(0)", "10"},
        ValueCase{"\"zz\".hexToBytes().length()", "0"},
        ValueCase{"\"0x1f\".hexToBytes().bytesToHex()", "\"001f\""},
        ValueCase{"\"de ad-be:ef\".hexToBytes().bytesToHex()", "\"deadbeef\""},
        ValueCase{"\"g1h\".hexToBytes().nth(0)", "1"},
        ValueCase{"\"abc\".toUtf8Bytes()", "\"616263\".hexToBytes()"},
        ValueCase{"\"\xc3\xa9\".toUtf8Bytes().bytesToHex()", "\"c3a9\""},
        ValueCase{"\"abc\".toString()", "\"abc\""},
        ValueCase{"(\"a\" ++ \"b\").length()", "2"}));

INSTANTIATE_TEST_SUITE_P(
    MapAndSetMethods, ExprValueTest,
    testing::Values(ValueCase{"Set(1, 2).size()", "2"},
                    ValueCase{"{}.size()", "0"},
                    ValueCase{"{1: 2}.size()", "1"},
                    ValueCase{"Set().size()", "0"},
                    ValueCase{"{1: \"a\"}.get(1)", "\"a\""},
                    ValueCase{"{1: \"a\"}.get(2)", "Nil"},
                    ValueCase{"{\"k\": 1}.getOrElse(\"x\", 7)", "7"},
                    ValueCase{"{\"k\": 1}.getOrElse(\"k\", 7)", "1"},
                    ValueCase{"{[1]: 2}.get([1])", "2"},
                    ValueCase{"{(1, 2): 3}.get((1, 2))", "3"},
                    ValueCase{"{1: 2}.get(1 + 0)", "2"},
                    ValueCase{"{1: 2}.set(1, 3)", "{1: 3}"},
                    ValueCase{"{}.set(\"a\", 1)", "{\"a\": 1}"},
                    ValueCase{"{1: 2, 3: 4}.keys()", "Set(1, 3)"},
                    ValueCase{"{}.keys()", "Set()"},
                    ValueCase{"Set(1, 2).contains(2)", "true"},
                    ValueCase{"Set(1).contains(3)", "false"},
                    ValueCase{"{1: 2}.contains(1)", "true"},
                    ValueCase{"{1: 2}.contains(2)", "false"},
                    ValueCase{"Set(\"a\", \"b\").contains(\"b\")", "true"},
                    ValueCase{"Set(1).add(2)", "Set(1, 2)"},
                    ValueCase{"Set(1).add(1)", "Set(1)"},
                    ValueCase{"Set(1, 2).delete(1)", "Set(2)"},
                    ValueCase{"{1: 2, 3: 4}.delete(3)", "{1: 2}"},
                    ValueCase{"{1: 2}.delete(9)", "{1: 2}"},
                    ValueCase{"Set(1).union(Set(2))", "Set(1, 2)"},
                    ValueCase{"{1: 1}.union({1: 2})", "{1: 2}"},
                    ValueCase{"{1: 1}.union({2: 2})", "{1: 1, 2: 2}"},
                    ValueCase{"Set(1, 2).diff(Set(2))", "Set(1)"},
                    ValueCase{"{1: 1, 2: 2}.diff({2: 0})", "{1: 1}"},
                    ValueCase{"Set(3, 1, 2).toList()", "[1, 2, 3]"},
                    ValueCase{"{1: \"a\"}.toList()", "[(1, \"a\")]"},
                    ValueCase{"{2: 0, 1: 0}.toList()", "[(1, 0), (2, 0)]"},
                    ValueCase{"{1: 2}.toSet()", "Set((1, 2))"},
                    ValueCase{"Set(1).toSet()", "Set(1)"},
                    ValueCase{"Set((1, 2)).toMap()", "{1: 2}"},
                    ValueCase{"{1: 2}.toMap()", "{1: 2}"},
                    ValueCase{"{1: 2}.toList().toMap()", "{1: 2}"},
                    ValueCase{"Set(1, 2).toList().nth(1)", "2"}));

struct ErrorCase {
  std::string expr;
  std::string message;  // a substring of the error message
};
void PrintTo(const ErrorCase& c, std::ostream* os) {
  *os << c.expr << " fails with " << c.message;
}

class ExprErrorTest : public testing::TestWithParam<ErrorCase> {};

TEST_P(ExprErrorTest, FailsWithInvalidArgumentNamingTheCulprit) {
  const ErrorCase& c = GetParam();
  absl::StatusOr<ParPtr> got = Eval(c.expr);
  ASSERT_FALSE(got.ok()) << c.expr << " gave " << Show(*got);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument)
      << got.status();
  EXPECT_NE(std::string(got.status().message()).find(c.message),
            std::string::npos)
      << c.expr << ": " << got.status();
}

INSTANTIATE_TEST_SUITE_P(
    Operators, ExprErrorTest,
    testing::Values(
        ErrorCase{"1 + true", "operator `+`"},
        ErrorCase{"\"a\" + 1", "operator `+`: expected Int or Set, got String"},
        ErrorCase{"9223372036854775807 + 1", "operator `+`: integer overflow"},
        ErrorCase{"-9223372036854775807 - 2", "operator `-`: integer overflow"},
        ErrorCase{"4611686018427387904 * 2", "operator `*`: integer overflow"},
        ErrorCase{"-4611686018427387905 * 2", "operator `*`: integer overflow"},
        ErrorCase{"1 / 0", "operator `/`: division by zero"},
        ErrorCase{"1 % 0", "operator `%`: modulo by zero"},
        ErrorCase{"(-9223372036854775807 - 1) / -1",
                  "operator `/`: integer overflow"},
        ErrorCase{"(-9223372036854775807 - 1) % -1",
                  "operator `%`: integer overflow"},
        ErrorCase{"-(-9223372036854775807 - 1)", "unary `-`: integer overflow"},
        ErrorCase{"-(true)", "unary `-`: expected Int, got Bool"},
        ErrorCase{"not 1", "operator `not`: expected Bool, got Int"},
        ErrorCase{"1 and true", "operator `and`"},
        ErrorCase{"true or 1", "operator `or`"},
        ErrorCase{"1 < \"a\"", "operator `<`"},
        ErrorCase{"[1] < [2]", "operator `<`"},
        ErrorCase{"Nil <= 1", "operator `<=`"},
        ErrorCase{"\"a\" > 1", "operator `>`"},
        ErrorCase{"true >= 1", "operator `>=`"},
        ErrorCase{"1 * \"a\"",
                  "operator `*`: expected Int and Int, got Int and String"},
        ErrorCase{"1 / true", "operator `/`"},
        ErrorCase{"\"a\" % 2", "operator `%`"},
        ErrorCase{"\"x\" %% 1", "operator `%%`: expected String and Map"},
        ErrorCase{"\"${a}\" %% {1: 2}",
                  "operator `%%`: map key is not a String"},
        ErrorCase{"\"${a}\" %% {\"a\": [1]}",
                  "is not a String, Int, Bool or Uri"},
        ErrorCase{"\"${a}\" %% {\"a\": Nil}", "operator `%%`"},
        ErrorCase{"1 ++ 2", "operator `++`"},
        ErrorCase{"\"a\" ++ [1]", "operator `++`"},
        ErrorCase{"Set(1) ++ {1: 2}", "operator `++`"},
        ErrorCase{"Set(1) -- [1]", "operator `--`"},
        ErrorCase{"[1] -- [1]", "operator `--`: expected Set and Set"},
        ErrorCase{"{1: 2} -- {1: 2}", "operator `--`"},
        ErrorCase{"{1: 2} + 1", "operator `+`"},
        ErrorCase{"[1] - 1", "operator `-`"},
        ErrorCase{"1 + Nil", "operator `+`: operand is not an expression"},
        ErrorCase{"(1 | 2) + 1", "operator `+`: operand is not an expression"},
        ErrorCase{"1 + {}.get(1)",
                  "operator `+`: operand is not an expression"},
        ErrorCase{"(1 / 0) == 1", "division by zero"},
        ErrorCase{"[1, 1 / 0]", "division by zero"},
        ErrorCase{"{\"k\": 1 % 0}", "modulo by zero"},
        ErrorCase{"Set(1 + true)", "operator `+`"},
        ErrorCase{"(1 / 0) matches _", "division by zero"},
        ErrorCase{"`a:b` < `a:c`", "operator `<`"},
        ErrorCase{"false and (1 / 0 == 1)", "division by zero"},
        ErrorCase{"true or (1 % 0 == 1)", "modulo by zero"},
        ErrorCase{"1 && true", "operator `&&`: expected Bool, got Int"},
        ErrorCase{"true && 1", "operator `&&`: expected Bool, got Int"},
        ErrorCase{"false || \"a\"", "operator `||`: expected Bool, got String"},
        ErrorCase{"true && (1 / 0 == 1)", "division by zero"},
        ErrorCase{"false || (1 % 0 == 1)", "modulo by zero"},
        ErrorCase{"-(\"a\")", "unary `-`"},
        ErrorCase{"not Nil", "operator `not`: operand is not an expression"}));

INSTANTIATE_TEST_SUITE_P(
    Methods, ExprErrorTest,
    testing::Values(
        ErrorCase{"[1].nth(5)", "method `nth`: index 5 out of range"},
        ErrorCase{"[1].nth(-1)", "method `nth`: index -1 out of range"},
        ErrorCase{"\"00\".hexToBytes().nth(1)", "method `nth`: index 1"},
        ErrorCase{"[1].nth(\"a\")", "method `nth`: argument 1 must be an Int"},
        ErrorCase{"(1).nth(0)", "method `nth`: not defined on Int"},
        ErrorCase{"Set(1).nth(0)", "method `nth`: not defined on Set"},
        ErrorCase{"[1].foo()", "method `foo`: unknown method"},
        ErrorCase{"[1].nth()", "method `nth`: expects 1 argument, got 0"},
        ErrorCase{"[1].length(1)",
                  "method `length`: expects 0 arguments, got 1"},
        ErrorCase{"Set(1).length()", "method `length`: not defined on Set"},
        ErrorCase{"(1, 2).length()", "method `length`: not defined on Tuple"},
        ErrorCase{"\"\xc3\xa9\".slice(0, 1)",
                  "method `slice`: bounds 0..1 cut a UTF-8"},
        ErrorCase{"\"\xc3\xa9\".slice(1, 2)", "cut a UTF-8 code point"},
        ErrorCase{"\"ab\".slice(0, \"1\")",
                  "method `slice`: argument 2 must be an Int"},
        ErrorCase{"(1).slice(0, 1)", "method `slice`: not defined on Int"},
        ErrorCase{"\"a\".take(1)", "method `take`: not defined on String"},
        ErrorCase{"[1].size()", "method `size`: not defined on List"},
        ErrorCase{"[1].get(1)", "method `get`: not defined on List"},
        ErrorCase{"Set(1).getOrElse(1, 2)", "method `getOrElse`"},
        ErrorCase{"{}.getOrElse(1)", "method `getOrElse`: expects 2 arguments"},
        ErrorCase{"Set(1).set(1, 2)", "method `set`: not defined on Set"},
        ErrorCase{"Set(1).keys()", "method `keys`"},
        ErrorCase{"[1].contains(1)", "method `contains`: not defined on List"},
        ErrorCase{"{1: 2}.add(1)", "method `add`: not defined on Map"},
        ErrorCase{"[1].delete(1)", "method `delete`"},
        ErrorCase{"Set(1).union([1])",
                  "method `union`: argument 1 must be a Set"},
        ErrorCase{"{1: 2}.union(Set(1))",
                  "method `union`: argument 1 must be a Map"},
        ErrorCase{"[1].union([2])", "method `union`: not defined on List"},
        ErrorCase{"Set(1).diff({})", "method `diff`: argument 1 must be a Set"},
        ErrorCase{"(1).toList()", "method `toList`"},
        ErrorCase{"\"ab\".toSet()", "method `toSet`"},
        ErrorCase{"[1].toMap()", "method `toMap`: element is not a pair"},
        ErrorCase{"[(1, 2, 3)].toMap()",
                  "method `toMap`: element is not a pair"},
        ErrorCase{"(1, 2).toMap()", "method `toMap`: not defined on Tuple"},
        ErrorCase{"(1).hexToBytes()",
                  "method `hexToBytes`: not defined on Int"},
        ErrorCase{"\"a\".bytesToHex()",
                  "method `bytesToHex`: not defined on String"},
        ErrorCase{"(1).toUtf8Bytes()", "method `toUtf8Bytes`"},
        ErrorCase{"(1).toString()", "method `toString`: not defined on Int"},
        ErrorCase{"[1 / 0].nth(0)", "division by zero"},
        ErrorCase{"[1].nth(1 / 0)", "division by zero"}));

// ---- Costs ----

struct CostCase {
  std::string expr;
  int64_t cost;
};
void PrintTo(const CostCase& c, std::ostream* os) {
  *os << c.expr << " costs " << c.cost;
}

class ExprCostTest : public testing::TestWithParam<CostCase> {};

TEST_P(ExprCostTest, ChargesTheTableCost) {
  const CostCase& c = GetParam();
  PhloMeter meter(-1);
  absl::StatusOr<ParPtr> got = Eval(c.expr, meter);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(meter.spent(), c.cost);
}

INSTANTIATE_TEST_SUITE_P(
    Table, ExprCostTest,
    testing::Values(
        CostCase{"[1, \"a\", {1: 2}]", 0}, CostCase{"1 + 2", cost::kSum},
        CostCase{"1 - 2", cost::kSum}, CostCase{"-(2)", cost::kSum},
        CostCase{"1 * 2", cost::kMultiply}, CostCase{"1 / 2", cost::kMultiply},
        CostCase{"1 % 2", cost::kMultiply},
        CostCase{"1 + 2 * 3", cost::kSum + cost::kMultiply},
        CostCase{"1 < 2", cost::kCompare},
        CostCase{"\"a\" >= \"b\"", cost::kCompare},
        CostCase{"[1] == [2]", cost::kCompare},
        CostCase{"1 != 2", cost::kCompare},
        CostCase{"true and false", cost::kBoolean},
        CostCase{"true or false", cost::kBoolean},
        CostCase{"true && false", cost::kBoolean},
        CostCase{"false && 1 < 2", cost::kBoolean},
        CostCase{"true && 1 < 2", cost::kBoolean + cost::kCompare},
        CostCase{"true || 1 < 2", cost::kBoolean},
        CostCase{"false || 1 < 2", cost::kBoolean + cost::kCompare},
        CostCase{"not true", cost::kBoolean},
        CostCase{"1 matches Int", cost::kOpCall},
        CostCase{"\"ab\" ++ \"cd\"", cost::kOpCall + 4 * cost::kPerByte},
        CostCase{"[1, 2] ++ [3]", cost::kOpCall + 3 * cost::kPerElement},
        CostCase{"Set(1, 2) ++ Set(3)", cost::kOpCall + 3 * cost::kPerElement},
        CostCase{"{1: 2} ++ {3: 4}", cost::kOpCall + 2 * cost::kPerElement},
        CostCase{"Set(1, 2) -- Set(3)", cost::kOpCall + 3 * cost::kPerElement},
        CostCase{"Set(1, 2) + 3", cost::kOpCall + 2 * cost::kPerElement},
        CostCase{"Set(1, 2) - 3", cost::kOpCall + 2 * cost::kPerElement},
        CostCase{"{1: 2} - 1", cost::kOpCall + 1 * cost::kPerElement},
        // template 5 bytes, one entry, result 5 bytes.
        CostCase{"\"a${k}\" %% {\"k\": \"bcde\"}",
                 cost::kOpCall + 5 * cost::kPerByte + cost::kPerElement +
                     cost::kPerElement + 5 * cost::kPerByte},
        CostCase{"[1, 2].nth(0)", cost::kMethodCall + cost::kLookup},
        CostCase{"\"ab\".length()", cost::kMethodCall + cost::kLookup},
        CostCase{"Set(1).size()", cost::kMethodCall + cost::kLookup},
        CostCase{"{1: 2}.get(1)", cost::kMethodCall + cost::kLookup},
        CostCase{"{1: 2}.getOrElse(5, 0)", cost::kMethodCall + cost::kLookup},
        CostCase{"Set(1).contains(1)", cost::kMethodCall + cost::kLookup},
        CostCase{"{1: 2, 3: 4}.set(5, 6)",
                 cost::kMethodCall + cost::kInsert + 2 * cost::kPerElement},
        CostCase{"Set(1).add(2)",
                 cost::kMethodCall + cost::kInsert + cost::kPerElement},
        CostCase{"Set(1, 2).delete(2)",
                 cost::kMethodCall + cost::kRemove + 2 * cost::kPerElement},
        CostCase{"{1: 2}.keys()", cost::kMethodCall + cost::kPerElement},
        CostCase{"Set(1).union(Set(2, 3))",
                 cost::kMethodCall + 3 * cost::kPerElement},
        CostCase{"[1, 2, 3].slice(0, 2)",
                 cost::kMethodCall + 2 * cost::kPerElement},
        CostCase{"\"hello\".slice(1, 4)",
                 cost::kMethodCall + 3 * cost::kPerByte},
        CostCase{"[1, 2, 3].take(2)",
                 cost::kMethodCall + 2 * cost::kPerElement},
        CostCase{"Set(1, 2).toList()",
                 cost::kMethodCall + 2 * cost::kPerElement},
        CostCase{"\"abcd\".toUtf8Bytes()",
                 cost::kMethodCall + 4 * cost::kPerByte},
        CostCase{"\"abcd\".hexToBytes()",
                 cost::kMethodCall + 4 * cost::kPerByte},
        CostCase{
            "\"abcd\".hexToBytes().bytesToHex()",
            2 * cost::kMethodCall + 4 * cost::kPerByte + 4 * cost::kPerByte},
        CostCase{"[1 + 1, 2 + 2]", 2 * cost::kSum}));

TEST(ExprCostTest, ToByteArrayChargesPerEncodedByte) {
  PhloMeter meter(-1);
  absl::StatusOr<ParPtr> got = Eval("[1, 2].toByteArray()", meter);
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<Bytes> enc = EncodePublicPar(*Datum("[1, 2]"));
  ASSERT_TRUE(enc.ok());
  EXPECT_EQ(
      meter.spent(),
      cost::kMethodCall + cost::kPerByte * static_cast<int64_t>(enc->size()));
}

TEST(ExprCostTest, MixedExpressionHasAPinnedCost) {
  const std::string expr =
      "({\"a\": [1, 2, 3].slice(0, 2), \"b\": Set(1) ++ "
      "Set(2)}.keys().toList() "
      "++ [\"x${y}\" %% {\"y\": 7 * 6}]).length() + 1";
  PhloMeter a(-1);
  absl::StatusOr<ParPtr> ra = Eval(expr, a);
  ASSERT_TRUE(ra.ok()) << ra.status();
  EXPECT_EQ(Show(*ra), "4");
  // Computed by this code: cost is consensus-relevant, so any change to it
  // must show up here.
  EXPECT_EQ(a.spent(), 106);
}

TEST(ExprCostTest, BudgetExactlyEnoughSucceeds) {
  PhloMeter meter(cost::kSum);
  EXPECT_TRUE(Eval("1 + 2", meter).ok());
}

TEST(ExprCostTest, OutOfPhloStopsEvaluation) {
  PhloMeter meter(cost::kSum - 1);
  absl::StatusOr<ParPtr> got = Eval("1 + 2", meter);
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(IsOutOfPhlo(got.status())) << got.status();
}

TEST(ExprCostTest, OutOfPhloBeforeLargeConcatenation) {
  PhloMeter meter(cost::kOpCall + 3);
  absl::StatusOr<ParPtr> got = Eval("\"ab\" ++ \"cd\"", meter);
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(IsOutOfPhlo(got.status()));
}

TEST(ExprCostTest, OutOfPhloInsideMethodArguments) {
  PhloMeter meter(cost::kMethodCall + 1);
  absl::StatusOr<ParPtr> got = Eval("[1, 2].nth(1 * 1)", meter);
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(IsOutOfPhlo(got.status()));
}

TEST(ExprCostTest, FailureKeepsWhatWasSpentSoFar) {
  PhloMeter meter(-1);
  absl::StatusOr<ParPtr> got = Eval("(1 + 1) + true", meter);
  ASSERT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(meter.spent(), cost::kSum);
}

// ---- EvalPar / EvalSingleExpr / EvalBool contracts ----

TEST(EvalParTest, TermWithoutExpressionsIsReturnedAsIs) {
  absl::StatusOr<ParPtr> prog = Compile("@1!(1 + 1) | for (x <- @2) { Nil }");
  ASSERT_TRUE(prog.ok());
  PhloMeter meter(-1);
  ExprContext ctx{&meter};
  absl::StatusOr<ParPtr> got = EvalPar(*prog, ctx);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->get(), prog->get());
  EXPECT_EQ(meter.spent(), 0);
}

TEST(EvalParTest, ProcessesInsideCollectionsAreNotEvaluated) {
  ParPtr d = Datum("[@1!(1 + 1), 2]");
  PhloMeter meter(-1);
  ExprContext ctx{&meter};
  absl::StatusOr<ParPtr> got = EvalPar(d, ctx);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->get(), d.get());
  EXPECT_EQ(meter.spent(), 0);
}

TEST(EvalParTest, ExpressionsAreEvaluatedBesideOtherComponents) {
  absl::StatusOr<ParPtr> got = Eval("1 + 1 | @5!(2 * 2)");
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<ParPtr> want = Eval("2 | @5!(2 * 2)");
  ASSERT_TRUE(want.ok());
  EXPECT_TRUE(ir::Equal(*got, *want)) << Show(*got);
}

TEST(EvalParTest, MethodResultProcessIsMerged) {
  absl::StatusOr<ParPtr> got = Eval("[@1!(7)].nth(0) | 3");
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<ParPtr> want = Eval("@1!(7) | 3");
  ASSERT_TRUE(want.ok());
  EXPECT_TRUE(ir::Equal(*got, *want)) << Show(*got);
}

TEST(EvalParTest, ToByteArrayIsThePublicProtobufEncoding) {
  absl::StatusOr<ParPtr> got = Eval("(1 + 1).toByteArray()");
  ASSERT_TRUE(got.ok()) << got.status();
  const ir::Expr* e = (*got)->SingleExpr();
  ASSERT_NE(e, nullptr);
  ASSERT_EQ(e->kind, ir::ExprKind::kByteArray);
  // Par{exprs (5): Expr{g_int (2): zigzag(2) = 4}}.
  EXPECT_EQ(HexEncode(ByteView(reinterpret_cast<const uint8_t*>(e->text.data()),
                               e->text.size())),
            "2a021004");
}

TEST(EvalParTest, DeployIdToStringIsHex) {
  const uint8_t id[] = {0xab, 0xcd, 0x01};
  ParPtr target = ir::ParBuilder()
                      .Add(ir::Unforgeable::Make(ir::UnforgeableKind::kDeployId,
                                                 ByteView(id, 3)))
                      .Build();
  ParPtr term = ir::ParOf(ir::Expr::Method("toString", target, {}));
  PhloMeter meter(-1);
  ExprContext ctx{&meter};
  absl::StatusOr<ParPtr> got = EvalPar(term, ctx);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(ir::Equal(*got, ir::ParOf(ir::Expr::String("abcd01"))))
      << Show(*got);
  EXPECT_EQ(meter.spent(), cost::kMethodCall + 6 * cost::kPerByte);
}

TEST(EvalParTest, PrivateNameHasNoToString) {
  const uint8_t id[] = {0x01};
  ParPtr target = ir::ParBuilder()
                      .Add(ir::Unforgeable::Make(ir::UnforgeableKind::kPrivate,
                                                 ByteView(id, 1)))
                      .Build();
  ParPtr term = ir::ParOf(ir::Expr::Method("toString", target, {}));
  PhloMeter meter(-1);
  ExprContext ctx{&meter};
  absl::StatusOr<ParPtr> got = EvalPar(term, ctx);
  ASSERT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(got.status().message())
                .find("method `toString`: not defined on unforgeable name"),
            std::string::npos)
      << got.status();
}

TEST(EvalParTest, MatchesUsesSubstitutedVarRef) {
  absl::StatusOr<ParPtr> prog = Compile("new x in { @0!(5 matches =*x) }");
  ASSERT_TRUE(prog.ok());
  for (const auto& [value, want] :
       std::vector<std::pair<int64_t, bool>>{{5, true}, {6, false}}) {
    PhloMeter meter(-1);
    absl::StatusOr<ParPtr> body =
        Substitute((*prog)->news[0]->body,
                   Env({ir::ParOf(ir::Expr::Int(value))}), 0, meter);
    ASSERT_TRUE(body.ok()) << body.status();
    ExprContext ctx{&meter};
    absl::StatusOr<bool> got = EvalBool((*body)->sends[0]->data[0], ctx);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, want) << value;
  }
}

// The var ref sits under a `new` opened inside the pattern: the send's
// substitution must still reach it (the binder does not hide it).
TEST(EvalParTest, MatchesUsesVarRefUnderPatternBinder) {
  absl::StatusOr<ParPtr> prog =
      Compile("new x in { @0!([new z in { 5 }] matches [new z in { =*x }]) }");
  ASSERT_TRUE(prog.ok());
  for (const auto& [value, want] :
       std::vector<std::pair<int64_t, bool>>{{5, true}, {6, false}}) {
    PhloMeter meter(-1);
    absl::StatusOr<ParPtr> body =
        Substitute((*prog)->news[0]->body,
                   Env({ir::ParOf(ir::Expr::Int(value))}), 0, meter);
    ASSERT_TRUE(body.ok()) << body.status();
    ExprContext ctx{&meter};
    absl::StatusOr<bool> got = EvalBool((*body)->sends[0]->data[0], ctx);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, want) << value;
  }
}

TEST(EvalSingleExprTest, ReturnsTheValue) {
  PhloMeter meter(-1);
  ExprContext ctx{&meter};
  absl::StatusOr<ir::ExprPtr> got = EvalSingleExpr(Datum("6 * 7"), ctx);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)->kind, ir::ExprKind::kInt);
  EXPECT_EQ((*got)->int_value, 42);
}

TEST(EvalSingleExprTest, RejectsParallelComposition) {
  PhloMeter meter(-1);
  ExprContext ctx{&meter};
  for (const char* expr : {"1 | 2", "Nil", "{}.get(1)", "@1!(2)"}) {
    absl::StatusOr<ir::ExprPtr> got = EvalSingleExpr(Datum(expr), ctx);
    ASSERT_FALSE(got.ok()) << expr;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(got.status().message())
                  .find("expected a single expression"),
              std::string::npos)
        << expr << ": " << got.status();
  }
}

TEST(EvalBoolTest, EvaluatesConditions) {
  PhloMeter meter(-1);
  ExprContext ctx{&meter};
  for (const auto& [expr, want] :
       std::vector<std::pair<const char*, bool>>{{"true", true},
                                                 {"1 < 2", true},
                                                 {"[false].nth(0)", false},
                                                 {"Set(1).contains(2)", false},
                                                 {"\"a\" == \"a\"", true}}) {
    absl::StatusOr<bool> got = EvalBool(Datum(expr), ctx);
    ASSERT_TRUE(got.ok()) << expr << ": " << got.status();
    EXPECT_EQ(*got, want) << expr;
  }
}

TEST(EvalBoolTest, NonBoolConditionIsAnError) {
  PhloMeter meter(-1);
  ExprContext ctx{&meter};
  for (const char* expr :
       {"1", "Nil", "\"true\"", "{}.get(1)", "1 | true", "[true]"}) {
    absl::StatusOr<bool> got = EvalBool(Datum(expr), ctx);
    ASSERT_FALSE(got.ok()) << expr;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(
        std::string(got.status().message()).find("condition is not a Bool"),
        std::string::npos)
        << expr << ": " << got.status();
  }
}

TEST(EvalBoolTest, ErrorsInsideTheConditionPropagate) {
  PhloMeter meter(-1);
  ExprContext ctx{&meter};
  absl::StatusOr<bool> got = EvalBool(Datum("1 / 0 == 1"), ctx);
  ASSERT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(got.status().message()).find("division by zero"),
            std::string::npos);
}

// ---- Value size limits (rholang/interpreter/limits.h) ----

// Evaluates the datum of `new x in { @0!(<expr>) }` with x bound to `x`.
absl::StatusOr<ParPtr> EvalWithX(const std::string& expr, const ParPtr& x,
                                 PhloMeter& meter) {
  absl::StatusOr<ParPtr> prog = Compile("new x in { @0!(" + expr + ") }");
  if (!prog.ok()) return prog.status();
  ASSIGN_OR_RETURN(ParPtr body,
                   Substitute((*prog)->news[0]->body, Env({x}), 0, meter));
  ExprContext ctx{&meter};
  return EvalPar(body->sends[0]->data[0], ctx);
}

absl::StatusOr<ParPtr> EvalWithX(const std::string& expr, const ParPtr& x) {
  PhloMeter meter(-1);
  return EvalWithX(expr, x, meter);
}

ParPtr IntList(size_t n, int64_t first = 0) {
  std::vector<ParPtr> ps;
  ps.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    ps.push_back(ir::ParOf(ir::Expr::Int(first + static_cast<int64_t>(i))));
  }
  return ir::ParOf(ir::Expr::List(std::move(ps), std::nullopt));
}

ParPtr IntSet(size_t n, int64_t first) {
  const ParPtr list = IntList(n, first);
  return ir::ParOf(ir::Expr::Set(list->exprs[0]->operands, std::nullopt));
}

// A Set of exactly kMaxCollectionElements Ints, built once (building it
// takes seconds).
const ParPtr& FullSet() {
  static const ParPtr* const kSet =
      new ParPtr(IntSet(kMaxCollectionElements, 0));
  return *kSet;
}

ParPtr Text(size_t n) {
  return ir::ParOf(ir::Expr::String(std::string(n, 'a')));
}

void ExpectLimitError(const absl::StatusOr<ParPtr>& got, size_t limit) {
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted)
      << got.status();
  EXPECT_FALSE(IsOutOfPhlo(got.status())) << got.status();
  EXPECT_NE(std::string(got.status().message())
                .find(absl::StrCat("exceeds the limit of ", limit)),
            std::string::npos)
      << got.status();
}

// A deploy that doubles a list stops with the named limit, not an OOM: the
// last doubling that fits has exactly kMaxCollectionElements elements.
TEST(ValueLimitTest, DoublingAListStopsAtTheLimit) {
  ParPtr l = IntList(1);
  size_t len = 1;
  absl::StatusOr<ParPtr> next = l;
  while (true) {
    next = EvalWithX("*x ++ *x", l);
    if (!next.ok()) break;
    l = *next;
    len *= 2;
    ASSERT_EQ(l->exprs[0]->operands.size(), len);
  }
  EXPECT_EQ(len, kMaxCollectionElements);
  ExpectLimitError(next, kMaxCollectionElements);
}

TEST(ValueLimitTest, DoublingAStringStopsAtTheLimit) {
  ParPtr s = Text(1);
  size_t len = 1;
  absl::StatusOr<ParPtr> next = s;
  while (true) {
    next = EvalWithX("*x ++ *x", s);
    if (!next.ok()) break;
    s = *next;
    len *= 2;
    ASSERT_EQ(s->exprs[0]->text.size(), len);
  }
  EXPECT_EQ(len, kMaxTextBytes);
  // Two copies of a kMaxTextBytes string already weigh more than
  // kMaxTermNodes, so the substituted `*x ++ *x` is refused before `++` runs.
  ExpectLimitError(next, kMaxTermNodes);
}

struct LimitCase {
  std::string name;
  std::string expr;           // uses *x
  std::function<ParPtr()> x;  // built when the test runs
  size_t limit;
};
void PrintTo(const LimitCase& c, std::ostream* os) { *os << c.name; }

class ValueLimitTableTest : public testing::TestWithParam<LimitCase> {};

TEST_P(ValueLimitTableTest, FailsWithTheNamedLimit) {
  const LimitCase& c = GetParam();
  ExpectLimitError(EvalWithX(c.expr, c.x()), c.limit);
}

constexpr size_t kHalfElements = kMaxCollectionElements / 2;
constexpr size_t kHalfText = kMaxTextBytes / 2;

INSTANTIATE_TEST_SUITE_P(
    Limits, ValueLimitTableTest,
    testing::Values(
        LimitCase{"ListConcat", "*x ++ *x",
                  [] { return IntList(kHalfElements + 1); },
                  kMaxCollectionElements},
        LimitCase{"SetConcat", "*x ++ Set(-1)", [] { return FullSet(); },
                  kMaxCollectionElements},
        LimitCase{"SetUnion", "(*x).union(Set(-1))", [] { return FullSet(); },
                  kMaxCollectionElements},
        LimitCase{"SetAdd", "(*x).add(-1)", [] { return FullSet(); },
                  kMaxCollectionElements},
        LimitCase{"SetPlus", "*x + -1", [] { return FullSet(); },
                  kMaxCollectionElements},
        LimitCase{"StringConcat", "*x ++ *x",
                  [] { return Text(kHalfText + 1); }, kMaxTextBytes},
        LimitCase{"Interpolate", "\"${a}${a}\" %% {\"a\": *x}",
                  [] { return Text(kHalfText + 1); }, kMaxTextBytes},
        LimitCase{"BytesToHex", "(*x).toUtf8Bytes().bytesToHex()",
                  [] { return Text(kHalfText + 1); }, kMaxTextBytes},
        LimitCase{"ToByteArray", "(*x).toByteArray()",
                  [] { return Text(kMaxTextBytes); }, kMaxTextBytes}),
    [](const testing::TestParamInfo<LimitCase>& info) {
      return info.param.name;
    });

TEST(ValueLimitTest, AtTheLimitIsAllowed) {
  absl::StatusOr<ParPtr> list = EvalWithX("*x ++ *x", IntList(kHalfElements));
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ((*list)->exprs[0]->operands.size(), kMaxCollectionElements);
  absl::StatusOr<ParPtr> text = EvalWithX("*x ++ *x", Text(kHalfText));
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ((*text)->exprs[0]->text.size(), kMaxTextBytes);
  absl::StatusOr<ParPtr> same = EvalWithX("(*x).add(0)", FullSet());
  ASSERT_TRUE(same.ok()) << same.status();
}

// `[l, l]` nested n times is n small nodes in memory but 2^n copies in its
// encoding: toByteArray must fail before encoding it.
ParPtr SharedTower(int levels) {
  ParPtr l = ir::ParOf(ir::Expr::Int(1));
  for (int i = 0; i < levels; ++i) {
    l = ir::ParOf(ir::Expr::List({l, l}, std::nullopt));
  }
  return l;
}

// 2^60 leaves: any walk that follows every copy never ends.
constexpr int kTowerLevels = 60;
// 2^20 leaves: `[*x, *x]` over it (2^23 nodes expanded) is within
// kMaxTermNodes.
constexpr int kFittingTowerLevels = 20;

// Evaluating a value that shares subterms visits each distinct subterm once
// and charges nothing.
TEST(EvalParTest, SharedValueIsEvaluatedOncePerDistinctSubterm) {
  PhloMeter meter(-1);
  ParPtr x = SharedTower(kFittingTowerLevels);
  absl::StatusOr<ParPtr> got = EvalWithX("[*x, *x]", x, meter);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(ir::Equal(*got, ir::ParOf(ir::Expr::List({x, x}, std::nullopt))));
  // Only the substitution is charged, as for a leaf value.
  PhloMeter leaf(-1);
  ASSERT_TRUE(EvalWithX("[*x, *x]", ir::ParOf(ir::Expr::Int(1)), leaf).ok());
  EXPECT_EQ(meter.spent(), leaf.spent());
}

// Skipping known values never skips a charge: equal subterms that cost
// something are charged at each occurrence.
TEST(EvalParTest, RepeatedExpressionsAreChargedEachTime) {
  PhloMeter once(-1);
  ASSERT_TRUE(Eval("[[1 + 1], 0]", once).ok());
  PhloMeter twice(-1);
  ASSERT_TRUE(Eval("[[1 + 1], [1 + 1]]", twice).ok());
  EXPECT_GT(once.spent(), 0);
  EXPECT_EQ(twice.spent(), 2 * once.spent());
}

// A value whose expansion exceeds kMaxTermNodes fails with that limit before
// anything walks, encodes or prints the 2^60 copies, whatever the phlo left.
TEST(ValueLimitTest, SharedTowerHitsTheNodeLimit) {
  ExpectLimitError(EvalWithX("[*x, *x]", SharedTower(kTowerLevels)),
                   kMaxTermNodes);
  ExpectLimitError(EvalWithX("(*x).toByteArray()", SharedTower(kTowerLevels)),
                   kMaxTermNodes);
  PhloMeter meter(100000);
  ExpectLimitError(
      EvalWithX("(*x).toByteArray()", SharedTower(kTowerLevels), meter),
      kMaxTermNodes);
}

TEST(ValueLimitTest, ManyCopiesOfOneLargeStringHitTheLimit) {
  // Within the node count, but 40 copies of a 1 MiB string expand to 40 MiB
  // of text: text bytes weigh in the limit too.
  ParPtr big = ir::ParOf(ir::Expr::String(std::string(1u << 20, 'a')));
  std::string list = "[*x";
  for (int i = 1; i < 40; ++i) list += ", *x";
  list += "]";
  ExpectLimitError(EvalWithX(list, big), kMaxTermNodes);
  // Eight copies (8 MiB) are fine.
  EXPECT_TRUE(EvalWithX("[*x, *x, *x, *x, *x, *x, *x, *x]", big).ok());
}

TEST(ValueLimitTest, ToByteArrayChargesAtLeastItsSize) {
  PhloMeter meter(-1);
  absl::StatusOr<ParPtr> got =
      EvalWithX("(*x).toByteArray()", SharedTower(10), meter);
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<Bytes> enc = EncodePublicPar(*SharedTower(10));
  ASSERT_TRUE(enc.ok());
  EXPECT_EQ((*got)->exprs[0]->text.size(), enc->size());
  EXPECT_GE(meter.spent(), static_cast<int64_t>(enc->size()));
}

}  // namespace
}  // namespace rnode::rholang::interp

// Lexer and parser: tokens and positions, operator precedence and the shape
// of the syntax tree, and the nesting and size limits.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "rholang/frontend/diagnostic.h"
#include "rholang/frontend/ir_encoding.h"
#include "rholang/frontend/lexer.h"
#include "rholang/frontend/limits.h"
#include "rholang/frontend/normalizer.h"
#include "rholang/frontend/parser.h"
#include "rholang/frontend/printer.h"

namespace rnode::rholang {
namespace {

using ast::BinaryOp;
using ast::Proc;
using ast::ProcKind;

struct LexCase {
  const char* name;
  const char* source;
  std::vector<Tok> kinds;  // without the final kEof
};

class LexerTest : public ::testing::TestWithParam<LexCase> {};

TEST_P(LexerTest, ProducesTokenKinds) {
  auto toks = Lex(GetParam().source);
  ASSERT_TRUE(toks.ok()) << toks.status();
  std::vector<Tok> kinds;
  for (const Token& t : *toks) kinds.push_back(t.kind);
  ASSERT_FALSE(kinds.empty());
  EXPECT_EQ(kinds.back(), Tok::kEof);
  kinds.pop_back();
  EXPECT_EQ(kinds, GetParam().kinds);
}

const LexCase kLexCases[] = {
    {"Arrows",
     "<- <= <<- < =>",
     {Tok::kLArrow, Tok::kLe, Tok::kPeekArrow, Tok::kLt, Tok::kFatArrow}},
    {"Bangs",
     "! !! !? ?! !=",
     {Tok::kBang, Tok::kBangBang, Tok::kBangQuestion, Tok::kQuestionBang,
      Tok::kNeq}},
    {"Bundles",
     "bundle bundle+ bundle- bundle0",
     {Tok::kBundle, Tok::kBundlePlus, Tok::kBundleMinus, Tok::kBundleZero}},
    {"BundleZeroBeforeBrace", "bundle0{", {Tok::kBundleZero, Tok::kLBrace}},
    {"Connectives", "/\\ \\/ ~", {Tok::kConj, Tok::kDisj, Tok::kTilde}},
    {"ArithmeticOps",
     "+ - * / % ++ -- %%",
     {Tok::kPlus, Tok::kMinus, Tok::kStar, Tok::kSlash, Tok::kPercent,
      Tok::kPlusPlus, Tok::kMinusMinus, Tok::kPercentPercent}},
    {"ShortCircuitOps",
     "&& || & | &&&",
     {Tok::kAmpAmp, Tok::kBarBar, Tok::kAmp, Tok::kBar, Tok::kAmpAmp,
      Tok::kAmp}},
    {"Keywords",
     "new in for match if else let contract",
     {Tok::kNew, Tok::kIn, Tok::kFor, Tok::kMatch, Tok::kIf, Tok::kElse,
      Tok::kLet, Tok::kContract}},
    {"Literals",
     "Nil true false 12 \"s\" `u`",
     {Tok::kNil, Tok::kTrue, Tok::kFalse, Tok::kInt, Tok::kString, Tok::kUri}},
    {"SimpleTypes",
     "Bool Int String Uri ByteArray Set",
     {Tok::kTypeBool, Tok::kTypeInt, Tok::kTypeString, Tok::kTypeUri,
      Tok::kTypeByteArray, Tok::kSet}},
    {"WildcardAndIdentifiers",
     "_ _x x' a1",
     {Tok::kWildcard, Tok::kIdent, Tok::kIdent, Tok::kIdent}},
    {"Ellipsis", "...@r", {Tok::kEllipsis, Tok::kAt, Tok::kIdent}},
    {"Punctuation",
     "()[]{},;:.|&@",
     {Tok::kLParen, Tok::kRParen, Tok::kLBracket, Tok::kRBracket, Tok::kLBrace,
      Tok::kRBrace, Tok::kComma, Tok::kSemi, Tok::kColon, Tok::kDot, Tok::kBar,
      Tok::kAmp, Tok::kAt}},
    {"CommentsSkipped", "1 // x\n/* y\n z */ 2", {Tok::kInt, Tok::kInt}},
    {"BadNumbers",
     "1.5 10n 3f64 2u8",
     {Tok::kBadNumber, Tok::kBadNumber, Tok::kBadNumber, Tok::kBadNumber}},
    {"IntThenMethod", "1.length", {Tok::kInt, Tok::kDot, Tok::kIdent}},
    {"WordOperators",
     "not and or matches",
     {Tok::kNot, Tok::kAnd, Tok::kOr, Tok::kMatches}},
    {"GuardKeywords", "select where", {Tok::kSelect, Tok::kWhere}},
    {"Empty", "", {}},
};

INSTANTIATE_TEST_SUITE_P(Tokens, LexerTest, ::testing::ValuesIn(kLexCases),
                         [](const ::testing::TestParamInfo<LexCase>& info) {
                           return std::string(info.param.name);
                         });

TEST(LexerPositionTest, TracksLinesAndColumns) {
  auto toks = Lex("a\n  bb\tc");
  ASSERT_TRUE(toks.ok());
  ASSERT_EQ(toks->size(), 4u);
  EXPECT_EQ((*toks)[0].pos.line, 1u);
  EXPECT_EQ((*toks)[0].pos.col, 1u);
  EXPECT_EQ((*toks)[1].pos.line, 2u);
  EXPECT_EQ((*toks)[1].pos.col, 3u);
  EXPECT_EQ((*toks)[2].pos.col, 6u);
}

TEST(LexerValueTest, DecodesLiterals) {
  auto toks = Lex("\"a\\tb\" `rho:x` 9223372036854775808");
  ASSERT_TRUE(toks.ok());
  EXPECT_EQ((*toks)[0].value, "a\tb");
  EXPECT_EQ((*toks)[1].value, "rho:x");
  EXPECT_EQ((*toks)[2].int_magnitude, uint64_t{1} << 63);
}

const Proc* Root(const std::string& src, ParsedProgram* keep) {
  auto p = Parse(src);
  if (!p.ok()) {
    ADD_FAILURE() << src << ": " << p.status();
    return nullptr;
  }
  *keep = std::move(*p);
  return keep->root;
}

TEST(ParserShapeTest, MultiplicationBindsTighterThanAddition) {
  ParsedProgram keep;
  const Proc* r = Root("1 + 2 * 3", &keep);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->kind, ProcKind::kBinary);
  EXPECT_EQ(r->binary, BinaryOp::kAdd);
  EXPECT_EQ(r->procs[1]->binary, BinaryOp::kMul);
}

TEST(ParserShapeTest, SubtractionIsLeftAssociative) {
  ParsedProgram keep;
  const Proc* r = Root("1 - 2 - 3", &keep);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->procs[0]->kind, ProcKind::kBinary);
  EXPECT_EQ(r->procs[1]->kind, ProcKind::kInt);
}

TEST(ParserShapeTest, ComparisonBindsTighterThanAndThanOr) {
  ParsedProgram keep;
  const Proc* r = Root("a < b and c or d", &keep);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->binary, BinaryOp::kOr);
  EXPECT_EQ(r->procs[0]->binary, BinaryOp::kAnd);
  EXPECT_EQ(r->procs[0]->procs[0]->binary, BinaryOp::kLt);
}

TEST(ParserShapeTest, ParIsFlattened) {
  ParsedProgram keep;
  const Proc* r = Root("@0!(1) | @1!(2) | @2!(3)", &keep);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->kind, ProcKind::kPar);
  EXPECT_EQ(r->procs.size(), 3u);
}

TEST(ParserShapeTest, NewBodyStopsAtPar) {
  ParsedProgram keep;
  const Proc* r = Root("new x in x!(1) | @0!(2)", &keep);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->kind, ProcKind::kPar);
  EXPECT_EQ(r->procs[0]->kind, ProcKind::kNew);
}

TEST(ParserShapeTest, ElseBranchStopsAtPar) {
  ParsedProgram keep;
  const Proc* r = Root("if (true) @0!(1) else @1!(2) | @2!(3)", &keep);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->kind, ProcKind::kPar);
  EXPECT_EQ(r->procs[0]->kind, ProcKind::kIf);
  EXPECT_NE(r->procs[0]->else_body, nullptr);
}

TEST(ParserShapeTest, UnaryMinusFoldsIntoLiteral) {
  ParsedProgram keep;
  const Proc* r = Root("-5", &keep);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->kind, ProcKind::kInt);
  EXPECT_EQ(r->int_value, -5);
  const Proc* n = Root("-(5)", &keep);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->kind, ProcKind::kUnary);
}

TEST(ParserShapeTest, MethodCallsBindTighterThanUnaryMinus) {
  ParsedProgram keep;
  const Proc* r = Root("-x.f()", &keep);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->kind, ProcKind::kUnary);
  EXPECT_EQ(r->procs[0]->kind, ProcKind::kMethod);
}

TEST(ParserShapeTest, ConjunctionBindsTighterThanDisjunction) {
  ParsedProgram keep;
  const Proc* r = Root("a \\/ b /\\ c", &keep);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->binary, BinaryOp::kDisj);
  EXPECT_EQ(r->procs[1]->binary, BinaryOp::kConj);
}

// `=x` / `=*x` end at their variable, so they are operands of `/\`, `\/`
// and `~` on either side (reference rholang.md section 1.5: var ref and
// `\/` at 13, `/\` at 14, `~` at 15).
TEST(ParserShapeTest, VarRefIsAnOperandOfConnectives) {
  struct Case {
    std::string src;
    BinaryOp top;          // of the root Binary
    ProcKind left, right;  // kinds of its operands
    BinaryOp right_op;     // if `right` is kBinary
  };
  const std::vector<Case> cases = {
      {"=x /\\ Int", BinaryOp::kConj, ProcKind::kVarRef, ProcKind::kSimpleType,
       BinaryOp::kConj},
      {"=*x /\\ Int", BinaryOp::kConj, ProcKind::kVarRef, ProcKind::kSimpleType,
       BinaryOp::kConj},
      {"Int /\\ =*x", BinaryOp::kConj, ProcKind::kSimpleType, ProcKind::kVarRef,
       BinaryOp::kConj},
      {"=*x \\/ Int", BinaryOp::kDisj, ProcKind::kVarRef, ProcKind::kSimpleType,
       BinaryOp::kDisj},
      {"=x /\\ Int \\/ =*y", BinaryOp::kDisj, ProcKind::kBinary,
       ProcKind::kVarRef, BinaryOp::kDisj},
      {"=x \\/ =y /\\ Int", BinaryOp::kDisj, ProcKind::kVarRef,
       ProcKind::kBinary, BinaryOp::kConj},
      {"~=x /\\ =y", BinaryOp::kConj, ProcKind::kUnary, ProcKind::kVarRef,
       BinaryOp::kConj},
      {"=x /\\ ~=y", BinaryOp::kConj, ProcKind::kVarRef, ProcKind::kUnary,
       BinaryOp::kConj},
  };
  for (const Case& c : cases) {
    ParsedProgram keep;
    const Proc* r = Root(c.src, &keep);
    ASSERT_NE(r, nullptr) << c.src;
    ASSERT_EQ(r->kind, ProcKind::kBinary) << c.src;
    EXPECT_EQ(r->binary, c.top) << c.src;
    EXPECT_EQ(r->procs[0]->kind, c.left) << c.src;
    EXPECT_EQ(r->procs[1]->kind, c.right) << c.src;
    if (c.right == ProcKind::kBinary) {
      EXPECT_EQ(r->procs[1]->binary, c.right_op) << c.src;
    }
  }
}

TEST(ParserShapeTest, NegatedVarRef) {
  ParsedProgram keep;
  const Proc* r = Root("~=*x", &keep);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->kind, ProcKind::kUnary);
  EXPECT_EQ(r->unary, ast::UnaryOp::kConnNot);
  ASSERT_EQ(r->procs[0]->kind, ProcKind::kVarRef);
  EXPECT_TRUE(r->procs[0]->var_ref_name);
}

TEST(ParserShapeTest, VarRefFirstInMatchCase) {
  ParsedProgram keep;
  const Proc* r =
      Root("new x in { match 5 { =*x /\\ Int => Nil  _ => Nil } }", &keep);
  ASSERT_NE(r, nullptr);
}

TEST(ParserShapeTest, ReceiptsGroupJoinsAndSequences) {
  ParsedProgram keep;
  const Proc* r = Root("for (a <- x & b <= y ; c <<- z) { Nil }", &keep);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->kind, ProcKind::kFor);
  ASSERT_EQ(r->extra->receipts.size(), 2u);
  EXPECT_EQ(r->extra->receipts[0].size(), 2u);
  EXPECT_EQ(r->extra->receipts[0][1].kind, ast::BindKind::kRepeated);
  EXPECT_EQ(r->extra->receipts[1][0].kind, ast::BindKind::kPeek);
}

TEST(ParserShapeTest, ContractFormalsWithRemainder) {
  ParsedProgram keep;
  const Proc* r = Root("contract c(@a, b ...@rest) = { Nil }", &keep);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->kind, ProcKind::kContract);
  EXPECT_EQ(r->extra->formals.names.size(), 2u);
  ASSERT_NE(r->extra->formals.remainder, nullptr);
  EXPECT_EQ(r->extra->formals.remainder->var, "rest");
}

TEST(ParserShapeTest, NewDeclarationsKeepUris) {
  ParsedProgram keep;
  const Proc* r = Root("new a, b(`rho:x`) in Nil", &keep);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->extra->decls.size(), 2u);
  EXPECT_FALSE(r->extra->decls[0].has_uri);
  EXPECT_EQ(r->extra->decls[1].uri, "rho:x");
}

TEST(ParserShapeTest, BraceDisambiguatesMapAndBlock) {
  ParsedProgram keep;
  EXPECT_EQ(Root("{}", &keep)->kind, ProcKind::kMap);
  EXPECT_EQ(Root("{1: 2}", &keep)->kind, ProcKind::kMap);
  EXPECT_EQ(Root("{ 1 }", &keep)->kind, ProcKind::kInt);
}

TEST(ParserShapeTest, TuplesAndParentheses) {
  ParsedProgram keep;
  EXPECT_EQ(Root("(1)", &keep)->kind, ProcKind::kInt);
  EXPECT_EQ(Root("(1,)", &keep)->kind, ProcKind::kTuple);
  EXPECT_EQ(Root("(1, 2)", &keep)->procs.size(), 2u);
}

TEST(ParserShapeTest, HeightIsTracked) {
  ParsedProgram keep;
  const Proc* r = Root("[[[1]]]", &keep);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->height, 4u);
}

// Pathological nesting must end in a kResourceExhausted diagnostic, never a
// stack overflow.
struct DeepCase {
  const char* name;
  std::function<std::string(int)> make;
};

std::string Repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

class DeepNestingTest : public ::testing::TestWithParam<DeepCase> {};

TEST_P(DeepNestingTest, IsRejectedAsResourceExhausted) {
  std::string src = GetParam().make(20000);
  auto r = Compile(src);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted)
      << r.status();
  auto d = DiagnosticFromStatus(r.status());
  ASSERT_TRUE(d.has_value());
  EXPECT_GE(d->line, 1u);
  EXPECT_NE(d->message.find("nesting deeper"), std::string::npos);
}

TEST_P(DeepNestingTest, ModerateDepthIsAccepted) {
  std::string src = GetParam().make(100);
  auto r = Compile(src);
  EXPECT_TRUE(r.ok()) << r.status();
}

// The deepest program each construct allows must pass every stage (and, in
// sanitizer builds, fit the default stack).
TEST_P(DeepNestingTest, DeepestAcceptedProgramRunsEveryStage) {
  int lo = 1, hi = 2 * static_cast<int>(kMaxNestingDepth);
  ASSERT_TRUE(Compile(GetParam().make(lo)).ok());
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (Compile(GetParam().make(mid)).ok()) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  EXPECT_GT(lo, 100);
  auto ir = Compile(GetParam().make(lo));
  ASSERT_TRUE(ir.ok()) << ir.status();
  auto bytes = ir::EncodePar(**ir);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto decoded = ir::DecodePar(*bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ((*decoded)->hash, (*ir)->hash);
  auto printed = Print(**ir);
  ASSERT_TRUE(printed.ok()) << printed.status();
  // Printing adds braces, parentheses and desugared binders, so near the
  // limit the printed text may itself be too deep; it must then be refused
  // as such, never misread.
  auto again = Compile(*printed);
  if (again.ok()) {
    EXPECT_EQ((*again)->hash, (*ir)->hash);
  } else {
    EXPECT_EQ(again.status().code(), absl::StatusCode::kResourceExhausted)
        << again.status();
  }
}

TEST_P(DeepNestingTest, ModerateDepthRoundTripsThroughThePrinter) {
  auto ir = Compile(GetParam().make(100));
  ASSERT_TRUE(ir.ok()) << ir.status();
  auto printed = Print(**ir);
  ASSERT_TRUE(printed.ok());
  auto again = Compile(*printed);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->hash, (*ir)->hash);
}

const DeepCase kDeepCases[] = {
    {"Parentheses",
     [](int n) {
       return "@0!(" + Repeat("(", n) + "1" + Repeat(")", n) + ")";
     }},
    {"Lists",
     [](int n) { return "@0!(" + Repeat("[", n) + Repeat("]", n) + ")"; }},
    {"Blocks", [](int n) { return Repeat("{", n) + "Nil" + Repeat("}", n); }},
    {"Quotes",
     [](int n) { return Repeat("@{", n) + "0" + Repeat("}!(1)", n); }},
    {"Negations", [](int n) { return "@0!(" + Repeat("- ", n) + "1)"; }},
    {"Nots", [](int n) { return "@0!(" + Repeat("not ", n) + "true)"; }},
    {"News",
     [](int n) { return Repeat("new x in { ", n) + "Nil" + Repeat("}", n); }},
    {"Receives",
     [](int n) {
       return Repeat("for (_ <- @0) { ", n) + "Nil" + Repeat("}", n);
     }},
    {"AdditionChain", [](int n) { return "@0!(1" + Repeat(" + 1", n) + ")"; }},
    {"MethodChain", [](int n) { return "@0!(1" + Repeat(".f()", n) + ")"; }},
    {"Sends", [](int n) { return Repeat("@0!(", n) + "1" + Repeat(")", n); }},
    {"Evals", [](int n) { return Repeat("*@", n) + "1"; }},
    {"Matches",
     [](int n) {
       return Repeat("match 1 { _ => ", n) + "Nil" + Repeat("}", n);
     }},
    {"Bundles",
     [](int n) { return Repeat("bundle+ {", n) + "Nil" + Repeat("}", n); }},
    {"Ifs", [](int n) { return Repeat("if (true) ", n) + "Nil"; }},
    {"SyncSends",
     [](int n) { return "new x in { " + Repeat("x!?(1) ; ", n) + "Nil }"; }},
    {"Lets",
     [](int n) {
       return Repeat("let @v <- 1 in { ", n) + "Nil" + Repeat("}", n);
     }},
    {"Tuples",
     [](int n) {
       return "@0!(" + Repeat("(1, ", n) + "2" + Repeat(")", n) + ")";
     }},
    {"Maps",
     [](int n) {
       return "@0!(" + Repeat("{1: ", n) + "2" + Repeat("}", n) + ")";
     }},
    {"Connectives",
     [](int n) {
       return "match 1 { " + Repeat("~{", n) + "1" + Repeat("}", n) +
              " => Nil }";
     }},
};

INSTANTIATE_TEST_SUITE_P(Limits, DeepNestingTest,
                         ::testing::ValuesIn(kDeepCases),
                         [](const ::testing::TestParamInfo<DeepCase>& info) {
                           return std::string(info.param.name);
                         });

TEST(ParserLimitsTest, WideParIsNotDeep) {
  std::string src = "@0!(0)";
  for (int i = 1; i < 20000; ++i) src += " | @0!(" + std::to_string(i) + ")";
  auto r = Compile(src);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->sends.size(), 20000u);
}

TEST(ParserLimitsTest, LongListIsNotDeep) {
  std::string src = "@0!([0";
  for (int i = 1; i < 20000; ++i) src += ", " + std::to_string(i);
  auto r = Compile(src + "])");
  ASSERT_TRUE(r.ok()) << r.status();
}

TEST(ParserLimitsTest, OversizedSourceIsResourceExhausted) {
  std::string src(kMaxSourceBytes + 1, ' ');
  auto r = Parse(src);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(ParserLimitsTest, SourceAtTheLimitIsAccepted) {
  std::string src = "Nil";
  src.resize(kMaxSourceBytes, ' ');
  EXPECT_TRUE(Parse(src).ok());
}

}  // namespace
}  // namespace rnode::rholang

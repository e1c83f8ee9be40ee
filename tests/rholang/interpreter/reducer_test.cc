// Tests of the reducer, the stored-term codec, the matcher adapter and the
// runtime (costs, rollback, replay, thread-count independence).
#include "rholang/interpreter/reducer.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "rholang/frontend/ir.h"
#include "rholang/frontend/normalizer.h"
#include "rholang/frontend/printer.h"
#include "rholang/interpreter/cost.h"
#include "rholang/interpreter/limits.h"
#include "rholang/interpreter/system_processes.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/event_log.h"
#include "rspace/space.h"
#include "rspace/storage/kv_store.h"
#include "tests/sanitizer.h"

namespace rnode::rholang::interp {
namespace {

// Lines printed by the programs.
using Lines = CollectingSink;

DeployInfo TestDeploy(uint8_t seed = 1) {
  DeployInfo d;
  d.timestamp = 1700000000000;
  d.deployer_public_key = Bytes(65, 0x04);
  d.deploy_id = Bytes(64, seed);
  return d;
}

constexpr int64_t kBigLimit = 10'000'000;
// Enough stores of the history's column families for the in-memory store.
constexpr size_t kStoreColumns = 3;

// The canonical printed form of a Rholang expression given as source.
std::string Canon(const std::string& src) {
  auto p = Compile(src);
  EXPECT_TRUE(p.ok()) << src << ": " << p.status();
  if (!p.ok()) return "<error>";
  return *Print(**p);
}

// A fresh in-memory space with a runtime over it.
struct Harness {
  rspace::InMemoryStore store{kStoreColumns};
  std::unique_ptr<rspace::Space> space;
  Lines lines;
  std::unique_ptr<Runtime> rt;

  explicit Harness(int threads = 1, bool track = false) {
    rspace::SpaceOptions so;
    so.term_factory = StoredTermFactory();
    space = *rspace::Space::Open(&store, so);
    RuntimeOptions ro;
    ro.threads = threads;
    // Every round of a multi-threaded harness runs on the workers, so that
    // comparisons of thread counts exercise the parallel phase.
    ro.min_parallel_tasks = 1;
    ro.output = &lines;
    ro.track_channels = track;
    auto r = Runtime::Create(space.get(), ro);
    EXPECT_TRUE(r.ok()) << r.status();
    rt = *std::move(r);
  }

  EvalResult Run(const std::string& src, int64_t limit = kBigLimit,
                 rspace::EventLog* log = nullptr, uint8_t seed = 1) {
    rspace::EventLog own;
    return rt->EvaluateSource(src, TestDeploy(seed), limit,
                              log != nullptr ? log : &own);
  }

  // Each datum on channel `@name` printed as "v1, v2, ..." (a multiset).
  std::multiset<std::string> Data(const ir::ParPtr& chan) {
    std::multiset<std::string> out;
    auto term = MakeChannelTerm(chan);
    EXPECT_TRUE(term.ok());
    auto data = space->GetData((*term)->hash());
    EXPECT_TRUE(data.ok()) << data.status();
    for (const rspace::Datum& d : *data) {
      std::shared_ptr<const StoredValue> h;
      auto v = DataOf(*d.value, h);
      EXPECT_TRUE(v.ok());
      std::string s;
      for (size_t i = 0; i < (*v)->pars.size(); ++i) {
        if (i > 0) s += ", ";
        s += *Print(*(*v)->pars[i]);
      }
      out.insert(s);
    }
    return out;
  }
  std::multiset<std::string> Data(const std::string& name) {
    return Data(ir::ParOf(ir::Expr::String(name)));
  }
  size_t Waiting(const std::string& name) {
    auto term = MakeChannelTerm(ir::ParOf(ir::Expr::String(name)));
    auto ks = space->GetContinuations({*term});
    EXPECT_TRUE(ks.ok());
    return ks->size();
  }
  Hash32 Root() {
    auto r = space->CreateCheckpoint();
    EXPECT_TRUE(r.ok()) << r.status();
    return *r;
  }
};

std::multiset<std::string> Expect(const std::vector<std::string>& srcs) {
  std::multiset<std::string> out;
  for (const auto& s : srcs) {
    // "a; b" lists several values of one datum.
    std::string joined;
    size_t start = 0;
    bool first = true;
    while (true) {
      size_t semi = s.find(';', start);
      std::string part = s.substr(
          start, semi == std::string::npos ? std::string::npos : semi - start);
      if (!first) joined += ", ";
      joined += Canon(part);
      first = false;
      if (semi == std::string::npos) break;
      start = semi + 1;
    }
    out.insert(joined);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Whole programs: what is left on channel @"out".

struct ProgramCase {
  const char* name;
  const char* source;
  std::vector<std::string> out;  // data left on @"out" (values split by ;)
  int64_t cost = -1;             // exact phlo spent (computed by this code)
};

class ProgramTest : public ::testing::TestWithParam<ProgramCase> {};

TEST_P(ProgramTest, LeavesExpectedDataOnOut) {
  const ProgramCase& c = GetParam();
  Harness h;
  EvalResult r = h.Run(c.source);
  ASSERT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(r.cost, c.cost);
  EXPECT_EQ(h.Data("out"), Expect(c.out));
}

const ProgramCase kPrograms[] = {
    {"PlainSend", R"(@"out"!(1))", {"1"}, 156},
    {"SharedListDoubledThreeTimes",
     R"(new c in { contract c(@l, @n) = {
          if (n > 0) { c!([l, l], n - 1) } else { @"out"!(l) } } | c!([1], 3) })",
     {"[[[[1], [1]], [[1], [1]]], [[[1], [1]], [[1], [1]]]]"},
     2481},
    {"SendSeveralValues", R"(@"out"!(1, "a", true))", {"1;\"a\";true"}, 194},
    {"SendEvaluatesArithmetic", R"(@"out"!(1 + 2 * 3))", {"7"}, 176},
    {"SendEvaluatesStrings", R"(@"out"!("ab" ++ "cd"))", {"\"abcd\""}, 185},
    {"TwoSends", R"(@"out"!(1) | @"out"!(2))", {"1", "2"}, 315},
    {"SendNil", R"(@"out"!(Nil))", {"Nil"}, 156},
    {"SendList", R"(@"out"!([1, 2, 3]))", {"[1, 2, 3]"}, 198},
    {"SendMap", R"(@"out"!({"a": 1}))", {"{\"a\": 1}"}, 187},
    {"SendTuple", R"(@"out"!((1, 2)))", {"(1, 2)"}, 183},
    {"SendSet", R"(@"out"!(Set(3, 1, 2)))", {"Set(1, 2, 3)"}, 201},
    {"ReceiveThenForward",
     R"(@"in"!(5) | for (x <- @"in") { @"out"!(*x) })",
     {"5"},
     589},
    {"ReceiveForwardsArithmetic",
     R"(@"in"!(5) | for (@x <- @"in") { @"out"!(x * 2) })",
     {"10"},
     625},
    {"ReceiveSeveralValues",
     R"(@"in"!(1, 2) | for (@a, @b <- @"in") { @"out"!(a + b) })",
     {"3"},
     655},
    {"ReceivePatternSelectsDatum",
     R"(@"in"!(1) | @"in"!(2) | for (@2 <- @"in") { @"out"!("two") })",
     {"\"two\""},
     753},
    {"ReceiveListPattern",
     R"(@"in"!([1, 2]) | for (@[a, b] <- @"in") { @"out"!(b, a) })",
     {"2;1"},
     675},
    {"ReceiveRemainder",
     R"(@"in"!(1, 2, 3) | for (@a ...@rest <- @"in") { @"out"!(rest) })",
     {"[2, 3]"},
     657},
    {"ReceiveWrongArityWaits",
     R"(@"in"!(1, 2) | for (@a <- @"in") { @"out"!(a) })",
     {},
     394},
    {"Join",
     R"(@"a"!(1) | @"b"!(2) | for (@x <- @"a" & @y <- @"b") { @"out"!(x + y) })",
     {"3"},
     881},
    {"JoinWaitsForAll",
     R"(@"a"!(1) | for (@x <- @"a" & @y <- @"b") { @"out"!(x + y) })",
     {},
     477},
    {"ThreeWayJoin",
     R"(@"a"!(1) | @"b"!(2) | @"c"!(3) |
        for (@x <- @"a" & @y <- @"b" & @z <- @"c") { @"out"!(x + y + z) })",
     {"6"},
     1185},
    {"SequentialChain",
     R"(@"a"!(1) | for (@x <- @"a") { @"b"!(x + 1) } |
        for (@y <- @"b") { @"c"!(y + 1) } | for (@z <- @"c") { @"out"!(z) })",
     {"3"},
     1507},
    {"PersistentSendFeedsTwoReceives",
     R"(@"in"!!(7) | for (@x <- @"in") { @"out"!(x) } |
        for (@y <- @"in") { @"out"!(y + 1) })",
     {"7", "8"},
     1063},
    {"PersistentSendStaysAfterComm",
     R"(@"in"!!(7) | for (@x <- @"in") { @"out"!(x) })",
     {"7"},
     590},
    {"ContractCalledTwice",
     R"(contract @"double"(@x, ret) = { ret!(x * 2) } |
        @"double"!(2, *@"out") | @"double"!(5, *@"out"))",
     {"4", "10"},
     1105},
    {"PersistentReceiveSyntax",
     R"(for (@x <= @"in") { @"out"!(x) } | @"in"!(1) | @"in"!(2) | @"in"!(3))",
     {"1", "2", "3"},
     1325},
    {"RecursiveContractCountsDown",
     R"(contract @"loop"(@n) = {
          if (n > 0) { @"out"!(n) | @"loop"!(n - 1) } else { Nil }
        } | @"loop"!(3))",
     {"3", "2", "1"},
     1783},
    {"PeekLeavesDatum",
     R"(@"in"!(4) | for (@x <<- @"in") { @"out"!(x) })",
     {"4"},
     590},
    {"NewNameUsedAsChannel",
     R"(new x in { x!(9) | for (@v <- x) { @"out"!(v) } })",
     {"9"},
     668},
    {"NewSeveralNames",
     R"(new a, b in { a!(1) | b!(2) |
        for (@x <- a & @y <- b) { @"out"!(x * 10 + y) } })",
     {"12"},
     1072},
    {"PrivateNamesAreDistinct",
     R"(new a, b in { @"out"!(*a == *b) })",
     {"false"},
     200},
    {"SendingAName",
     R"(new x in { @"chan"!(*x) | for (y <- @"chan") { y!(3) | for (@v <- x) { @"out"!(v) } } })",
     {"3"},
     1239},
    {"MatchFirstCaseWins",
     R"(match 5 { 5 => @"out"!("five") _ => @"out"!("other") })",
     {"\"five\""},
     216},
    {"MatchFallsThrough",
     R"(match 6 { 5 => @"out"!("five") _ => @"out"!("other") })",
     {"\"other\""},
     217},
    {"MatchCaptures",
     R"(match [1, 2] { [a, b] => @"out"!(a + b) })",
     {"3"},
     206},
    {"MatchNoCaseDoesNothing", R"(match 1 { 2 => @"out"!(2) })", {}, 39},
    {"MatchOnTypeConnective",
     R"(match "s" { Int => @"out"!("int") String => @"out"!("string") })",
     {"\"string\""},
     227},
    {"MatchBoundVariable",
     R"(@"in"!(3) | for (@x <- @"in") { match x { 3 => @"out"!("three") } })",
     {"\"three\""},
     667},
    {"MatchVarRef",
     R"(@"in"!(3) | for (@x <- @"in") {
          match [3] { [=x] => @"out"!("same") _ => @"out"!("diff") } })",
     {"\"same\""},
     780},
    {"IfTrue",
     R"(if (1 < 2) { @"out"!("yes") } else { @"out"!("no") })",
     {"\"yes\""},
     216},
    {"IfFalse",
     R"(if (1 > 2) { @"out"!("yes") } else { @"out"!("no") })",
     {"\"no\""},
     215},
    {"IfWithoutElse", R"(if (false) { @"out"!("yes") })", {}, 41},
    {"IfShortCircuitGuardsADivision",
     R"(@"in"!(0) | for (@n <- @"in") {
          if (n != 0 && 10 / n > 1 || n == 0) { @"out"!("guarded") } })",
     {"\"guarded\""},
     855},
    {"IfOnBoundVariable",
     R"(@"in"!(true) | for (@b <- @"in") { if (b) { @"out"!(1) } })",
     {"1"},
     644},
    {"BundleProcessRuns", R"(bundle+ { @"out"!(1) })", {"1"}, 168},
    {"SendOnWriteBundle",
     R"(new x in { @"cap"!(bundle+{*x}) | for (c <- @"cap") { c!(5) } |
        for (@v <- x) { @"out"!(v) } })",
     {"5"},
     1163},
    {"ReceiveOnReadBundle",
     R"(new x in { x!(5) | @"cap"!(bundle-{*x}) |
        for (c <- @"cap") { for (@v <- c) { @"out"!(v) } } })",
     {"5"},
     1205},
    {"ReceiveOnReadWriteBundle",
     R"(new x in { x!(6) | @"cap"!(bundle{*x}) |
        for (c <- @"cap") { for (@v <- c) { @"out"!(v) } } })",
     {"6"},
     1204},
    {"VariableRunsAsProcess",
     R"(@"in"!(@"out"!(11)) | for (@p <- @"in") { p })",
     {"11"},
     600},
    {"DerefRunsProcess",
     R"(@"in"!(@"out"!(12)) | for (x <- @"in") { *x })",
     {"12"},
     600},
    {"MethodResultNotRun", R"([1, 2].length() | @"out"!(1))", {"1"}, 187},
    {"TopLevelValueIgnored", R"(42 | "s" | @"out"!(1))", {"1"}, 167},
    {"NilProgram", R"(Nil | @"out"!(0))", {"0"}, 162},
    {"ListMethods",
     R"(@"out"!([1, 2, 3].nth(1), [1, 2].length()))",
     {"2;2"},
     227},
    {"MapMethods",
     R"(@"out"!({"a": 1}.get("a"), {"a": 1}.contains("b")))",
     {"1;false"},
     235},
    {"StringInterpolation",
     R"(@"out"!("hi ${n}" %% {"n": "you"}))",
     {"\"hi you\""},
     211},
    {"ComparisonOps",
     R"(@"out"!(1 <= 1, 2 >= 3, "a" != "b"))",
     {"true;false;true"},
     216},
    {"BooleanOps",
     R"(@"out"!(true and false, true or false, not true))",
     {"false;true;false"},
     226},
    {"MatchesOperator",
     R"(@"out"!(5 matches Int, "x" matches Int))",
     {"true;false"},
     218},
    {"NestedNew",
     R"(new a in { new b in { a!(1) | b!(2) |
          for (@x <- a) { for (@y <- b) { @"out"!(x + y) } } } })",
     {"3"},
     1319},
    {"DeepNesting",
     R"(new a in { a!(1) | for (@x <- a) { new b in { b!(x + 1) |
          for (@y <- b) { new c in { c!(y + 1) | for (@z <- c) {
          @"out"!(z) } } } } } })",
     {"3"},
     2026},
    {"WideParallel",
     R"(@"out"!(1) | @"out"!(2) | @"out"!(3) | @"out"!(4) | @"out"!(5) |
        @"out"!(6) | @"out"!(7) | @"out"!(8) | @"out"!(9) | @"out"!(10))",
     {"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"},
     1596},
    {"ReceiveWithoutSendWaits", R"(for (@x <- @"in") { @"out"!(x) })", {}, 221},
    {"ConsumeBeforeProduce",
     R"(for (@x <- @"in") { @"out"!(x) } | @"in"!(1))",
     {"1"},
     589},
    {"NameEquality", R"(new x in { @"out"!(*x == *x) })", {"true"}, 195},
    {"SendQuotedProcess", R"(@"out"!(@"a"!(1)))", {"@\"a\"!(1)"}, 186},
    {"ReturnChannelPattern",
     R"(contract @"id"(@x, ret) = { ret!(x) } |
        new r in { @"id"!(42, *r) | for (@v <- r) { @"out"!(v) } })",
     {"42"},
     1182},
    {"JoinSameChannelTwice",
     R"(@"a"!(1) | @"a"!(2) | @"b"!(0) |
        for (@x <- @"a" & @y <- @"b") { @"out"!(y) })",
     {"0"},
     1012},
    {"ContractSeesCaller",
     R"(new ack in { contract @"svc"(ret) = { ret!("pong") } |
        @"svc"!(*ack) | for (@m <- ack) { @"out"!(m) } })",
     {"\"pong\""},
     1172},
    {"ListConcat", R"(@"out"!([1] ++ [2]))", {"[1, 2]"}, 200},
    {"NegativeInts", R"(@"out"!(-5 + 2))", {"-3"}, 164},
    {"ByteArrays", R"(@"out"!("0a0b".hexToBytes().length()))", {"2"}, 210},
    {"MatchInsideReceive",
     R"(@"in"!((1, "x")) | for (@(n, s) <- @"in") { match s { "x" => @"out"!(n) } })",
     {"1"},
     714},
    {"ReceiveMapPattern",
     R"(@"in"!({"k": 1}) | for (@{"k": v} <- @"in") { @"out"!(v) })",
     {"1"},
     651},
    {"EveryWaitingPeekSeesOneSend",
     R"(for (@x <<- @"in") { @"out"!(x) } |
        for (@x <<- @"in") { @"out"!(x + 1) } |
        for (@x <<- @"in") { @"out"!(x + 2) } |
        for (_ <- @"go") { @"in"!(4) } | @"go"!(Nil))",
     {"4", "5", "6"},
     1974},
    {"PeekThenConsume",
     R"(@"in"!(4) | for (@x <<- @"in") { @"out"!(x) |
          for (@y <- @"in") { @"out"!(y + 1) } })",
     {"4", "5"},
     1154},
};

INSTANTIATE_TEST_SUITE_P(Reducer, ProgramTest, ::testing::ValuesIn(kPrograms),
                         [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// Runtime errors: the deploy fails and the space is unchanged.

struct ErrorCase {
  const char* name;
  const char* source;
  absl::StatusCode code;
  const char* message_part;
  int64_t cost = -1;  // exact phlo spent up to the failure
};

class ErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ErrorTest, FailsAndRollsBack) {
  const ErrorCase& c = GetParam();
  Harness h;
  Hash32 before = h.Root();
  EvalResult r = h.Run(c.source);
  ASSERT_FALSE(r.error.ok());
  EXPECT_EQ(r.error.code(), c.code) << r.error;
  EXPECT_NE(std::string(r.error.message()).find(c.message_part),
            std::string::npos)
      << r.error;
  EXPECT_EQ(r.cost, c.cost);
  EXPECT_TRUE(h.Data("out").empty());
  EXPECT_EQ(h.Root(), before);
}

const ErrorCase kErrors[] = {
    {"SendOnReadOnlyBundle",
     R"(@"out"!(1) | new x in { @"cap"!(bundle-{*x}) | for (c <- @"cap") { c!(5) } })",
     absl::StatusCode::kInvalidArgument, "non-writeable", 688},
    {"SendOnNoAccessBundle",
     R"(@"out"!(1) | new x in { @"cap"!(bundle0{*x}) | for (c <- @"cap") { c!(5) } })",
     absl::StatusCode::kInvalidArgument, "non-writeable", 688},
    {"ReceiveOnWriteOnlyBundle",
     R"(@"out"!(1) | new x in { @"cap"!(bundle+{*x}) |
        for (c <- @"cap") { for (_ <- c) { Nil } } })",
     absl::StatusCode::kInvalidArgument, "non-readable", 724},
    {"DivisionByZero", R"(@"out"!(1) | @"x"!(1 / 0))",
     absl::StatusCode::kInvalidArgument, "", 191},
    {"Overflow", R"(@"out"!(1) | @"x"!(9223372036854775807 + 1))",
     absl::StatusCode::kInvalidArgument, "", 203},
    {"IfConditionNotBool", R"(@"out"!(1) | if (1) { Nil })",
     absl::StatusCode::kInvalidArgument, "", 185},
    {"UnknownUri", R"(@"out"!(1) | new x(`rho:no:such`) in { Nil })",
     absl::StatusCode::kInvalidArgument, "unknown URI", 202},
    {"VersionedRegistryUriIsRefused",
     R"(@"out"!(1) | new r(`rho:registry:1.0.0`) in { r!("x") })",
     absl::StatusCode::kInvalidArgument,
     "`rho:registry:1.0.0` in new is not served by this node: the versioned "
     "registry is not installed",
     213},
    {"ExternalServiceUriIsRefused",
     R"(@"out"!(1) | new ai(`rho:ai:gpt4`) in { ai!("hi", *ai) })",
     absl::StatusCode::kInvalidArgument,
     "`rho:ai:gpt4` in new is not served by this node: an external", 214},
    {"TypeErrorInSend", R"(@"out"!(1) | @"x"!(1 + "a"))",
     absl::StatusCode::kInvalidArgument, "", 184},
    {"ErrorAfterComm",
     R"(@"out"!(1) | @"in"!(0) | for (@x <- @"in") { @"y"!(1 / x) })",
     absl::StatusCode::kInvalidArgument, "", 645},
    {"ErrorInContractBody",
     R"(@"out"!(1) | contract @"f"(@x) = { @"y"!(x + "s") } | @"f"!(1))",
     absl::StatusCode::kInvalidArgument, "", 638},
    {"UnknownMethod", R"(@"out"!(1) | @"x"!(1.noSuchMethod()))",
     absl::StatusCode::kInvalidArgument, "", 193},
    {"ErrorInMatchBody", R"(@"out"!(1) | match 1 { 1 => @"x"!(1 % 0) })",
     absl::StatusCode::kInvalidArgument, "", 220},
};

INSTANTIATE_TEST_SUITE_P(Reducer, ErrorTest, ::testing::ValuesIn(kErrors),
                         [](const auto& info) { return info.param.name; });

TEST(RuntimeTest, StaticErrorCostsParsingOnly) {
  Harness h;
  std::string src = "for (x <- @0) { y }";
  EvalResult r = h.Run(src);
  ASSERT_EQ(r.error.code(), absl::StatusCode::kInvalidArgument) << r.error;
  EXPECT_EQ(r.cost, cost::kParsePerByte * static_cast<int64_t>(src.size()));
}

TEST(RuntimeTest, SyntaxErrorCostsParsingOnly) {
  Harness h;
  std::string src = "@0!(";
  EvalResult r = h.Run(src);
  ASSERT_EQ(r.error.code(), absl::StatusCode::kInvalidArgument) << r.error;
  EXPECT_EQ(r.cost, cost::kParsePerByte * static_cast<int64_t>(src.size()));
}

TEST(RuntimeTest, ParseCostAboveLimitIsOutOfPhlo) {
  Harness h;
  EvalResult r = h.Run("@0!(1)", 3);
  EXPECT_TRUE(IsOutOfPhlo(r.error)) << r.error;
  EXPECT_EQ(r.cost, 3);
}

TEST(RuntimeTest, MinParallelTasksDecidesWhichRoundsUseTheWorkers) {
  rspace::InMemoryStore store(kStoreColumns);
  auto space = *rspace::Space::Open(&store);
  RuntimeOptions o;
  o.threads = 2;
  o.min_parallel_tasks = 0;
  EXPECT_EQ(Runtime::Create(space.get(), o).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Round 1 has one task, round 2 the two sends: only a minimum of 1 sends
  // both rounds to the workers; the default (8) sends neither.
  const char* src = R"(@"out"!(1) | @"out"!(2))";
  Harness eager(2);
  EvalResult r = eager.Run(src);
  ASSERT_TRUE(r.error.ok());
  EXPECT_EQ(r.parallel_rounds, r.rounds);
  rspace::InMemoryStore store8(kStoreColumns);
  rspace::SpaceOptions so;
  so.term_factory = StoredTermFactory();
  auto space8 = *rspace::Space::Open(&store8, so);
  o.min_parallel_tasks = kMinParallelTasks;
  auto rt = Runtime::Create(space8.get(), o);
  ASSERT_TRUE(rt.ok()) << rt.status();
  rspace::EventLog log;
  EvalResult r8 = (*rt)->EvaluateSource(src, TestDeploy(), kBigLimit, &log);
  ASSERT_TRUE(r8.error.ok());
  EXPECT_EQ(r8.parallel_rounds, 0u);
  EXPECT_EQ(r8.cost, r.cost);
}

TEST(RuntimeTest, ThreadsBelowOneRejected) {
  rspace::InMemoryStore store(kStoreColumns);
  auto space = *rspace::Space::Open(&store);
  RuntimeOptions o;
  o.threads = 0;
  EXPECT_EQ(Runtime::Create(space.get(), o).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Costs are consensus-relevant: pinned to the values this code computes, so a
// change to any charge shows up here.
TEST(RuntimeTest, CostIsPinned) {
  Harness h;
  EvalResult r = h.Run(R"(@"out"!(1 + 2))");
  ASSERT_TRUE(r.error.ok());
  EXPECT_EQ(r.cost, 163);
}

TEST(RuntimeTest, LongerProgramCostsMore) {
  Harness a, b;
  EvalResult ra = a.Run(R"(@"out"!(1))");
  EvalResult rb = b.Run(R"(@"out"!(1) | @"out"!(2))");
  EXPECT_EQ(ra.cost, 156);
  EXPECT_EQ(rb.cost, 315);
}

TEST(RuntimeTest, CommChargesEventCost) {
  Harness a, b;
  EvalResult stored = a.Run(R"(@"in"!(1) | for (@x <- @"ix") { Nil })");
  EvalResult comm = b.Run(R"(@"in"!(1) | for (@x <- @"in") { Nil })");
  ASSERT_TRUE(stored.error.ok());
  ASSERT_TRUE(comm.error.ok());
  // Same sizes (channel names of equal length), plus one COMM event.
  EXPECT_EQ(comm.cost - stored.cost, cost::kEventBase + cost::kEventPerChannel);
}

// `[l, l]` nested 40 times: 2^40 leaves in ~40 shared nodes. `tail` is
// what the contract does with the final value.
std::string SharedDoublingProgram(const std::string& tail) {
  return absl::StrCat(
      R"(@"out"!(1) | new c, stdout(`rho:io:stdout`) in {
           contract c(@l, @n) = { if (n > 0) { c!([l, l], n - 1) } else { )",
      tail, R"( } } | c!([1], 40) })");
}

// Without a phlo limit the deploy stops at kMaxTermNodes instead of
// encoding, storing or printing the expansion, and leaves the space as it
// was. (With a limit, the storage charge of the growing data runs out of
// phlo first.)
TEST(TermSizeLimitTest, ExponentialSharedValueFailsWithTheNodeLimit) {
  const std::string tails[] = {
      R"(@"out"!(l))",
      R"(stdout!(l))",
      R"(@"x"!(l.toByteArray()))",
      R"(@"x"!([l, l] ++ [l, l]))",
  };
  // Each tail walks 2^25 term nodes up to the limit (about 10 s here):
  // under a sanitizer only the first, a send.
  const size_t tail_count = ::rnode::testing::kUnderSanitizer ? 1 : 4;
  for (size_t t = 0; t < tail_count; ++t) {
    const std::string& tail = tails[t];
    Harness h;
    Hash32 before = h.Root();
    EvalResult r = h.Run(SharedDoublingProgram(tail), -1);
    ASSERT_FALSE(r.error.ok()) << tail;
    EXPECT_EQ(r.error.code(), absl::StatusCode::kResourceExhausted) << tail;
    EXPECT_NE(std::string(r.error.message())
                  .find(absl::StrCat("exceeds the limit of ", kMaxTermNodes)),
              std::string::npos)
        << tail << ": " << r.error;
    EXPECT_TRUE(h.Data("out").empty()) << tail;
    EXPECT_TRUE(h.lines.out.empty()) << tail;
    EXPECT_EQ(h.Root(), before) << tail;
  }
  {
    Harness limited;
    const std::string tail = tails[0];
    Hash32 limited_before = limited.Root();
    EvalResult lr = limited.Run(SharedDoublingProgram(tail));
    ASSERT_FALSE(lr.error.ok()) << tail;
    EXPECT_EQ(lr.error.code(), absl::StatusCode::kResourceExhausted) << tail;
    EXPECT_EQ(limited.Root(), limited_before) << tail;
  }
}

TEST(RuntimeTest, SuccessfulDeployKeepsChanges) {
  Harness h;
  ASSERT_TRUE(h.Run(R"(@"out"!(1))").error.ok());
  ASSERT_TRUE(h.Run(R"(@"out"!(2))").error.ok());
  EXPECT_EQ(h.Data("out"), Expect({"1", "2"}));
}

TEST(RuntimeTest, FailedDeployKeepsEarlierDeploys) {
  Harness h;
  ASSERT_TRUE(h.Run(R"(@"out"!(1))").error.ok());
  EXPECT_EQ(h.Run(R"(@"out"!(2) | @"x"!(1 / 0))").error.code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(h.Data("out"), Expect({"1"}));
}

TEST(RuntimeTest, DeploysCommunicateAcrossDeploys) {
  Harness h;
  ASSERT_TRUE(h.Run(R"(contract @"f"(@x) = { @"out"!(x + 1) })").error.ok());
  ASSERT_TRUE(h.Run(R"(@"f"!(1))").error.ok());
  ASSERT_TRUE(h.Run(R"(@"f"!(2))").error.ok());
  EXPECT_EQ(h.Data("out"), Expect({"2", "3"}));
}

TEST(RuntimeTest, StateSurvivesCheckpointAndReload) {
  Harness h;
  ASSERT_TRUE(h.Run(R"(contract @"f"(@x) = { @"out"!(x * 3) } | @"in"!(1))")
                  .error.ok());
  Hash32 root = h.Root();
  ASSERT_TRUE(h.space->Reset(root).ok());
  ASSERT_TRUE(
      h.Run(R"(@"f"!(2) | for (@v <- @"in") { @"out"!(v) })").error.ok());
  EXPECT_EQ(h.Data("out"), Expect({"6", "1"}));
}

TEST(RuntimeTest, ReloadedSpaceFromStoreRunsContracts) {
  rspace::InMemoryStore store(kStoreColumns);
  Hash32 root;
  {
    rspace::SpaceOptions so;
    so.term_factory = StoredTermFactory();
    auto space = *rspace::Space::Open(&store, so);
    auto rt = *Runtime::Create(space.get());
    rspace::EventLog log;
    ASSERT_TRUE(rt->EvaluateSource(R"(contract @"f"(@x) = { @"out"!(x) })",
                                   TestDeploy(), kBigLimit, &log)
                    .error.ok());
    root = *space->CreateCheckpoint();
  }
  rspace::SpaceOptions so;
  so.term_factory = StoredTermFactory();
  auto space = *rspace::Space::Open(&store, so);
  ASSERT_EQ(space->root(), root);
  auto rt = *Runtime::Create(space.get());
  rspace::EventLog log;
  ASSERT_TRUE(rt->EvaluateSource(R"(@"f"!(5))", TestDeploy(), kBigLimit, &log)
                  .error.ok());
  auto chan = *MakeChannelTerm(ir::ParOf(ir::Expr::String("out")));
  EXPECT_EQ(space->GetData(chan->hash())->size(), 1u);
}

TEST(RuntimeTest, TrackedChannelsListUsedChannels) {
  Harness h(1, /*track=*/true);
  ASSERT_TRUE(h.Run(R"(@"a"!(1) | for (_ <- @"b") { Nil })").error.ok());
  std::set<std::string> names;
  for (const auto& [hash, par] : h.rt->TrackedChannels()) {
    names.insert(*Print(*par));
  }
  EXPECT_EQ(names, (std::set<std::string>{Canon(R"("a")"), Canon(R"("b")")}));
}

TEST(RuntimeTest, RoundsAreCounted) {
  Harness h;
  EvalResult r = h.Run(R"(@"a"!(1) | for (@x <- @"a") { @"out"!(x) })");
  ASSERT_TRUE(r.error.ok());
  EXPECT_EQ(r.rounds, 3u);
}

// ---------------------------------------------------------------------------
// Out of phlo: the whole limit is charged and nothing changes.

class OutOfPhloTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(OutOfPhloTest, ChargesWholeLimitAndRollsBack) {
  const char* src =
      R"(contract @"loop"(@n) = { @"out"!(n) | @"loop"!(n + 1) } | @"loop"!(0))";
  Harness h;
  Hash32 before = h.Root();
  EvalResult r = h.Run(src, GetParam());
  ASSERT_TRUE(IsOutOfPhlo(r.error)) << r.error;
  EXPECT_EQ(r.cost, GetParam());
  EXPECT_TRUE(h.Data("out").empty());
  EXPECT_EQ(h.Waiting("loop"), 0u);
  EXPECT_EQ(h.Root(), before);
}

INSTANTIATE_TEST_SUITE_P(Limits, OutOfPhloTest,
                         ::testing::Values(60, 100, 150, 300, 500, 1000, 2000,
                                           5000, 20000, 100000));

TEST(OutOfPhloTest, ExactLimitSucceeds) {
  Harness a;
  const char* src = R"(@"out"!(1) | for (@x <- @"in") { Nil })";
  EvalResult r = a.Run(src);
  ASSERT_TRUE(r.error.ok());
  Harness b;
  EvalResult exact = b.Run(src, r.cost);
  EXPECT_TRUE(exact.error.ok()) << exact.error;
  EXPECT_EQ(exact.cost, r.cost);
  Harness c;
  EvalResult less = c.Run(src, r.cost - 1);
  EXPECT_TRUE(IsOutOfPhlo(less.error));
  EXPECT_EQ(less.cost, r.cost - 1);
}

TEST(OutOfPhloTest, OutOfPhloWinsOverOtherErrors) {
  Harness h;
  // The division by zero happens in a round where the wide sends exhaust
  // the limit: out of phlo is reported.
  std::string src = R"(@"x"!(1 / 0))";
  for (int i = 0; i < 40; ++i) src += " | @\"w\"!(" + std::to_string(i) + ")";
  EvalResult r = h.Run(src, 600);
  EXPECT_TRUE(IsOutOfPhlo(r.error)) << r.error;
  EXPECT_EQ(r.cost, 600);
}

TEST(OutOfPhloTest, UnlimitedRunsToCompletion) {
  Harness h;
  EvalResult r = h.Run(R"(@"out"!(1))", -1);
  EXPECT_TRUE(r.error.ok());
  EXPECT_EQ(r.cost, 156);
}

// ---------------------------------------------------------------------------
// COMM in both orders: same result, same cost.

struct OrderCase {
  const char* name;
  const char* first;   // send first
  const char* second;  // receive first
  // A persistent item re-issued after a COMM gets a new event (repeat
  // count), so its stored source differs by order: roots differ then.
  bool same_root = true;
};

class OrderTest : public ::testing::TestWithParam<OrderCase> {};

TEST_P(OrderTest, BothOrdersGiveSameResultAndCost) {
  const OrderCase& c = GetParam();
  // Across two deploys, so the order of the operations is forced.
  auto run = [](const char* a, const char* b, int64_t* cost) {
    Harness h;
    EvalResult ra = h.Run(a);
    EvalResult rb = h.Run(b);
    EXPECT_TRUE(ra.error.ok()) << ra.error;
    EXPECT_TRUE(rb.error.ok()) << rb.error;
    *cost = ra.cost + rb.cost;
    return std::make_pair(h.Data("out"), h.Root());
  };
  int64_t cost1 = 0, cost2 = 0;
  auto r1 = run(c.first, c.second, &cost1);
  auto r2 = run(c.second, c.first, &cost2);
  EXPECT_EQ(r1.first, r2.first);
  EXPECT_FALSE(r1.first.empty());
  EXPECT_EQ(cost1, cost2);
  if (c.same_root) {
    EXPECT_EQ(r1.second, r2.second);
  }
}

const OrderCase kOrders[] = {
    {"Simple", R"(@"in"!(1))", R"(for (@x <- @"in") { @"out"!(x) })"},
    {"TwoValues", R"(@"in"!(1, 2))",
     R"(for (@x, @y <- @"in") { @"out"!(x + y) })"},
    {"Pattern", R"(@"in"!([1, 2]))",
     R"(for (@[a, b] <- @"in") { @"out"!(b) })"},
    {"JoinHalf", R"(@"a"!(1) | @"b"!(2))",
     R"(for (@x <- @"a" & @y <- @"b") { @"out"!(x + y) })"},
    {"Peek", R"(@"in"!(3))", R"(for (@x <<- @"in") { @"out"!(x) })"},
    {"StringData", R"(@"in"!("hello"))",
     R"(for (@s <- @"in") { @"out"!(s ++ "!") })"},
    {"QuotedProcess", R"(@"in"!(@"z"!(1)))",
     R"(for (@p <- @"in") { @"out"!(p) })"},
    {"Remainder", R"(@"in"!(1, 2, 3))",
     R"(for (@a ...@r <- @"in") { @"out"!(r) })"},
    {"PersistentContract", R"(@"f"!(4))",
     R"(contract @"f"(@x) = { @"out"!(x) })", false},
    {"PersistentSend", R"(@"in"!!(4))", R"(for (@x <- @"in") { @"out"!(x) })",
     false},
};

INSTANTIATE_TEST_SUITE_P(Reducer, OrderTest, ::testing::ValuesIn(kOrders),
                         [](const auto& info) { return info.param.name; });

TEST(OrderTest, SameDeployOrderOfComponentsDoesNotMatter) {
  Harness a, b;
  EvalResult ra = a.Run(R"(@"in"!(1) | for (@x <- @"in") { @"out"!(x) })");
  EvalResult rb = b.Run(R"(for (@x <- @"in") { @"out"!(x) } | @"in"!(1))");
  EXPECT_EQ(ra.cost, rb.cost);
  EXPECT_EQ(a.Root(), b.Root());
}

// ---------------------------------------------------------------------------
// Determinism: thread counts, replay, names.

const char* kWidePrograms[] = {
    R"(new loop in { contract loop(@n) = { if (n > 0) {
         @"out"!(n) | loop!(n - 1) } } | loop!(50) })",
    R"(contract @"f"(@x, r) = { r!(x * x) } |
       new r in { @"f"!(1, *r) | @"f"!(2, *r) | @"f"!(3, *r) | @"f"!(4, *r) |
       @"f"!(5, *r) | @"f"!(6, *r) | @"f"!(7, *r) | @"f"!(8, *r) |
       @"f"!(9, *r) | @"f"!(10, *r) | for (@v <= r) { @"out"!(v) } })",
    R"(new a, b, c in { a!(1) | b!(2) | c!(3) | a!(4) | b!(5) | c!(6) |
       for (@x <- a & @y <- b) { @"out"!(x + y) } |
       for (@x <- b & @y <- c) { @"out"!(x * y) } |
       for (@x <- c & @y <- a) { @"out"!(x - y) } |
       for (@x <= a) { @"out"!(x) } })",
    R"(new n in { n!(0) | n!(1) | n!(2) | n!(3) | n!(4) | n!(5) | n!(6) |
       n!(7) | n!(8) | n!(9) | n!(10) | n!(11) | n!(12) | n!(13) |
       for (@x <= n) { new m in { m!(x) | for (@y <- m) { @"out"!(y) } } } })",
    R"(new c in { for (@x <= c) { match x { 0 => Nil
         _ => { @"out"!(x) | c!(x - 1) } } } | c!(20) | c!(15) | c!(10) })",
};

class ThreadTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(ThreadTest, ThreadCountDoesNotChangeOutputCostOrRoot) {
  const char* src = kWidePrograms[std::get<0>(GetParam())];
  const int threads = std::get<1>(GetParam());
  Harness one(1), many(threads);
  EvalResult r1 = one.Run(src);
  EvalResult rn = many.Run(src);
  ASSERT_TRUE(r1.error.ok()) << r1.error;
  ASSERT_TRUE(rn.error.ok()) << rn.error;
  EXPECT_EQ(r1.cost, rn.cost);
  EXPECT_EQ(r1.rounds, rn.rounds);
  EXPECT_EQ(one.Data("out"), many.Data("out"));
  EXPECT_FALSE(one.Data("out").empty());
  EXPECT_EQ(one.Root(), many.Root());
}

INSTANTIATE_TEST_SUITE_P(Reducer, ThreadTest,
                         ::testing::Combine(::testing::Range(0, 5),
                                            ::testing::Values(2, 4)));

TEST(ThreadTest, WideParOfThousandSendsIdenticalOnOneAndFourThreads) {
  std::string src = "new done in { ";
  for (int i = 0; i < 1000; ++i) {
    if (i > 0) src += " | ";
    src += "@\"out\"!(" + std::to_string(i) + " * 3)";
  }
  src += " }";
  Harness one(1), four(4);
  EvalResult r1 = one.Run(src);
  EvalResult r4 = four.Run(src);
  ASSERT_TRUE(r1.error.ok()) << r1.error;
  EXPECT_EQ(r1.cost, r4.cost);
  EXPECT_EQ(one.Data("out").size(), 1000u);
  EXPECT_EQ(one.Root(), four.Root());
}

TEST(ThreadTest, StdoutOrderIsIdenticalOnOneAndFourThreads) {
  std::string src = "new out(`rho:io:stdout`) in { ";
  for (int i = 0; i < 100; ++i) {
    if (i > 0) src += " | ";
    src += "out!(" + std::to_string(i) + ")";
  }
  src += " }";
  Harness one(1), four(4);
  ASSERT_TRUE(one.Run(src).error.ok());
  ASSERT_TRUE(four.Run(src).error.ok());
  EXPECT_EQ(one.lines.out.size(), 100u);
  EXPECT_EQ(one.lines.out, four.lines.out);
}

class ReplayTest : public ::testing::TestWithParam<int> {};

const char* kReplayPrograms[] = {
    R"(@"out"!(1))",
    R"(@"in"!(1) | for (@x <- @"in") { @"out"!(x) })",
    R"(contract @"f"(@x) = { @"out"!(x) } | @"f"!(1) | @"f"!(2) | @"f"!(3))",
    R"(@"in"!!(7) | for (@x <- @"in") { @"out"!(x) } | for (@y <<- @"in") { @"out"!(y) })",
    R"(new out(`rho:io:stdout`), ack(`rho:io:stdoutAck`), k in {
         out!("a") | ack!("b", *k) | for (_ <- k) { @"out"!("acked") } })",
};

TEST_P(ReplayTest, ReplayOfPlayedDeployMatches) {
  const char* src = kWidePrograms[GetParam() % 5];
  if (GetParam() >= 5) src = kReplayPrograms[GetParam() - 5];
  Harness play;
  Hash32 pre = play.Root();
  rspace::EventLog log;
  EvalResult pr = play.Run(src, kBigLimit, &log);
  ASSERT_TRUE(pr.error.ok()) << pr.error;
  Hash32 post = play.Root();
  std::vector<rspace::Event> events = log.Take();

  for (int threads : {1, 3}) {
    Harness replay(threads);
    ASSERT_EQ(replay.Root(), pre);
    auto rlog = rspace::EventLog::ForReplay(events);
    ASSERT_TRUE(rlog.ok()) << rlog.status();
    EvalResult rr = replay.Run(src, kBigLimit, rlog->get());
    ASSERT_TRUE(rr.error.ok()) << rr.error;
    EXPECT_EQ(rr.cost, pr.cost);
    EXPECT_EQ(replay.Root(), post);
    EXPECT_EQ(replay.lines.out, play.lines.out);
  }
}

INSTANTIATE_TEST_SUITE_P(Reducer, ReplayTest, ::testing::Range(0, 10));

TEST(ReplayTest, ReplayWithDifferentProgramFails) {
  Harness play;
  rspace::EventLog log;
  ASSERT_TRUE(play.Run(R"(@"in"!(1) | for (@x <- @"in") { @"out"!(x) })",
                       kBigLimit, &log)
                  .error.ok());
  std::vector<rspace::Event> events = log.Take();
  Harness replay;
  auto rlog = rspace::EventLog::ForReplay(events);
  ASSERT_TRUE(rlog.ok());
  EvalResult rr = replay.Run(R"(@"in"!(2) | for (@x <- @"in") { @"out"!(x) })",
                             kBigLimit, rlog->get());
  EXPECT_EQ(rr.error.code(), absl::StatusCode::kFailedPrecondition) << rr.error;
  EXPECT_TRUE(replay.Data("out").empty());
}

TEST(ReplayTest, ReplayMissingCommFails) {
  Harness play;
  rspace::EventLog log;
  ASSERT_TRUE(
      play.Run(R"(@"in"!(1) | for (@x <- @"in") { Nil })", kBigLimit, &log)
          .error.ok());
  std::vector<rspace::Event> events = log.Take();
  Harness replay;
  auto rlog = rspace::EventLog::ForReplay(events);
  ASSERT_TRUE(rlog.ok());
  EvalResult rr = replay.Run(R"(@"in"!(1))", kBigLimit, rlog->get());
  EXPECT_EQ(rr.error.code(), absl::StatusCode::kFailedPrecondition) << rr.error;
}

TEST(ReplayTest, FailedDeployReplaysWithSameCost) {
  const char* src = R"(@"in"!(0) | for (@x <- @"in") { @"y"!(1 / x) })";
  Harness play;
  rspace::EventLog log;
  EvalResult pr = play.Run(src, kBigLimit, &log);
  ASSERT_EQ(pr.error.code(), absl::StatusCode::kInvalidArgument) << pr.error;
  std::vector<rspace::Event> events = log.Take();
  Harness replay;
  auto rlog = rspace::EventLog::ForReplay(events);
  ASSERT_TRUE(rlog.ok());
  EvalResult rr = replay.Run(src, kBigLimit, rlog->get());
  EXPECT_EQ(rr.error.code(), pr.error.code());
  EXPECT_EQ(rr.cost, pr.cost);
}

TEST(NamesTest, SameSeedGivesSameNames) {
  const char* src = R"(new x in { @"out"!(*x) })";
  Harness a, b;
  ASSERT_TRUE(a.Run(src, kBigLimit, nullptr, 7).error.ok());
  ASSERT_TRUE(b.Run(src, kBigLimit, nullptr, 7).error.ok());
  EXPECT_EQ(a.Data("out"), b.Data("out"));
  EXPECT_EQ(a.Root(), b.Root());
}

TEST(NamesTest, DifferentSeedsGiveDifferentNames) {
  const char* src = R"(new x in { @"out"!(*x) })";
  Harness a, b;
  ASSERT_TRUE(a.Run(src, kBigLimit, nullptr, 7).error.ok());
  ASSERT_TRUE(b.Run(src, kBigLimit, nullptr, 8).error.ok());
  EXPECT_NE(a.Data("out"), b.Data("out"));
}

TEST(NamesTest, NamesInParallelBranchesDiffer) {
  Harness h;
  ASSERT_TRUE(h.Run(R"(new x in { @"out"!(*x) } | new y in { @"out"!(*y) })")
                  .error.ok());
  auto d = h.Data("out");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_NE(*d.begin(), *d.rbegin());
}

TEST(NamesTest, NamesAfterCommAreDeterministic) {
  const char* src =
      R"(@"in"!(1) | for (@x <- @"in") { new y in { @"out"!(*y) } })";
  Harness a, b(4);
  ASSERT_TRUE(a.Run(src).error.ok());
  EvalResult rb = b.Run(src);
  ASSERT_TRUE(rb.error.ok());
  EXPECT_EQ(rb.parallel_rounds, rb.rounds);
  EXPECT_EQ(a.Data("out"), b.Data("out"));
}

TEST(NamesTest, DeployIdInjection) {
  Harness h;
  ASSERT_TRUE(
      h.Run(R"(new d(`rho:system:deployId`) in { @"out"!(*d) })").error.ok());
  ir::ParPtr expected;
  {
    ir::ParBuilder b;
    b.Add(ir::Unforgeable::Make(ir::UnforgeableKind::kDeployId,
                                TestDeploy().deploy_id));
    expected = b.Build();
  }
  EXPECT_EQ(h.Data("out"), (std::multiset<std::string>{*Print(*expected)}));
}

TEST(NamesTest, DeployerIdInjection) {
  Harness h;
  ASSERT_TRUE(
      h.Run(R"(new d(`rho:system:deployerId`) in { @"out"!(*d) })").error.ok());
  ir::ParBuilder b;
  b.Add(ir::Unforgeable::Make(ir::UnforgeableKind::kDeployerId,
                              TestDeploy().deployer_public_key));
  EXPECT_EQ(h.Data("out"), (std::multiset<std::string>{*Print(*b.Build())}));
}

// ---------------------------------------------------------------------------
// System processes.

TEST(SystemProcessTest, StdoutPrintsThroughSink) {
  Harness h;
  ASSERT_TRUE(
      h.Run(R"(new out(`rho:io:stdout`) in { out!("hello") })").error.ok());
  EXPECT_EQ(h.lines.out, std::vector<std::string>{Canon(R"("hello")")});
}

TEST(SystemProcessTest, StderrPrintsThroughSink) {
  Harness h;
  ASSERT_TRUE(h.Run(R"(new err(`rho:io:stderr`) in { err!(42) })").error.ok());
  EXPECT_EQ(h.lines.err, std::vector<std::string>{"42"});
  EXPECT_TRUE(h.lines.out.empty());
}

TEST(SystemProcessTest, StdoutAckReplies) {
  Harness h;
  ASSERT_TRUE(h.Run(R"(new out(`rho:io:stdoutAck`), k in {
                         out!(1, *k) | for (_ <- k) { @"out"!("done") } })")
                  .error.ok());
  EXPECT_EQ(h.lines.out, std::vector<std::string>{"1"});
  EXPECT_EQ(h.Data("out"), Expect({R"("done")"}));
}

TEST(SystemProcessTest, SequencedPrintsKeepOrder) {
  Harness h;
  ASSERT_TRUE(h.Run(R"(new out(`rho:io:stdoutAck`), k in {
                         out!(1, *k) | for (_ <- k) { out!(2, *k) |
                         for (_ <- k) { out!(3, *k) } } })")
                  .error.ok());
  EXPECT_EQ(h.lines.out, (std::vector<std::string>{"1", "2", "3"}));
}

TEST(SystemProcessTest, WrongArityStaysInSpace) {
  Harness h;
  ASSERT_TRUE(
      h.Run(R"(new out(`rho:io:stdout`) in { out!(1, 2) })").error.ok());
  EXPECT_TRUE(h.lines.out.empty());
}

TEST(SystemProcessTest, SystemChannelIsWriteOnly) {
  Harness h;
  EvalResult r =
      h.Run(R"(new out(`rho:io:stdout`) in { for (_ <- out) { Nil } })");
  EXPECT_EQ(r.error.code(), absl::StatusCode::kInvalidArgument);
}

TEST(SystemProcessTest, HashProcessReplies) {
  Harness h;
  ASSERT_TRUE(h.Run(R"(new hash(`rho:crypto:blake2b256Hash`), k in {
                         hash!("00".hexToBytes(), *k) |
                         for (@v <- k) { @"out"!(v.length()) } })")
                  .error.ok());
  EXPECT_EQ(h.Data("out"), Expect({"32"}));
}

TEST(SystemProcessTest, AbortFailsTheDeploy) {
  Harness h;
  Hash32 before = h.Root();
  EvalResult r = h.Run(
      R"(@"out"!(1) | new abort(`rho:execution:abort`) in { abort!(Nil) })");
  EXPECT_TRUE(IsUserAbort(r.error)) << r.error;
  EXPECT_EQ(r.cost, 440);
  EXPECT_EQ(h.Root(), before);
}

TEST(SystemProcessTest, OutputOfFailedDeployIsStillPrinted) {
  Harness h;
  EvalResult r = h.Run(R"(new out(`rho:io:stdoutAck`), k in {
                            out!("before", *k) | for (_ <- k) { @"x"!(1 / 0) } })");
  EXPECT_EQ(r.error.code(), absl::StatusCode::kInvalidArgument) << r.error;
  EXPECT_EQ(h.lines.out, std::vector<std::string>{Canon(R"("before")")});
}

TEST(SystemProcessTest, DeployDataReplies) {
  Harness h;
  ASSERT_TRUE(h.Run(R"(new dd(`rho:deploy:data`), k in {
                         dd!(*k) | for (@ts, _, _ <- k) { @"out"!(ts) } })")
                  .error.ok());
  EXPECT_EQ(h.Data("out"), Expect({"1700000000000"}));
}

TEST(DepthTest, NestingBeyondInlineDepthSpawnsAndStaysDeterministic) {
  // 3 x kMaxInlineDepth nested matches, each adding one.
  const int depth = 3 * kMaxInlineDepth;
  std::string src;
  for (int i = 0; i < depth; ++i) {
    src += "match " + std::string(i == 0 ? "0" : "v" + std::to_string(i - 1)) +
           " + 1 { v" + std::to_string(i) + " => ";
  }
  src += "@\"out\"!(v" + std::to_string(depth - 1) + ")";
  for (int i = 0; i < depth; ++i) src += " }";
  Harness one(1), four(4);
  EvalResult r1 = one.Run(src);
  EvalResult r4 = four.Run(src);
  ASSERT_TRUE(r1.error.ok()) << r1.error;
  EXPECT_EQ(one.Data("out"), Expect({std::to_string(depth)}));
  EXPECT_EQ(r1.cost, r4.cost);
  EXPECT_GT(r1.rounds, 2u);
  EXPECT_EQ(r4.parallel_rounds, r4.rounds);
  EXPECT_EQ(one.Root(), four.Root());
}

TEST(DepthTest, DeeplyNestedNewsStayDeterministic) {
  const int depth = 2 * kMaxInlineDepth;
  std::string src;
  for (int i = 0; i < depth; ++i) src += "new x" + std::to_string(i) + " in { ";
  src += "@\"out\"!(*x0, *x" + std::to_string(depth - 1) + ")";
  for (int i = 0; i < depth; ++i) src += " }";
  Harness a(1), b(3);
  ASSERT_TRUE(a.Run(src).error.ok());
  EvalResult rb = b.Run(src);
  ASSERT_TRUE(rb.error.ok());
  EXPECT_EQ(rb.parallel_rounds, rb.rounds);
  EXPECT_EQ(a.Data("out"), b.Data("out"));
  EXPECT_EQ(a.Data("out").size(), 1u);
}

TEST(EventLogTest, EventsAreIdenticalOnOneAndFourThreads) {
  const char* src = kWidePrograms[1];
  Harness one(1), four(4);
  rspace::EventLog l1, l4;
  ASSERT_TRUE(one.Run(src, kBigLimit, &l1).error.ok());
  ASSERT_TRUE(four.Run(src, kBigLimit, &l4).error.ok());
  std::vector<rspace::Event> e1 = l1.Take(), e4 = l4.Take();
  ASSERT_EQ(e1.size(), e4.size());
  EXPECT_TRUE(e1 == e4);
}

TEST(EventLogTest, CommIsRecorded) {
  Harness h;
  rspace::EventLog log;
  ASSERT_TRUE(h.Run(R"(@"in"!(1) | for (@x <- @"in") { Nil })", kBigLimit, &log)
                  .error.ok());
  int comms = 0, produces = 0, consumes = 0;
  for (const rspace::Event& e : log.Take()) {
    comms += std::holds_alternative<rspace::CommEvent>(e);
    produces += std::holds_alternative<rspace::ProduceEvent>(e);
    consumes += std::holds_alternative<rspace::ConsumeEvent>(e);
  }
  EXPECT_EQ(comms, 1);
  EXPECT_EQ(produces, 1);
  EXPECT_EQ(consumes, 1);
}

TEST(EventLogTest, PersistentReissueRecordsSecondConsume) {
  Harness h;
  ASSERT_TRUE(h.Run(R"(@"f"!(1))").error.ok());
  rspace::EventLog log;
  ASSERT_TRUE(h.Run(R"(contract @"f"(@x) = { @"out"!(x) })", kBigLimit, &log)
                  .error.ok());
  int consumes = 0;
  for (const rspace::Event& e : log.Take()) {
    consumes += std::holds_alternative<rspace::ConsumeEvent>(e);
  }
  EXPECT_EQ(consumes, 2);
  EXPECT_EQ(h.Waiting("f"), 1u);
}

TEST(OutOfPhloTest, PersistentSendToStdoutLoopsUntilOutOfPhlo) {
  Harness h;
  EvalResult r = h.Run(R"(new out(`rho:io:stdout`) in { out!!(1) })", 5000);
  EXPECT_TRUE(IsOutOfPhlo(r.error)) << r.error;
  EXPECT_EQ(r.cost, 5000);
  EXPECT_EQ(h.lines.out.size(), 63u);
}

TEST(OutOfPhloTest, InfiniteContractLoopCostsWholeLimitOnAnyThreadCount) {
  const char* src =
      R"(contract @"spin"(@n) = { @"spin"!(n + 1) | @"spin"!(n + 2) } | @"spin"!(0))";
  Harness one(1), four(4);
  EvalResult r1 = one.Run(src, 50000);
  EvalResult r4 = four.Run(src, 50000);
  EXPECT_TRUE(IsOutOfPhlo(r1.error));
  EXPECT_TRUE(IsOutOfPhlo(r4.error));
  EXPECT_EQ(r1.cost, 50000);
  EXPECT_EQ(r4.cost, 50000);
  EXPECT_EQ(r1.rounds, r4.rounds);
}

TEST(SystemProcessTest, BlockDataRepliesWithTheBlockGiven) {
  Harness h;
  BlockInfo block;
  block.block_number = 42;
  block.timestamp = 7;
  block.sender_public_key = Bytes(65, 4);
  rspace::EventLog log;
  EvalResult r = h.rt->EvaluateSource(
      R"(new bd(`rho:block:data`), k in {
           bd!(*k) | for (@n, @t, _ <- k) { @"out"!(n, t) } })",
      TestDeploy(), kBigLimit, &log, &block);
  ASSERT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(h.Data("out"), Expect({"42;7"}));
}

TEST(SystemProcessTest, ReplyToReadOnlyBundleFails) {
  Harness h;
  EvalResult r = h.Run(R"(new hash(`rho:crypto:sha256Hash`), k in {
                            hash!("00".hexToBytes(), bundle-{*k}) })");
  EXPECT_EQ(r.error.code(), absl::StatusCode::kInvalidArgument) << r.error;
}

TEST(SystemProcessTest, ProcessesInstalledOncePerSpaceSurviveCheckpoint) {
  Harness h;
  Hash32 root = h.Root();
  ASSERT_TRUE(h.space->Reset(root).ok());
  ASSERT_TRUE(h.Run(R"(new out(`rho:io:stdout`) in { out!(5) })").error.ok());
  EXPECT_EQ(h.lines.out, std::vector<std::string>{"5"});
}

TEST(SystemProcessTest, CustomTableIsUsedForUrisAndDispatch) {
  std::vector<SystemProcessDef> table;
  SystemProcessDef def;
  def.uri = "rho:test:echo";
  def.channel_byte = 200;
  def.body_ref = 200;
  def.arity = 2;
  def.handler = [](std::span<const ir::ParPtr> args,
                   ProcessContext& ctx) -> absl::StatusOr<std::vector<Reply>> {
    std::vector<Reply> out;
    out.push_back(Reply{args[1], {args[0], args[0]}});
    return out;
  };
  table.push_back(def);
  rspace::InMemoryStore store(kStoreColumns);
  rspace::SpaceOptions so;
  so.term_factory = StoredTermFactory();
  auto space = *rspace::Space::Open(&store, so);
  RuntimeOptions ro;
  ro.processes = &table;
  auto rt = *Runtime::Create(space.get(), ro);
  rspace::EventLog log;
  EvalResult r = rt->EvaluateSource(
      R"(new e(`rho:test:echo`), k in { e!(3, *k) |
           for (@a, @b <- k) { @"out"!(a + b) } })",
      TestDeploy(), kBigLimit, &log);
  ASSERT_TRUE(r.error.ok()) << r.error;
  auto chan = *MakeChannelTerm(ir::ParOf(ir::Expr::String("out")));
  auto data = *space->GetData(chan->hash());
  ASSERT_EQ(data.size(), 1u);
  std::shared_ptr<const StoredValue> holder;
  EXPECT_EQ((*DataOf(*data[0].value, holder))->pars[0]->hash,
            ir::ParOf(ir::Expr::Int(6))->hash);
  // The standard URIs are not in this table.
  EXPECT_FALSE(rt->EvaluateSource(R"(new o(`rho:io:stdout`) in { Nil })",
                                  TestDeploy(), kBigLimit, &log)
                   .error.ok());
}

// ---------------------------------------------------------------------------
// Stored-term codec.

TEST(TermCodecTest, ChannelRoundTrips) {
  auto t = *MakeChannelTerm(ir::ParOf(ir::Expr::Int(5)));
  auto v = DecodeStoredValue(t->bytes());
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(std::get<ir::ParPtr>(**v)->hash, ir::ParOf(ir::Expr::Int(5))->hash);
  EXPECT_EQ(t->bytes()[0], static_cast<uint8_t>(TermKind::kChannel));
}

TEST(TermCodecTest, DataRoundTripsWithRng) {
  DataValue d;
  d.pars = {ir::ParOf(ir::Expr::Int(1)), ir::ParOf(ir::Expr::String("x"))};
  d.rng = StoredRng::Of(crypto::SplittableRng::FromSeed(AsBytes("seed")));
  d.rng.counter = 77;
  auto t = *MakeDataTerm(d);
  auto v = DecodeStoredValue(t->bytes());
  ASSERT_TRUE(v.ok());
  const auto& back = std::get<DataValue>(**v);
  ASSERT_EQ(back.pars.size(), 2u);
  EXPECT_EQ(back.pars[1]->hash, d.pars[1]->hash);
  EXPECT_EQ(back.rng.state, d.rng.state);
  EXPECT_EQ(back.rng.counter, 77u);
  EXPECT_EQ(back.rng.Restore(), d.rng.Restore());
}

// A term whose expansion has more than kMaxTermNodes nodes: `[l, l]` nested
// `levels` times over `[1]`.
ir::ParPtr SharedDoubling(int levels) {
  ir::ParPtr l =
      ir::ParOf(ir::Expr::List({ir::ParOf(ir::Expr::Int(1))}, std::nullopt));
  for (int i = 0; i < levels; ++i)
    l = ir::ParOf(ir::Expr::List({l, l}, std::nullopt));
  return l;
}

TEST(TermCodecTest, TermsOverTheNodeLimitAreNotEncoded) {
  ir::ParPtr big = SharedDoubling(40);
  ASSERT_GT(big->size, kMaxTermNodes);
  DataValue d;
  d.pars = {big};
  EXPECT_EQ(MakeDataTerm(d).status().code(),
            absl::StatusCode::kResourceExhausted);
  ContinuationValue k;
  k.body = ir::ParOf(ir::Expr::List({big}, std::nullopt));
  EXPECT_EQ(MakeContinuationTerm(k).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(MakeChannelTerm(big).status().code(),
            absl::StatusCode::kResourceExhausted);
  // Just within the limit still encodes.
  ir::ParPtr fits = SharedDoubling(18);
  ASSERT_LE(fits->size, kMaxTermNodes);
  d.pars = {fits};
  EXPECT_TRUE(MakeDataTerm(d).ok());
}

TEST(LimitsTest, CheckTermSizeNamesTheLimit) {
  EXPECT_TRUE(CheckTermSize("x", *SharedDoubling(3)).ok());
  absl::Status s = CheckTermSize("what", *SharedDoubling(40));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(s.message()).find("what: term of "), std::string::npos)
      << s;
  EXPECT_NE(std::string(s.message())
                .find(absl::StrCat("exceeds the limit of ", kMaxTermNodes)),
            std::string::npos)
      << s;
}

TEST(TermCodecTest, PatternRoundTrips) {
  BindPattern p;
  p.patterns = {ir::VarPar(ir::Var{ir::VarKind::kFree, 0})};
  p.remainder = ir::Var{ir::VarKind::kFree, 1};
  p.free_count = 2;
  auto t = *MakePatternTerm(p);
  auto v = DecodeStoredValue(t->bytes());
  ASSERT_TRUE(v.ok());
  const auto& back = std::get<BindPattern>(**v);
  EXPECT_EQ(back.free_count, 2u);
  ASSERT_TRUE(back.remainder.has_value());
  EXPECT_EQ(back.remainder->index, 1u);
  EXPECT_EQ(back.patterns[0]->hash, p.patterns[0]->hash);
}

TEST(TermCodecTest, ContinuationsRoundTrip) {
  ContinuationValue sys;
  sys.system = true;
  sys.body_ref = 300;
  auto ts = *MakeContinuationTerm(sys);
  auto vs = DecodeStoredValue(ts->bytes());
  ASSERT_TRUE(vs.ok());
  EXPECT_TRUE(std::get<ContinuationValue>(**vs).system);
  EXPECT_EQ(std::get<ContinuationValue>(**vs).body_ref, 300u);

  ContinuationValue k;
  k.body = ir::ParOf(ir::Expr::Bool(true));
  auto tk = *MakeContinuationTerm(k);
  auto vk = DecodeStoredValue(tk->bytes());
  ASSERT_TRUE(vk.ok());
  EXPECT_FALSE(std::get<ContinuationValue>(**vk).system);
  EXPECT_EQ(std::get<ContinuationValue>(**vk).body->hash, k.body->hash);
}

TEST(TermCodecTest, FactoryAttachesDecodedValue) {
  auto t = *MakeChannelTerm(ir::ParOf(ir::Expr::Int(5)));
  auto made = StoredTermFactory()(t->bytes());
  ASSERT_TRUE(made.ok());
  EXPECT_EQ((*made)->hash(), t->hash());
  EXPECT_NE((*made)->decoded(), nullptr);
}

TEST(TermCodecTest, EqualValuesHaveEqualHashes) {
  DataValue a, b;
  a.pars = b.pars = {ir::ParOf(ir::Expr::Int(3))};
  EXPECT_EQ((*MakeDataTerm(a))->hash(), (*MakeDataTerm(b))->hash());
  b.rng.counter = 1;
  EXPECT_NE((*MakeDataTerm(a))->hash(), (*MakeDataTerm(b))->hash());
}

struct BadBytes {
  const char* name;
  Bytes bytes;
};

class TermCodecRejectTest : public ::testing::TestWithParam<BadBytes> {};

TEST_P(TermCodecRejectTest, RejectsMalformedBytes) {
  auto v = DecodeStoredValue(GetParam().bytes);
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
}

Bytes WithTrailing(Bytes b) {
  b.push_back(0);
  return b;
}
Bytes Truncated(Bytes b) {
  b.pop_back();
  return b;
}
Bytes DataBytes() {
  DataValue d;
  d.pars = {ir::ParOf(ir::Expr::Int(1))};
  return (*MakeDataTerm(d))->bytes();
}
Bytes PatternBytes() {
  BindPattern p;
  p.patterns = {ir::ParOf(ir::Expr::Int(1))};
  return (*MakePatternTerm(p))->bytes();
}
Bytes ContBytes() {
  ContinuationValue k;
  k.body = ir::ParOf(ir::Expr::Int(1));
  return (*MakeContinuationTerm(k))->bytes();
}

const BadBytes kBad[] = {
    {"Empty", {}},
    {"UnknownTag", {9}},
    {"ZeroTag", {0}},
    {"ChannelWithoutPar", {1}},
    {"ChannelBadPar", {1, 0xff, 0xff}},
    {"DataTruncated", Truncated(DataBytes())},
    {"DataTrailing", WithTrailing(DataBytes())},
    {"DataHugeCount", {2, 0xff, 0xff, 0xff, 0x0f}},
    {"PatternTruncated", Truncated(PatternBytes())},
    {"PatternTrailing", WithTrailing(PatternBytes())},
    {"PatternBadRemainder", {3, 0, 7, 0}},
    {"PatternRemainderOutOfRange", {3, 0, 1, 5, 0}},
    {"PatternNonMinimalVarint", {3, 0x80, 0x00, 0, 0}},
    {"ContinuationBadKind", {4, 9}},
    {"ContinuationTruncated", Truncated(ContBytes())},
    {"ContinuationTrailing", WithTrailing(ContBytes())},
    {"SystemContinuationTruncated", {4, 1}},
};

INSTANTIATE_TEST_SUITE_P(Codec, TermCodecRejectTest, ::testing::ValuesIn(kBad),
                         [](const auto& info) { return info.param.name; });

TEST(TermCodecTest, TypedAccessorRejectsOtherKind) {
  auto t = *MakeChannelTerm(ir::Nil());
  std::shared_ptr<const StoredValue> h;
  EXPECT_EQ(DataOf(*t, h).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PatternOf(*t, h).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ContinuationOf(*t, h).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ChannelOf(*t).ok());
}

TEST(TermCodecTest, AccessorDecodesBareTerm) {
  auto t = *MakeChannelTerm(ir::ParOf(ir::Expr::Int(9)));
  auto bare = rspace::Term::Make(t->bytes());
  auto p = ChannelOf(*bare);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)->hash, ir::ParOf(ir::Expr::Int(9))->hash);
}

// ---------------------------------------------------------------------------
// Matcher adapter.

struct MatchCase {
  const char* name;
  std::vector<std::string> data;      // sources
  std::vector<std::string> patterns;  // sources of `for (PATTERNS <- @0)`
  bool matches;
};

class StoredMatcherTest : public ::testing::TestWithParam<MatchCase> {};

TEST_P(StoredMatcherTest, MatchesDataAgainstBind) {
  const MatchCase& c = GetParam();
  std::string pats;
  for (size_t i = 0; i < c.patterns.size(); ++i) {
    if (i > 0) pats += ", ";
    pats += c.patterns[i];
  }
  auto recv = Compile("for (" + pats + " <- @0) { Nil }");
  ASSERT_TRUE(recv.ok()) << recv.status();
  const ir::ReceiveBind& rb = (*recv)->receives[0]->binds[0];
  BindPattern bp{rb.patterns, rb.remainder, rb.free_count};
  DataValue d;
  for (const auto& s : c.data) d.pars.push_back(*Compile(s));
  StoredMatcher m;
  auto r = m.Match(**MakePatternTerm(bp), *MakeDataTerm(d));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->has_value(), c.matches);
  if (r->has_value()) {
    auto caps = std::static_pointer_cast<const Captures>(**r);
    EXPECT_EQ(caps->size(), rb.free_count);
  }
}

const MatchCase kMatches[] = {
    {"SingleVar", {"1"}, {"@x"}, true},
    {"Literal", {"1"}, {"@1"}, true},
    {"LiteralMismatch", {"2"}, {"@1"}, false},
    {"TooFewData", {"1"}, {"@x", "@y"}, false},
    {"TooManyData", {"1", "2"}, {"@x"}, false},
    {"RemainderTakesTail", {"1", "2", "3"}, {"@x ...@r"}, true},
    {"RemainderEmptyTail", {"1"}, {"@x ...@r"}, true},
    {"WildcardRemainder", {"1", "2"}, {"@x ..._"}, true},
    {"ListPattern", {"[1, 2]"}, {"@[a, b]"}, true},
    {"ListPatternWrongSize", {"[1]"}, {"@[a, b]"}, false},
    {"TypeConnective", {"\"s\""}, {"@String"}, true},
    {"TypeConnectiveMismatch", {"1"}, {"@String"}, false},
};

INSTANTIATE_TEST_SUITE_P(Matcher, StoredMatcherTest,
                         ::testing::ValuesIn(kMatches),
                         [](const auto& info) { return info.param.name; });

TEST(StoredMatcherTest, RemainderCapturesTailAsList) {
  auto recv = *Compile("for (@x ...@r <- @0) { Nil }");
  const ir::ReceiveBind& rb = recv->receives[0]->binds[0];
  BindPattern bp{rb.patterns, rb.remainder, rb.free_count};
  DataValue d;
  d.pars = {*Compile("1"), *Compile("2"), *Compile("3")};
  StoredMatcher m;
  auto r = m.Match(**MakePatternTerm(bp), *MakeDataTerm(d));
  ASSERT_TRUE(r.ok() && r->has_value());
  auto caps = std::static_pointer_cast<const Captures>(**r);
  EXPECT_EQ((*caps)[rb.remainder->index]->hash, (*Compile("[2, 3]"))->hash);
}

TEST(StoredMatcherTest, MalformedTermsAreErrors) {
  StoredMatcher m;
  auto chan = *MakeChannelTerm(ir::Nil());
  EXPECT_EQ(m.Match(*chan, chan).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rnode::rholang::interp

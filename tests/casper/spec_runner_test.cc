// The spec runner (casper/spec): our framework's RhoSpec interface, case
// verdicts, and how a spec that fails, errs or never completes is reported.
#include "casper/spec/spec_runner.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace rnode::casper::spec {
namespace {

// A spec file in the public shape: look the framework up, run a suite.
// `names` are the contracts' names, bound by the file's `new`.
std::string SpecFile(const std::string& names, const std::string& suite_args,
                     const std::string& contracts) {
  return absl::StrCat("new lookup(`rho:registry:lookup`), specCh, ", names,
                      " in {\n"
                      "  lookup!(`",
                      std::string(kFrameworkUri),
                      "`, *specCh) |\n"
                      "  for (@(_, RhoSpec) <- specCh) {\n"
                      "    @RhoSpec!(\"testSuite\", ",
                      suite_args,
                      ")\n"
                      "  } |\n",
                      contracts, "\n}\n");
}

std::string Dump(const SpecReport& r) {
  return absl::StrCat("error: ", r.error, "\n", absl::StrJoin(r.output, "\n"));
}

TEST(SpecRunnerTest, EveryAssertionShapePasses) {
  std::string spec =
      SpecFile("equal, read, many",
               "[(\"equal values\", *equal), (\"read from a channel\", *read),"
               " (\"many at once\", *many)]",
               R"(
  contract equal(rhoSpec, _, ack) = {
    rhoSpec!("assert", (3, "==", 1 + 2), "1 + 2 is 3", *ack)
  } |
  contract read(rhoSpec, _, ack) = {
    new ch, none, other in {
      ch!(7) | none!() | other!(8) |
      rhoSpec!("assertMany", [
        ((7, "== <-", *ch), "reads 7"),
        (("nothing <-", *none), "an empty send"),
        ((7, "!= <-", *other), "8 is not 7")
      ], *ack)
    }
  } |
  contract many(rhoSpec, _, ack) = {
    rhoSpec!("assertMany", [(true, "a Bool"), ((1, "!=", 2), "1 is not 2")],
             *ack)
  })");
  absl::StatusOr<SpecReport> r = RunSpec(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->passed()) << Dump(*r);
  ASSERT_EQ(r->cases.size(), 3u) << Dump(*r);
  EXPECT_EQ(r->cases[0].name, "equal values");
  EXPECT_EQ(r->cases[0].assertions, 1);
  EXPECT_EQ(r->cases[1].name, "read from a channel");
  EXPECT_EQ(r->cases[1].assertions, 3);
  EXPECT_EQ(r->cases[2].name, "many at once");
  EXPECT_EQ(r->cases[2].assertions, 2);
  EXPECT_TRUE(r->completed);
}

TEST(SpecRunnerTest, AFailedAssertionFailsItsCaseOnly) {
  std::string spec = SpecFile(
      "holds, breaks",
      "[(\"holds\", *holds), (\"breaks\", *breaks), (\"after\", *holds)]",
      R"(
  contract holds(rhoSpec, _, ack) = {
    rhoSpec!("assert", true, "fine", *ack)
  } |
  contract breaks(rhoSpec, _, ack) = {
    rhoSpec!("assert", (4, "==", 2 + 3), "2 + 3 is not 4", *ack)
  })");
  absl::StatusOr<SpecReport> r = RunSpec(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->passed());
  EXPECT_TRUE(r->completed) << Dump(*r);
  // "after" runs the same body as "holds" under its own name.
  ASSERT_EQ(r->cases.size(), 3u) << Dump(*r);
  EXPECT_TRUE(r->cases[0].passed);
  EXPECT_FALSE(r->cases[1].passed);
  EXPECT_EQ(r->cases[2].name, "after");
  EXPECT_TRUE(r->cases[2].passed);
  EXPECT_EQ(r->cases[1].reason, "attempt 1: 2 + 3 is not 4");
}

TEST(SpecRunnerTest, AssertManyStopsAtTheFirstFailure) {
  std::string spec = SpecFile("stops", "[(\"stops\", *stops)]", R"(
  contract stops(rhoSpec, _, ack) = {
    rhoSpec!("assertMany", [(false, "first"), (true, "never asked")], *ack)
  })");
  absl::StatusOr<SpecReport> r = RunSpec(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->cases.size(), 1u) << Dump(*r);
  EXPECT_EQ(r->cases[0].assertions, 1);
  EXPECT_EQ(r->cases[0].reason, "attempt 1: first");
}

TEST(SpecRunnerTest, SetupTeardownAndAttemptsRunInOrder) {
  // Setup hands its value to the body; each of three attempts runs setup,
  // body and teardown; teardown sees setup's value.
  std::string spec = SpecFile("setup, teardown, body",
                              "*setup, *teardown, [(\"thrice\", *body, 3)]", R"(
  contract setup(@name, reply) = { reply!(name ++ " state") } |
  contract body(rhoSpec, @state, ack) = {
    rhoSpec!("assert", (state, "==", "thrice state"), "setup's value", *ack)
  } |
  contract teardown(@name, @state, ack) = {
    stdout!(["teardown", name, state]) | ack!(Nil)
  })");
  spec = "new stdout(`rho:io:stdout`) in {\n" + spec + "}\n";
  absl::StatusOr<SpecReport> r = RunSpec(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->passed()) << Dump(*r);
  ASSERT_EQ(r->cases.size(), 1u);
  EXPECT_EQ(r->cases[0].assertions, 3);
  int teardowns = 0;
  for (const std::string& line : r->output) {
    if (line == R"(["teardown", "thrice", "thrice state"])") ++teardowns;
  }
  EXPECT_EQ(teardowns, 3) << Dump(*r);
}

TEST(SpecRunnerTest, ALaterAttemptThatFailsFailsTheCase) {
  std::string spec =
      SpecFile("setup, body", "*setup, [(\"flaky\", *body, 2)]", R"(
  new count in {
    count!(0) |
    contract setup(_, reply) = {
      for (@n <- count) { count!(n + 1) | reply!(n + 1) }
    }
  } |
  contract body(rhoSpec, @n, ack) = {
    rhoSpec!("assert", (n, "==", 1), "only the first attempt", *ack)
  })");
  absl::StatusOr<SpecReport> r = RunSpec(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->cases.size(), 1u) << Dump(*r);
  EXPECT_EQ(r->cases[0].assertions, 2);
  EXPECT_FALSE(r->cases[0].passed);
  EXPECT_EQ(r->cases[0].reason, "attempt 2: only the first attempt");
}

TEST(SpecRunnerTest, ASuiteThatNeverCompletesDoesNotPass) {
  // The body never acknowledges, so the suite cannot move on.
  std::string spec = SpecFile("silent", "[(\"silent\", *silent)]", R"(
  contract silent(rhoSpec, _, ack) = {
    rhoSpec!("assert", true, "asserted, never acknowledged", *ack) |
    for (_ <- ack) { Nil }
  })");
  absl::StatusOr<SpecReport> r = RunSpec(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->cases.size(), 1u) << Dump(*r);
  EXPECT_TRUE(r->cases[0].passed);
  EXPECT_FALSE(r->completed);
  EXPECT_FALSE(r->passed());
}

TEST(SpecRunnerTest, ADeployErrorIsReported) {
  absl::StatusOr<SpecReport> r = RunSpec("@0!(1 / 0)");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(r->error.find("division by zero"), std::string::npos) << Dump(*r);
  EXPECT_FALSE(r->passed());
  absl::StatusOr<SpecReport> parse = RunSpec("new x in {");
  ASSERT_TRUE(parse.ok()) << parse.status();
  EXPECT_FALSE(parse->error.empty());
  EXPECT_FALSE(parse->passed());
}

TEST(SpecRunnerTest, AnEmptySpecDoesNotPass) {
  absl::StatusOr<SpecReport> r = RunSpec("Nil");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->error.empty());
  EXPECT_FALSE(r->completed);
  EXPECT_FALSE(r->passed());
}

TEST(SpecRunnerTest, ABrokenFrameworkIsAnError) {
  SpecOptions o;
  o.framework = "@0!(1 / 0)";
  absl::StatusOr<SpecReport> r = RunSpec("Nil", o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SpecRunnerTest, SameReportOnFourThreads) {
  std::string spec = SpecFile("a, b", "[(\"a\", *a), (\"b\", *b)]", R"(
  contract a(rhoSpec, _, ack) = { rhoSpec!("assert", (1, "==", 1), "one", *ack) } |
  contract b(rhoSpec, _, ack) = { rhoSpec!("assert", (1, "==", 2), "two", *ack) })");
  absl::StatusOr<SpecReport> one = RunSpec(spec);
  SpecOptions o;
  o.threads = 4;
  absl::StatusOr<SpecReport> four = RunSpec(spec, o);
  ASSERT_TRUE(one.ok() && four.ok());
  EXPECT_EQ(one->output, four->output);
  EXPECT_EQ(one->cases.size(), 2u);
}

TEST(SpecRunnerTest, TheSpecDeployerIsTheConfiguredKey) {
  // Key 1's public key is the generator point.
  const std::string g =
      "0479be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
      "483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8";
  std::string spec =
      SpecFile("whoami", "[(\"deployer\", *whoami)]",
               absl::StrCat(R"(
  contract whoami(rhoSpec, _, ack) = {
    new data(`rho:deploy:data`), ops(`rho:system:deployerId:ops`), dataCh,
        keyCh in {
      data!(*dataCh) |
      for (_, @deployer, _ <- dataCh) {
        ops!("pubKeyBytes", deployer, *keyCh) |
        rhoSpec!("assert", (")",
                            g, R"(".hexToBytes(), "== <-", *keyCh),
                 "the deployer is key 1", *ack)
      }
    }
  })"));
  SpecOptions o;
  o.deployer_key =
      "0000000000000000000000000000000000000000000000000000000000000001";
  absl::StatusOr<SpecReport> r = RunSpec(spec, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->passed()) << Dump(*r);
  // With the default key the same assertion fails.
  absl::StatusOr<SpecReport> d = RunSpec(spec);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->cases.size(), 1u) << Dump(*d);
  EXPECT_FALSE(d->cases[0].passed);
}

TEST(SpecRunnerTest, ABadDeployerKeyIsAnError) {
  SpecOptions o;
  o.deployer_key = "not hex";
  absl::StatusOr<SpecReport> r = RunSpec("Nil", o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  o.deployer_key = "0102";
  EXPECT_EQ(RunSpec("Nil", o).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(AssertLineTest, ParsesTheAssertAckFormat) {
  AssertLine a;
  ASSERT_TRUE(ParseAssertLine("assert my test (attempt 2): ok: a clue", &a));
  EXPECT_EQ(a.name, "my test");
  EXPECT_EQ(a.attempt, 2);
  EXPECT_TRUE(a.ok);
  EXPECT_EQ(a.clue, "a clue");
  ASSERT_TRUE(ParseAssertLine("assert x (attempt 1): FAILED: y: z", &a));
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.clue, "y: z");
  ASSERT_TRUE(ParseAssertLine("assert x (attempt 1): ok: ", &a));
  EXPECT_EQ(a.clue, "");
  for (const char* bad :
       {"", "assert", "assert x", "assert x (attempt ): ok: c",
        "assert x (attempt 1x): ok: c", "assert x (attempt 1): maybe: c",
        "testSuiteCompleted true", "asserted x (attempt 1): ok: c"}) {
    EXPECT_FALSE(ParseAssertLine(bad, &a)) << bad;
  }
}

}  // namespace
}  // namespace rnode::casper::spec

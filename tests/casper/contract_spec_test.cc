// Runs the Rholang contract specs of tests/contracts against the native
// system contracts (docs/contracts-testing.md): each spec, behind the
// harness prelude, is one program in a fresh ContractEnv with funded test
// wallets and a PoS genesis. A spec passes when the program ends without
// error, reported at least one assertion, every assertion held and the suite
// reported `testSuiteCompleted true` exactly once.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "casper/contracts/pos.h"
#include "crypto/base58.h"
#include "crypto/hash.h"
#include "crypto/rev_address.h"
#include "gtest/gtest.h"
#include "rholang/interpreter/native_space.h"
#include "rholang/interpreter/registry_uri.h"
#include "rspace/event_log.h"
#include "tests/casper/contract_env.h"
#include "util/bytes.h"
#include "util/status_macros.h"

#ifndef RNODE_CONTRACT_SPEC_DIR
#error "RNODE_CONTRACT_SPEC_DIR must name the tests/contracts directory"
#endif

namespace rnode::casper {
namespace {

namespace fs = std::filesystem;
using testing::ContractEnv;
using testing::MakeTestKey;
using testing::TestKey;

// Over 300 times what a spec spends (200,000-300,000 phlo), so a spec fails on
// its assertions, never on phlo; bounded, so a runaway loop ends (a tight
// loop spends 100M phlo in about 5 s here).
constexpr int64_t kSpecPhloLimit = 100'000'000;

// The harness line the runner replaces with `{ <spec> }`.
constexpr char kSpecMarker[] = "Nil /*SPEC*/";
// What the harness prints around each test (then the quoted name and `)`).
constexpr char kTestStarted[] = "(\"test started\", ";
constexpr char kTestFinished[] = "(\"test finished\", ";
// Set (to anything) to print every spec's output lines.
constexpr char kVerboseVariable[] = "RNODE_SPEC_VERBOSE";
// A failing spec's first line names a problem the runner must report.
constexpr char kExpectedProblemHeader[] = "// expected problem: ";

// The world every spec runs in. Amounts are in dust; keys are MakeTestKey
// seeds.
constexpr uint8_t kAliceSeed = 1;   // the deployer of every spec
constexpr uint8_t kBobSeed = 2;     // funded
constexpr uint8_t kCarolSeed = 3;   // never funded
constexpr uint8_t kSignerSeed = 9;  // signs registry entries
constexpr uint8_t kValidator1Seed = 11;
constexpr uint8_t kValidator2Seed = 12;
constexpr int64_t kAliceFunds = 50'000'000;
constexpr int64_t kBobFunds = 7'000'000;
constexpr int64_t kValidator1Stake = 4'000;
constexpr int64_t kValidator2Stake = 6'000;

contracts::PosParams SpecPosParams() {
  contracts::PosParams p;
  p.minimum_bond = 1'000;
  p.maximum_bond = 1'000'000;
  p.epoch_length = 10;
  p.quarantine_length = 20;
  p.number_of_active_validators = 5;
  p.fault_tolerance_threshold_ppm = 100'000;
  return p;
}

absl::StatusOr<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path.string()));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The *.rho files directly in `dir` (not harness.rho), sorted.
std::vector<std::string> SpecFiles(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const fs::path& p = e.path();
    if (e.is_regular_file() && p.extension() == ".rho" &&
        p.filename() != "harness.rho") {
      out.push_back(p.string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

fs::path SpecDir() { return fs::path(RNODE_CONTRACT_SPEC_DIR); }

using Placeholders = std::vector<std::pair<std::string, std::string>>;

// The program for `spec`: its placeholders replaced, put in place of the
// harness marker. InvalidArgument if the harness lacks exactly one marker
// or a `$NAME` placeholder is left that the runner does not know.
absl::StatusOr<std::string> Compose(const std::string& harness,
                                    const std::string& spec,
                                    const Placeholders& placeholders) {
  const size_t at = harness.find(kSpecMarker);
  if (at == std::string::npos ||
      harness.find(kSpecMarker, at + 1) != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the harness must hold the marker `", kSpecMarker, "` exactly once"));
  }
  std::string body = absl::StrReplaceAll(spec, placeholders);
  for (size_t i = 0; i + 1 < body.size(); ++i) {
    if (body[i] == '$' && body[i + 1] >= 'A' && body[i + 1] <= 'Z') {
      size_t end = i + 1;
      while (end < body.size() &&
             (std::isupper(static_cast<unsigned char>(body[end])) ||
              std::isdigit(static_cast<unsigned char>(body[end])) ||
              body[end] == '_')) {
        ++end;
      }
      return absl::InvalidArgumentError(
          absl::StrCat("unknown placeholder ", body.substr(i, end - i)));
    }
  }
  std::string program = harness;
  program.replace(at, sizeof(kSpecMarker) - 1,
                  absl::StrCat("{\n", body, "\n}"));
  return program;
}

// What a spec run printed and how the program ended.
struct SpecOutcome {
  absl::Status error;
  std::vector<std::string> out;
  std::vector<std::string> err;
  int64_t cost = 0;  // phlo the program spent
};

// Why the outcome is not a pass (empty: it passed).
std::vector<std::string> Problems(const SpecOutcome& o) {
  std::vector<std::string> problems;
  if (!o.error.ok()) {
    problems.push_back(absl::StrCat("program error: ", o.error.ToString()));
  }
  size_t assertions = 0;
  size_t completed = 0;
  std::vector<std::string> unfinished;  // quoted names, as printed
  for (const std::string& line : o.out) {
    if (absl::StartsWith(line, kTestStarted) && absl::EndsWith(line, ")")) {
      unfinished.push_back(line.substr(sizeof(kTestStarted) - 1,
                                       line.size() - sizeof(kTestStarted)));
    } else if (absl::StartsWith(line, kTestFinished) &&
               absl::EndsWith(line, ")")) {
      std::string name = line.substr(sizeof(kTestFinished) - 1,
                                     line.size() - sizeof(kTestFinished));
      auto it = std::find(unfinished.begin(), unfinished.end(), name);
      if (it != unfinished.end()) unfinished.erase(it);
    } else if (absl::StartsWith(line, "assert ")) {
      ++assertions;
      // `assert <name> (attempt <n>): ok|FAILED: <clue>`
      const size_t attempt = line.find(" (attempt ");
      const size_t verdict =
          attempt == std::string::npos ? attempt : line.find("): ", attempt);
      if (verdict == std::string::npos ||
          line.compare(verdict + 3, 3, "ok:") != 0) {
        problems.push_back(absl::StrCat("failed assertion: ", line));
      }
    } else if (absl::StartsWith(line, "testSuiteCompleted ")) {
      if (line == "testSuiteCompleted true") {
        ++completed;
      } else {
        problems.push_back(absl::StrCat("suite completion not true: ", line));
      }
    }
  }
  if (assertions == 0) problems.push_back("no assertion was reported");
  if (completed != 1) {
    problems.push_back(absl::StrCat(
        "expected exactly one `testSuiteCompleted true`, got ", completed));
  }
  for (const std::string& name : unfinished) {
    problems.push_back(absl::StrCat("test never finished: ", name));
  }
  return problems;
}

std::string Report(const SpecOutcome& o,
                   const std::vector<std::string>& problems) {
  return absl::StrCat("problems:\n  ", absl::StrJoin(problems, "\n  "),
                      "\nstdout:\n  ", absl::StrJoin(o.out, "\n  "),
                      "\nstderr:\n  ", absl::StrJoin(o.err, "\n  "), "\n");
}

// `address` with its last character changed so that only the checksum is
// wrong.
absl::StatusOr<std::string> BadChecksumAddress(const std::string& address) {
  for (char c = '1'; c <= 'z'; ++c) {
    if (!crypto::IsBase58Text(std::string_view(&c, 1))) continue;
    std::string candidate = address;
    if (candidate.back() == c) continue;
    candidate.back() = c;
    if (crypto::CheckRevAddress(candidate) ==
        crypto::RevAddressError::kInvalidChecksum) {
      return candidate;
    }
  }
  return absl::InternalError("no single-character checksum corruption found");
}

// `address` with another prefix and a checksum that matches it, so that only
// the prefix is wrong. Layout: crypto/rev_address.h.
absl::StatusOr<std::string> BadPrefixAddress(const std::string& address) {
  constexpr size_t kPayloadBytes = 36;  // prefix (4) || key hash (32)
  constexpr size_t kChecksumBytes = 4;
  ASSIGN_OR_RETURN(Bytes raw, crypto::Base58Decode(address));
  if (raw.size() != kPayloadBytes + kChecksumBytes) {
    return absl::InternalError("unexpected address length");
  }
  raw[0] ^= 0x01;
  Hash32 check = crypto::Blake2b256(ByteView(raw.data(), kPayloadBytes));
  std::copy_n(check.begin(), kChecksumBytes, raw.begin() + kPayloadBytes);
  std::string out = crypto::Base58Encode(raw);
  if (crypto::CheckRevAddress(out) != crypto::RevAddressError::kInvalidPrefix) {
    return absl::InternalError("the prefix corruption is not seen as such");
  }
  return out;
}

// A fresh environment on `threads` interpreter threads: Alice and Bob funded, a
// PoS genesis with two validators; `placeholders` receives the values specs may
// name.
absl::StatusOr<std::unique_ptr<ContractEnv>> MakeWorld(
    int threads, Placeholders& placeholders) {
  auto env = std::make_unique<ContractEnv>(
      threads, contracts::ContractsOptions{.pos = SpecPosParams(),
                                           .test_processes = true});
  const TestKey alice = MakeTestKey(kAliceSeed);
  const TestKey bob = MakeTestKey(kBobSeed);
  const TestKey carol = MakeTestKey(kCarolSeed);
  const TestKey signer = MakeTestKey(kSignerSeed);
  const TestKey v1 = MakeTestKey(kValidator1Seed);
  const TestKey v2 = MakeTestKey(kValidator2Seed);
  env->Fund(alice.address, kAliceFunds);
  env->Fund(bob.address, kBobFunds);
  {
    rspace::EventLog log;
    rholang::interp::SpaceNative native(
        env->space.get(), rspace::OpContext{&log, &env->runtime->matcher()},
        nullptr);
    RETURN_IF_ERROR(env->contracts->pos().Genesis(
        native, {{v1.pk_bytes(), kValidator1Stake},
                 {v2.pk_bytes(), kValidator2Stake}}));
  }
  env->Checkpoint();
  ASSIGN_OR_RETURN(std::string bad_checksum, BadChecksumAddress(alice.address));
  ASSIGN_OR_RETURN(std::string bad_prefix, BadPrefixAddress(alice.address));
  const contracts::PosParams pos = SpecPosParams();
  placeholders = {
      {"$ALICE_ADDR", alice.address},
      {"$ALICE_PK", HexEncode(alice.pk_bytes())},
      {"$ALICE_FUNDS", absl::StrCat(kAliceFunds)},
      {"$BOB_ADDR", bob.address},
      {"$BOB_PK", HexEncode(bob.pk_bytes())},
      {"$BOB_FUNDS", absl::StrCat(kBobFunds)},
      {"$CAROL_ADDR", carol.address},
      {"$CAROL_PK", HexEncode(carol.pk_bytes())},
      {"$BAD_CHECKSUM_ADDR", bad_checksum},
      {"$BAD_PREFIX_ADDR", bad_prefix},
      {"$SIGNER_PK", HexEncode(signer.pk_bytes())},
      {"$SIGNER_SK", HexEncode(ByteView(signer.sk.data(), signer.sk.size()))},
      {"$SIGNER_URI", rholang::interp::RegistryUriFromKey(signer.pk_bytes())},
      {"$VALIDATOR1_PK", HexEncode(v1.pk_bytes())},
      {"$VALIDATOR1_STAKE", absl::StrCat(kValidator1Stake)},
      {"$VALIDATOR2_PK", HexEncode(v2.pk_bytes())},
      {"$VALIDATOR2_STAKE", absl::StrCat(kValidator2Stake)},
      {"$MIN_BOND", absl::StrCat(pos.minimum_bond)},
      {"$MAX_BOND", absl::StrCat(pos.maximum_bond)},
      {"$EPOCH_LENGTH", absl::StrCat(pos.epoch_length)},
      {"$QUARANTINE_LENGTH", absl::StrCat(pos.quarantine_length)},
      {"$FTT_PPM", absl::StrCat(pos.fault_tolerance_threshold_ppm)},
  };
  return env;
}

// Runs the spec in `path` as Alice's program in a fresh world.
absl::StatusOr<SpecOutcome> RunSpec(const std::string& path, int threads = 1) {
  ASSIGN_OR_RETURN(std::string harness, ReadFile(SpecDir() / "harness.rho"));
  ASSIGN_OR_RETURN(std::string spec, ReadFile(path));
  Placeholders placeholders;
  ASSIGN_OR_RETURN(std::unique_ptr<ContractEnv> env,
                   MakeWorld(threads, placeholders));
  ASSIGN_OR_RETURN(std::string program, Compose(harness, spec, placeholders));
  rholang::interp::EvalResult r =
      env->Run(MakeTestKey(kAliceSeed), program, kSpecPhloLimit);
  return SpecOutcome{r.error, env->lines.out, env->lines.err, r.cost};
}

std::string TestNameOf(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = fs::path(info.param).stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// --- The specs

class ContractSpecTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ContractSpecTest, EveryAssertionHoldsAndTheSuiteCompletes) {
  absl::StatusOr<SpecOutcome> o = RunSpec(GetParam());
  ASSERT_TRUE(o.ok()) << o.status();
  std::vector<std::string> problems = Problems(*o);
  EXPECT_TRUE(problems.empty()) << GetParam() << "\n" << Report(*o, problems);
  const auto assertions = std::count_if(
      o->out.begin(), o->out.end(),
      [](const std::string& l) { return absl::StartsWith(l, "assert "); });
  std::cout << fs::path(GetParam()).filename().string() << ": " << assertions
            << " assertions, " << o->cost << " phlo\n";
  if (std::getenv(kVerboseVariable) != nullptr) {
    std::cout << "  " << absl::StrJoin(o->out, "\n  ") << "\n";
  }
}

// Interpreter threads for the determinism check: more than one, so the
// parallel phase runs on the worker pool.
constexpr int kParallelThreads = 4;

TEST_P(ContractSpecTest, PrintsTheSameLinesOnAnyThreadCount) {
  absl::StatusOr<SpecOutcome> one = RunSpec(GetParam(), 1);
  absl::StatusOr<SpecOutcome> many = RunSpec(GetParam(), kParallelThreads);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_TRUE(many.ok()) << many.status();
  EXPECT_EQ(one->error, many->error);
  EXPECT_EQ(one->out, many->out);
}

INSTANTIATE_TEST_SUITE_P(Specs, ContractSpecTest,
                         ::testing::ValuesIn(SpecFiles(SpecDir())), TestNameOf);

TEST(ContractSpecFilesTest, TheSpecDirectoryHoldsTheSystemContractSpecs) {
  std::vector<std::string> names;
  for (const std::string& f : SpecFiles(SpecDir())) {
    names.push_back(fs::path(f).filename().string());
  }
  for (const char* expected :
       {"registry_spec.rho", "vault_spec.rho", "pos_spec.rho"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end())
        << expected;
  }
}

// --- The runner can fail: each deliberately failing spec is reported as
// failed, with the problem its first line names.

class FailingSpecTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FailingSpecTest, IsReportedAsFailedWithTheExpectedProblem) {
  absl::StatusOr<std::string> text = ReadFile(GetParam());
  ASSERT_TRUE(text.ok()) << text.status();
  ASSERT_TRUE(absl::StartsWith(*text, kExpectedProblemHeader))
      << GetParam() << " must start with `" << kExpectedProblemHeader << "`";
  const std::string first_line = text->substr(0, text->find('\n'));
  const std::string expected =
      first_line.substr(sizeof(kExpectedProblemHeader) - 1);
  absl::StatusOr<SpecOutcome> o = RunSpec(GetParam());
  ASSERT_TRUE(o.ok()) << o.status();
  std::vector<std::string> problems = Problems(*o);
  ASSERT_FALSE(problems.empty()) << Report(*o, problems);
  EXPECT_TRUE(std::any_of(
      problems.begin(), problems.end(),
      [&](const std::string& p) { return absl::StrContains(p, expected); }))
      << "expected a problem containing `" << expected << "`\n"
      << Report(*o, problems);
}

INSTANTIATE_TEST_SUITE_P(Failing, FailingSpecTest,
                         ::testing::ValuesIn(SpecFiles(SpecDir() / "failing")),
                         TestNameOf);

// --- The verdict on a run's output, table-driven.

struct VerdictCase {
  std::string name;
  absl::Status error;
  std::vector<std::string> out;
  std::vector<std::string> expected_problems;  // substrings, in order
};

class ProblemsTest : public ::testing::TestWithParam<VerdictCase> {};

TEST_P(ProblemsTest, NamesEveryReasonTheRunIsNotAPass) {
  const VerdictCase& c = GetParam();
  std::vector<std::string> problems = Problems({c.error, c.out, {}, 0});
  ASSERT_EQ(problems.size(), c.expected_problems.size())
      << absl::StrJoin(problems, "\n");
  for (size_t i = 0; i < problems.size(); ++i) {
    EXPECT_TRUE(absl::StrContains(problems[i], c.expected_problems[i]))
        << problems[i] << " lacks " << c.expected_problems[i];
  }
}

const char kOk[] = "assert t (attempt 1): ok: fine";
const char kDone[] = "testSuiteCompleted true";

INSTANTIATE_TEST_SUITE_P(
    Cases, ProblemsTest,
    ::testing::Values(
        VerdictCase{"Pass", absl::OkStatus(), {kOk, kOk, kDone}, {}},
        VerdictCase{"FailedAssertion",
                    absl::OkStatus(),
                    {kOk, "assert t (attempt 1): FAILED: ok: not", kDone},
                    {"failed assertion: assert t (attempt 1): FAILED"}},
        VerdictCase{"NoAssertion", absl::OkStatus(), {kDone}, {"no assertion"}},
        VerdictCase{"NotCompleted", absl::OkStatus(), {kOk}, {"got 0"}},
        VerdictCase{"StuckTest",
                    absl::OkStatus(),
                    {"(\"test started\", \"a\")", kOk,
                     "(\"test finished\", \"a\")", "(\"test started\", \"b\")"},
                    {"got 0", "test never finished: \"b\""}},
        VerdictCase{
            "CompletedTwice", absl::OkStatus(), {kOk, kDone, kDone}, {"got 2"}},
        VerdictCase{"CompletedFalse",
                    absl::OkStatus(),
                    {kOk, "testSuiteCompleted false"},
                    {"not true", "got 0"}},
        VerdictCase{"ProgramError",
                    absl::InvalidArgumentError("boom"),
                    {kOk, kDone},
                    {"program error: INVALID_ARGUMENT: boom"}}),
    [](const auto& info) { return info.param.name; });

TEST(ComposeTest, PutsTheSpecInPlaceOfTheMarkerWithItsPlaceholders) {
  absl::StatusOr<std::string> p = Compose("new x in { x!(1) | Nil /*SPEC*/ }",
                                          "x!(\"$A\")", {{"$A", "alice"}});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, "new x in { x!(1) | {\nx!(\"alice\")\n} }");
}

TEST(ComposeTest, RefusesAnUnknownPlaceholder) {
  absl::StatusOr<std::string> p = Compose("Nil /*SPEC*/", "x!($NOPE_1)", {});
  ASSERT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(std::string(p.status().message()), "$NOPE_1"));
}

TEST(ComposeTest, KeepsStringInterpolationWhichIsNotAPlaceholder) {
  absl::StatusOr<std::string> p =
      Compose("Nil /*SPEC*/", "\"${a}\" %% {\"a\": 1}", {});
  EXPECT_TRUE(p.ok()) << p.status();
}

TEST(ComposeTest, RefusesAHarnessWithoutExactlyOneMarker) {
  EXPECT_EQ(Compose("Nil", "Nil", {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Compose("Nil /*SPEC*/ | Nil /*SPEC*/", "Nil", {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(HarnessTest, RunsAsAProgramWithAnEmptySpecAndCompletesNoSuite) {
  absl::StatusOr<std::string> harness = ReadFile(SpecDir() / "harness.rho");
  ASSERT_TRUE(harness.ok()) << harness.status();
  ContractEnv env;
  rholang::interp::EvalResult r =
      env.Run(MakeTestKey(kAliceSeed), *harness, kSpecPhloLimit);
  EXPECT_TRUE(r.error.ok()) << r.error;
  EXPECT_TRUE(env.lines.out.empty());
}

}  // namespace
}  // namespace rnode::casper

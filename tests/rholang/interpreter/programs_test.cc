// Whole programs: every examples/NAME.rho prints exactly the lines of
// NAME.expected, in order, and spends the phlo of its last line `cost: N`;
// every examples/errors/NAME.rho fails with the code kErrorCodes gives it and
// a message containing the first line of NAME.expected_error after printing
// the lines that follow it, and spends its `cost: N`. Each runs with 1 and
// 4 threads, which must agree on lines, cost, error and root (see
// examples/README.md).
//
// RNODE_UPDATE_EXAMPLES=1 rewrites the expected files from the serial run
// (the first line of an .expected_error is kept); review the diff: an order
// the program fixes (acks, joins, replies) must stay.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "rholang/interpreter/reducer.h"
#include "tests/rholang/interpreter/program_runner.h"

namespace rnode::rholang::interp::testing {
namespace {

namespace fs = std::filesystem;

// The issue asks for at least 30 examples; the brief for at least 36.
constexpr size_t kMinExamples = 36;
// Thread count of the parallel run compared against the serial one.
constexpr int kParallelThreads = 4;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) lines.push_back(line);
  return lines;
}

// What a run leaves in an expected file: its stdout lines in the order they
// were written, then `cost: N` (the format `rholang run` prints).
std::vector<std::string> Observed(const RunResult& run) {
  std::vector<std::string> lines = run.stdout_lines;
  lines.push_back("cost: " + std::to_string(run.cost));
  return lines;
}

bool UpdateExamples() {
  const char* env = std::getenv("RNODE_UPDATE_EXAMPLES");
  return env != nullptr && std::string(env) == "1";
}

void WriteLines(const fs::path& path, const std::vector<std::string>& lines) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (const std::string& line : lines) out << line << "\n";
}

// Stems of the .rho files directly in `dir`, sorted.
std::vector<std::string> Stems(const fs::path& dir) {
  std::vector<std::string> stems;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".rho") {
      stems.push_back(entry.path().stem().string());
    }
  }
  std::sort(stems.begin(), stems.end());
  return stems;
}

const fs::path kExamples = RNODE_EXAMPLES_DIR;
const fs::path kErrors = kExamples / "errors";

// The code each examples/errors program fails with (the codes of cost.h):
// out of phlo is kResourceExhausted, rho:execution:abort kAborted, a runtime
// error of the program kInvalidArgument. A new error example is listed here.
struct ErrorCode {
  const char* stem;
  absl::StatusCode code;
};
constexpr ErrorCode kErrorCodes[] = {
    {"addition_overflow", absl::StatusCode::kInvalidArgument},
    {"division_by_zero", absl::StatusCode::kInvalidArgument},
    {"if_not_bool", absl::StatusCode::kInvalidArgument},
    {"interpolate_bad_value", absl::StatusCode::kInvalidArgument},
    {"method_wrong_receiver", absl::StatusCode::kInvalidArgument},
    {"modulo_by_zero", absl::StatusCode::kInvalidArgument},
    {"multiplication_overflow", absl::StatusCode::kInvalidArgument},
    {"negation_overflow", absl::StatusCode::kInvalidArgument},
    {"not_not_bool", absl::StatusCode::kInvalidArgument},
    {"nth_out_of_range", absl::StatusCode::kInvalidArgument},
    {"out_of_phlo", absl::StatusCode::kResourceExhausted},
    {"out_of_phlo_wide", absl::StatusCode::kResourceExhausted},
    {"overflow_in_recursion", absl::StatusCode::kInvalidArgument},
    {"receive_on_bundle0", absl::StatusCode::kInvalidArgument},
    {"receive_on_write_only_bundle", absl::StatusCode::kInvalidArgument},
    {"send_on_bundle0", absl::StatusCode::kInvalidArgument},
    {"send_on_read_only_bundle", absl::StatusCode::kInvalidArgument},
    {"type_error_plus", absl::StatusCode::kInvalidArgument},
    {"unknown_method", absl::StatusCode::kInvalidArgument},
    {"user_abort", absl::StatusCode::kAborted},
};

std::optional<absl::StatusCode> ExpectedCode(const std::string& stem) {
  for (const ErrorCode& e : kErrorCodes) {
    if (stem == e.stem) return e.code;
  }
  return std::nullopt;
}

// Runs `source` with 1 and kParallelThreads threads; checks the two runs
// agree on lines (in order), cost and error, and returns the serial run.
RunResult RunBoth(const std::string& source) {
  int64_t phlo = PhloDirective(source, kDefaultToolPhloLimit);
  auto serial = RunProgram(source, {.threads = 1, .phlo = phlo});
  auto parallel =
      RunProgram(source, {.threads = kParallelThreads, .phlo = phlo});
  EXPECT_TRUE(serial.ok()) << serial.status();
  EXPECT_TRUE(parallel.ok()) << parallel.status();
  if (!serial.ok() || !parallel.ok()) return RunResult{};
  EXPECT_EQ(serial->stdout_lines, parallel->stdout_lines);
  EXPECT_EQ(serial->cost, parallel->cost);
  EXPECT_EQ(serial->error.ToString(), parallel->error.ToString());
  EXPECT_EQ(serial->root, parallel->root);
  // The comparison means something only if the parallel run used the workers
  // (RunConfig::min_parallel_tasks is 1: every round).
  EXPECT_EQ(serial->parallel_rounds, 0u);
  EXPECT_EQ(parallel->parallel_rounds, parallel->rounds);
  EXPECT_EQ(serial->rounds, parallel->rounds);
  return *std::move(serial);
}

class ExampleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ExampleTest, PrintsExpectedLinesWithAnyThreadCount) {
  const std::string source = ReadFile(kExamples / (GetParam() + ".rho"));
  const fs::path expected_path = kExamples / (GetParam() + ".expected");
  ASSERT_TRUE(fs::exists(expected_path)) << expected_path;
  RunResult run = RunBoth(source);
  EXPECT_TRUE(run.error.ok()) << run.error;
  EXPECT_TRUE(run.stderr_lines.empty()) << run.stderr_lines.front();
  if (UpdateExamples()) WriteLines(expected_path, Observed(run));
  EXPECT_EQ(Observed(run), Lines(ReadFile(expected_path)));
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleTest,
                         ::testing::ValuesIn(Stems(kExamples)),
                         [](const auto& info) { return info.param; });

class ErrorExampleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ErrorExampleTest, FailsWithExpectedMessageWithAnyThreadCount) {
  const std::string source = ReadFile(kErrors / (GetParam() + ".rho"));
  const fs::path expected_path = kErrors / (GetParam() + ".expected_error");
  ASSERT_TRUE(fs::exists(expected_path)) << expected_path;
  std::vector<std::string> expected = Lines(ReadFile(expected_path));
  ASSERT_FALSE(expected.empty());
  const std::optional<absl::StatusCode> code = ExpectedCode(GetParam());
  ASSERT_TRUE(code.has_value()) << GetParam() << " is not in kErrorCodes";
  RunResult run = RunBoth(source);
  ASSERT_EQ(run.error.code(), *code)
      << run.error << "; lines: " << run.stdout_lines.size();
  EXPECT_NE(std::string(run.error.message()).find(expected[0]),
            std::string::npos)
      << run.error;
  EXPECT_TRUE(run.stderr_lines.empty()) << run.stderr_lines.front();
  if (UpdateExamples()) {
    std::vector<std::string> lines = {expected[0]};
    for (std::string& line : Observed(run)) lines.push_back(std::move(line));
    WriteLines(expected_path, lines);
    expected = Lines(ReadFile(expected_path));
  }
  // After the message: what was printed before the failure, then the cost.
  EXPECT_EQ(Observed(run),
            std::vector<std::string>(expected.begin() + 1, expected.end()));
  // A failed deploy leaves nothing behind.
  auto empty = RunProgram("Nil", {.threads = 1, .phlo = 1000});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(run.root, empty->root);
}

INSTANTIATE_TEST_SUITE_P(Errors, ErrorExampleTest,
                         ::testing::ValuesIn(Stems(kErrors)),
                         [](const auto& info) { return info.param; });

TEST(ExamplesDirectoryTest, HasEnoughProgramsEachWithExpectedOutput) {
  std::vector<std::string> stems = Stems(kExamples);
  EXPECT_GE(stems.size(), kMinExamples);
  for (const std::string& stem : stems) {
    EXPECT_TRUE(fs::exists(kExamples / (stem + ".expected"))) << stem;
  }
  EXPECT_FALSE(Stems(kErrors).empty());
}

}  // namespace
}  // namespace rnode::rholang::interp::testing

// Whole programs: every examples/NAME.rho prints the lines of NAME.expected
// (compared as sorted multisets, see examples/README.md) and every
// examples/errors/NAME.rho fails with a message containing
// NAME.expected_error; each with 1 and 4 threads giving the same lines, cost
// and error.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "rholang/interpreter/reducer.h"
#include "tests/interpreter/program_runner.h"

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

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
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
  return *std::move(serial);
}

class ExampleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ExampleTest, PrintsExpectedLinesWithAnyThreadCount) {
  const std::string source = ReadFile(kExamples / (GetParam() + ".rho"));
  const fs::path expected_path = kExamples / (GetParam() + ".expected");
  ASSERT_TRUE(fs::exists(expected_path)) << expected_path;
  RunResult run = RunBoth(source);
  EXPECT_TRUE(run.error.ok()) << run.error;
  EXPECT_EQ(Sorted(run.stdout_lines), Sorted(Lines(ReadFile(expected_path))));
  EXPECT_GT(run.cost, 0);
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
  RunResult run = RunBoth(source);
  ASSERT_FALSE(run.error.ok()) << "lines: " << run.stdout_lines.size();
  EXPECT_NE(std::string(run.error.message()).find(expected[0]),
            std::string::npos)
      << run.error;
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

// The program generator's contract: every program compiles, and the same
// seed always gives the same program.
#include "tests/interpreter/program_generator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "rholang/normalizer.h"

namespace rnode::rholang::interp::testing {
namespace {

// As many seeds as the property test evaluates.
constexpr uint64_t kSeeds = 10000;

TEST(ProgramGeneratorTest, EveryProgramCompiles) {
  int failures = 0;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    std::string program = GenerateProgram(seed);
    auto par = Compile(program);
    if (!par.ok()) {
      ADD_FAILURE() << "seed " << seed << ": " << par.status() << "\n"
                    << program;
      if (++failures >= 5) break;
    }
  }
}

TEST(ProgramGeneratorTest, SameSeedGivesSameProgram) {
  for (uint64_t seed : {0ull, 1ull, 77ull, 123456789ull}) {
    EXPECT_EQ(GenerateProgram(seed), GenerateProgram(seed)) << seed;
  }
  EXPECT_NE(GenerateProgram(1), GenerateProgram(2));
}

TEST(ProgramGeneratorTest, ProgramsUseEveryConstruct) {
  const char* const kConstructs[] = {
      "contract ", " <- ",        " <= ",       " <<- ",   " & ",
      "!!(",       "new ",        "match ",     "if (",    " else ",
      "let ",      "bundle+ {",   "bundle0 {",  " /\\ ",   " \\/ ",
      "~",         " ...",        "%%",         ".union(", ".diff(",
      ".nth(",     ".slice(",     ".toList()",  ".keys()", "Set(",
      " matches ", ".getOrElse(", ".contains(", "race"};
  std::string all;
  for (uint64_t seed = 0; seed < 300; ++seed) all += GenerateProgram(seed);
  for (const char* c : kConstructs) {
    EXPECT_NE(all.find(c), std::string::npos) << "never generated: " << c;
  }
}

}  // namespace
}  // namespace rnode::rholang::interp::testing

// The program generator's contract: every program compiles, and a seed
// gives a pinned program.
#include "tests/rholang/interpreter/program_generator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "crypto/hash.h"
#include "rholang/frontend/normalizer.h"
#include "tests/sanitizer.h"
#include "util/bytes.h"

namespace rnode::rholang::interp::testing {
namespace {

// As many seeds as the property test evaluates.
constexpr uint64_t kSeeds = 10000;

TEST(ProgramGeneratorTest, EveryProgramCompiles) {
  int failures = 0;
  // Under a sanitizer the first tenth of the seeds.
  const uint64_t seeds =
      ::rnode::testing::kUnderSanitizer ? kSeeds / 10 : kSeeds;
  for (uint64_t seed = 0; seed < seeds; ++seed) {
    std::string program = GenerateProgram(seed);
    auto par = Compile(program);
    if (!par.ok()) {
      ADD_FAILURE() << "seed " << seed << ": " << par.status() << "\n"
                    << program;
      if (++failures >= 5) break;
    }
  }
}

// The header promises the same program on every platform (no std
// distributions): pin the Blake2b-256 of a few programs, computed by this
// generator. A deliberate change to the generator updates them.
TEST(ProgramGeneratorTest, SeedsGivePinnedPrograms) {
  const struct {
    uint64_t seed;
    const char* blake2b256;
  } kCases[] = {
      {0, "a8e71f3dfd28c68f929a5168be2bb1361585b2b136172e9a9f8802cac9e1ae4c"},
      {1, "68fb19df7818f322565e57c9c3e66c017433ed26a1867f11417fcfbf9fb71d63"},
      {77, "9166189901d623d8dedd5912506a861587c47fd82eda6aba0279a523dae69a29"},
      {123456789,
       "30cf69342dda4364c842bd96ea48871a8754b095cf3a144162fff8943a4b7956"},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(HexEncode(crypto::Blake2b256(AsBytes(GenerateProgram(c.seed)))),
              c.blake2b256)
        << "seed " << c.seed;
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

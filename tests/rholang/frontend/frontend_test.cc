// Table-driven tests over every construct: each valid program parses,
// normalizes deterministically, prints back to source that normalizes to the
// same IR, and survives the canonical encoding.
#include <gtest/gtest.h>

#include <string>

#include "rholang/frontend/diagnostic.h"
#include "rholang/frontend/ir_encoding.h"
#include "rholang/frontend/normalizer.h"
#include "rholang/frontend/parser.h"
#include "rholang/frontend/printer.h"
#include "tests/rholang/frontend/programs.h"
#include "util/bytes.h"

namespace rnode::rholang {
namespace {

using testing::NamedProgram;
using testing::ValidPrograms;

class ValidProgramTest : public ::testing::TestWithParam<NamedProgram> {};

std::string Describe(const absl::Status& s) {
  auto d = DiagnosticFromStatus(s);
  return d ? FormatDiagnostic("input", *d) : "ok";
}

TEST_P(ValidProgramTest, Parses) {
  auto parsed = Parse(GetParam().source);
  ASSERT_TRUE(parsed.ok()) << Describe(parsed.status());
  EXPECT_NE(parsed->root, nullptr);
}

TEST_P(ValidProgramTest, NormalizesToAClosedProcess) {
  auto a = Compile(GetParam().source);
  ASSERT_TRUE(a.ok()) << Describe(a.status());
  EXPECT_TRUE((*a)->locally_free.empty());
  EXPECT_FALSE((*a)->connective_used);
}

TEST_P(ValidProgramTest, PrintThenParseGivesSameIr) {
  auto ir = Compile(GetParam().source);
  ASSERT_TRUE(ir.ok()) << Describe(ir.status());
  auto printed = Print(**ir);
  ASSERT_TRUE(printed.ok());
  auto again = Compile(*printed);
  ASSERT_TRUE(again.ok()) << Describe(again.status()) << "\n" << *printed;
  EXPECT_EQ(HexEncode((*again)->hash), HexEncode((*ir)->hash)) << *printed;
  auto printed_again = Print(**again);
  ASSERT_TRUE(printed_again.ok());
  auto third = Compile(*printed_again);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ((*third)->hash, (*ir)->hash);
}

TEST_P(ValidProgramTest, EncodingRoundTrips) {
  auto ir = Compile(GetParam().source);
  ASSERT_TRUE(ir.ok()) << Describe(ir.status());
  auto bytes = ir::EncodePar(**ir);
  ASSERT_TRUE(bytes.ok());
  auto decoded = ir::DecodePar(*bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ((*decoded)->hash, (*ir)->hash);
  EXPECT_EQ((*decoded)->locally_free, (*ir)->locally_free);
  auto reencoded = ir::EncodePar(**decoded);
  ASSERT_TRUE(reencoded.ok());
  EXPECT_EQ(*reencoded, *bytes);
}

TEST_P(ValidProgramTest, EveryStrictPrefixFailsCleanly) {
  // Truncations of valid programs are either valid or positioned errors.
  std::string src = GetParam().source;
  for (size_t n = 0; n < src.size(); ++n) {
    auto r = Compile(src.substr(0, n));
    if (!r.ok()) {
      auto d = DiagnosticFromStatus(r.status());
      ASSERT_TRUE(d.has_value());
      EXPECT_GE(d->line, 1u) << src.substr(0, n);
      EXPECT_FALSE(d->message.empty());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Programs, ValidProgramTest, ::testing::ValuesIn(ValidPrograms()),
    [](const ::testing::TestParamInfo<NamedProgram>& info) {
      return std::string(info.param.name);
    });

}  // namespace
}  // namespace rnode::rholang

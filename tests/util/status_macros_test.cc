// Tests for RETURN_IF_ERROR and ASSIGN_OR_RETURN.
#include "util/status_macros.h"

#include <memory>

#include "gtest/gtest.h"

namespace rnode {
namespace {

absl::Status FailIf(bool fail) {
  return fail ? absl::InvalidArgumentError("boom") : absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<int>> MakeInt(bool fail, int v) {
  if (fail) return absl::ResourceExhaustedError("no room");
  return std::make_unique<int>(v);
}

absl::Status Chain(bool fail_first, bool fail_second, int* steps) {
  RETURN_IF_ERROR(FailIf(fail_first));
  ++*steps;
  RETURN_IF_ERROR(FailIf(fail_second));
  ++*steps;
  return absl::OkStatus();
}

absl::StatusOr<int> Sum(bool fail_a, bool fail_b) {
  ASSIGN_OR_RETURN(std::unique_ptr<int> a, MakeInt(fail_a, 2));
  ASSIGN_OR_RETURN(auto b, MakeInt(fail_b, 3));
  int total = 0;
  ASSIGN_OR_RETURN(total, absl::StatusOr<int>(*a + *b));  // Existing lvalue.
  return total;
}

TEST(StatusMacrosTest, ReturnIfErrorStopsAtFirstError) {
  int steps = 0;
  EXPECT_TRUE(Chain(false, false, &steps).ok());
  EXPECT_EQ(steps, 2);
  steps = 0;
  EXPECT_EQ(Chain(false, true, &steps).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(steps, 1);
  steps = 0;
  EXPECT_EQ(Chain(true, false, &steps).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(steps, 0);
}

TEST(StatusMacrosTest, AssignOrReturnMovesValuesAndPropagatesErrors) {
  absl::StatusOr<int> ok = Sum(false, false);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 5);
  EXPECT_EQ(Sum(true, false).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(Sum(false, true).status().message(), "no room");
}

}  // namespace
}  // namespace rnode

// Tests for log levels, category loggers and the rate limiter.
#include "util/logging.h"

#include "gtest/gtest.h"

namespace rnode {
namespace {

TEST(LoggingTest, SameCategoryGivesSameLogger) {
  EXPECT_EQ(Log("test-a").get(), Log("test-a").get());
  EXPECT_NE(Log("test-a").get(), Log("test-b").get());
  EXPECT_EQ(Log("test-a")->name(), "test-a");
}

TEST(LoggingTest, SetLogLevelAppliesToExistingAndNewLoggers) {
  auto existing = Log("test-level");
  ASSERT_TRUE(SetLogLevel("warn").ok());
  EXPECT_EQ(existing->level(), spdlog::level::warn);
  EXPECT_EQ(Log("test-level-new")->level(), spdlog::level::warn);
  ASSERT_TRUE(SetLogLevel("info").ok());
  EXPECT_EQ(existing->level(), spdlog::level::info);
}

TEST(LoggingTest, UnknownLevelIsInvalidArgumentAndChangesNothing) {
  ASSERT_TRUE(SetLogLevel("error").ok());
  EXPECT_EQ(SetLogLevel("loud").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Log("test-level")->level(), spdlog::level::err);
  ASSERT_TRUE(SetLogLevel("off").ok());
  EXPECT_EQ(Log("test-level")->level(), spdlog::level::off);
  ASSERT_TRUE(SetLogLevel("info").ok());
}

TEST(LogRateLimiterTest, AllowsBurstThenSuppresses) {
  // One per hour: the bucket cannot refill noticeably during the test.
  LogRateLimiter limiter(1.0 / 3600);
  EXPECT_TRUE(limiter.Allow());
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(limiter.Allow());
}

TEST(LogRateLimiterTest, BurstEqualsRate) {
  LogRateLimiter limiter(3);  // Refill of 3/s is negligible over a few calls.
  int allowed = 0;
  for (int i = 0; i < 3; ++i) allowed += limiter.Allow();
  EXPECT_EQ(allowed, 3);
  EXPECT_FALSE(limiter.Allow());
}

}  // namespace
}  // namespace rnode

// Tests for log levels, category loggers and the rate limiter.
#include "util/logging.h"

#include <memory>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "spdlog/sinks/ostream_sink.h"
#include "tests/eventually.h"

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

TEST(LogTextTest, PrintableTextIsKept) {
  EXPECT_EQ(LogText("peer 10.0.0.1:40400 said hello"),
            "peer 10.0.0.1:40400 said hello");
  EXPECT_EQ(LogText(""), "");
}

TEST(LogTextTest, ControlBytesAndBackslashesAreEscaped) {
  // A newline cannot start a forged line; an escape sequence cannot
  // recolour the terminal; a backslash cannot fake an escape.
  EXPECT_EQ(LogText("a\n2026-12-05 error [p2p] forged"),
            "a\\x0a2026-12-05 error [p2p] forged");
  EXPECT_EQ(LogText("\x1b[31mred"), "\\x1b[31mred");
  EXPECT_EQ(LogText("C:\\x41"), "C:\\x5cx41");
  EXPECT_EQ(LogText(std::string("\0\xff", 2)), "\\x00\\xff");
}

TEST(LogTextTest, LongTextIsCutAndItsLengthSaid) {
  const std::string big(1 << 20, 'a');
  const std::string shown = LogText(big);
  EXPECT_EQ(shown, std::string(kLogTextBytes, 'a') + "...(1048576 bytes)");
  EXPECT_EQ(LogText("abcdef", 3), "abc...(6 bytes)");
  EXPECT_EQ(LogText("abc", 3), "abc");
}

TEST(RateLimitedLogTest, WritesAtMostItsBurstAndSaysWhatItDropped) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(out);
  sink->set_pattern("%v");
  Log("test-rate-limited")->sinks().push_back(sink);
  // Five a second: the bucket refills one line in 200 ms, far longer than
  // the loop below takes.
  RateLimitedLog log("test-rate-limited", 5);
  for (int i = 0; i < 1000; ++i) log.Warn("peer {} misbehaved", i);
  std::string lines = out.str();
  size_t count = 0;
  for (char c : lines) count += c == '\n';
  // The burst, and a refill or two on a slow machine.
  EXPECT_GE(count, 5u);
  EXPECT_LE(count, 9u) << lines;
  EXPECT_NE(lines.find("peer 0 misbehaved"), std::string::npos);
  EXPECT_EQ(lines.find("peer 999 misbehaved"), std::string::npos);
  // Once the bucket refills, the next line comes after a count of the
  // dropped ones.
  EXPECT_TRUE(testing::Eventually([&] {
    log.Warn("later");
    return out.str().find("later") != std::string::npos;
  }));
  EXPECT_NE(out.str().find(" lines like the next not logged"),
            std::string::npos);
  Log("test-rate-limited")->sinks().pop_back();
}

}  // namespace
}  // namespace rnode

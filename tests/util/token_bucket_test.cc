#include "util/token_bucket.h"

#include <chrono>

#include "gtest/gtest.h"

namespace rnode {
namespace {

using std::chrono::milliseconds;

TEST(TokenBucketTest, ABurstThenTheRefillRate) {
  TokenBucket b(/*per_second=*/10, /*burst=*/3);
  const TokenBucket::Clock::time_point t0 = TokenBucket::Clock::now();
  EXPECT_TRUE(b.TryTake(t0));
  EXPECT_TRUE(b.TryTake(t0));
  EXPECT_TRUE(b.TryTake(t0));
  EXPECT_FALSE(b.TryTake(t0)) << "the burst is spent";
  EXPECT_FALSE(b.TryTake(t0 + milliseconds(50))) << "half a token";
  EXPECT_TRUE(b.TryTake(t0 + milliseconds(100)));
  EXPECT_FALSE(b.TryTake(t0 + milliseconds(100)));
}

TEST(TokenBucketTest, AnIdleBucketRefillsOnlyToItsBurst) {
  TokenBucket b(100, 2);
  const TokenBucket::Clock::time_point t0 = TokenBucket::Clock::now();
  EXPECT_TRUE(b.TryTake(t0));
  const TokenBucket::Clock::time_point later = t0 + std::chrono::hours(1);
  EXPECT_TRUE(b.TryTake(later));
  EXPECT_TRUE(b.TryTake(later));
  EXPECT_FALSE(b.TryTake(later));
}

TEST(TokenBucketTest, TimeGoingBackwardsRefillsNothing) {
  TokenBucket b(1, 1);
  const TokenBucket::Clock::time_point t0 = TokenBucket::Clock::now();
  EXPECT_TRUE(b.TryTake(t0));
  EXPECT_FALSE(b.TryTake(t0 - std::chrono::seconds(5)));
  EXPECT_FALSE(b.TryTake(t0 + milliseconds(500)));
  EXPECT_TRUE(b.TryTake(t0 + milliseconds(1000)));
}

}  // namespace
}  // namespace rnode

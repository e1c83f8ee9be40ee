// Tests for the bounded LRU cache (util/bounded_cache.h).
#include "util/bounded_cache.h"

#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace rnode {
namespace {

TEST(BoundedCacheTest, GetOfMissingKeyIsEmptyAndCountsAMiss) {
  BoundedCache<int, std::string> cache(2);
  EXPECT_EQ(cache.Get(1), std::nullopt);
  EXPECT_EQ(cache.misses(), 1u);
  EXPECT_EQ(cache.hits(), 0u);
}

TEST(BoundedCacheTest, PutThenGetReturnsTheValue) {
  BoundedCache<int, std::string> cache(2);
  EXPECT_EQ(cache.Put(1, "one"), "one");
  EXPECT_EQ(cache.Get(1), "one");
  EXPECT_EQ(cache.hits(), 1u);
}

TEST(BoundedCacheTest, SecondPutOfAKeyKeepsTheFirstValue) {
  BoundedCache<int, std::string> cache(2);
  cache.Put(1, "first");
  EXPECT_EQ(cache.Put(1, "second"), "first");
  EXPECT_EQ(cache.Get(1), "first");
  EXPECT_EQ(cache.size(), 1u);
}

TEST(BoundedCacheTest, FullCacheEvictsTheLeastRecentlyUsedEntryOnly) {
  BoundedCache<int, int> cache(3);
  cache.Put(1, 10);
  cache.Put(2, 20);
  cache.Put(3, 30);
  ASSERT_EQ(cache.Get(1), 10);  // 2 is now the least recently used
  cache.Put(4, 40);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.Get(2), std::nullopt);
  EXPECT_EQ(cache.Get(1), 10);
  EXPECT_EQ(cache.Get(3), 30);
  EXPECT_EQ(cache.Get(4), 40);
}

TEST(BoundedCacheTest, SizeNeverExceedsCapacity) {
  BoundedCache<int, int> cache(5);
  for (int i = 0; i < 100; ++i) {
    cache.Put(i, i);
    EXPECT_LE(cache.size(), 5u);
  }
  for (int i = 95; i < 100; ++i) EXPECT_EQ(cache.Get(i), i);
}

TEST(BoundedCacheTest, ZeroCapacityHoldsOneEntry) {
  BoundedCache<int, int> cache(0);
  EXPECT_EQ(cache.capacity(), 1u);
  cache.Put(1, 1);
  cache.Put(2, 2);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.Get(2), 2);
}

TEST(BoundedCacheTest, ForEachVisitsEveryEntryMostRecentFirst) {
  BoundedCache<int, int> cache(4);
  cache.Put(1, 10);
  cache.Put(2, 20);
  cache.Put(3, 30);
  ASSERT_EQ(cache.Get(1), 10);
  std::vector<std::pair<int, int>> seen;
  cache.ForEach([&](int k, int v) { seen.emplace_back(k, v); });
  EXPECT_EQ(seen,
            (std::vector<std::pair<int, int>>{{1, 10}, {3, 30}, {2, 20}}));
}

TEST(BoundedCacheTest, ClearEmptiesTheCache) {
  BoundedCache<int, int> cache(4);
  cache.Put(1, 1);
  cache.Clear();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.Get(1), std::nullopt);
}

// Checked by the tsan preset: concurrent Get and Put on overlapping keys.
TEST(BoundedCacheTest, ConcurrentUseKeepsTheBoundAndOneValuePerKey) {
  BoundedCache<int, int> cache(16);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 2000; ++i) {
        const int key = (i * 7 + t) % 40;
        if (std::optional<int> v = cache.Get(key)) {
          EXPECT_EQ(*v, key * 3);
        } else {
          EXPECT_EQ(cache.Put(key, key * 3), key * 3);
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_LE(cache.size(), 16u);
}

}  // namespace
}  // namespace rnode

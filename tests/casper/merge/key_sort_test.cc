// SortKeyRecords: the bucketed sort gives the order of a plain sort by
// KeyRecordLess, with hot keys (long runs of one key in item order), keys
// sharing their leading words, and sizes on both sides of the bucket cutoff.
#include "casper/merge/internal/key_sort.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "crypto/hash.h"
#include "gtest/gtest.h"
#include "tests/test_seed.h"

namespace rnode::casper::merge::internal {
namespace {

bool SameRecord(const KeyRecord& x, const KeyRecord& y) {
  return SameKey(x, y) && x.tag == y.tag && x.item == y.item;
}

struct SortCase {
  const char* name;
  size_t records;
  size_t hot_keys;     // Keys repeated across many items.
  size_t shared_head;  // Keys that differ only in their last byte.
};

class KeySortTest : public ::testing::TestWithParam<SortCase> {};

TEST_P(KeySortTest, MatchesPlainSort) {
  const SortCase& c = GetParam();
  const uint64_t seed = ::rnode::testing::TestSeed(20261130 + c.records);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<Hash32> keys;
  for (size_t i = 0; i < c.records / 4 + 1; ++i) {
    keys.push_back(crypto::Blake2b256(AsBytes("k" + std::to_string(rng()))));
  }
  for (size_t i = 0; i < c.shared_head; ++i) {
    Hash32 k = keys.front();
    k[31] = static_cast<uint8_t>(i);
    keys.push_back(k);
  }
  std::vector<KeyRecord> records;
  // Items ascending, as the merger emits them; hot keys on every item.
  for (uint32_t item = 0; records.size() < c.records; ++item) {
    for (size_t h = 0; h < c.hot_keys; ++h) {
      records.push_back(KeyRecord::Make(keys[h], item, 4));
    }
    records.push_back(KeyRecord::Make(keys[rng() % keys.size()], item,
                                      static_cast<uint32_t>(rng() % 6)));
  }
  std::vector<KeyRecord> expected = records;
  std::sort(expected.begin(), expected.end(),
            [](const KeyRecord& x, const KeyRecord& y) {
              return KeyRecordLess(x, y);
            });
  SortKeyRecords(records);
  ASSERT_EQ(records.size(), expected.size());
  for (size_t i = 0; i < records.size(); ++i) {
    ASSERT_TRUE(SameRecord(records[i], expected[i])) << "at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, KeySortTest,
    ::testing::Values(SortCase{"Small", 100, 1, 3},
                      SortCase{"AtCutoff", kKeySortBucketMin, 0, 0},
                      SortCase{"Large", 50000, 0, 20},

                      SortCase{"OneHotKey", 30000, 1, 0},
                      SortCase{"ThreeHotKeys", 30000, 3, 5}),
    [](const ::testing::TestParamInfo<SortCase>& info) {
      return std::string(info.param.name);
    });

TEST(SortBucketTest, EverySizeAroundTheInsertionLimitMatchesPlainSort) {
  const uint64_t seed = ::rnode::testing::TestSeed(7300);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (ptrdiff_t n = 1; n <= 2 * kKeySortInsertionMax + 2; ++n) {
    for (int round = 0; round < 50; ++round) {
      // Few distinct keys, tags and items: equal keys and equal records.
      std::vector<KeyRecord> records;
      for (ptrdiff_t i = 0; i < n; ++i) {
        Hash32 key{};
        key[31] = static_cast<uint8_t>(rng() % 4);
        key[0] = static_cast<uint8_t>(rng() % 2);
        records.push_back(KeyRecord::Make(key, static_cast<uint32_t>(rng() % 5),
                                          static_cast<uint32_t>(rng() % 3)));
      }
      // Some inputs already ascending or in a few runs.
      if (round % 5 == 0) {
        std::sort(records.begin(), records.end(),
                  [](const KeyRecord& x, const KeyRecord& y) {
                    return KeyRecordLess(x, y);
                  });
      }
      std::vector<KeyRecord> expected = records;
      std::sort(expected.begin(), expected.end(),
                [](const KeyRecord& x, const KeyRecord& y) {
                  return KeyRecordLess(x, y);
                });
      SortBucket(records.begin(), records.end());
      for (ptrdiff_t i = 0; i < n; ++i) {
        ASSERT_TRUE(SameRecord(records[i], expected[i]))
            << "size " << n << " round " << round << " at " << i;
      }
    }
  }
}

TEST(KeyRecordTest, OrderIsKeyBytesThenTagThenItem) {
  Hash32 a{}, b{};
  b[31] = 1;
  EXPECT_TRUE(
      KeyRecordLess(KeyRecord::Make(a, 9, 9), KeyRecord::Make(b, 0, 0)));
  EXPECT_TRUE(
      KeyRecordLess(KeyRecord::Make(a, 9, 0), KeyRecord::Make(a, 0, 1)));
  EXPECT_TRUE(
      KeyRecordLess(KeyRecord::Make(a, 0, 1), KeyRecord::Make(a, 1, 1)));
  EXPECT_TRUE(SameKey(KeyRecord::Make(b, 0, 0), KeyRecord::Make(b, 5, 3)));
  EXPECT_FALSE(SameKey(KeyRecord::Make(a, 0, 0), KeyRecord::Make(b, 0, 0)));
}

}  // namespace
}  // namespace rnode::casper::merge::internal

namespace rnode::casper::merge::internal {
namespace {

std::vector<KeyRecord> RandomRecords(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<KeyRecord> v(n);
  for (size_t i = 0; i < n; ++i) {
    for (uint64_t& w : v[i].w) w = rng();
    v[i].item = static_cast<uint32_t>(i);
  }
  return v;
}

TEST(DistinctKeysTest, EachKeyOnceAndEveryRecordWithItsKeysIndex) {
  Hash32 a{}, b{}, c{};
  a[0] = 1;
  b[0] = 2;
  c[0] = 3;
  // Sorted: a (2 records), b (1), c (3).
  const std::vector<KeyRecord> sorted = {
      KeyRecord::Make(a, 7, 0), KeyRecord::Make(a, 9, 1),
      KeyRecord::Make(b, 4, 0), KeyRecord::Make(c, 1, 0),
      KeyRecord::Make(c, 2, 0), KeyRecord::Make(c, 5, 2)};
  std::vector<KeyRecord> keys = {KeyRecord::Make(c, 0, 0)};  // Appended to.
  std::vector<std::pair<uint32_t, uint32_t>> seen;           // (item, index)
  DistinctKeys(sorted, keys, [&](const KeyRecord& r, uint32_t index) {
    seen.emplace_back(r.item, index);
  });
  ASSERT_EQ(keys.size(), 4u);
  EXPECT_EQ(KeyOf(keys[1]), a);
  EXPECT_EQ(KeyOf(keys[2]), b);
  EXPECT_EQ(KeyOf(keys[3]), c);
  for (uint32_t i = 1; i < keys.size(); ++i) {
    EXPECT_EQ(keys[i].item, i);
    EXPECT_EQ(keys[i].tag, 0u);
  }
  EXPECT_EQ(seen, (std::vector<std::pair<uint32_t, uint32_t>>{
                      {7, 1}, {9, 1}, {4, 2}, {1, 3}, {2, 3}, {5, 3}}));
  std::vector<KeyRecord> none;
  DistinctKeys(std::vector<KeyRecord>{}, none,
               [&](const KeyRecord&, uint32_t) { ADD_FAILURE(); });
  EXPECT_TRUE(none.empty());
}

TEST(KeySortScratchTest, KeepsScratchOfOrdinaryMergesAndTrimReleasesHugeOnes) {
  KeySortScratch scratch;
  // An ordinary sort keeps its scratch for the next call, and a trim to
  // the bound keeps it too...
  std::vector<KeyRecord> small =
      RandomRecords(10000, ::rnode::testing::TestSeed(1));
  SortKeyRecords(small, scratch);
  EXPECT_TRUE(std::is_sorted(small.begin(), small.end(), KeyRecordLess));
  scratch.Trim(kMaxKeptScratchBytes);
  EXPECT_GE(scratch.capacity_bytes(), 10000 * sizeof(KeyRecord));
  // ...one far above kMaxKeptScratchBytes is released by the trim, bucket
  // counters included.
  const size_t huge = 2 * kMaxKeptScratchBytes / sizeof(KeyRecord);
  std::vector<KeyRecord> big =
      RandomRecords(huge, ::rnode::testing::TestSeed(2));
  SortKeyRecords(big, scratch);
  EXPECT_TRUE(std::is_sorted(big.begin(), big.end(), KeyRecordLess));
  EXPECT_GT(scratch.capacity_bytes(), kMaxKeptScratchBytes);
  scratch.Trim(kMaxKeptScratchBytes);
  EXPECT_LE(scratch.capacity_bytes(), kMaxKeptScratchBytes);
  EXPECT_LE(scratch.buffer.capacity() * sizeof(KeyRecord),
            kMaxKeptScratchBytes);
}

TEST(KeySortScratchTest, ReusedScratchSortsLikeAFreshOne) {
  KeySortScratch scratch;
  for (size_t n : {5000u, 700u, 20000u, 600u}) {
    std::vector<KeyRecord> a = RandomRecords(n, n);
    std::vector<KeyRecord> b = a;
    SortKeyRecords(a, scratch);
    SortKeyRecords(b);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), n * sizeof(KeyRecord)));
  }
}

TEST(KeySortScratchTest, TrimScratchReleasesOnlyAboveTheBound) {
  std::vector<KeyRecord> kept(kMaxKeptScratchBytes / sizeof(KeyRecord));
  TrimScratch(kept);
  EXPECT_EQ(kept.size(), kMaxKeptScratchBytes / sizeof(KeyRecord));
  std::vector<KeyRecord> dropped(kept.size() + 1);
  TrimScratch(dropped);
  EXPECT_EQ(dropped.capacity(), 0u);
}

}  // namespace
}  // namespace rnode::casper::merge::internal

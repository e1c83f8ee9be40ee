// Merkle trie: canonical roots, reads, deletes, node encoding, caching.
#include "rspace/history/trie.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "crypto/hash.h"
#include "gtest/gtest.h"
#include "tests/rspace/test_util.h"
#include "tests/rspace/trie_keys.h"
#include "util/worker_pool.h"

namespace rnode::rspace {
namespace {

using testing::K;
using testing::KP;
using testing::V;

struct TrieFixture {
  InMemoryStore store{1};
  MerkleTrie trie{&store, 0};

  Hash32 Apply(const Hash32& root, std::map<Hash32, std::optional<Hash32>> m) {
    std::vector<TrieChange> changes;
    for (auto& [k, v] : m) changes.push_back(TrieChange{k, v, nullptr});
    WriteBatch batch;
    auto r = trie.Apply(root, changes, &batch);
    EXPECT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(store.Write(batch).ok());
    trie.Committed();
    return *r;
  }
  std::optional<Hash32> Get(const Hash32& root, const Hash32& k) {
    auto r = trie.Get(root, k);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : std::nullopt;
  }
  std::map<Hash32, Hash32> All(const Hash32& root) {
    std::map<Hash32, Hash32> out;
    EXPECT_TRUE(trie.ForEachLeaf(root,
                                 [&](const Hash32& k, const Hash32& v) {
                                   out[k] = v;
                                   return absl::OkStatus();
                                 })
                    .ok());
    return out;
  }
};

TEST(TrieTest, EmptyRootIsBlake2bOfEmptyString) {
  EXPECT_EQ(HexEncode(kEmptyRoot),
            "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8");
}

TEST(TrieTest, EmptyTrieHasNoKeys) {
  TrieFixture f;
  EXPECT_FALSE(f.Get(kEmptyRoot, K(1)).has_value());
}

TEST(TrieTest, OneRecordCanBeReadBack) {
  TrieFixture f;
  Hash32 r = f.Apply(kEmptyRoot, {{K(1), V(1)}});
  EXPECT_NE(r, kEmptyRoot);
  EXPECT_EQ(f.Get(r, K(1)), V(1));
  EXPECT_FALSE(f.Get(r, K(2)).has_value());
}

TEST(TrieTest, TenRecordsCanBeReadBack) {
  TrieFixture f;
  std::map<Hash32, std::optional<Hash32>> m;
  for (int i = 0; i < 10; ++i) m[K(i)] = V(i);
  Hash32 r = f.Apply(kEmptyRoot, m);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(f.Get(r, K(i)), V(i));
  EXPECT_EQ(f.All(r).size(), 10u);
}

TEST(TrieTest, DeleteOfMissingKeyLeavesRootUnchanged) {
  TrieFixture f;
  Hash32 r = f.Apply(kEmptyRoot, {{K(1), V(1)}});
  EXPECT_EQ(f.Apply(r, {{K(2), std::nullopt}}), r);
  EXPECT_EQ(f.Apply(kEmptyRoot, {{K(2), std::nullopt}}), kEmptyRoot);
}

TEST(TrieTest, DeletingEverythingGivesEmptyRoot) {
  TrieFixture f;
  std::map<Hash32, std::optional<Hash32>> ins, del;
  for (int i = 0; i < 50; ++i) {
    ins[K(i)] = V(i);
    del[K(i)] = std::nullopt;
  }
  Hash32 r = f.Apply(kEmptyRoot, ins);
  EXPECT_EQ(f.Apply(r, del), kEmptyRoot);
}

TEST(TrieTest, ReinsertingSameValueLeavesRootUnchanged) {
  TrieFixture f;
  Hash32 r = f.Apply(kEmptyRoot, {{K(1), V(1)}, {K(2), V(2)}});
  EXPECT_EQ(f.Apply(r, {{K(1), V(1)}}), r);
}

TEST(TrieTest, UpdateLeavesPastRootsReadable) {
  TrieFixture f;
  Hash32 r1 = f.Apply(kEmptyRoot, {{K(1), V(1)}});
  Hash32 r2 = f.Apply(r1, {{K(1), V(2)}});
  EXPECT_EQ(f.Get(r1, K(1)), V(1));
  EXPECT_EQ(f.Get(r2, K(1)), V(2));
}

TEST(TrieTest, SameSetReachedByDifferentRoutesHasSameRoot) {
  TrieFixture f;
  Hash32 a = f.Apply(kEmptyRoot, {{K(1), V(1)}, {K(2), V(2)}, {K(3), V(3)}});
  Hash32 b = f.Apply(kEmptyRoot, {{K(3), V(3)}});
  b = f.Apply(b, {{K(9), V(9)}});
  b = f.Apply(b, {{K(1), V(1)}, {K(9), std::nullopt}});
  b = f.Apply(b, {{K(2), V(2)}});
  EXPECT_EQ(a, b);
}

TEST(TrieTest, UnsortedChangesAreRejected) {
  TrieFixture f;
  Hash32 a = K(1), b = K(2);
  if (b < a) std::swap(a, b);
  std::vector<TrieChange> changes = {{b, V(1), nullptr}, {a, V(2), nullptr}};
  WriteBatch batch;
  EXPECT_EQ(f.trie.Apply(kEmptyRoot, changes, &batch).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TrieTest, DuplicateKeysInOneBatchAreRejected) {
  TrieFixture f;
  std::vector<TrieChange> changes = {{K(1), V(1), nullptr},
                                     {K(1), V(2), nullptr}};
  WriteBatch batch;
  EXPECT_EQ(f.trie.Apply(kEmptyRoot, changes, &batch).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TrieTest, MissingNodeIsDataLoss) {
  InMemoryStore store(1);
  MerkleTrie trie(&store, 0, /*cache_entries=*/0);
  Hash32 bogus = K(77);
  EXPECT_EQ(trie.Get(bogus, K(1)).status().code(), absl::StatusCode::kDataLoss);
}

struct PrefixCase {
  const char* name;
  std::vector<Hash32> keys;
};

class TrieShapeTest : public ::testing::TestWithParam<PrefixCase> {};

// Every insertion order and every split of the keys into batches gives the
// same root, and deleting in any order returns to the empty root.
TEST_P(TrieShapeTest, RootIsCanonicalForAnyOrder) {
  TrieFixture f;
  std::vector<Hash32> keys = GetParam().keys;
  std::map<Hash32, std::optional<Hash32>> all;
  for (size_t i = 0; i < keys.size(); ++i)
    all[keys[i]] = V(static_cast<int>(i));
  Hash32 expected = f.Apply(kEmptyRoot, all);
  std::mt19937_64 rng(testing::TestSeed(42));
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<size_t> order(keys.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    Hash32 r = kEmptyRoot;
    for (size_t i = 0; i < order.size();) {
      size_t n = 1 + rng() % 3;
      std::map<Hash32, std::optional<Hash32>> batch;
      for (size_t j = i; j < std::min(order.size(), i + n); ++j) {
        batch[keys[order[j]]] = V(static_cast<int>(order[j]));
      }
      r = f.Apply(r, batch);
      i += n;
    }
    EXPECT_EQ(r, expected) << "trial " << trial;
    for (size_t i = 0; i < keys.size(); ++i) {
      EXPECT_EQ(f.Get(r, keys[i]), V(static_cast<int>(i)));
    }
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t i : order) r = f.Apply(r, {{keys[i], std::nullopt}});
    EXPECT_EQ(r, kEmptyRoot);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, TrieShapeTest,
    ::testing::Values(
        PrefixCase{"Random", {K(1), K(2), K(3), K(4), K(5), K(6)}},
        PrefixCase{"SharedFirstByte", {KP({1}, 1), KP({1}, 2), KP({2}, 1)}},
        PrefixCase{"LongSharedPrefix",
                   {KP({9, 9, 9, 9, 9}, 1), KP({9, 9, 9, 9, 9}, 2),
                    KP({9, 9, 9, 9, 8}, 1), KP({9, 9, 9}, 3)}},
        PrefixCase{"DifferOnlyInLastByte",
                   {KP({}, 0), KP({}, 1), KP({}, 255), KP({}, 128)}},
        PrefixCase{"NestedSplits",
                   {KP({1, 2, 3}, 0), KP({1, 2, 4}, 0), KP({1, 5}, 0),
                    KP({1, 2, 3, 7}, 0), KP({7}, 0), KP({1, 2, 3, 7}, 1)}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(TrieTest, RandomInsertAndDeleteAgreesWithModel) {
  TrieFixture f;
  uint64_t seed = testing::TestSeed(7);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::map<Hash32, Hash32> model;
  Hash32 root = kEmptyRoot;
  for (int step = 0; step < 60; ++step) {
    std::map<Hash32, std::optional<Hash32>> batch;
    for (int i = 0; i < 8; ++i) {
      int k = static_cast<int>(rng() % 40);
      if (rng() % 3 == 0) {
        batch[K(k)] = std::nullopt;
      } else {
        batch[K(k)] = V(static_cast<int>(rng() % 1000));
      }
    }
    for (auto& [k, v] : batch) {
      if (v.has_value())
        model[k] = *v;
      else
        model.erase(k);
    }
    root = f.Apply(root, batch);
    ASSERT_EQ(f.All(root), model) << "step " << step;
  }
  std::map<Hash32, std::optional<Hash32>> fresh;
  for (auto& [k, v] : model) fresh[k] = v;
  EXPECT_EQ(f.Apply(kEmptyRoot, fresh), root);
}

TEST(TrieTest, OnlyChangedNodesAreWritten) {
  TrieFixture f;
  std::map<Hash32, std::optional<Hash32>> m;
  for (int i = 0; i < 1000; ++i) m[K(i)] = V(i);
  Hash32 r = f.Apply(kEmptyRoot, m);
  std::vector<TrieChange> one = {{K(5), V(99999), nullptr}};
  WriteBatch batch;
  ASSERT_TRUE(f.trie.Apply(r, one, &batch).ok());
  // The path from the root to one leaf: a handful of nodes, not the trie.
  EXPECT_LE(batch.size(), 4u);
  EXPECT_GE(batch.size(), 1u);
}

TEST(TrieTest, NodeCacheIsBoundedAndSurvivesApply) {
  InMemoryStore store(1);
  MerkleTrie trie(&store, 0, /*cache_entries=*/8);
  std::vector<TrieChange> changes;
  for (int i = 0; i < 300; ++i) changes.push_back({K(i), V(i), nullptr});
  std::sort(changes.begin(), changes.end(),
            [](const auto& a, const auto& b) { return a.key < b.key; });
  WriteBatch batch;
  auto r = trie.Apply(kEmptyRoot, changes, &batch);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(store.Write(batch).ok());
  trie.Committed();
  EXPECT_LE(trie.CachedNodes(), 8u);
  EXPECT_GT(trie.CachedNodes(), 0u);
  for (int i = 0; i < 300; ++i) ASSERT_EQ(*trie.Get(*r, K(i)), V(i));
  EXPECT_LE(trie.CachedNodes(), 8u);
}

// The cache's byte bound holds even when its entry bound would take every
// node: it keeps what fits in the bytes, reads stay right, and the bytes it
// reports are what its nodes hold.
TEST(TrieTest, NodeCacheIsBoundedInBytes) {
  InMemoryStore store(1);
  constexpr size_t kBytes = 16 << 10;
  MerkleTrie trie(&store, 0, /*cache_entries=*/1 << 20, kBytes);
  std::vector<TrieChange> changes;
  for (int i = 0; i < 3000; ++i) changes.push_back({K(i), V(i), nullptr});
  std::sort(changes.begin(), changes.end(),
            [](const auto& a, const auto& b) { return a.key < b.key; });
  WriteBatch batch;
  auto r = trie.Apply(kEmptyRoot, changes, &batch);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(store.Write(batch).ok());
  trie.Committed();
  for (int i = 0; i < 3000; ++i) ASSERT_EQ(*trie.Get(*r, K(i)), V(i));
  // Each shard may exceed its share by its newest node only.
  auto root = trie.Node(*r);
  ASSERT_TRUE(root.ok());
  EXPECT_LE(trie.CachedBytes(),
            kBytes + kTrieCacheShards * TrieNodeBytes(**root));
  EXPECT_GT(trie.CachedNodes(), 0u);
  // The same reads through a cache bounded only by entries keep more.
  MerkleTrie roomy(&store, 0, /*cache_entries=*/1 << 20,
                   /*cache_bytes=*/64 << 20);
  for (int i = 0; i < 3000; ++i) ASSERT_EQ(*roomy.Get(*r, K(i)), V(i));
  EXPECT_GT(roomy.CachedNodes(), trie.CachedNodes());
  EXPECT_GE(TrieNodeBytes(**root), (*root)->items.size() * sizeof(TrieItem));
}

// Readers on several threads walk the trie through a small sharded cache
// (so nodes are evicted and reloaded while others read) and from a pinned
// root node; every read is right. Run under the tsan preset for races.
TEST(TrieTest, ConcurrentGetsThroughTheShardedCache) {
  InMemoryStore store(1);
  MerkleTrie trie(&store, 0, /*cache_entries=*/32);
  std::vector<TrieChange> changes;
  constexpr int kKeys = 2000;
  for (int i = 0; i < kKeys; ++i) changes.push_back({K(i), V(i), nullptr});
  std::sort(changes.begin(), changes.end(),
            [](const auto& a, const auto& b) { return a.key < b.key; });
  WriteBatch batch;
  auto r = trie.Apply(kEmptyRoot, changes, &batch);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(store.Write(batch).ok());
  trie.Committed();
  auto root = trie.Node(*r);
  ASSERT_TRUE(root.ok());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int n = 0; n < kKeys; ++n) {
        const int i = (n * 7 + t * 501) % kKeys;
        auto got = t % 2 == 0 ? trie.Get(*r, K(i)) : trie.Get(**root, K(i));
        if (!got.ok() || *got != std::optional<Hash32>(V(i))) wrong++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(trie.CachedNodes(), 32u);
}

TEST(TrieNodeCodecTest, RoundTrip) {
  TrieNode n;
  n.items.push_back(TrieItem{0, false, {1, 2, 3}, K(1), nullptr});
  n.items.push_back(TrieItem{7, true, {}, K(2), nullptr});
  n.items.push_back(TrieItem{255, true, Bytes(30, 4), K(3), nullptr});
  Bytes enc = EncodeTrieNode(n);
  auto dec = DecodeTrieNode(enc);
  ASSERT_TRUE(dec.ok());
  EXPECT_EQ(EncodeTrieNode(*dec), enc);
  ASSERT_EQ(dec->items.size(), 3u);
  EXPECT_TRUE(dec->items[1].is_ptr);
  EXPECT_EQ(dec->items[2].prefix.size(), 30u);
}

TEST(TrieNodeCodecTest, InlineValuesAreStoredButNotHashed) {
  TrieNode n;
  n.items.push_back(TrieItem{
      1, false, {9}, K(1), std::make_shared<const Bytes>(Bytes{0xab, 0xcd})});
  n.items.push_back(TrieItem{2, true, {}, K(2), nullptr});
  n.items.push_back(TrieItem{3, false, {}, K(3), nullptr});
  const Bytes preimage = EncodeTrieNode(n);
  const Bytes stored = EncodeStoredTrieNode(n);
  // The preimage is the node without the value; the stored form flags the
  // item (0x40) and appends len(u32) and the bytes after its hash.
  EXPECT_EQ(preimage.size(), 3u * (2 + 32) + 1);
  ASSERT_EQ(stored.size(), preimage.size() + 4 + 2);
  EXPECT_EQ(stored[1], 0x41);
  EXPECT_EQ(stored[2 + 1 + 32], 2);  // len, little-endian
  EXPECT_EQ(stored[2 + 1 + 32 + 4], 0xab);
  auto dec = DecodeTrieNode(stored);
  ASSERT_TRUE(dec.ok()) << dec.status();
  ASSERT_NE(dec->items[0].blob, nullptr);
  EXPECT_EQ(*dec->items[0].blob, (Bytes{0xab, 0xcd}));
  EXPECT_EQ(dec->items[1].blob, nullptr);
  EXPECT_EQ(EncodeTrieNode(*dec), preimage);
  EXPECT_EQ(EncodeStoredTrieNode(*dec), stored);
  // The preimage decodes too, without the value.
  auto plain = DecodeTrieNode(preimage);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->items[0].blob, nullptr);
}

TEST(TrieNodeCodecTest, EmptyNodeEncodesToNothing) {
  EXPECT_TRUE(EncodeTrieNode(TrieNode{}).empty());
}

TEST(TrieNodeCodecTest, EncodingLayoutIsDocumented) {
  TrieNode n;
  n.items.push_back(TrieItem{5, true, {0xaa}, Hash32{}, nullptr});
  Bytes enc = EncodeTrieNode(n);
  ASSERT_EQ(enc.size(), 1u + 1u + 1u + 32u);
  EXPECT_EQ(enc[0], 5);
  EXPECT_EQ(enc[1], 0x81);
  EXPECT_EQ(enc[2], 0xaa);
}

struct BadNode {
  const char* name;
  Bytes bytes;
};

class TrieNodeDecodeTest : public ::testing::TestWithParam<BadNode> {};

TEST_P(TrieNodeDecodeTest, MalformedNodeIsDataLoss) {
  EXPECT_EQ(DecodeTrieNode(GetParam().bytes).status().code(),
            absl::StatusCode::kDataLoss);
}

// One item at index 1 with `tag`, a zero hash and then `tail`.
Bytes OneItem(uint8_t tag, Bytes tail) {
  Bytes out = {1, tag};
  out.insert(out.end(), 32, 0);
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

Bytes TwoItems(uint8_t a, uint8_t b) {
  Bytes out;
  for (uint8_t idx : {a, b}) {
    out.push_back(idx);
    out.push_back(0);
    out.insert(out.end(), 32, 0);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TrieNodeDecodeTest,
    ::testing::Values(
        BadNode{"OneByte", {1}}, BadNode{"TruncatedHash", {1, 0, 1, 2}},
        BadNode{"PrefixTooLong",
                [] {
                  Bytes b = {1, 32};
                  b.insert(b.end(), 64, 0);
                  return b;
                }()},
        BadNode{"InlineValueOnPointer", OneItem(0xc0, {1, 0, 0, 0, 7})},
        BadNode{"TruncatedInlineLength", OneItem(0x40, {1, 0})},
        BadNode{"TruncatedInlineValue", OneItem(0x40, {3, 0, 0, 0, 7})},
        BadNode{"OutOfOrder", TwoItems(5, 3)},
        BadNode{"DuplicateIndex", TwoItems(4, 4)}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace rnode::rspace

namespace rnode::rspace {
namespace {

// The changes of one commit: `n` keys from `first`, every third deleted and
// the others set to fresh values, every fifth with an inline value.
std::vector<TrieChange> CommitChanges(int first, int n, int salt) {
  std::map<Hash32, TrieChange> m;
  for (int i = first; i < first + n; ++i) {
    TrieChange c{K(i), std::nullopt, nullptr};
    if (i % 3 != 0) {
      c.value = V(i * 7 + salt);
      if (i % 5 == 0) {
        c.blob =
            std::make_shared<const Bytes>(ToBytes("v" + std::to_string(i)));
      }
    }
    m[c.key] = c;
  }
  std::vector<TrieChange> out;
  for (auto& [k, c] : m) out.push_back(c);
  return out;
}

TEST(TrieParallelApplyTest, SameRootAndSameBatchWithAndWithoutAPool) {
  WorkerPool pool(2);
  InMemoryStore serial_store(1), parallel_store(1);
  MerkleTrie serial(&serial_store, 0), parallel(&parallel_store, 0);
  Hash32 rs = kEmptyRoot, rp = kEmptyRoot;
  // Three commits over an overlapping key range: inserts into an empty
  // trie, then updates and deletes of existing subtrees and new keys.
  for (int round = 0; round < 3; ++round) {
    const std::vector<TrieChange> changes =
        CommitChanges(round * 1500, 4000, round);
    ASSERT_GE(changes.size(), kParallelTrieApplyMin);
    WriteBatch bs, bp;
    auto s = serial.Apply(rs, changes, &bs);
    auto p = parallel.Apply(rp, changes, &bp, &pool);
    ASSERT_TRUE(s.ok() && p.ok());
    EXPECT_EQ(*s, *p) << "round " << round;
    ASSERT_EQ(bs.size(), bp.size());
    for (size_t i = 0; i < bs.size(); ++i) {
      EXPECT_EQ(bs.ops()[i].key, bp.ops()[i].key) << i;
      EXPECT_EQ(bs.ops()[i].value, bp.ops()[i].value) << i;
    }
    EXPECT_EQ(bs.ByteSize(), bp.ByteSize());
    ASSERT_TRUE(serial_store.Write(bs).ok());
    ASSERT_TRUE(parallel_store.Write(bp).ok());
    serial.Committed();
    parallel.Committed();
    rs = *s;
    rp = *p;
  }
  // The parallel trie reads back what it wrote.
  for (int i = 0; i < 3000 + 4000; i += 97) {
    auto a = serial.Get(rs, K(i));
    auto b = parallel.Get(rp, K(i));
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*a, *b) << i;
  }
}

}  // namespace
}  // namespace rnode::rspace

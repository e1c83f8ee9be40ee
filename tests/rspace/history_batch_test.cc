// Batched history access: MerkleTrie::GetMany, History::ReadLeaves,
// History::CommitOwned, single-change trie updates and the pointer-list
// channel state encoder agree with their one-at-a-time counterparts.
#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "crypto/hash.h"
#include "gtest/gtest.h"
#include "rspace/channel_codec.h"
#include "rspace/history/history.h"
#include "rspace/history/trie.h"
#include "rspace/storage/fault_store.h"
#include "rspace/storage/kv_store.h"
#include "rspace/storage/pipelined_store.h"
#include "tests/rspace/test_util.h"
#include "tests/rspace/trie_keys.h"
#include "util/status_macros.h"

namespace rnode::rspace {
namespace {

using testing::T;

using testing::K;
using testing::KP;
using testing::V;

Hash32 ApplyAll(MerkleTrie& trie, InMemoryStore& store, const Hash32& root,
                const std::map<Hash32, std::optional<Hash32>>& m) {
  std::vector<TrieChange> changes;
  for (const auto& [k, v] : m) changes.push_back(TrieChange{k, v, nullptr});
  WriteBatch batch;
  auto r = trie.Apply(root, changes, &batch);
  EXPECT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(store.Write(batch).ok());
  trie.Committed();
  return r.ok() ? *r : Hash32{};
}

// Keys that exercise every branch of the walk: random keys, keys under a
// shared compressed path, keys that leave that path at different bytes, and
// keys that share a leaf's first byte but not the rest.
std::vector<Hash32> MixedKeys(int n, std::mt19937_64& rng) {
  std::vector<Hash32> keys;
  for (int i = 0; i < n; ++i)
    keys.push_back(K(static_cast<int>(rng() % 100000)));
  for (uint8_t t = 0; t < 8; ++t) {
    keys.push_back(KP({7, 7, 7, 7}, t));
    keys.push_back(KP({7, 7, 7, 8}, t));
    keys.push_back(KP({7, 7, 9}, t));
    keys.push_back(KP({200}, t));
  }
  return keys;
}

TEST(TrieGetManyTest, AgreesWithGetForPresentAndAbsentKeys) {
  const uint64_t seed = testing::TestSeed(11);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  InMemoryStore store(1);
  MerkleTrie trie(&store, 0);
  std::map<Hash32, std::optional<Hash32>> present;
  std::vector<Hash32> stored = MixedKeys(2000, rng);
  for (size_t i = 0; i < stored.size(); i += 2) {
    present[stored[i]] = V(static_cast<int>(i));
  }
  const Hash32 root = ApplyAll(trie, store, kEmptyRoot, present);
  std::vector<Hash32> queries = MixedKeys(2000, rng);
  queries.insert(queries.end(), stored.begin(), stored.end());
  std::sort(queries.begin(), queries.end());
  queries.erase(std::unique(queries.begin(), queries.end()), queries.end());
  std::vector<std::optional<Hash32>> out(queries.size());
  ASSERT_TRUE(trie.GetMany(root, queries, std::span(out)).ok());
  size_t found = 0;
  for (size_t i = 0; i < queries.size(); ++i) {
    auto one = trie.Get(root, queries[i]);
    ASSERT_TRUE(one.ok()) << one.status();
    EXPECT_EQ(out[i], *one) << HexEncode(queries[i]);
    found += out[i].has_value();
  }
  EXPECT_EQ(found, present.size());
}

// Counts single and batched reads of an in-memory store.
class CountingStore final : public KeyValueStore {
 public:
  explicit CountingStore(KeyValueStore* base) : base_(base) {}
  size_t ColumnCount() const override { return base_->ColumnCount(); }
  absl::StatusOr<std::optional<Bytes>> Get(ColumnId c, ByteView k) override {
    ++gets;
    return base_->Get(c, k);
  }
  absl::StatusOr<std::vector<std::optional<Bytes>>> MultiGet(
      ColumnId c, std::span<const ByteView> keys) override {
    ++multi_gets;
    std::vector<std::optional<Bytes>> out;
    for (ByteView k : keys) {
      ASSIGN_OR_RETURN(std::optional<Bytes> v, base_->Get(c, k));
      out.push_back(std::move(v));
    }
    return out;
  }
  absl::Status Write(const WriteBatch& b) override { return base_->Write(b); }
  absl::Status ForEach(
      ColumnId c,
      const std::function<absl::Status(ByteView, ByteView)>& fn) override {
    return base_->ForEach(c, fn);
  }
  int gets = 0;
  int multi_gets = 0;

 private:
  KeyValueStore* base_;
};

TEST(TrieGetManyTest, AColdWalkFetchesTheChildrenOfANodeInOneBatch) {
  InMemoryStore base(1);
  std::map<Hash32, std::optional<Hash32>> m;
  for (int i = 0; i < 3000; ++i) m[K(i)] = V(i);
  Hash32 root;
  {
    MerkleTrie writer(&base, 0);
    root = ApplyAll(writer, base, kEmptyRoot, m);
  }
  CountingStore counting(&base);
  MerkleTrie trie(&counting, 0);  // Cold cache.
  std::vector<Hash32> keys;
  for (const auto& [k, v] : m) keys.push_back(k);
  std::vector<std::optional<Hash32>> out(keys.size());
  ASSERT_TRUE(trie.GetMany(root, keys, std::span(out)).ok());
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(out[i], m[keys[i]]);
  // Without a cache nothing is prefetched: each of the trie's 324 nodes (a
  // root of 256 pointers, nodes of about a dozen items below it, and 67
  // third-level nodes where two keys share two bytes) is one Get.
  CountingStore uncached_count(&base);
  MerkleTrie uncached(&uncached_count, 0, /*cache_entries=*/0);
  ASSERT_TRUE(uncached.GetMany(root, keys, std::span(out)).ok());
  EXPECT_EQ(uncached_count.multi_gets, 0);
  EXPECT_EQ(uncached_count.gets, 324);
  // With the cache, the children of a node with several pointers to follow
  // come in one batch: the root's 256 in one MultiGet, and ten more for the
  // second-level nodes with two or more third-level children; the 46
  // nodes that are their parent's only pointer to follow, and the root, are
  // single Gets: 58 store calls instead of 324.
  EXPECT_EQ(counting.multi_gets, 11);
  EXPECT_EQ(counting.gets, 47);
}

TEST(TrieGetManyTest, AMissingChildInABatchIsDataLoss) {
  InMemoryStore base(1);
  std::map<Hash32, std::optional<Hash32>> m;
  for (int i = 0; i < 600; ++i) m[K(i)] = V(i);
  MerkleTrie writer(&base, 0);
  const Hash32 root = ApplyAll(writer, base, kEmptyRoot, m);
  auto root_node = writer.Node(root);
  ASSERT_TRUE(root_node.ok());
  const TrieItem& child = (*root_node)->items[5];
  ASSERT_TRUE(child.is_ptr);
  WriteBatch del;
  del.Delete(0, child.hash);
  ASSERT_TRUE(base.Write(del).ok());
  MerkleTrie cold(&base, 0);
  std::vector<Hash32> keys;
  for (const auto& [k, v] : m) keys.push_back(k);
  std::vector<std::optional<Hash32>> out(keys.size());
  absl::Status s = cold.GetMany(root, keys, std::span(out));
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find(HexEncode(child.hash)), std::string::npos) << s;
}

TEST(TrieGetManyTest, EmptyRootHasNoKeys) {
  InMemoryStore store(1);
  MerkleTrie trie(&store, 0);
  std::vector<Hash32> keys = {K(1), K(2)};
  std::sort(keys.begin(), keys.end());
  std::vector<std::optional<Hash32>> out(2, Hash32{});
  ASSERT_TRUE(trie.GetMany(kEmptyRoot, keys, std::span(out)).ok());
  EXPECT_FALSE(out[0].has_value());
  EXPECT_FALSE(out[1].has_value());
}

TEST(TrieGetManyTest, UnsortedOrDuplicateKeysAreRejected) {
  InMemoryStore store(1);
  MerkleTrie trie(&store, 0);
  std::vector<Hash32> keys = {K(1), K(2)};
  std::sort(keys.begin(), keys.end());
  std::vector<std::optional<Hash32>> out(2);
  std::vector<Hash32> reversed = {keys[1], keys[0]};
  EXPECT_EQ(trie.GetMany(kEmptyRoot, reversed, std::span(out)).code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<Hash32> twice = {keys[0], keys[0]};
  EXPECT_EQ(trie.GetMany(kEmptyRoot, twice, std::span(out)).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TrieGetManyTest, MissingNodeIsDataLoss) {
  InMemoryStore store(1);
  MerkleTrie trie(&store, 0, /*cache_entries=*/0);
  std::vector<Hash32> keys = {K(1)};
  std::vector<std::optional<Hash32>> out(1);
  EXPECT_EQ(trie.GetMany(K(77), keys, std::span(out)).code(),
            absl::StatusCode::kDataLoss);
}

// Single-change applies take a shortcut at leaves; the root must stay the
// canonical root of the resulting set.
TEST(TrieSingleChangeTest, OneChangeAtATimeAgreesWithModel) {
  const uint64_t seed = testing::TestSeed(13);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  InMemoryStore store(1);
  MerkleTrie trie(&store, 0);
  std::vector<Hash32> pool = MixedKeys(60, rng);
  std::map<Hash32, Hash32> model;
  Hash32 root = kEmptyRoot;
  for (int step = 0; step < 600; ++step) {
    const Hash32& k = pool[rng() % pool.size()];
    std::optional<Hash32> v;
    const int op = static_cast<int>(rng() % 4);
    if (op == 0) {
      v = std::nullopt;  // Delete (present or not).
    } else if (op == 1 && model.count(k)) {
      v = model[k];  // Same value again.
    } else {
      v = V(static_cast<int>(rng() % 50));
    }
    if (v.has_value()) {
      model[k] = *v;
    } else {
      model.erase(k);
    }
    root = ApplyAll(trie, store, root, {{k, v}});
    std::map<Hash32, std::optional<Hash32>> fresh(model.begin(), model.end());
    InMemoryStore other_store(1);
    MerkleTrie other(&other_store, 0);
    ASSERT_EQ(ApplyAll(other, other_store, kEmptyRoot, fresh), root)
        << "step " << step;
  }
}

struct HistoryFixture {
  InMemoryStore store{3};
  std::unique_ptr<History> history = *History::Open(&store, HistoryOptions{});
};

std::vector<LeafUpdate> Updates(int from, int to) {
  std::map<Hash32, Bytes> blobs;
  for (int i = from; i < to; ++i)
    blobs[K(i)] = ToBytes("state" + std::to_string(i));
  std::vector<LeafUpdate> out;
  for (auto& [k, b] : blobs) {
    Hash32 h = crypto::Blake2b256(b);
    out.push_back(LeafUpdate{k, b, h});
  }
  return out;
}

TEST(HistoryBatchTest, ReadLeavesAgreesWithReadLeaf) {
  HistoryFixture f;
  auto root = f.history->Commit(kEmptyRoot, Updates(0, 300));
  ASSERT_TRUE(root.ok()) << root.status();
  std::vector<Hash32> keys;
  for (int i = 150; i < 450; ++i) keys.push_back(K(i));
  std::sort(keys.begin(), keys.end());
  auto many = f.history->ReadLeaves(*root, keys);
  ASSERT_TRUE(many.ok()) << many.status();
  ASSERT_EQ(many->size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    auto one = f.history->ReadLeaf(*root, keys[i]);
    ASSERT_TRUE(one.ok()) << one.status();
    EXPECT_EQ((*many)[i], *one);
  }
}

TEST(HistoryBatchTest, CommitOwnedGivesTheRootAndBlobsOfCommit) {
  HistoryFixture a, b;
  auto first = Updates(0, 200);
  auto ra = a.history->Commit(kEmptyRoot, first);
  auto rb = b.history->CommitOwned(kEmptyRoot, first);
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_EQ(*ra, *rb);
  // A second commit on top, with deletions.
  std::vector<LeafUpdate> second = Updates(100, 300);
  for (auto& u : second) {
    if (u.key[0] % 3 == 0) u.blob.reset();
  }
  auto ra2 = a.history->Commit(*ra, second);
  auto rb2 = b.history->CommitOwned(*rb, second);
  ASSERT_TRUE(ra2.ok() && rb2.ok());
  EXPECT_EQ(*ra2, *rb2);
  EXPECT_EQ(b.history->last_root(), *rb2);
  EXPECT_TRUE(b.history->VerifyRoot(*rb2).ok());
  for (int i = 0; i < 300; ++i) {
    EXPECT_EQ(*a.history->ReadLeaf(*ra2, K(i)),
              *b.history->ReadLeaf(*rb2, K(i)));
  }
}

// A pipelined commit is readable through the History before its write
// lands (here it cannot land: the base refuses writes), and lands whole
// once the base heals.
TEST(HistoryBatchTest, APipelinedCommitReadsBeforeItLands) {
  HistoryFixture plain;
  InMemoryStore base(3);
  FaultInjectingStore faulty(&base);
  PipelinedStore store(&faulty);
  HistoryOptions options;
  options.node_cache_entries = 1;  // Reads go to the store, not the cache.
  options.node_cache_bytes = 1;
  auto history = History::Open(&store, options);
  ASSERT_TRUE(history.ok()) << history.status();
  std::vector<LeafUpdate> updates = Updates(0, 300);
  for (int i = 0; i < 3; ++i) {  // Out-of-line blobs too.
    Bytes big(kDefaultInlineBlobMax + 10, static_cast<uint8_t>(i));
    updates[i * 50].blob_hash = crypto::Blake2b256(big);
    updates[i * 50].blob = std::move(big);
  }
  auto expected = plain.history->Commit(kEmptyRoot, updates);
  ASSERT_TRUE(expected.ok());
  faulty.FailWritesAfter(0);
  auto root = (*history)->CommitOwned(kEmptyRoot, updates, nullptr,
                                      CommitWrite::kPipelined);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(*root, *expected);
  EXPECT_TRUE(*(*history)->HasRoot(*root));
  EXPECT_TRUE((*history)->VerifyRoot(*root).ok());
  for (int i = 0; i < 300; i += 7) {
    EXPECT_EQ(*(*history)->ReadLeaf(*root, K(i)),
              *plain.history->ReadLeaf(*expected, K(i)));
  }
  EXPECT_EQ(base.KeyCount(0), 0u);  // Nothing landed.
  EXPECT_EQ(store.Sync().code(), absl::StatusCode::kUnavailable);
  faulty.Heal();
  ASSERT_TRUE(store.Sync().ok());
  auto reopened = History::Open(&base, HistoryOptions{});
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ((*reopened)->last_root(), *root);
  EXPECT_TRUE((*reopened)->VerifyRoot(*root).ok());
}

TEST(ChannelStateCodecTest, PointerListEncodingEqualsStateEncoding) {
  ChannelState st;
  st.data.push_back(Datum{T("b"), true, Hash32{1}});
  st.data.push_back(Datum{T("a"), false, Hash32{2}});
  WaitingContinuation k;
  k.channels = {T("y"), T("x")};
  k.patterns = {T("p1"), T("p2")};
  k.continuation = T("body");
  k.persist = true;
  k.source = Hash32{3};
  k.group = MakeJoinGroup(k.channels);
  st.continuations.push_back(k);
  st.joins.push_back(k.group);
  std::vector<const Datum*> data = {&st.data[0], &st.data[1]};
  std::vector<const WaitingContinuation*> conts = {&st.continuations[0]};
  std::vector<const JoinGroup*> joins = {&st.joins[0]};
  EXPECT_EQ(EncodeChannelState(data, conts, joins), EncodeChannelState(st));
  EXPECT_EQ(EncodeChannelState({}, {}, {}), EncodeChannelState(ChannelState{}));
}

}  // namespace
}  // namespace rnode::rspace

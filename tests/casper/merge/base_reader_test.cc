// BaseReader: one leaf per distinct channel however it is noted (sorted
// batches, single notes, both), and reads of present and absent leaves.
#include "casper/merge/internal/base_reader.h"

#include <memory>
#include <set>
#include <vector>

#include "crypto/hash.h"
#include "gtest/gtest.h"
#include "rspace/channel_codec.h"
#include "rspace/storage/kv_store.h"

namespace rnode::casper::merge::internal {
namespace {

Hash32 Channel(uint8_t n) {
  Hash32 h{};
  h[0] = n;
  h[31] = static_cast<uint8_t>(0xA0 + n);
  return h;
}

class BaseReaderTest : public ::testing::Test {
 protected:
  BaseReaderTest() {
    history_ = *rspace::History::Open(&store_, rspace::HistoryOptions{});
    // The base holds one datum on channel 1 and one on channel 3.
    std::vector<rspace::LeafUpdate> updates;
    for (uint8_t n : {1, 3}) {
      rspace::ChannelState st;
      st.data.push_back(
          rspace::Datum{rspace::Term::Make(Bytes{n}), false, Channel(100 + n)});
      Bytes blob = rspace::EncodeChannelState(st);
      Hash32 h = crypto::Blake2b256(blob);
      updates.push_back({Channel(n), std::move(blob), h});
    }
    root_ = *history_->Commit(rspace::kEmptyRoot, updates);
  }

  std::vector<KeyRecord> Records(std::vector<uint8_t> channels) {
    std::vector<KeyRecord> out;
    for (uint32_t i = 0; i < channels.size(); ++i)
      out.push_back(KeyRecord::Make(Channel(channels[i]), i, 0));
    return out;
  }

  rspace::InMemoryStore store_{3};
  std::unique_ptr<rspace::History> history_;
  Hash32 root_{};
};

TEST_F(BaseReaderTest, EachChannelGetsOneLeafHoweverItIsNoted) {
  BaseReader reader(*history_, root_, nullptr);
  const uint32_t single = reader.Want(Channel(4));
  EXPECT_EQ(reader.Want(Channel(4)), single);

  // A batch with repeats and the singly noted channel, unsorted.
  std::vector<KeyRecord> batch = Records({3, 1, 4, 3, 2});
  std::vector<uint32_t> leaf_of(batch.size(), UINT32_MAX);
  reader.Resolve(
      batch, /*sorted=*/false,
      [&](const KeyRecord& r, uint32_t leaf) { leaf_of[r.item] = leaf; });
  EXPECT_EQ(leaf_of[2], single);
  EXPECT_EQ(leaf_of[0], leaf_of[3]);
  EXPECT_EQ(std::set<uint32_t>(leaf_of.begin(), leaf_of.end()).size(), 4u);
  EXPECT_EQ(reader.reads(), 4u);

  // A second batch and single notes find the same leaves.
  std::vector<KeyRecord> again = Records({1, 2, 5});
  std::vector<uint32_t> leaf_again(again.size(), UINT32_MAX);
  reader.Resolve(again, false, [&](const KeyRecord& r, uint32_t leaf) {
    leaf_again[r.item] = leaf;
  });
  EXPECT_EQ(leaf_again[0], leaf_of[1]);
  EXPECT_EQ(leaf_again[1], leaf_of[4]);
  EXPECT_EQ(reader.Want(Channel(3)), leaf_of[0]);
  EXPECT_EQ(reader.Want(Channel(5)), leaf_again[2]);
  EXPECT_EQ(reader.reads(), 5u);
  EXPECT_EQ(reader.pending(), 5u);
}

TEST_F(BaseReaderTest, ReadsPresentAndAbsentLeavesInOneBatch) {
  BaseReader reader(*history_, root_, nullptr);
  std::vector<KeyRecord> batch = Records({1, 2, 3});
  std::vector<uint32_t> leaf_of(batch.size());
  reader.Resolve(batch, false, [&](const KeyRecord& r, uint32_t leaf) {
    leaf_of[r.item] = leaf;
  });
  ASSERT_TRUE(reader.ReadPending().ok());
  EXPECT_EQ(reader.pending(), 0u);
  for (uint32_t i : {0u, 2u}) {
    const BaseLeaf& leaf = reader.At(leaf_of[i]);
    EXPECT_TRUE(leaf.loaded);
    ASSERT_TRUE(leaf.blob.has_value());
    ASSERT_EQ(leaf.state.data.size(), 1u);
  }
  EXPECT_EQ(reader.At(leaf_of[0]).state.data[0].source, Channel(101));
  EXPECT_EQ(reader.At(leaf_of[2]).state.data[0].source, Channel(103));
  const BaseLeaf& absent = reader.At(leaf_of[1]);
  EXPECT_TRUE(absent.loaded);
  EXPECT_FALSE(absent.blob.has_value());
  EXPECT_TRUE(absent.state.empty());
}

TEST_F(BaseReaderTest, GetReadsANewChannelAtOnce) {
  BaseReader reader(*history_, root_, nullptr);
  auto leaf = reader.Get(Channel(3));
  ASSERT_TRUE(leaf.ok()) << leaf.status();
  EXPECT_TRUE((*leaf)->loaded);
  EXPECT_EQ((*leaf)->state.data.size(), 1u);
  EXPECT_EQ(reader.pending(), 0u);
}

}  // namespace
}  // namespace rnode::casper::merge::internal

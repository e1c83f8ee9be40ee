// Tests for DagStore::PruneBelow (history retention of blocks): what goes,
// what stays, the records left behind, reopening, a block inserted during a
// prune, and an interrupted prune finished later.
#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "casper/block/block.h"
#include "casper/dag/dag_store.h"
#include "gtest/gtest.h"
#include "rspace/storage/kv_store.h"
#include "tests/casper/dag_test_blocks.h"
#include "tests/casper/test_key.h"
#include "tests/scan_hook_store.h"

namespace rnode::casper::dag {
namespace {

using blocks_for_tests::Deploy;
using blocks_for_tests::MakeBlock;
using testing::MakeTestKey;

constexpr DagStoreOptions kSmallWindow{.kept_below_finalized = 8};
const DagColumns kColumns = DagColumnsFrom(0);

// A shard's blocks inserted into a DAG as they are made: each block
// justifies every validator's latest block.
class Chain {
 public:
  explicit Chain(DagStore* dag) : dag_(dag) {}

  const block::Block& Add(uint8_t v, std::vector<Hash32> parents,
                          int64_t number, std::vector<int> deploys = {},
                          std::vector<Bytes> rejected = {},
                          bool invalid = false) {
    std::vector<block::Justification> justified;
    for (const auto& [validator, h] : latest_) {
      justified.push_back({MakeTestKey(validator).pk, h});
    }
    block::Block b =
        MakeBlock(v, ++seq_[v], number, std::move(parents), justified, deploys);
    if (!rejected.empty()) {
      for (Bytes& sig : rejected) {
        block::RejectedDeploy r;
        r.sig = sig;
        b.body.rejected.push_back(r);
      }
      EXPECT_TRUE(block::SignBlock(b, MakeTestKey(v).sk).ok());
    }
    absl::StatusOr<bool> in = dag_->Insert(b, invalid);
    EXPECT_TRUE(in.ok() && *in) << in.status();
    if (!invalid) latest_[v] = b.hash;
    blocks_.push_back(std::move(b));
    return blocks_.back();
  }
  const std::vector<block::Block>& blocks() const { return blocks_; }
  const block::Block& at(int64_t number) const {
    for (const auto& b : blocks_) {
      if (b.body.state.block_number == number) return b;
    }
    ADD_FAILURE() << "no block #" << number;
    return blocks_.front();
  }

 private:
  DagStore* dag_;
  std::map<uint8_t, Hash32> latest_;
  std::map<uint8_t, int32_t> seq_;
  std::vector<block::Block> blocks_;
};

// The genesis; validator 3 makes block #1 (deploy 1) and stops; then
// validators 1 and 2 take turns up to #`top`, block n holding deploy n,
// every tenth block merging the block two below as a second parent. #50
// is stored invalid; #250 holds deploy 10 again; #30 rejected deploy 5 and
// #260 deploy 20. Finalized up to #`top` - 10.
void Grow(Chain& chain, DagStore& dag, int64_t top) {
  chain.Add(1, {}, 0);
  chain.Add(3, {chain.at(0).hash}, 1, {1});
  Hash32 head = chain.at(1).hash;
  for (int64_t n = 2; n <= top; ++n) {
    std::vector<Hash32> parents{head};
    if (n % 10 == 0 && n > 2) parents.push_back(chain.at(n - 2).hash);
    std::vector<int> deploys{static_cast<int>(n)};
    if (n == 250) deploys.push_back(10);
    std::vector<Bytes> rejected;
    if (n == 30) rejected.push_back(Deploy(5).sig);
    if (n == 260) rejected.push_back(Deploy(20).sig);
    const bool invalid = n == 50;
    const block::Block& b = chain.Add(static_cast<uint8_t>(1 + n % 2), parents,
                                      n, deploys, rejected, invalid);
    if (!invalid) head = b.hash;
  }
  ASSERT_TRUE(dag.SetLastFinalized(chain.at(top - 10).hash).ok());
}

// What PruneBelow(floor) keeps below the floor, worked out from the blocks
// themselves: the genesis, each sender's latest valid block and what it
// justifies, and the dependencies of every block above the floor.
std::set<Hash32> ExpectedKept(const std::vector<block::Block>& blocks,
                              const std::set<Hash32>& invalid, int64_t floor) {
  std::set<Hash32> keep;
  std::map<crypto::Secp256k1PublicKey, const block::Block*> latest;
  auto deps = [&](const block::Block& b) {
    keep.insert(b.header.parents.begin(), b.header.parents.end());
    for (const auto& j : b.justifications) keep.insert(j.latest_block);
  };
  for (const auto& b : blocks) {
    if (b.body.state.block_number == 0) keep.insert(b.hash);
    if (b.body.state.block_number > floor) deps(b);
    if (invalid.contains(b.hash)) continue;
    auto& l = latest[b.sender];
    if (l == nullptr || b.seq_num > l->seq_num) l = &b;
  }
  for (const auto& [sender, b] : latest) {
    keep.insert(b->hash);
    deps(*b);
  }
  std::set<Hash32> below;
  for (const auto& b : blocks) {
    if (b.body.state.block_number < floor && keep.contains(b.hash)) {
      below.insert(b.hash);
    }
  }
  return below;
}

// Every record of the state column names stored blocks only.
void ExpectNoDanglingRecords(rspace::KeyValueStore& store,
                             const DagStore& dag) {
  size_t records = 0;
  ASSERT_TRUE(store
                  .ForEach(kColumns.state,
                           [&](ByteView key, ByteView value) -> absl::Status {
                             if (key.empty()) return absl::OkStatus();
                             std::vector<Hash32> named;
                             auto hash_at = [&](size_t at) {
                               Hash32 h;
                               std::copy(key.begin() + at,
                                         key.begin() + at + 32, h.begin());
                               named.push_back(h);
                             };
                             switch (key[0]) {
                               case 'H':
                                 hash_at(9);
                                 break;
                               case 'C':
                                 hash_at(1);
                                 hash_at(33);
                                 break;
                               case 'F':
                               case 'T':
                               case 'I':
                                 hash_at(1);
                                 break;
                               case 'L': {
                                 Hash32 h;
                                 std::copy(value.begin(), value.end(),
                                           h.begin());
                                 named.push_back(h);
                                 break;
                               }
                               default:
                                 return absl::OkStatus();
                             }
                             ++records;
                             for (const Hash32& h : named) {
                               EXPECT_TRUE(dag.Contains(h))
                                   << "record " << HexEncode(key)
                                   << " names a block not stored";
                             }
                             return absl::OkStatus();
                           })
                  .ok());
  EXPECT_GT(records, 0u);
}

size_t StoredMetas(const rspace::InMemoryStore& store) {
  return store.KeyCount(kColumns.meta);
}

std::string Views(const DagStore& dag) {
  std::string out = "size " + std::to_string(dag.size()) + " floor " +
                    std::to_string(dag.floor().value_or(-1)) + "\n";
  for (int64_t n = 0; n <= dag.MaxHeight(); ++n) {
    for (const Hash32& h : dag.AtHeight(n)) {
      out += std::to_string(n) + " " + HexEncode(h) +
             (dag.IsFinalized(h) ? " final" : "") + " kids";
      for (const Hash32& c : dag.Children(h)) out += " " + HexEncode(c);
      out += "\n";
    }
  }
  for (const Hash32& h : dag.Tips()) out += "tip " + HexEncode(h) + "\n";
  for (const Hash32& h : dag.InvalidBlocks()) out += "bad " + HexEncode(h);
  for (const auto& [k, h] : dag.LatestMessages()) {
    out += "latest " + HexEncode(h) + "\n";
  }
  return out;
}

// An in-memory store holding Grow's DAG up to #300.
struct GrownStore {
  GrownStore() {
    absl::StatusOr<std::unique_ptr<DagStore>> opened =
        DagStore::Open(&store, kColumns, kSmallWindow);
    EXPECT_TRUE(opened.ok()) << opened.status();
    dag = *std::move(opened);
    chain = std::make_unique<Chain>(dag.get());
    Grow(*chain, *dag, 300);
  }
  rspace::InMemoryStore store{4};
  std::unique_ptr<DagStore> dag;
  std::unique_ptr<Chain> chain;
};

TEST(DagPruneTest, DeletesWhatNothingKeptReferencesAndOnlyThat) {
  GrownStore grown;
  rspace::InMemoryStore& store = grown.store;
  DagStore& dag = *grown.dag;
  const Chain& chain = *grown.chain;
  const std::set<Hash32> invalid{chain.at(50).hash};
  const std::set<Hash32> kept = ExpectedKept(chain.blocks(), invalid, 200);
  // The genesis, validator 3's block and what it justifies, and #199 (the
  // blocks above #200 justify it).
  EXPECT_EQ(kept.size(), 3u);
  EXPECT_TRUE(kept.contains(chain.at(1).hash));
  EXPECT_TRUE(kept.contains(chain.at(199).hash));

  absl::StatusOr<DagStore::PruneStats> stats = dag.PruneBelow(200);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->floor, 200);
  EXPECT_EQ(dag.floor(), 200);
  EXPECT_EQ(stats->blocks_kept, kept.size());
  EXPECT_EQ(stats->blocks_deleted, 200 - kept.size());
  EXPECT_GT(stats->bytes_deleted, stats->blocks_deleted * 100);
  for (const block::Block& b : chain.blocks()) {
    const bool stays =
        b.body.state.block_number >= 200 || kept.contains(b.hash);
    EXPECT_EQ(dag.Contains(b.hash), stays) << b.body.state.block_number;
    absl::StatusOr<std::optional<block::Block>> body = dag.GetBlock(b.hash);
    ASSERT_TRUE(body.ok());
    EXPECT_EQ(body->has_value(), stays);
    EXPECT_EQ(dag.Meta(b.hash).ok(), stays);
  }
  EXPECT_EQ(dag.size(), chain.blocks().size() - stats->blocks_deleted);
  EXPECT_EQ(StoredMetas(store), dag.size());
  EXPECT_TRUE(dag.AtHeight(100).empty());
  EXPECT_TRUE(dag.InvalidBlocks().empty());  // #50 went
  ExpectNoDanglingRecords(store, dag);

  // The deploy index keeps the holders still stored, and drops an entry
  // left empty.
  EXPECT_EQ(*dag.BlocksWithDeploy(Deploy(10).sig),
            std::vector<Hash32>{chain.at(250).hash});
  EXPECT_EQ(*dag.BlocksWithDeploy(Deploy(1).sig),
            std::vector<Hash32>{chain.at(1).hash});
  EXPECT_FALSE(store.Get(kColumns.deploys, Deploy(100).sig)->has_value());
  EXPECT_TRUE(dag.BlocksRejectingDeploy(Deploy(5).sig)->empty());
  EXPECT_EQ(*dag.BlocksRejectingDeploy(Deploy(20).sig),
            std::vector<Hash32>{chain.at(260).hash});

  // The store reopens to the same DAG, which grows and prunes on.
  const std::string before = Views(dag);
  auto reopened = DagStore::Open(&store, kColumns, kSmallWindow);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ(Views(**reopened), before);
  Hash32 head = chain.at(300).hash;
  for (int64_t n = 301; n <= 340; ++n) {
    std::vector<block::Justification> justified{
        {MakeTestKey(1).pk, head}, {MakeTestKey(3).pk, chain.at(1).hash}};
    block::Block b = MakeBlock(1, 1000 + static_cast<int32_t>(n), n, {head},
                               justified, {static_cast<int>(n)});
    ASSERT_TRUE((*reopened)->Insert(b).ok());
    head = b.hash;
  }
  ASSERT_TRUE((*reopened)->SetLastFinalized(head).ok());
  absl::StatusOr<DagStore::PruneStats> again = (*reopened)->PruneBelow(320);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->floor, 320);
  EXPECT_GT(again->blocks_deleted, 100u);
  EXPECT_TRUE((*reopened)->Contains(chain.at(1).hash));  // still latest
  ExpectNoDanglingRecords(store, **reopened);
  EXPECT_EQ(StoredMetas(store), (*reopened)->size());
}

TEST(DagPruneTest, RefusesWithoutFinalityAndAboveTheWindow) {
  rspace::InMemoryStore store(4);
  auto opened = DagStore::Open(&store, kColumns, kSmallWindow);
  ASSERT_TRUE(opened.ok());
  DagStore& dag = **opened;
  Chain chain(&dag);
  chain.Add(1, {}, 0);
  for (int64_t n = 1; n <= 40; ++n) {
    chain.Add(static_cast<uint8_t>(1 + n % 2), {chain.at(n - 1).hash}, n);
  }
  EXPECT_TRUE(absl::IsFailedPrecondition(dag.PruneBelow(10).status()));
  ASSERT_TRUE(dag.SetLastFinalized(chain.at(30).hash).ok());
  // #30 - 8 is the highest floor: the window stays whole.
  EXPECT_TRUE(absl::IsInvalidArgument(dag.PruneBelow(23).status()));
  EXPECT_EQ(dag.floor(), std::nullopt);
  EXPECT_EQ(dag.size(), 41u);
  absl::StatusOr<DagStore::PruneStats> stats = dag.PruneBelow(22);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->floor, 22);
  // A lower floor later does not lower it.
  stats = dag.PruneBelow(5);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->floor, 22);
  EXPECT_EQ(stats->blocks_deleted, 0u);
}

// A block inserted while a prune runs keeps the blocks it depends on, even
// one the prune had chosen to delete (its sender justifies an old block no
// other kept block names).
TEST(DagPruneTest, ABlockInsertedDuringAPruneKeepsItsDependencies) {
  rspace::InMemoryStore base(4);
  rnode::testing::ScanHookStore store(&base);
  auto opened = DagStore::Open(&store, kColumns, kSmallWindow);
  ASSERT_TRUE(opened.ok());
  DagStore& dag = **opened;
  Chain chain(&dag);
  Grow(chain, dag, 300);
  const Hash32 old = chain.at(120).hash;
  ASSERT_FALSE(
      ExpectedKept(chain.blocks(), {chain.at(50).hash}, 200).contains(old));
  const block::Block late = MakeBlock(
      4, 1, 301, {chain.at(300).hash},
      {{MakeTestKey(1).pk, chain.at(299).hash}, {MakeTestKey(4).pk, old}});
  bool inserted = false;
  // The sweep scans the height index from #0 after it chose what to keep
  // (its first scan from there reads the genesis only).
  int scans_from_zero = 0;
  Bytes zero{'H', 0x80, 0, 0, 0, 0, 0, 0, 0};
  zero.resize(1 + 8 + 32);
  store.on_scan = [&](rspace::ColumnId column, ByteView from) {
    if (column != kColumns.state ||
        !std::equal(from.begin(), from.end(), zero.begin(), zero.end())) {
      return;
    }
    if (++scans_from_zero == 2) {
      absl::StatusOr<bool> in = dag.Insert(late);
      inserted = in.ok() && *in;
    }
  };
  absl::StatusOr<DagStore::PruneStats> stats = dag.PruneBelow(200, nullptr, 16);
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_TRUE(inserted);
  EXPECT_TRUE(dag.Contains(old));
  EXPECT_TRUE(dag.Contains(late.hash));
  ExpectNoDanglingRecords(base, dag);
  // A later prune keeps it too: `late`, above the floor, justifies it.
  store.on_scan = nullptr;
  stats = dag.PruneBelow(200);
  ASSERT_TRUE(stats.ok());
  EXPECT_TRUE(dag.Contains(old));
}

TEST(DagPruneTest, AnInterruptedPruneIsFinishedByTheNext) {
  GrownStore grown;
  rspace::InMemoryStore& store = grown.store;
  DagStore& dag = *grown.dag;
  const Chain& chain = *grown.chain;
  std::atomic<bool> stop{true};
  absl::StatusOr<DagStore::PruneStats> stats = dag.PruneBelow(200, &stop);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->blocks_deleted, 0u);
  EXPECT_EQ(dag.floor(), 200);
  // As after a crash: the floor is up, the old blocks still there.
  auto reopened = DagStore::Open(&store, kColumns, kSmallWindow);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ((*reopened)->floor(), 200);
  EXPECT_TRUE((*reopened)->Contains(chain.at(100).hash));
  stats = (*reopened)->PruneBelow(0);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->floor, 200);
  EXPECT_EQ(
      stats->blocks_deleted,
      200 - ExpectedKept(chain.blocks(), {chain.at(50).hash}, 200).size());
  EXPECT_FALSE((*reopened)->Contains(chain.at(100).hash));
}

}  // namespace
}  // namespace rnode::casper::dag

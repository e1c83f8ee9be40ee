// Unit tests of the merge steps (casper/merge/internal/steps.h) on
// hand-built scopes and in-memory base snapshots, and of MergeContext.
#include "casper/merge/internal/steps.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "casper/merge/internal/serial_executor.h"
#include "casper/merge/merge_context.h"
#include "casper/merge/merger.h"
#include "gtest/gtest.h"
#include "rspace/channel_codec.h"
#include "tests/casper/merge/merge_test_util.h"
#include "tests/casper/merge/scope_builders.h"

namespace rnode::casper::merge::internal {
namespace {

using rspace::ChannelState;
using rspace::Datum;
using rspace::WaitingContinuation;
using testing::HashOf;
using testing::MakeTerm;

using testing::C;
using testing::Chan;
using testing::Change;
using testing::Continuation;
using testing::Deploy;
using testing::MakeDatum;
using testing::StoreContinuation;
using testing::StoreDatum;
using testing::TakeDatum;

std::shared_ptr<const BlockIndex> Block(uint64_t tag,
                                        std::vector<DeployInput> deploys) {
  for (auto& d : deploys) {
    std::sort(
        d.changes.channels.begin(), d.changes.channels.end(),
        [](const auto& a, const auto& b) { return a.channel < b.channel; });
  }
  auto idx =
      BuildBlockIndex(BlockInput{HashOf(600, tag), tag, std::move(deploys)});
  EXPECT_TRUE(idx.ok()) << idx.status();
  return *idx;
}

// A base snapshot of `index` read from `states` (absent: no leaf).
absl::StatusOr<std::unique_ptr<BaseSnapshot>> InMemoryBase(
    const ScopeIndex& index, const std::map<Hash32, ChannelState>& states) {
  MergeScratch scratch;
  LeafReader read = [&](std::span<const Hash32> channels) {
    std::vector<std::optional<Bytes>> out;
    for (const Hash32& ch : channels) {
      auto it = states.find(ch);
      if (it == states.end()) {
        out.emplace_back();
      } else {
        out.emplace_back(rspace::EncodeChannelState(it->second));
      }
    }
    return absl::StatusOr<std::vector<std::optional<Bytes>>>(std::move(out));
  };
  return ReadBase(PlanBaseReads(index, scratch), read, nullptr);
}

// The steps up to the decision, on an in-memory base.
struct StepsRun {
  ScopeIndex index;
  Branches branches;
  Conflicts conflicts;
  std::unique_ptr<BaseSnapshot> base;
  BaseChecks checks;
  NumberBases numbers;
  Decision decision;
};

StepsRun Steps(std::span<const std::shared_ptr<const BlockIndex>> scope,
               const std::map<Hash32, ChannelState>& states,
               const NumberChannelCodec* codec = nullptr) {
  StepsRun r;
  MergeScratch scratch;
  r.index = *IndexScope(scope, codec);
  r.branches = *BuildBranches(r.index, scratch);
  r.conflicts = CollectConflicts(r.index, r.branches, scratch);
  r.base = *InMemoryBase(r.index, states);
  r.checks = *CheckBase(r.index, r.branches, r.conflicts, *r.base);
  r.numbers = *ReadNumberBases(r.index, r.branches, *r.base, codec);
  r.decision = Decide(r.branches, r.conflicts, r.checks, r.numbers);
  return r;
}

// --- IndexScope --------------------------------------------------------------

TEST(IndexScopeTest, MalformedScopesAreInvalidArgumentAndLargeOnesExhausted) {
  std::vector<std::shared_ptr<const BlockIndex>> null_block = {nullptr};
  EXPECT_EQ(IndexScope(null_block, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);

  DeployInput d = Deploy("a", 1);
  StoreDatum(d, C(1), MakeDatum(1, 1));
  auto b = Block(1, {d});
  std::vector<std::shared_ptr<const BlockIndex>> twice = {b, b};
  EXPECT_EQ(IndexScope(twice, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);

  std::vector<std::shared_ptr<const BlockIndex>> huge(kMaxScopeBlocks + 1);
  EXPECT_EQ(IndexScope(huge, nullptr).status().code(),
            absl::StatusCode::kResourceExhausted);

  DeployInput n = Deploy("n", 1);
  n.number_diffs[C(9)] = 5;
  std::vector<std::shared_ptr<const BlockIndex>> numbers = {Block(2, {n})};
  EXPECT_EQ(IndexScope(numbers, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  testing::TestNumberCodec codec;
  EXPECT_TRUE(IndexScope(numbers, &codec).ok());
}

TEST(IndexScopeTest, BlocksInHashOrderAndChainsNumberedAcrossThem) {
  std::vector<std::shared_ptr<const BlockIndex>> scope;
  for (uint64_t tag = 1; tag <= 3; ++tag) {
    std::vector<DeployInput> deploys;
    for (uint64_t i = 0; i < tag; ++i) {
      DeployInput d = Deploy("d" + std::to_string(tag * 10 + i), 1);
      StoreDatum(d, C(static_cast<int>(tag * 10 + i)),
                 MakeDatum(i, tag * 10 + i));
      deploys.push_back(std::move(d));
    }
    scope.push_back(Block(tag, std::move(deploys)));
  }
  auto idx = IndexScope(scope, nullptr);
  ASSERT_TRUE(idx.ok()) << idx.status();
  ASSERT_EQ(idx->blocks.size(), 3u);
  EXPECT_TRUE(std::is_sorted(idx->blocks.begin(), idx->blocks.end(),
                             [](const BlockIndex* a, const BlockIndex* b) {
                               return a->hash < b->hash;
                             }));
  EXPECT_EQ(idx->chains(), 6u);
  EXPECT_EQ(idx->deploys, 6u);
  for (uint32_t g = 0; g < idx->chains(); ++g) {
    const uint32_t b = idx->chain_block[g];
    EXPECT_GE(g, idx->chain_offset[b]);
    EXPECT_LT(g, idx->chain_offset[b + 1]);
    EXPECT_EQ(&idx->chain(g), &idx->blocks[b]->chains[idx->local_of(g)]);
  }
}

// --- BuildBranches -----------------------------------------------------------

TEST(BuildBranchesTest, RelatedChainsOfTwoBlocksFormOneBranchInCsrLayout) {
  // Block 1: p stores a datum, q is independent. Block 2: r takes p's
  // datum (related to p), s is independent.
  Datum x = MakeDatum(1, 1);
  DeployInput p = Deploy("p", 3), q = Deploy("q", 4);
  StoreDatum(p, C(1), x);
  StoreDatum(q, C(2), MakeDatum(2, 2));
  DeployInput r = Deploy("r", 5), s = Deploy("s", 6);
  TakeDatum(r, C(1), x, 1);
  StoreDatum(s, C(3), MakeDatum(3, 3));
  std::vector<std::shared_ptr<const BlockIndex>> scope = {Block(1, {p, q}),
                                                          Block(2, {r, s})};
  MergeScratch scratch;
  auto idx = IndexScope(scope, nullptr);
  ASSERT_TRUE(idx.ok());
  auto br = BuildBranches(*idx, scratch);
  ASSERT_TRUE(br.ok()) << br.status();
  ASSERT_EQ(idx->chains(), 4u);
  EXPECT_EQ(br->count, 3u);
  // CSR: offsets ascending, every chain listed once, ascending per branch,
  // and branches numbered in order of their first chain.
  ASSERT_EQ(br->offset.size(), 4u);
  EXPECT_EQ(br->offset.front(), 0u);
  EXPECT_EQ(br->offset.back(), 4u);
  uint32_t first_chain = 0;
  for (uint32_t b = 0; b < br->count; ++b) {
    auto chains = br->chains_of(b);
    ASSERT_FALSE(chains.empty());
    EXPECT_TRUE(std::is_sorted(chains.begin(), chains.end()));
    if (b > 0) {
      EXPECT_GT(chains.front(), first_chain);
    }
    first_chain = chains.front();
    for (uint32_t g : chains) EXPECT_EQ(br->chain_branch[g], b);
    EXPECT_EQ(br->info[b].chains.size(), chains.size());
  }
  ASSERT_EQ(br->multi.size(), 1u);
  const uint32_t m = br->multi[0];
  EXPECT_FALSE(br->single(m));
  EXPECT_EQ(br->info[m].cost, 3u + 5u);
  ASSERT_EQ(br->multi_facts.size(), 1u);
  // The united facts know r consumed p's produce.
  EXPECT_EQ(br->multi_facts[0].consumed_produces.size(), 1u);
}

TEST(BuildBranchesTest, CostOverflowIsInvalidArgument) {
  Datum x = MakeDatum(1, 1);
  DeployInput p = Deploy("p", UINT64_MAX), r = Deploy("r", 2);
  StoreDatum(p, C(1), x);
  TakeDatum(r, C(1), x, 1);
  std::vector<std::shared_ptr<const BlockIndex>> scope = {Block(1, {p}),
                                                          Block(2, {r})};
  MergeScratch scratch;
  auto idx = IndexScope(scope, nullptr);
  ASSERT_TRUE(idx.ok());
  EXPECT_EQ(BuildBranches(*idx, scratch).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// --- CollectConflicts --------------------------------------------------------

TEST(CollectConflictsTest, GroupsOfIdsRacesAndChannels) {
  const Datum x = MakeDatum(1, 1);  // In the base.
  // Two blocks take x: a produce race (clique). Block 3 stores a datum on
  // C(5) and block 4 a continuation waiting on C(5): a channel group. Blocks
  // 1 and 3 share the id "same": an id clique.
  DeployInput a = Deploy("same", 1), b = Deploy("b", 1);
  TakeDatum(a, C(1), x, 1);
  TakeDatum(b, C(1), x, 2);
  DeployInput c = Deploy("same", 1), d = Deploy("d", 1);
  StoreDatum(c, C(5), MakeDatum(5, 5));
  StoreContinuation(d, Continuation({5}, 9));
  std::vector<std::shared_ptr<const BlockIndex>> scope = {
      Block(1, {a}), Block(2, {b}), Block(3, {c}), Block(4, {d})};
  MergeScratch scratch;
  auto idx = IndexScope(scope, nullptr);
  ASSERT_TRUE(idx.ok());
  auto br = BuildBranches(*idx, scratch);
  ASSERT_TRUE(br.ok());
  ASSERT_EQ(br->count, 4u);
  // Branch of the block with tag t (one chain per block).
  auto branch_of = [&](uint64_t tag) {
    for (uint32_t g = 0; g < idx->chains(); ++g) {
      if (idx->blocks[idx->chain_block[g]]->hash == HashOf(600, tag))
        return br->chain_branch[g];
    }
    return UINT32_MAX;
  };
  auto pair = [](uint32_t x, uint32_t y) {
    return std::vector<uint32_t>{std::min(x, y), std::max(x, y)};
  };
  Conflicts cf = CollectConflicts(*idx, *br, scratch);
  EXPECT_TRUE(std::is_sorted(cf.groups.begin(), cf.groups.end()));
  std::vector<ConflictGroup> want = {
      {pair(branch_of(1), branch_of(2)), {}, true},  // Race on x.
      {pair(branch_of(1), branch_of(3)), {}, true},  // Id "same".
      {{branch_of(3)}, {branch_of(4)}, false},       // Channel C(5).
  };
  std::sort(want.begin(), want.end());
  EXPECT_EQ(cf.groups, want);
  for (const auto& reason : cf.duplicate) EXPECT_FALSE(reason.has_value());
  EXPECT_EQ(cf.ids.size(), 4u);
}

TEST(CollectConflictsTest, IdTwiceInOneBranchIsDuplicateNotAGroup) {
  // Two dependent deploys of one block (one chain) with one id.
  Datum x = MakeDatum(1, 1);
  DeployInput p = Deploy("dup", 1), r = Deploy("dup", 1);
  StoreDatum(p, C(1), x);
  TakeDatum(r, C(1), x, 1);
  std::vector<std::shared_ptr<const BlockIndex>> scope = {Block(1, {p, r})};
  MergeScratch scratch;
  auto idx = IndexScope(scope, nullptr);
  ASSERT_TRUE(idx.ok());
  auto br = BuildBranches(*idx, scratch);
  ASSERT_TRUE(br.ok());
  ASSERT_EQ(br->count, 1u);
  Conflicts cf = CollectConflicts(*idx, *br, scratch);
  EXPECT_TRUE(cf.groups.empty());
  EXPECT_EQ(cf.duplicate[0], RejectReason::kDuplicateInBranch);
}

// --- Base prefetch and CheckBase --------------------------------------------

TEST(BasePrefetchTest, PlansEveryChannelOnceAndUnplannedIsInternal) {
  const Datum x = MakeDatum(1, 1);
  DeployInput a = Deploy("a", 1);
  TakeDatum(a, C(1), x, 1);
  StoreDatum(a, C(2), MakeDatum(2, 2));
  StoreContinuation(a, Continuation({3, 4}, 1));
  std::vector<std::shared_ptr<const BlockIndex>> scope = {Block(1, {a})};
  auto idx = IndexScope(scope, nullptr);
  ASSERT_TRUE(idx.ok());
  std::map<Hash32, ChannelState> states;
  states[C(1)].data = {x};
  auto base = InMemoryBase(*idx, states);
  ASSERT_TRUE(base.ok()) << base.status();
  // C(1) removed, C(2) produced on and changed, C(3) and C(4) in a join.
  const BaseSnapshot& s = **base;
  EXPECT_EQ(s.leaves.size(), 4u);
  EXPECT_TRUE(
      std::is_sorted(s.plan.keys.begin(), s.plan.keys.end(), KeyWordsLess));
  for (int ch : {1, 2, 3, 4}) EXPECT_TRUE(s.Find(C(ch)).ok()) << ch;
  ASSERT_TRUE(s.Find(C(1)).ok());
  EXPECT_EQ((*s.Find(C(1)))->state.data.size(), 1u);
  EXPECT_FALSE((*s.Find(C(2)))->blob.has_value());
  EXPECT_EQ(s.Find(C(7)).status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(s.At(s.plan.removed_leaf[0]).state.data.size(), 1u);
}

// Blocks that share channels: each block's base keys are its channels,
// sorted and unique, and every flat entry's leaf (through its block's base
// key) is its own channel in the scope's plan.
TEST(BasePrefetchTest, EveryEntryFindsItsChannelThroughItsBlocksBaseKeys) {
  std::vector<std::shared_ptr<const BlockIndex>> scope;
  for (int b = 0; b < 4; ++b) {
    DeployInput d = Deploy("d" + std::to_string(b), 1);
    TakeDatum(d, C(b), MakeDatum(b, b), b);      // Removed, changed.
    StoreDatum(d, C(50), MakeDatum(b, 10 + b));  // Shared by every block.
    StoreDatum(d, C(60 + b % 2), MakeDatum(b, 20 + b));
    StoreContinuation(d, Continuation({70, 71 + b}, b));
    d.number_diffs[C(90)] = 1;
    DeployInput e = Deploy("e" + std::to_string(b), 1);
    TakeDatum(e, C(b + 1), MakeDatum(b + 1, b + 1), 30 + b);  // Neighbour's.
    StoreDatum(e, C(50), MakeDatum(b, 40 + b));
    scope.push_back(Block(b, {d, e}));
  }
  testing::TestNumberCodec codec;
  auto idx = IndexScope(scope, &codec);
  ASSERT_TRUE(idx.ok()) << idx.status();
  auto key_of_entry = [](const BlockFlat& f, const std::vector<uint32_t>& map,
                         size_t i) { return KeyOf(f.base_keys[map[i]]); };
  for (const BlockIndex* b : idx->blocks) {
    const BlockFlat& f = b->flat;
    ASSERT_FALSE(f.base_keys.empty());
    for (size_t i = 0; i < f.base_keys.size(); ++i) {
      EXPECT_EQ(f.base_keys[i].item, i);
      if (i > 0) {
        EXPECT_TRUE(KeyWordsLess(f.base_keys[i - 1], f.base_keys[i]));
      }
    }
    ASSERT_EQ(f.removed_base.size(), f.removed.all().size());
    ASSERT_EQ(f.produce_base.size(), f.produced_on.all().size());
    ASSERT_EQ(f.change_base.size(), f.raw_changes.all().size());
    for (size_t i = 0; i < f.removed_base.size(); ++i)
      EXPECT_EQ(key_of_entry(f, f.removed_base, i),
                f.removed.all()[i].first.channel);
    for (size_t i = 0; i < f.produce_base.size(); ++i)
      EXPECT_EQ(key_of_entry(f, f.produce_base, i),
                KeyOf(f.produced_on.all()[i]));
    for (size_t i = 0; i < f.change_base.size(); ++i)
      EXPECT_EQ(key_of_entry(f, f.change_base, i),
                KeyOf(f.raw_changes.all()[i].key));
  }
  MergeScratch scratch;
  const BasePlan plan = PlanBaseReads(*idx, scratch);
  // C(0)..C(4), C(50), C(60), C(61), C(70)..C(74), C(90).
  ASSERT_EQ(plan.keys.size(), 14u);
  for (size_t i = 0; i < plan.keys.size(); ++i) {
    EXPECT_EQ(plan.keys[i].item, i);
    if (i > 0) {
      EXPECT_TRUE(KeyWordsLess(plan.keys[i - 1], plan.keys[i]));
    }
  }
  size_t removed = 0, produce = 0, change = 0;
  for (const BlockIndex* b : idx->blocks) {
    for (const auto& [item, net] : b->flat.removed.all())
      EXPECT_EQ(KeyOf(plan.keys[plan.removed_leaf[removed++]]), item.channel);
    for (const KeyRecord& r : b->flat.produced_on.all())
      EXPECT_EQ(KeyOf(plan.keys[plan.produce_leaf[produce++]]), KeyOf(r));
    for (const RawChange& c : b->flat.raw_changes.all())
      EXPECT_EQ(KeyOf(plan.keys[plan.change_leaf[change++]]), KeyOf(c.key));
  }
  EXPECT_EQ(removed, plan.removed_leaf.size());
  EXPECT_EQ(produce, plan.produce_leaf.size());
  EXPECT_EQ(change, plan.change_leaf.size());
  ASSERT_EQ(plan.number_leaf.size(), 1u);
  EXPECT_EQ(KeyOf(plan.keys[plan.number_leaf[0]]), C(90));
  EXPECT_TRUE(CheckPlanFits(plan, *idx).ok());
}

TEST(BasePrefetchTest, ReaderErrorsReachTheWaiterOnTheHelperThread) {
  DeployInput a = Deploy("a", 1);
  StoreDatum(a, C(2), MakeDatum(2, 2));
  std::vector<std::shared_ptr<const BlockIndex>> scope = {Block(1, {a})};
  auto idx = IndexScope(scope, nullptr);
  ASSERT_TRUE(idx.ok());
  MergeContext context(
      {.threads = 2, .background_min = 0, .base_read_chunk = 1});
  PendingBase failing = StartReadBase(
      context, *idx,
      [](std::span<const Hash32>)
          -> absl::StatusOr<std::vector<std::optional<Bytes>>> {
        return absl::DataLossError("disk");
      },
      nullptr);
  EXPECT_EQ(failing.Wait().status().code(), absl::StatusCode::kDataLoss);
  PendingBase short_read = StartReadBase(
      context, *idx,
      [](std::span<const Hash32>)
          -> absl::StatusOr<std::vector<std::optional<Bytes>>> {
        return std::vector<std::optional<Bytes>>();
      },
      nullptr);
  EXPECT_EQ(short_read.Wait().status().code(), absl::StatusCode::kInternal);
}

TEST(BasePrefetchTest, ReadSharedInChunksByTwoThreadsEqualsOneBatch) {
  std::vector<std::shared_ptr<const BlockIndex>> scope;
  std::map<Hash32, ChannelState> states;
  for (int i = 0; i < 40; ++i) {
    const Datum x = MakeDatum(i, i);
    states[C(i)].data = {x};
    DeployInput d = Deploy("d" + std::to_string(i), 1);
    TakeDatum(d, C(i), x, i);
    StoreDatum(d, C(100 + i), MakeDatum(i, 100 + i));
    scope.push_back(Block(i, {d}));
  }
  auto idx = IndexScope(scope, nullptr);
  ASSERT_TRUE(idx.ok());
  testing::TestHistory th;
  auto root = testing::CommitStates(*th.history, rspace::kEmptyRoot, states);
  ASSERT_TRUE(root.ok());
  LeafReader read = [&](std::span<const Hash32> channels) {
    return th.history->ReadLeaves(*root, channels);
  };
  MergeScratch scratch;
  auto whole = ReadBase(PlanBaseReads(*idx, scratch), read, nullptr);
  ASSERT_TRUE(whole.ok()) << whole.status();
  for (size_t chunk : {1u, 3u, 1000u}) {
    MergeContext context(
        {.threads = 2, .background_min = 0, .base_read_chunk = chunk});
    auto shared = StartReadBase(context, *idx, read, nullptr).Wait();
    ASSERT_TRUE(shared.ok()) << shared.status();
    ASSERT_EQ((*shared)->leaves.size(), (*whole)->leaves.size());
    EXPECT_EQ((*shared)->leaves.size(), 80u);
    for (size_t i = 0; i < (*whole)->leaves.size(); ++i) {
      EXPECT_EQ((*shared)->leaves[i].blob, (*whole)->leaves[i].blob) << i;
      EXPECT_EQ((*shared)->leaves[i].state.data.size(),
                (*whole)->leaves[i].state.data.size());
    }
    EXPECT_EQ((*shared)->plan.removed_leaf, (*whole)->plan.removed_leaf);
  }
}

TEST(CheckBaseTest, UnavailableRemovalAndBaseJoinAndDuplicateWins) {
  const Datum x = MakeDatum(1, 1);
  // Block 1 takes x, which the base lacks. Block 2 produces on C(5), where
  // the base has a 2-channel join. Block 3 takes x too but is a duplicate
  // branch (two dependent deploys with one id).
  DeployInput a = Deploy("a", 1);
  TakeDatum(a, C(1), x, 1);
  DeployInput b = Deploy("b", 1);
  StoreDatum(b, C(5), MakeDatum(5, 5));
  Datum y = MakeDatum(3, 3);
  DeployInput c1 = Deploy("c", 1), c2 = Deploy("c", 1);
  StoreDatum(c1, C(8), y);
  TakeDatum(c2, C(8), y, 3);
  TakeDatum(c2, C(1), x, 4);
  std::vector<std::shared_ptr<const BlockIndex>> scope = {
      Block(1, {a}), Block(2, {b}), Block(3, {c1, c2})};
  std::map<Hash32, ChannelState> states;
  WaitingContinuation k = Continuation({5, 6}, 1);
  states[C(5)].continuations = {k};
  states[C(5)].joins = {k.group};
  states[C(6)].joins = {k.group};
  StepsRun r = Steps(scope, states);
  auto branch_of = [&](uint64_t tag) {
    for (uint32_t g = 0; g < r.index.chains(); ++g) {
      if (r.index.blocks[r.index.chain_block[g]]->hash == HashOf(600, tag))
        return r.branches.chain_branch[g];
    }
    return UINT32_MAX;
  };
  EXPECT_EQ(r.checks.prerejected[branch_of(1)], RejectReason::kUnavailable);
  EXPECT_FALSE(r.checks.prerejected[branch_of(2)].has_value());
  EXPECT_EQ(r.checks.prerejected[branch_of(3)],
            RejectReason::kDuplicateInBranch);
  EXPECT_FALSE(r.checks.base_join[branch_of(1)]);
  EXPECT_TRUE(r.checks.base_join[branch_of(2)]);
}

TEST(CheckBaseTest, SnapshotOfAnotherScopeIsInternal) {
  const Datum x = MakeDatum(1, 1);
  DeployInput a = Deploy("a", 1);
  TakeDatum(a, C(1), x, 1);
  std::vector<std::shared_ptr<const BlockIndex>> scope = {Block(1, {a})};
  std::vector<std::shared_ptr<const BlockIndex>> empty;
  MergeScratch scratch;
  auto idx = IndexScope(scope, nullptr);
  auto other = IndexScope(empty, nullptr);
  ASSERT_TRUE(idx.ok() && other.ok());
  auto br = BuildBranches(*idx, scratch);
  ASSERT_TRUE(br.ok());
  Conflicts cf = CollectConflicts(*idx, *br, scratch);
  auto base = InMemoryBase(*other, {});
  ASSERT_TRUE(base.ok());
  EXPECT_EQ(CheckBase(*idx, *br, cf, **base).status().code(),
            absl::StatusCode::kInternal);
}

// --- Decide ------------------------------------------------------------------

TEST(DecideTest, CheaperSideOfAConflictAndPrerejectedBranchesAreRejected) {
  Branches br;
  br.count = 3;
  br.info.resize(3);
  br.info[0].cost = 10;
  br.info[1].cost = 5;
  br.info[2].cost = 30;
  Conflicts cf;
  cf.groups = {{{0, 1}, {}, true}};
  cf.duplicate.resize(3);
  const Bytes a = {'a'}, b = {'b'}, c = {'c'}, d = {'d'};
  auto ref = [](const Bytes& id, uint32_t branch) {
    return DeployRef{PrefixKey(id.data(), id.size()), &id, branch};
  };
  // "d" is in branches 0 and 1: kept with branch 0.
  cf.ids = {ref(a, 0), ref(b, 1), ref(c, 2), ref(d, 0), ref(d, 1)};
  BaseChecks checks;
  checks.prerejected = {std::nullopt, std::nullopt, RejectReason::kUnavailable};
  checks.base_join = {false, false, false};
  NumberBases numbers;
  for (int i = 0; i < 3; ++i) numbers.diffs.Append({});
  Decision dec = Decide(br, cf, checks, numbers);
  EXPECT_EQ(dec.rejected, (std::vector<bool>{false, true, true}));
  EXPECT_EQ(dec.reason[1], RejectReason::kConflict);
  EXPECT_EQ(dec.reason[2], RejectReason::kUnavailable);
  EXPECT_EQ(dec.rejected_branches, 2u);
  EXPECT_EQ(dec.rejected_deploys,
            (std::vector<RejectedDeploy>{{b, RejectReason::kConflict},
                                         {c, RejectReason::kUnavailable}}));
}

TEST(DecideTest, NumberChannelBelowZeroRejectsTheCheaperDebit) {
  Branches br;
  br.count = 2;
  br.info.resize(2);
  br.info[0].cost = 10;
  br.info[1].cost = 5;
  Conflicts cf;
  cf.duplicate.resize(2);
  BaseChecks checks;
  checks.prerejected.resize(2);
  checks.base_join = {false, false};
  NumberBases numbers;
  numbers.values = {100};
  const BranchDiffs::Entry debit_a[] = {{0, -80}};
  const BranchDiffs::Entry debit_b[] = {{0, -70}};
  numbers.diffs.Append(debit_a);
  numbers.diffs.Append(debit_b);
  Decision dec = Decide(br, cf, checks, numbers);
  EXPECT_EQ(dec.rejected, (std::vector<bool>{false, true}));
  EXPECT_EQ(dec.reason[1], RejectReason::kNumberChannel);
}

// --- Combine, TrieActions, ApplyUpdates -------------------------------------

class CombineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    x_ = MakeDatum(1, 1);
    // Block 1 takes x from C(1) and stores y on C(2); block 2 stores a join
    // waiting on C(3) and C(4); block 3 pays 7 into a vault.
    DeployInput a = Deploy("a", 1);
    TakeDatum(a, C(1), x_, 1);
    StoreDatum(a, C(2), MakeDatum(2, 2));
    DeployInput b = Deploy("b", 1);
    StoreContinuation(b, Continuation({3, 4}, 1));
    DeployInput v = Deploy("v", 1);
    v.number_diffs[C(9)] = 7;
    scope_ = {Block(1, {a}), Block(2, {b}), Block(3, {v})};
    states_[C(1)].data = {x_};
    states_[C(9)] = *codec_.Write(C(9), 100);
  }

  Datum x_;
  testing::TestNumberCodec codec_;
  std::vector<std::shared_ptr<const BlockIndex>> scope_;
  std::map<Hash32, ChannelState> states_;
};

TEST_F(CombineTest, KeptChangesOnTheInMemoryBaseWithJoinsAndNumbers) {
  StepsRun r = Steps(scope_, states_, &codec_);
  ASSERT_EQ(r.decision.rejected_branches, 0u);
  auto combined =
      Combine(r.index, r.branches, r.decision, r.numbers, *r.base, &codec_);
  ASSERT_TRUE(combined.ok()) << combined.status();
  std::map<Hash32, const NewState*> by_channel;
  for (const NewState& s : combined->states) by_channel[s.channel] = &s;
  ASSERT_EQ(by_channel.size(), 5u);  // C(1), C(2), C(3), C(4), C(9).
  const ItemPools& pools = combined->pools;
  EXPECT_TRUE(pools.Data(*by_channel[C(1)]).empty());
  EXPECT_EQ(pools.Data(*by_channel[C(2)]).size(), 1u);
  const Hash32 owner = std::min(C(3), C(4));
  EXPECT_EQ(pools.Conts(*by_channel[owner]).size(), 1u);
  EXPECT_EQ(by_channel[C(3)]->joins.size(), 1u);
  EXPECT_EQ(by_channel[C(4)]->joins.size(), 1u);
  ChannelState vault;
  for (const Datum* d : pools.Data(*by_channel[C(9)])) vault.data.push_back(*d);
  EXPECT_EQ(*codec_.Read(vault), 107);
  // `order` lists the states in channel order.
  ASSERT_EQ(combined->order.size(), 5u);
  for (size_t i = 1; i < combined->order.size(); ++i) {
    EXPECT_LT(combined->states[combined->order[i - 1]].channel,
              combined->states[combined->order[i]].channel);
  }
}

TEST_F(CombineTest, CombineAndTrieActionsWithAPoolEqualThoseWithout) {
  StepsRun r = Steps(scope_, states_, &codec_);
  WorkerPool pool(2);
  auto serial =
      Combine(r.index, r.branches, r.decision, r.numbers, *r.base, &codec_);
  // Grain 1: the touched channels are netted in two parts.
  auto parallel = Combine(r.index, r.branches, r.decision, r.numbers, *r.base,
                          &codec_, &pool, 1);
  ASSERT_TRUE(serial.ok() && parallel.ok());
  ASSERT_EQ(serial->states.size(), parallel->states.size());
  EXPECT_EQ(serial->order, parallel->order);
  for (size_t i = 0; i < serial->states.size(); ++i) {
    const NewState& a = serial->states[i];
    const NewState& b = parallel->states[i];
    EXPECT_EQ(a.channel, b.channel);
    EXPECT_EQ(a.leaf, b.leaf);
    // Items compared by value: number states and join groups are owned by
    // each result.
    auto da = serial->pools.Data(a), db = parallel->pools.Data(b);
    EXPECT_TRUE(std::equal(da.begin(), da.end(), db.begin(), db.end(),
                           [](const Datum* x, const Datum* y) {
                             return x->source == y->source &&
                                    x->persist == y->persist &&
                                    x->value->hash() == y->value->hash();
                           }))
        << i;
    auto ka = serial->pools.Conts(a), kb = parallel->pools.Conts(b);
    EXPECT_TRUE(std::equal(ka.begin(), ka.end(), kb.begin(), kb.end())) << i;
    EXPECT_TRUE(std::equal(
        a.joins.begin(), a.joins.end(), b.joins.begin(), b.joins.end(),
        [](const auto* x, const auto* y) { return *x == *y; }))
        << i;
  }
  std::vector<rspace::LeafUpdate> u1 = TrieActions(*serial, nullptr, 256);
  std::vector<rspace::LeafUpdate> u2 = TrieActions(*parallel, &pool, 1);
  ASSERT_EQ(u1.size(), 5u);
  ASSERT_EQ(u2.size(), u1.size());
  for (size_t i = 0; i < u1.size(); ++i) {
    EXPECT_EQ(u1[i].key, u2[i].key);
    EXPECT_EQ(u1[i].blob, u2[i].blob);
    EXPECT_EQ(u1[i].blob_hash, u2[i].blob_hash);
    if (i > 0) {
      EXPECT_LT(u1[i - 1].key, u1[i].key);
    }
  }
  // C(1) loses its only datum: a deletion.
  auto c1 = std::find_if(u1.begin(), u1.end(),
                         [](const auto& u) { return u.key == C(1); });
  ASSERT_NE(c1, u1.end());
  EXPECT_FALSE(c1->blob.has_value());
  // Applied on the same base, the steps give Merge's root.
  testing::TestHistory th;
  auto base_root =
      testing::CommitStates(*th.history, rspace::kEmptyRoot, states_);
  ASSERT_TRUE(base_root.ok());
  auto root = ApplyUpdates(*th.history, *base_root, std::move(u1));
  ASSERT_TRUE(root.ok()) << root.status();
  MergeOptions options;
  options.number_codec = &codec_;
  auto merged = Merge(*th.history, *base_root, scope_, options);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(*root, merged->root);
}

TEST(ApplyUpdatesTest, NoUpdatesKeepTheBaseRoot) {
  testing::TestHistory th;
  const Hash32 base = HashOf(77);
  auto root = ApplyUpdates(*th.history, base, {});
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(*root, base);
}

// --- MergeContext ------------------------------------------------------------

TEST(MergeContextTest, OneThreadStartsNothingAndReleasesAtOnce) {
  MergeContext context;
  EXPECT_EQ(context.pool(), nullptr);
  EXPECT_EQ(context.helper(), nullptr);
  int released = 0;
  context.Release([&] { ++released; });
  EXPECT_EQ(released, 1);
}

TEST(MergeContextTest, DestructorRunsEveryQueuedReleaseAndJoins) {
  std::atomic<int> released{0};
  {
    MergeContext context({.threads = 2});
    ASSERT_NE(context.pool(), nullptr);
    ASSERT_NE(context.helper(), nullptr);
    EXPECT_EQ(context.pool()->threads(), 2);
    for (int i = 0; i < 100; ++i) context.Release([&] { ++released; });
  }
  EXPECT_EQ(released.load(), 100);
}

TEST(MergeContextTest, ThreadsAndGrainAreClamped) {
  MergeContext zero({.threads = 0, .parallel_grain = 0});
  EXPECT_EQ(zero.options().threads, 1u);
  EXPECT_EQ(zero.options().parallel_grain, 1u);
  MergeContext many({.threads = 1000});
  EXPECT_EQ(many.options().threads, kMaxMergeThreads);
}

TEST(SerialExecutorTest, RunsTasksInPostOrder) {
  std::vector<int> order;
  {
    SerialExecutor executor;
    for (int i = 0; i < 50; ++i)
      executor.Post([&order, i] { order.push_back(i); });
  }
  ASSERT_EQ(order.size(), 50u);
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
}

}  // namespace
}  // namespace rnode::casper::merge::internal

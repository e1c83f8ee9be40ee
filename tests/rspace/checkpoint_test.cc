// Checkpoints, resets, soft checkpoints, state changes and root determinism.
#include <algorithm>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "rspace/channel_codec.h"
#include "rspace/history/history.h"
#include "rspace/space.h"
#include "rspace/storage/fault_store.h"
#include "tests/rspace/test_util.h"

namespace rnode::rspace {
namespace {

using testing::Fixture;
using testing::S;
using testing::T;
using Strings = std::vector<std::string>;

TEST(CheckpointTest, CheckpointOfEmptyStoreIsEmptyRoot) {
  Fixture f;
  auto r = f.space->CreateCheckpoint();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, kEmptyRoot);
}

TEST(CheckpointTest, NewSpaceStartsAtEmptyRoot) {
  Fixture f;
  EXPECT_EQ(f.space->root(), kEmptyRoot);
}

TEST(CheckpointTest, ProduceThenCheckpointChangesRootAndKeepsData) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch", "d")->has_value());
  auto r = f.space->CreateCheckpoint();
  ASSERT_TRUE(r.ok());
  EXPECT_NE(*r, kEmptyRoot);
  EXPECT_EQ(f.space->root(), *r);
  EXPECT_EQ(f.space->OverlaySize(), 0u);
  EXPECT_EQ(f.Data("ch"), Strings{"d"});
}

TEST(CheckpointTest, CheckpointClearsTheOverlay) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch", "d")->has_value());
  EXPECT_GT(f.space->OverlaySize(), 0u);
  ASSERT_TRUE(f.space->CreateCheckpoint().ok());
  EXPECT_EQ(f.space->OverlaySize(), 0u);
}

TEST(CheckpointTest, ConsumeAndProduceThenCheckpointLeavesEmptyTrie) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"a", "b"}, {"*", "*"}, "k")->has_value());
  ASSERT_FALSE(f.Produce("a", "1")->has_value());
  ASSERT_TRUE(f.Produce("b", "2")->has_value());
  EXPECT_EQ(*f.space->CreateCheckpoint(), kEmptyRoot);
}

TEST(CheckpointTest, ConsumedDataFromHistoryIsDeletedAtNextCheckpoint) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch", "d")->has_value());
  ASSERT_TRUE(f.space->CreateCheckpoint().ok());
  ASSERT_TRUE(f.Consume({"ch"}, {"*"}, "k")->has_value());
  EXPECT_EQ(*f.space->CreateCheckpoint(), kEmptyRoot);
}

TEST(CheckpointTest, ContinuationsAndJoinsRoundTripThroughHistory) {
  Fixture f;
  ASSERT_FALSE(
      f.Consume({"b", "a"}, {"^x", "*"}, "k", true, false)->has_value());
  ASSERT_TRUE(f.space->CreateCheckpoint().ok());
  auto ks = f.space->GetContinuations({T("a"), T("b")});
  ASSERT_TRUE(ks.ok());
  ASSERT_EQ(ks->size(), 1u);
  EXPECT_EQ(S((*ks)[0].channels[0]), "b");
  EXPECT_EQ(S((*ks)[0].patterns[0]), "^x");
  EXPECT_TRUE((*ks)[0].persist);
  EXPECT_EQ(f.Joins("a"), 1u);
  EXPECT_EQ(f.Joins("b"), 1u);
  ASSERT_FALSE(f.Produce("a", "1")->has_value());
  auto r = f.Produce("b", "xx");
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(S((*r)->continuation), "k");
}

TEST(CheckpointTest, UntouchedCheckpointKeepsRoot) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch", "d")->has_value());
  Hash32 r1 = *f.space->CreateCheckpoint();
  f.Data("ch");
  EXPECT_EQ(*f.space->CreateCheckpoint(), r1);
}

TEST(CheckpointTest, ResetRestoresEarlierState) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch", "d1")->has_value());
  Hash32 r1 = *f.space->CreateCheckpoint();
  ASSERT_FALSE(f.Produce("ch", "d2")->has_value());
  Hash32 r2 = *f.space->CreateCheckpoint();
  ASSERT_TRUE(f.space->Reset(r1).ok());
  EXPECT_EQ(f.Data("ch"), Strings{"d1"});
  ASSERT_TRUE(f.space->Reset(r2).ok());
  Strings both = f.Data("ch");
  std::sort(both.begin(), both.end());
  EXPECT_EQ(both, (Strings{"d1", "d2"}));
}

TEST(CheckpointTest, ResetDropsUncheckpointedChanges) {
  Fixture f;
  Hash32 r0 = f.space->root();
  ASSERT_FALSE(f.Produce("ch", "d")->has_value());
  ASSERT_TRUE(f.space->Reset(r0).ok());
  EXPECT_TRUE(f.Data("ch").empty());
}

TEST(CheckpointTest, ResetToUnknownRootIsNotFound) {
  Fixture f;
  Hash32 bogus{};
  bogus[0] = 1;
  EXPECT_EQ(f.space->Reset(bogus).code(), absl::StatusCode::kNotFound);
}

TEST(CheckpointTest, ClearResetsToEmptyRoot) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch", "d")->has_value());
  ASSERT_TRUE(f.space->CreateCheckpoint().ok());
  ASSERT_TRUE(f.space->Clear().ok());
  EXPECT_EQ(f.space->root(), kEmptyRoot);
  EXPECT_TRUE(f.Data("ch").empty());
  EXPECT_EQ(*f.space->CreateCheckpoint(), kEmptyRoot);
}

TEST(CheckpointTest, NewRootsAreRecorded) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch", "d")->has_value());
  Hash32 r = *f.space->CreateCheckpoint();
  EXPECT_TRUE(*f.space->history().HasRoot(r));
  auto roots = f.space->history().ListRoots();
  ASSERT_TRUE(roots.ok());
  EXPECT_EQ(roots->size(), 2u);
  EXPECT_TRUE(f.space->history().VerifyRoot(r).ok());
}

TEST(CheckpointTest, ReopenedSpaceStartsAtLastRoot) {
  InMemoryStore store(3);
  Hash32 r;
  {
    auto space = *Space::Open(&store);
    testing::TestMatcher m;
    EventLog log;
    OpContext ctx{&log, &m};
    ASSERT_TRUE(space->Produce(ctx, T("ch"), T("d"), false).ok());
    r = *space->CreateCheckpoint();
  }
  auto space = *Space::Open(&store);
  EXPECT_EQ(space->root(), r);
  auto data = space->GetData(T("ch")->hash());
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(data->size(), 1u);
}

TEST(CheckpointTest, FailedCheckpointWriteLeavesSpaceAtOldRoot) {
  InMemoryStore base(3);
  FaultInjectingStore store(&base);
  auto space = *Space::Open(&store);
  testing::TestMatcher m;
  EventLog log;
  OpContext ctx{&log, &m};
  ASSERT_TRUE(space->Produce(ctx, T("ch"), T("d"), false).ok());
  store.FailWritesAfter(0);
  EXPECT_EQ(space->CreateCheckpoint().status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(space->root(), kEmptyRoot);
  EXPECT_EQ(space->GetData(T("ch")->hash())->size(), 1u);
  store.Heal();
  auto r = space->CreateCheckpoint();
  ASSERT_TRUE(r.ok());
  EXPECT_NE(*r, kEmptyRoot);
  auto reopened = *Space::Open(&base);
  EXPECT_EQ(reopened->root(), *r);
}

TEST(CheckpointTest, FailedHistoryReadSurfacesAsError) {
  InMemoryStore base(3);
  // The blob is stored out of line, so loading the channel reads the store
  // (an inline one would come with the root node the space pins at open).
  SpaceOptions opts;
  opts.history.inline_blob_max = 0;
  {
    auto space = *Space::Open(&base, opts);
    testing::TestMatcher m;
    EventLog log;
    OpContext ctx{&log, &m};
    ASSERT_TRUE(space->Produce(ctx, T("ch"), T("d"), false).ok());
    ASSERT_TRUE(space->CreateCheckpoint().ok());
  }
  FaultInjectingStore store(&base);
  opts.history.node_cache_entries = 0;
  auto space = *Space::Open(&store, opts);
  store.FailReadsAfter(0);
  testing::TestMatcher m;
  EventLog log;
  OpContext ctx{&log, &m};
  EXPECT_EQ(space->Produce(ctx, T("ch"), T("e"), false).status().code(),
            absl::StatusCode::kUnavailable);
}

TEST(CheckpointTest, OnlyOneWritePerCheckpoint) {
  InMemoryStore base(3);
  FaultInjectingStore store(&base);
  auto space = *Space::Open(&store);
  uint64_t before = store.writes();
  testing::TestMatcher m;
  EventLog log;
  OpContext ctx{&log, &m};
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(
        space->Produce(ctx, T("ch" + std::to_string(i)), T("d"), false).ok());
  }
  ASSERT_TRUE(space->CreateCheckpoint().ok());
  EXPECT_EQ(store.writes(), before + 1);
}

// Root determinism: the same operations on independent channels in any
// order give the same root.
TEST(RootDeterminismTest, IndependentChannelsInAnyOrderGiveSameRoot) {
  uint64_t seed = testing::TestSeed(1234);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<int> order(40);
  for (int i = 0; i < 40; ++i) order[i] = i;
  std::optional<Hash32> expected;
  for (int trial = 0; trial < 5; ++trial) {
    std::shuffle(order.begin(), order.end(), rng);
    Fixture f;
    for (int i : order) {
      std::string ch = "c" + std::to_string(i);
      ASSERT_TRUE(f.Produce(ch, "d" + std::to_string(i)).ok());
      if (i % 3 == 0) {
        ASSERT_TRUE(f.Consume({ch}, {"nomatch"}, "k").ok());
      }
      if (i % 5 == 0) {
        ASSERT_TRUE(f.Produce(ch, "p", true).ok());
      }
    }
    Hash32 r = *f.space->CreateCheckpoint();
    if (!expected.has_value()) expected = r;
    EXPECT_EQ(r, *expected) << "trial " << trial;
  }
}

TEST(RootDeterminismTest, SameHistoryInSeveralCheckpointsGivesSameRoot) {
  Fixture a, b;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(a.Produce("c" + std::to_string(i), "d").ok());
  }
  Hash32 ra = *a.space->CreateCheckpoint();
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(b.Produce("c" + std::to_string(i), "d").ok());
    if (i % 2 == 1) {
      ASSERT_TRUE(b.space->CreateCheckpoint().ok());
    }
  }
  EXPECT_EQ(*b.space->CreateCheckpoint(), ra);
}

TEST(RootDeterminismTest, RootsAreStableAcrossRuns) {
  // Golden root for a fixed workload (event hashes, blob and node formats
  // of docs/formats/rspace.md); a change here changes consensus.
  Fixture f;
  ASSERT_TRUE(f.Produce("ch", "d").ok());
  ASSERT_TRUE(f.Consume({"a", "b"}, {"*", "*"}, "k").ok());
  EXPECT_EQ(HexEncode(*f.space->CreateCheckpoint()),
            "82c8151c25ffe616a7bec33820aa7cdb7baf2a3333b212a70594c47ee9604254");
}

TEST(RootDeterminismTest, DifferentStateGivesDifferentRoot) {
  Fixture a, b;
  ASSERT_TRUE(a.Produce("ch", "d").ok());
  ASSERT_TRUE(b.Produce("ch", "e").ok());
  EXPECT_NE(*a.space->CreateCheckpoint(), *b.space->CreateCheckpoint());
}

TEST(RootDeterminismTest, PersistFlagIsPartOfState) {
  Fixture a, b;
  ASSERT_TRUE(a.Produce("ch", "d", false).ok());
  ASSERT_TRUE(b.Produce("ch", "d", true).ok());
  EXPECT_NE(*a.space->CreateCheckpoint(), *b.space->CreateCheckpoint());
}

// Soft checkpoints: marks of a deploy scope.

TEST(SoftCheckpointTest, RevertRestoresOverlay) {
  Fixture f;
  ASSERT_TRUE(f.Produce("ch", "d1").ok());
  DeployScope::Mark cp = f.scope->mark();
  ASSERT_TRUE(f.Produce("ch", "d2").ok());
  ASSERT_TRUE(f.Consume({"x"}, {"*"}, "k").ok());
  ASSERT_TRUE(f.scope->RevertTo(cp).ok());
  EXPECT_EQ(f.Data("ch"), Strings{"d1"});
  EXPECT_EQ(f.Conts({"x"}), 0u);
  EXPECT_EQ(f.Joins("x"), 0u);
}

TEST(SoftCheckpointTest, RevertRestoresConsumedData) {
  Fixture f;
  ASSERT_TRUE(f.Produce("ch", "d").ok());
  ASSERT_TRUE(f.space->CreateCheckpoint().ok());
  DeployScope::Mark cp = f.scope->mark();
  ASSERT_TRUE(f.Consume({"ch"}, {"*"}, "k")->has_value());
  EXPECT_TRUE(f.Data("ch").empty());
  ASSERT_TRUE(f.scope->RevertTo(cp).ok());
  EXPECT_EQ(f.Data("ch"), Strings{"d"});
}

TEST(SoftCheckpointTest, SoftCheckpointIsIsolatedFromLaterChanges) {
  Fixture f;
  DeployScope::Mark cp = f.scope->mark();
  ASSERT_TRUE(f.Produce("ch", "a").ok());
  ASSERT_TRUE(f.scope->RevertTo(cp).ok());
  ASSERT_TRUE(f.Produce("ch", "b").ok());
  ASSERT_TRUE(f.scope->RevertTo(cp).ok());
  EXPECT_TRUE(f.Data("ch").empty());
}

TEST(SoftCheckpointTest, RevertThenCheckpointGivesRootOfCheckpointState) {
  Fixture f, g;
  ASSERT_TRUE(f.Produce("ch", "a").ok());
  ASSERT_TRUE(g.Produce("ch", "a").ok());
  DeployScope::Mark cp = f.scope->mark();
  ASSERT_TRUE(f.Produce("ch", "b").ok());
  ASSERT_TRUE(f.Produce("other", "c").ok());
  ASSERT_TRUE(f.scope->RevertTo(cp).ok());
  EXPECT_EQ(*f.space->CreateCheckpoint(), *g.space->CreateCheckpoint());
}

TEST(SoftCheckpointTest, AnEarlierMarkCanBeRestoredAfterALaterOne) {
  Fixture f;
  DeployScope::Mark a = f.scope->mark();
  ASSERT_TRUE(f.Produce("ch", "1").ok());
  DeployScope::Mark b = f.scope->mark();
  ASSERT_TRUE(f.Produce("ch", "2").ok());
  ASSERT_TRUE(f.scope->RevertTo(b).ok());
  EXPECT_EQ(f.Data("ch"), Strings{"1"});
  ASSERT_TRUE(f.scope->RevertTo(a).ok());
  EXPECT_TRUE(f.Data("ch").empty());
}

TEST(SoftCheckpointTest, MarkPastARevertIsInvalid) {
  Fixture f;
  DeployScope::Mark a = f.scope->mark();
  ASSERT_TRUE(f.Produce("ch", "1").ok());
  DeployScope::Mark b = f.scope->mark();
  ASSERT_TRUE(f.scope->RevertTo(a).ok());
  EXPECT_EQ(f.scope->RevertTo(b).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(f.scope->ChangesSince(b).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(SoftCheckpointTest, CheckpointInvalidatesSoftCheckpoint) {
  Fixture f;
  DeployScope::Mark cp = f.scope->mark();
  ASSERT_TRUE(f.space->CreateCheckpoint().ok());
  EXPECT_EQ(f.scope->RevertTo(cp).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(SoftCheckpointTest, RevertKeepsInstalls) {
  Fixture f;
  DeployScope::Mark cp = f.scope->mark();
  ASSERT_TRUE(f.space->Install(f.matcher, {T("sys")}, {T("*")}, T("p")).ok());
  ASSERT_TRUE(f.scope->RevertTo(cp).ok());
  EXPECT_TRUE(f.Produce("sys", "m")->has_value());
}

// State changes.

TEST(StateChangeTest, ProduceAddsDatum) {
  Fixture f;
  DeployScope::Mark m = f.scope->mark();
  ASSERT_TRUE(f.Produce("ch", "d").ok());
  StateChanges c = *f.scope->ChangesSince(m);
  ASSERT_EQ(c.channels.size(), 1u);
  EXPECT_EQ(c.channels[0].channel, T("ch")->hash());
  ASSERT_EQ(c.channels[0].added_data.size(), 1u);
  EXPECT_EQ(S(c.channels[0].added_data[0].value), "d");
  EXPECT_TRUE(c.channels[0].removed_data.empty());
}

TEST(StateChangeTest, ConsumeOfOldDatumRemovesIt) {
  Fixture f;
  ASSERT_TRUE(f.Produce("ch", "d").ok());
  DeployScope::Mark m = f.scope->mark();
  ASSERT_TRUE(f.Consume({"ch"}, {"*"}, "k")->has_value());
  StateChanges c = *f.scope->ChangesSince(m);
  ASSERT_EQ(c.channels.size(), 1u);
  EXPECT_EQ(c.channels[0].removed_data.size(), 1u);
  EXPECT_TRUE(c.channels[0].added_data.empty());
  EXPECT_TRUE(c.channels[0].added_continuations.empty());
}

TEST(StateChangeTest, WaitingJoinAddsContinuationAndJoins) {
  Fixture f;
  DeployScope::Mark m = f.scope->mark();
  ASSERT_TRUE(f.Consume({"a", "b"}, {"*", "*"}, "k").ok());
  StateChanges c = *f.scope->ChangesSince(m);
  ASSERT_EQ(c.channels.size(), 2u);
  size_t conts = 0, joins = 0;
  for (const auto& ch : c.channels) {
    conts += ch.added_continuations.size();
    joins += ch.added_joins.size();
  }
  EXPECT_EQ(conts, 1u);
  EXPECT_EQ(joins, 2u);
}

TEST(StateChangeTest, FullyNettedChangeIsEmpty) {
  Fixture f;
  DeployScope::Mark m = f.scope->mark();
  ASSERT_TRUE(f.Produce("ch", "d").ok());
  ASSERT_TRUE(f.Consume({"ch"}, {"*"}, "k")->has_value());
  EXPECT_TRUE(f.scope->ChangesSince(m)->channels.empty());
}

TEST(StateChangeTest, ChangesAreSortedByChannel) {
  Fixture f;
  DeployScope::Mark m = f.scope->mark();
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(f.Produce("c" + std::to_string(i), "d").ok());
  StateChanges c = *f.scope->ChangesSince(m);
  ASSERT_EQ(c.channels.size(), 20u);
  for (size_t i = 1; i < c.channels.size(); ++i) {
    EXPECT_LT(c.channels[i - 1].channel, c.channels[i].channel);
  }
}

TEST(StateChangeTest, NewMarkStartsANewChangeSet) {
  Fixture f;
  ASSERT_TRUE(f.Produce("a", "d").ok());
  DeployScope::Mark m = f.scope->mark();
  ASSERT_TRUE(f.Produce("b", "d").ok());
  StateChanges c = *f.scope->ChangesSince(m);
  ASSERT_EQ(c.channels.size(), 1u);
  EXPECT_EQ(c.channels[0].channel, T("b")->hash());
}

TEST(StateChangeTest, UnscopedOperationsAreNotRecorded) {
  Fixture f;
  DeployScope::Mark m = f.scope->mark();
  OpContext unscoped{&f.log, &f.matcher};
  ASSERT_TRUE(f.space->Produce(unscoped, T("ch"), T("d"), false).ok());
  EXPECT_TRUE(f.scope->ChangesSince(m)->channels.empty());
  EXPECT_TRUE(f.scope->TouchedChannels().empty());
}

// Channel state codec.

TEST(ChannelStateCodecTest, RoundTripKeepsOrderAndFlags) {
  ChannelState st;
  st.data.push_back(Datum{T("b"), true, Hash32{1}});
  st.data.push_back(Datum{T("a"), false, Hash32{2}});
  WaitingContinuation k;
  k.channels = {T("y"), T("x")};
  k.patterns = {T("p1"), T("p2")};
  k.continuation = T("body");
  k.persist = true;
  k.peek = true;
  k.source = Hash32{3};
  k.group = MakeJoinGroup(k.channels);
  st.continuations.push_back(k);
  st.joins.push_back(k.group);
  Bytes enc = EncodeChannelState(st);
  auto dec = DecodeChannelState(enc, [](Bytes b) -> absl::StatusOr<TermPtr> {
    return Term::Make(std::move(b));
  });
  ASSERT_TRUE(dec.ok()) << dec.status();
  ASSERT_EQ(dec->data.size(), 2u);
  EXPECT_EQ(S(dec->data[0].value), "b");
  EXPECT_TRUE(dec->data[0].persist);
  EXPECT_EQ(dec->data[1].source, Hash32{2});
  ASSERT_EQ(dec->continuations.size(), 1u);
  EXPECT_EQ(S(dec->continuations[0].channels[0]), "y");
  EXPECT_TRUE(dec->continuations[0].peek);
  EXPECT_EQ(dec->continuations[0].group, k.group);
  EXPECT_EQ(EncodeChannelState(*dec), enc);
}

class ChannelStateDecodeTest : public ::testing::TestWithParam<size_t> {};

TEST_P(ChannelStateDecodeTest, TruncatedBlobIsDataLoss) {
  ChannelState st;
  st.data.push_back(Datum{T("value"), false, Hash32{}});
  WaitingContinuation k;
  k.channels = {T("c")};
  k.patterns = {T("p")};
  k.continuation = T("k");
  k.group = MakeJoinGroup(k.channels);
  st.continuations.push_back(k);
  st.joins.push_back(k.group);
  Bytes enc = EncodeChannelState(st);
  size_t cut = GetParam() * enc.size() / 10;
  Bytes bad(enc.begin(), enc.begin() + cut);
  auto dec = DecodeChannelState(bad, [](Bytes b) -> absl::StatusOr<TermPtr> {
    return Term::Make(std::move(b));
  });
  EXPECT_EQ(dec.status().code(), absl::StatusCode::kDataLoss);
}

INSTANTIATE_TEST_SUITE_P(Cuts, ChannelStateDecodeTest,
                         ::testing::Values(0, 1, 3, 5, 7, 9));

TEST(ChannelStateCodecTest, TrailingBytesAreDataLoss) {
  ChannelState st;
  Bytes enc = EncodeChannelState(st);
  enc.push_back(0);
  auto dec = DecodeChannelState(enc, [](Bytes b) -> absl::StatusOr<TermPtr> {
    return Term::Make(std::move(b));
  });
  EXPECT_EQ(dec.status().code(), absl::StatusCode::kDataLoss);
}

TEST(ChannelStateCodecTest, TermFactoryIsUsedOnLoad) {
  InMemoryStore store(3);
  {
    auto space = *Space::Open(&store);
    testing::TestMatcher m;
    EventLog log;
    OpContext ctx{&log, &m};
    ASSERT_TRUE(space->Produce(ctx, T("ch"), T("d"), false).ok());
    ASSERT_TRUE(space->CreateCheckpoint().ok());
  }
  int calls = 0;
  SpaceOptions opts;
  opts.term_factory = [&](Bytes b) -> absl::StatusOr<TermPtr> {
    ++calls;
    return Term::Make(std::move(b), std::make_shared<int>(7));
  };
  auto space = *Space::Open(&store, opts);
  auto data = space->GetData(T("ch")->hash());
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(calls, 1);
  EXPECT_NE((*data)[0].value->decoded(), nullptr);
}

// Offset of the first datum's stored value hash: version(1), data count(4),
// persist(1), source(32).
constexpr size_t kFirstValueHashOffset = 1 + 4 + 1 + 32;

TEST(ChannelStateCodecTest, StoredValueHashMismatchIsDataLoss) {
  ChannelState st;
  st.data.push_back(Datum{T("value"), false, Hash32{1}});
  Bytes enc = EncodeChannelState(st);
  const Hash32 value_hash = T("value")->hash();
  EXPECT_TRUE(std::equal(value_hash.begin(), value_hash.end(),
                         enc.begin() + kFirstValueHashOffset));
  enc[kFirstValueHashOffset] ^= 1;
  auto dec = DecodeChannelState(enc, [](Bytes b) -> absl::StatusOr<TermPtr> {
    return Term::Make(std::move(b));
  });
  EXPECT_EQ(dec.status().code(), absl::StatusCode::kDataLoss);
}

TEST(ChannelStateCodecTest, TrustedDecodeTakesStoredHashWithoutFactory) {
  // A datum whose term carries a hash other than Blake2b(bytes): the trusted
  // decoder returns the stored hash as is, the verifying one rejects it.
  Hash32 stored{};
  stored[0] = 0xab;
  ChannelState st;
  st.data.push_back(
      Datum{Term::MakeWithHash(ToBytes("value"), stored), true, Hash32{1}});
  WaitingContinuation k;
  k.channels = {T("c")};
  k.patterns = {T("p")};
  k.continuation = T("k");
  k.source = Hash32{2};
  k.group = MakeJoinGroup(k.channels);
  st.continuations.push_back(k);
  const Bytes enc = EncodeChannelState(st);
  int calls = 0;
  auto factory = [&](Bytes b) -> absl::StatusOr<TermPtr> {
    ++calls;
    return Term::Make(std::move(b));
  };
  auto trusted = DecodeChannelState(enc, factory, ValueHashes::kTrust);
  ASSERT_TRUE(trusted.ok()) << trusted.status();
  ASSERT_EQ(trusted->data.size(), 1u);
  EXPECT_EQ(trusted->data[0].value->hash(), stored);
  EXPECT_EQ(S(trusted->data[0].value), "value");
  EXPECT_EQ(calls, 3);  // The continuation's channel, pattern and body.
  EXPECT_EQ(EncodeChannelState(*trusted), enc);
  auto verified = DecodeChannelState(enc, factory);
  EXPECT_EQ(verified.status().code(), absl::StatusCode::kDataLoss);
}

TEST(ChannelStateCodecTest, VersionOneBlobIsDataLoss) {
  Bytes enc = EncodeChannelState(ChannelState{});
  ASSERT_EQ(enc[0], 2);
  enc[0] = 1;
  auto dec = DecodeChannelState(enc, [](Bytes b) -> absl::StatusOr<TermPtr> {
    return Term::Make(std::move(b));
  });
  EXPECT_EQ(dec.status().code(), absl::StatusCode::kDataLoss);
}

// ComposeChanges: the change of two phases composed equals the change of
// both phases measured at once, on random operation sequences.

// A change as sorted id lists, for comparison regardless of list order.
struct ChangeIds {
  std::vector<std::tuple<Hash32, bool, Hash32>> added_data, removed_data;
  std::vector<Hash32> added_k, removed_k;
  std::vector<JoinGroup> added_j, removed_j;
  bool operator==(const ChangeIds&) const = default;
};

std::map<Hash32, ChangeIds> IdsOf(const StateChanges& c) {
  std::map<Hash32, ChangeIds> out;
  for (const ChannelChange& ch : c.channels) {
    ChangeIds& x = out[ch.channel];
    for (const Datum& d : ch.added_data)
      x.added_data.emplace_back(d.source, d.persist, d.value->hash());
    for (const Datum& d : ch.removed_data)
      x.removed_data.emplace_back(d.source, d.persist, d.value->hash());
    for (const auto& k : ch.added_continuations) x.added_k.push_back(k.source);
    for (const auto& k : ch.removed_continuations)
      x.removed_k.push_back(k.source);
    x.added_j = ch.added_joins;
    x.removed_j = ch.removed_joins;
    std::sort(x.added_data.begin(), x.added_data.end());
    std::sort(x.removed_data.begin(), x.removed_data.end());
    std::sort(x.added_k.begin(), x.added_k.end());
    std::sort(x.removed_k.begin(), x.removed_k.end());
    std::sort(x.added_j.begin(), x.added_j.end());
    std::sort(x.removed_j.begin(), x.removed_j.end());
  }
  return out;
}

// One random operation: a produce or a (join) consume on channels a..c.
void RandomOp(Fixture& f, std::mt19937& rng) {
  static const char* kChannels[] = {"a", "b", "c"};
  static const char* kData[] = {"x", "y"};
  const std::string ch = kChannels[rng() % 3];
  switch (rng() % 4) {
    case 0:
    case 1:
      ASSERT_TRUE(f.ProduceAll(ch, kData[rng() % 2], rng() % 5 == 0).ok());
      break;
    case 2:
      ASSERT_TRUE(
          f.Consume({ch}, {rng() % 2 ? "*" : "x"}, "k", false, rng() % 4 == 0)
              .ok());
      break;
    default:
      ASSERT_TRUE(f.Consume({ch, kChannels[rng() % 3]}, {"*", "*"}, "j").ok());
  }
}

TEST(StateChangeTest, ComposedPhasesEqualTheWholeChange) {
  const uint64_t seed = testing::TestSeed(646);
  std::mt19937 gen(static_cast<uint32_t>(seed));
  for (int trial = 0; trial < 300; ++trial) {
    const uint32_t trial_seed = gen();
    const int base_ops = static_cast<int>(gen() % 6);
    const int ops = 1 + static_cast<int>(gen() % 12);
    const int split = static_cast<int>(gen() % (ops + 1));
    // Phased: base, checkpoint, ops[0, split), checkpoint, ops[split, ops).
    Fixture phased;
    std::mt19937 r1(trial_seed);
    for (int i = 0; i < base_ops; ++i) RandomOp(phased, r1);
    DeployScope::Mark m1 = phased.scope->mark();
    for (int i = 0; i < split; ++i) RandomOp(phased, r1);
    StateChanges first = *phased.scope->ChangesSince(m1);
    DeployScope::Mark m2 = phased.scope->mark();
    for (int i = split; i < ops; ++i) RandomOp(phased, r1);
    StateChanges second = *phased.scope->ChangesSince(m2);
    // Whole: the same operations with one mark.
    Fixture whole;
    std::mt19937 r2(trial_seed);
    for (int i = 0; i < base_ops; ++i) RandomOp(whole, r2);
    DeployScope::Mark m = whole.scope->mark();
    for (int i = 0; i < ops; ++i) RandomOp(whole, r2);
    StateChanges all = *whole.scope->ChangesSince(m);

    StateChanges composed = ComposeChanges(first, second);
    ASSERT_EQ(IdsOf(composed), IdsOf(all))
        << "seed " << seed << " trial " << trial;
    for (size_t i = 1; i < composed.channels.size(); ++i) {
      ASSERT_LT(composed.channels[i - 1].channel, composed.channels[i].channel);
    }
    for (const ChannelChange& c : composed.channels) ASSERT_FALSE(c.empty());
  }
}

}  // namespace
}  // namespace rnode::rspace

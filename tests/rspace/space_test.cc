// Behaviour of produce / consume / install: matching, joins, persistence,
// peeks, candidate order and the COMM result.
#include "rspace/space.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/rspace/test_util.h"

namespace rnode::rspace {
namespace {

using testing::Fixture;
using testing::Matched;
using testing::S;
using testing::T;

using Strings = std::vector<std::string>;

TEST(SpaceTest, ProduceOnEmptyChannelStoresDatum) {
  Fixture f;
  auto r = f.Produce("ch1", "datum");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(f.Data("ch1"), Strings{"datum"});
  EXPECT_EQ(f.Joins("ch1"), 0u);
}

// The order of stored data (by produce event hash) for the given datums.
Strings ByProduceHash(const std::string& ch, Strings data) {
  std::sort(data.begin(), data.end(),
            [&](const std::string& a, const std::string& b) {
              return HashProduce(T(ch)->hash(), T(a)->hash(), false, 0) <
                     HashProduce(T(ch)->hash(), T(b)->hash(), false, 0);
            });
  return data;
}

TEST(SpaceTest, TwoProducesKeepBothInProduceHashOrder) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch1", "a")->has_value());
  ASSERT_FALSE(f.Produce("ch1", "b")->has_value());
  EXPECT_EQ(f.Data("ch1"), ByProduceHash("ch1", {"a", "b"}));
}

TEST(SpaceTest, StoredOrderDoesNotDependOnProduceOrder) {
  Fixture f, g;
  for (const char* d : {"1", "2", "3", "4"})
    ASSERT_TRUE(f.Produce("ch", d).ok());
  for (const char* d : {"4", "2", "3", "1"})
    ASSERT_TRUE(g.Produce("ch", d).ok());
  EXPECT_EQ(f.Data("ch"), g.Data("ch"));
  EXPECT_EQ(*f.space->CreateCheckpoint(), *g.space->CreateCheckpoint());
}

TEST(SpaceTest, ProduceFiresOnlyACommThatTakesItsOwnDatum) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"a"}, {"^x"}, "k", true, true)->has_value());
  ASSERT_TRUE(f.Produce("a", "x1")->has_value());
  EXPECT_EQ(f.Data("a"), Strings{"x1"});
  // "y" does not match; the stored "x1" would, but it is not this produce's.
  EXPECT_FALSE(f.Produce("a", "y")->has_value());
  EXPECT_EQ(f.Data("a").size(), 2u);
}

TEST(SpaceTest, ConsumeOnEmptyChannelStoresContinuationAndJoin) {
  Fixture f;
  auto r = f.Consume({"ch1"}, {"*"}, "k");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(f.Conts({"ch1"}), 1u);
  EXPECT_EQ(f.Joins("ch1"), 1u);
}

TEST(SpaceTest, ConsumeOnThreeChannelsStoresOneContinuationAndThreeJoins) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"a", "b", "c"}, {"*", "*", "*"}, "k")->has_value());
  EXPECT_EQ(f.Conts({"a", "b", "c"}), 1u);
  EXPECT_EQ(f.Conts({"c", "a", "b"}), 1u);
  EXPECT_EQ(f.Conts({"a"}), 0u);
  EXPECT_EQ(f.Joins("a"), 1u);
  EXPECT_EQ(f.Joins("b"), 1u);
  EXPECT_EQ(f.Joins("c"), 1u);
}

TEST(SpaceTest, ProduceThenConsumeReturnsContinuationAndData) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch1", "datum")->has_value());
  auto r = f.Consume({"ch1"}, {"*"}, "k");
  ASSERT_TRUE(r.ok() && r->has_value());
  const Comm& c = **r;
  EXPECT_EQ(S(c.continuation), "k");
  ASSERT_EQ(c.binds.size(), 1u);
  EXPECT_EQ(S(c.binds[0].channel), "ch1");
  EXPECT_EQ(S(c.binds[0].datum), "datum");
  EXPECT_EQ(Matched(c.binds[0]), "datum");
  EXPECT_TRUE(c.binds[0].removed);
  EXPECT_FALSE(c.peek);
  EXPECT_TRUE(f.Data("ch1").empty());
  EXPECT_EQ(f.Conts({"ch1"}), 0u);
}

TEST(SpaceTest, ConsumeThenProduceReturnsContinuationAndData) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"ch1"}, {"*"}, "k")->has_value());
  auto r = f.Produce("ch1", "datum");
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ(S((*r)->continuation), "k");
  EXPECT_EQ(S((*r)->binds[0].datum), "datum");
  EXPECT_TRUE(f.Data("ch1").empty());
  EXPECT_EQ(f.Conts({"ch1"}), 0u);
  EXPECT_EQ(f.Joins("ch1"), 0u);
}

TEST(SpaceTest, NonMatchingPatternStoresBoth) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"ch1"}, {"x"}, "k")->has_value());
  ASSERT_FALSE(f.Produce("ch1", "y")->has_value());
  EXPECT_EQ(f.Data("ch1"), Strings{"y"});
  EXPECT_EQ(f.Conts({"ch1"}), 1u);
}

TEST(SpaceTest, PrefixPatternMatchesOnlyMatchingDatum) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch", "apple")->has_value());
  ASSERT_FALSE(f.Produce("ch", "banana")->has_value());
  auto r = f.Consume({"ch"}, {"^ban"}, "k");
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(S((*r)->binds[0].datum), "banana");
  EXPECT_EQ(f.Data("ch"), Strings{"apple"});
}

TEST(SpaceTest, JoinFiresOnlyWhenAllChannelsHaveData) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"a", "b"}, {"*", "*"}, "k")->has_value());
  ASSERT_FALSE(f.Produce("a", "1")->has_value());
  EXPECT_EQ(f.Data("a"), Strings{"1"});
  auto r = f.Produce("b", "2");
  ASSERT_TRUE(r->has_value());
  ASSERT_EQ((*r)->binds.size(), 2u);
  EXPECT_EQ(S((*r)->binds[0].channel), "a");
  EXPECT_EQ(S((*r)->binds[0].datum), "1");
  EXPECT_EQ(S((*r)->binds[1].channel), "b");
  EXPECT_EQ(S((*r)->binds[1].datum), "2");
  EXPECT_TRUE(f.Data("a").empty());
  EXPECT_TRUE(f.Data("b").empty());
  EXPECT_EQ(f.Joins("a"), 0u);
  EXPECT_EQ(f.Joins("b"), 0u);
}

TEST(SpaceTest, JoinOverThreeChannelsConsumeLast) {
  Fixture f;
  ASSERT_FALSE(f.Produce("a", "1")->has_value());
  ASSERT_FALSE(f.Produce("b", "2")->has_value());
  ASSERT_FALSE(f.Produce("c", "3")->has_value());
  auto r = f.Consume({"c", "a", "b"}, {"*", "*", "*"}, "k");
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(S((*r)->binds[0].datum), "3");
  EXPECT_EQ(S((*r)->binds[1].datum), "1");
  EXPECT_EQ(S((*r)->binds[2].datum), "2");
}

TEST(SpaceTest, JoinBindsKeepConsumeOrderWhenFiredByProduce) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"z", "a"}, {"*", "*"}, "k")->has_value());
  ASSERT_FALSE(f.Produce("z", "zz")->has_value());
  auto r = f.Produce("a", "aa");
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(S((*r)->binds[0].channel), "z");
  EXPECT_EQ(S((*r)->binds[1].channel), "a");
}

TEST(SpaceTest, PermutedChannelConsumesShareAGroupButKeepTheirOwnPatternOrder) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"x", "y"}, {"1", "*"}, "k1")->has_value());
  ASSERT_FALSE(f.Consume({"y", "x"}, {"2", "*"}, "k2")->has_value());
  EXPECT_EQ(f.Conts({"x", "y"}), 2u);
  EXPECT_EQ(f.Joins("x"), 1u);
  ASSERT_FALSE(f.Produce("x", "q")->has_value());
  auto r = f.Produce("y", "2");
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(S((*r)->continuation), "k2");
  EXPECT_EQ(S((*r)->binds[0].channel), "y");
  EXPECT_EQ(S((*r)->binds[0].datum), "2");
}

TEST(SpaceTest, ProducingThreeTimesThenConsumingThreeTimes) {
  Fixture f;
  for (const char* d : {"1", "2", "3"})
    ASSERT_FALSE(f.Produce("ch", d)->has_value());
  Strings got;
  for (int i = 0; i < 3; ++i) {
    auto r = f.Consume({"ch"}, {"*"}, "k");
    ASSERT_TRUE(r->has_value());
    got.push_back(S((*r)->binds[0].datum));
  }
  EXPECT_EQ(got, ByProduceHash("ch", {"1", "2", "3"}));
  EXPECT_FALSE(f.Consume({"ch"}, {"*"}, "k")->has_value());
}

TEST(SpaceTest, CandidateDataAreTriedInProduceHashOrder) {
  Fixture f;
  for (const char* d : {"c", "a", "b"})
    ASSERT_FALSE(f.Produce("ch", d)->has_value());
  auto r = f.Consume({"ch"}, {"*"}, "k");
  EXPECT_EQ(S((*r)->binds[0].datum), ByProduceHash("ch", {"a", "b", "c"})[0]);
}

TEST(SpaceTest, CandidateContinuationsAreTriedInConsumeHashOrder) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"ch"}, {"*"}, "first")->has_value());
  ASSERT_FALSE(f.Consume({"ch"}, {"*"}, "second")->has_value());
  auto ks = *f.space->GetContinuations({T("ch")});
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_LT(ks[0].source, ks[1].source);
  auto r = f.Produce("ch", "d");
  EXPECT_EQ(S((*r)->continuation), S(ks[0].continuation));
  r = f.Produce("ch", "d");
  EXPECT_EQ(S((*r)->continuation), S(ks[1].continuation));
}

TEST(SpaceTest, JoinGroupsAreTriedInSortedOrder) {
  Fixture f;
  ASSERT_FALSE(f.Produce("b", "x")->has_value());
  ASSERT_FALSE(f.Produce("c", "x")->has_value());
  ASSERT_FALSE(f.Consume({"a", "c"}, {"*", "*"}, "ac")->has_value());
  ASSERT_FALSE(f.Consume({"a", "b"}, {"*", "*"}, "ab")->has_value());
  auto joins = *f.space->GetJoins(T("a")->hash());
  ASSERT_EQ(joins.size(), 2u);
  EXPECT_LT(joins[0], joins[1]);
  std::string first = joins[0] == MakeJoinGroup({T("a"), T("c")}) ? "ac" : "ab";
  auto r = f.Produce("a", "x");
  EXPECT_EQ(S((*r)->continuation), first);
}

TEST(SpaceTest, NewDatumIsFirstCandidateOnProduce) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"ch", "ch"}, {"*", "*"}, "k")->has_value());
  ASSERT_FALSE(f.Produce("ch", "old")->has_value());
  auto r = f.Produce("ch", "new");
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(S((*r)->binds[0].datum), "new");
  EXPECT_EQ(S((*r)->binds[1].datum), "old");
}

TEST(SpaceTest, PersistentProduceIsNotStoredWhenItMatchesImmediately) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"ch"}, {"*"}, "k")->has_value());
  auto r = f.Produce("ch", "d", /*persist=*/true);
  ASSERT_TRUE(r->has_value());
  EXPECT_TRUE((*r)->binds[0].datum_persist);
  EXPECT_FALSE((*r)->binds[0].removed);
  EXPECT_TRUE(f.Data("ch").empty());
}

TEST(SpaceTest, PersistentConsumeIsNotStoredWhenItMatchesImmediately) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch", "d")->has_value());
  auto r = f.Consume({"ch"}, {"*"}, "k", /*persist=*/true);
  ASSERT_TRUE(r->has_value());
  EXPECT_TRUE((*r)->continuation_persist);
  EXPECT_EQ(f.Conts({"ch"}), 0u);
  EXPECT_EQ(f.Joins("ch"), 0u);
}

TEST(SpaceTest, StoredPersistentDatumMatchesManyTimes) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch", "d", true)->has_value());
  for (int i = 0; i < 5; ++i) {
    auto r = f.Consume({"ch"}, {"*"}, "k");
    ASSERT_TRUE(r->has_value());
    EXPECT_FALSE((*r)->binds[0].removed);
  }
  EXPECT_EQ(f.Data("ch"), Strings{"d"});
}

TEST(SpaceTest, StoredPersistentContinuationFiresManyTimes) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"ch"}, {"*"}, "k", true)->has_value());
  for (int i = 0; i < 5; ++i) {
    auto r = f.Produce("ch", "d" + std::to_string(i));
    ASSERT_TRUE(r->has_value());
    EXPECT_EQ(S((*r)->continuation), "k");
  }
  EXPECT_EQ(f.Conts({"ch"}), 1u);
  EXPECT_EQ(f.Joins("ch"), 1u);
  EXPECT_TRUE(f.Data("ch").empty());
}

TEST(SpaceTest, PersistentDatumOnJoinStaysAfterJoinFires) {
  Fixture f;
  ASSERT_FALSE(f.Produce("a", "pa", true)->has_value());
  ASSERT_FALSE(f.Consume({"a", "b"}, {"*", "*"}, "k")->has_value());
  auto r = f.Produce("b", "lb");
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(f.Data("a"), Strings{"pa"});
  EXPECT_TRUE(f.Data("b").empty());
}

TEST(SpaceTest, PeekConsumeLeavesDataInPlace) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch", "d")->has_value());
  auto r = f.Consume({"ch"}, {"*"}, "k", false, /*peek=*/true);
  ASSERT_TRUE(r->has_value());
  EXPECT_TRUE((*r)->peek);
  EXPECT_FALSE((*r)->binds[0].removed);
  EXPECT_EQ(f.Data("ch"), Strings{"d"});
}

TEST(SpaceTest, PeekContinuationFiredByProduceKeepsTheNewDatum) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"ch"}, {"*"}, "k", false, true)->has_value());
  auto r = f.Produce("ch", "d");
  ASSERT_TRUE(r->has_value());
  EXPECT_TRUE((*r)->peek);
  EXPECT_EQ(f.Data("ch"), Strings{"d"});
  EXPECT_EQ(f.Conts({"ch"}), 0u);
}

TEST(SpaceTest, PeekOnJoinKeepsDataOnAllChannels) {
  Fixture f;
  ASSERT_FALSE(f.Produce("a", "1")->has_value());
  ASSERT_FALSE(
      f.Consume({"a", "b"}, {"*", "*"}, "k", false, true)->has_value());
  auto r = f.Produce("b", "2");
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(f.Data("a"), Strings{"1"});
  EXPECT_EQ(f.Data("b"), Strings{"2"});
}

TEST(SpaceTest, PersistentPeekDatumFiredByProduceIsNotStored) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"ch"}, {"*"}, "k", false, true)->has_value());
  ASSERT_TRUE(f.Produce("ch", "d", true)->has_value());
  EXPECT_TRUE(f.Data("ch").empty());
}

TEST(SpaceTest, EveryWaitingPeekFiresOnOneProduce) {
  Fixture f;
  for (const char* k : {"k1", "k2", "k3"}) {
    ASSERT_FALSE(f.Consume({"ch"}, {"*"}, k, false, true)->has_value());
  }
  auto r = f.ProduceAll("ch", "d");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 3u);
  Strings fired;
  for (const Comm& c : *r) {
    EXPECT_TRUE(c.peek);
    EXPECT_FALSE(c.binds[0].removed);
    EXPECT_EQ(S(c.binds[0].datum), "d");
    fired.push_back(S(c.continuation));
  }
  std::sort(fired.begin(), fired.end());
  EXPECT_EQ(fired, (Strings{"k1", "k2", "k3"}));
  // Stored once, after every peek, with no continuation left to match it.
  EXPECT_EQ(f.Data("ch"), Strings{"d"});
  EXPECT_EQ(f.Conts({"ch"}), 0u);
  // The fixture's one-COMM Produce refuses to hide the other COMMs.
  for (const char* k : {"k4", "k5"}) {
    ASSERT_FALSE(f.Consume({"c2"}, {"*"}, k, false, true)->has_value());
  }
  EXPECT_EQ(f.Produce("c2", "e").status().code(), absl::StatusCode::kInternal);
}

TEST(SpaceTest, ATakeAfterPeeksEndsTheProduce) {
  // The continuations are tried in their stored order: the peeks before the
  // take fire, the take removes the datum, the peeks after it keep waiting.
  Fixture f;
  ASSERT_FALSE(f.Consume({"ch"}, {"*"}, "peek1", false, true)->has_value());
  ASSERT_FALSE(f.Consume({"ch"}, {"*"}, "take", false, false)->has_value());
  ASSERT_FALSE(f.Consume({"ch"}, {"*"}, "peek2", false, true)->has_value());
  auto r = f.ProduceAll("ch", "d");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->empty());
  EXPECT_EQ(S(r->back().continuation), "take");
  EXPECT_FALSE(r->back().peek);
  EXPECT_TRUE(r->back().binds[0].removed);
  for (size_t i = 0; i + 1 < r->size(); ++i) EXPECT_TRUE((*r)[i].peek) << i;
  EXPECT_TRUE(f.Data("ch").empty());
  EXPECT_EQ(r->size() + f.Conts({"ch"}), 3u);
}

TEST(SpaceTest, OnlyMatchingPeeksFire) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"ch"}, {"^x"}, "kx", false, true)->has_value());
  ASSERT_FALSE(f.Consume({"ch"}, {"*"}, "kany", false, true)->has_value());
  auto r = f.ProduceAll("ch", "y");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(S(r->front().continuation), "kany");
  EXPECT_EQ(f.Data("ch"), Strings{"y"});
  EXPECT_EQ(f.Conts({"ch"}), 1u);
}

TEST(SpaceTest, PersistentPeekContinuationFiresOnceAndTheDatumStays) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"ch"}, {"*"}, "k", true, true)->has_value());
  auto r = f.ProduceAll("ch", "d");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(f.Data("ch"), Strings{"d"});
  EXPECT_EQ(f.Conts({"ch"}), 1u);
}

TEST(SpaceTest, SameChannelJoinConsumesTwoStoredData) {
  // CORE-365: two stored data on one channel taken by one COMM must both be
  // removed (descending index order), leaving the third.
  Fixture f;
  Strings order = ByProduceHash("ch", {"1", "2", "3"});
  for (const char* d : {"1", "2", "3"})
    ASSERT_FALSE(f.Produce("ch", d)->has_value());
  auto r = f.Consume({"ch", "ch"}, {"*", "*"}, "k");
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(S((*r)->binds[0].datum), order[0]);
  EXPECT_EQ(S((*r)->binds[1].datum), order[1]);
  EXPECT_EQ(f.Data("ch"), Strings{order[2]});
}

TEST(SpaceTest, SameChannelJoinRemovesFirstAndLastStoredData) {
  Fixture f;
  Strings order = ByProduceHash("ch", {"1", "2", "3"});
  for (const char* d : {"1", "2", "3"})
    ASSERT_FALSE(f.Produce("ch", d)->has_value());
  auto r = f.Consume({"ch", "ch"}, {order[2], order[0]}, "k");
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(f.Data("ch"), Strings{order[1]});
}

TEST(SpaceTest, SameChannelJoinWithNonAdjacentData) {
  Fixture f;
  for (const char* d : {"x1", "y", "x2", "z"}) {
    ASSERT_FALSE(f.Produce("ch", d)->has_value());
  }
  auto r = f.Consume({"ch", "ch"}, {"^x", "^x"}, "k");
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(f.Data("ch"), ByProduceHash("ch", {"y", "z"}));
}

TEST(SpaceTest, SameChannelJoinFiredByProduceRemovesStoredDatumOnly) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch", "old")->has_value());
  ASSERT_FALSE(f.Produce("ch", "keep")->has_value());
  ASSERT_FALSE(f.Consume({"ch", "ch"}, {"^o", "^n"}, "k")->has_value());
  auto r = f.Produce("ch", "new");
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(S((*r)->binds[0].datum), "old");
  EXPECT_EQ(S((*r)->binds[1].datum), "new");
  EXPECT_EQ(f.Data("ch"), Strings{"keep"});
}

TEST(SpaceTest, GreedyMatchingDoesNotBacktrack) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch", "ab")->has_value());
  ASSERT_FALSE(f.Produce("ch", "b")->has_value());
  // Bind 0 "*" takes "ab"; bind 1 "^a" then finds nothing.
  ASSERT_FALSE(f.Consume({"ch", "ch"}, {"*", "^a"}, "k")->has_value());
  EXPECT_EQ(f.Data("ch").size(), 2u);
}

TEST(SpaceTest, IdenticalConsumesAreBothStored) {
  // The public Rust node drops a duplicate continuation; we keep both.
  Fixture f;
  ASSERT_FALSE(f.Consume({"ch"}, {"x"}, "k")->has_value());
  ASSERT_FALSE(f.Consume({"ch"}, {"x"}, "k")->has_value());
  EXPECT_EQ(f.Conts({"ch"}), 2u);
  EXPECT_EQ(f.Joins("ch"), 1u);
  ASSERT_TRUE(f.Produce("ch", "x")->has_value());
  EXPECT_EQ(f.Conts({"ch"}), 1u);
  EXPECT_EQ(f.Joins("ch"), 1u);
  ASSERT_TRUE(f.Produce("ch", "x")->has_value());
  EXPECT_EQ(f.Joins("ch"), 0u);
}

TEST(SpaceTest, JoinIsKeptWhileAnotherContinuationWaitsOnTheGroup) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"a", "b"}, {"*", "*"}, "k1")->has_value());
  ASSERT_FALSE(f.Consume({"b", "a"}, {"*", "*"}, "k2")->has_value());
  ASSERT_FALSE(f.Produce("a", "1")->has_value());
  ASSERT_TRUE(f.Produce("b", "2")->has_value());
  EXPECT_EQ(f.Joins("a"), 1u);
  EXPECT_EQ(f.Joins("b"), 1u);
}

TEST(SpaceTest, IdenticalProducesGetDistinctEventHashes) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch", "d")->has_value());
  ASSERT_FALSE(f.Produce("ch", "d")->has_value());
  auto data = *f.space->GetData(T("ch")->hash());
  ASSERT_EQ(data.size(), 2u);
  EXPECT_NE(data[0].source, data[1].source);
}

TEST(SpaceTest, CommResultCarriesEventHashes) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch", "d")->has_value());
  Hash32 source = (*f.space->GetData(T("ch")->hash()))[0].source;
  auto r = f.Consume({"ch"}, {"*"}, "k");
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->binds[0].produce, source);
  auto events = f.log.Take();
  ASSERT_EQ(events.size(), 3u);
  int comms = 0;
  for (const auto& e : events) {
    if (const auto* c = std::get_if<CommEvent>(&e)) {
      ++comms;
      EXPECT_EQ(c->hash, (*r)->comm_hash);
      EXPECT_EQ(c->consume, (*r)->consume);
    }
  }
  EXPECT_EQ(comms, 1);
}

struct ArgCase {
  const char* name;
  size_t channels;
  size_t patterns;
  absl::StatusCode code;
};

class ConsumeArgumentsTest : public ::testing::TestWithParam<ArgCase> {};

TEST_P(ConsumeArgumentsTest, RejectsMalformedBinds) {
  Fixture f;
  std::vector<TermPtr> c, p;
  for (size_t i = 0; i < GetParam().channels; ++i)
    c.push_back(T("c" + std::to_string(i)));
  for (size_t i = 0; i < GetParam().patterns; ++i) p.push_back(T("*"));
  auto r = f.space->Consume(f.ctx, c, p, T("k"), false, false);
  EXPECT_EQ(r.status().code(), GetParam().code) << r.status();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConsumeArgumentsTest,
    ::testing::Values(
        ArgCase{"Empty", 0, 0, absl::StatusCode::kInvalidArgument},
        ArgCase{"MorePatterns", 1, 2, absl::StatusCode::kInvalidArgument},
        ArgCase{"MoreChannels", 3, 2, absl::StatusCode::kInvalidArgument},
        ArgCase{"TooMany", kMaxJoinArity + 1, kMaxJoinArity + 1,
                absl::StatusCode::kResourceExhausted},
        ArgCase{"MaxArityIsFine", kMaxJoinArity, kMaxJoinArity,
                absl::StatusCode::kOk}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(SpaceTest, ProduceWithoutLogIsInvalid) {
  Fixture f;
  OpContext bad{nullptr, &f.matcher};
  EXPECT_EQ(f.space->Produce(bad, T("c"), T("d"), false).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SpaceTest, MatcherErrorAbortsConsumeWithoutStoring) {
  Fixture f;
  ASSERT_FALSE(f.Produce("ch", "d")->has_value());
  auto r = f.Consume({"ch"}, {"!"}, "k");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(f.Conts({"ch"}), 0u);
  EXPECT_EQ(f.Data("ch"), Strings{"d"});
}

TEST(SpaceTest, MatcherErrorAbortsProduceWithoutStoring) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"ch"}, {"!"}, "k")->has_value());
  auto r = f.Produce("ch", "d");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(f.Data("ch").empty());
}

// Install.

TEST(InstallTest, InstalledContinuationFiresAndStays) {
  Fixture f;
  ASSERT_TRUE(
      f.space->Install(f.matcher, {T("sys")}, {T("*")}, T("proc")).ok());
  for (int i = 0; i < 3; ++i) {
    auto r = f.Produce("sys", "msg");
    ASSERT_TRUE(r->has_value());
    EXPECT_TRUE((*r)->installed);
    EXPECT_EQ(S((*r)->continuation), "proc");
  }
  EXPECT_EQ(f.Conts({"sys"}), 1u);
}

TEST(InstallTest, InstalledContinuationSurvivesReset) {
  Fixture f;
  ASSERT_TRUE(
      f.space->Install(f.matcher, {T("sys")}, {T("*")}, T("proc")).ok());
  ASSERT_TRUE(f.space->Clear().ok());
  auto r = f.Produce("sys", "msg");
  ASSERT_TRUE(r->has_value());
  EXPECT_TRUE((*r)->installed);
}

TEST(InstallTest, InstalledContinuationSurvivesCheckpointAndIsNotInHistory) {
  Fixture f;
  ASSERT_TRUE(
      f.space->Install(f.matcher, {T("sys")}, {T("*")}, T("proc")).ok());
  auto root = f.space->CreateCheckpoint();
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(*root, kEmptyRoot);
  ASSERT_TRUE(f.Produce("sys", "msg")->has_value());
}

TEST(InstallTest, InstallAfterMatchingProduceIsRefused) {
  Fixture f;
  ASSERT_FALSE(f.Produce("sys", "msg")->has_value());
  auto s = f.space->Install(f.matcher, {T("sys")}, {T("*")}, T("proc"));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
}

TEST(InstallTest, InstalledContinuationIsTriedBeforeOrdinaryOnes) {
  Fixture f;
  ASSERT_FALSE(f.Consume({"sys"}, {"*"}, "user")->has_value());
  ASSERT_TRUE(
      f.space->Install(f.matcher, {T("sys")}, {T("*")}, T("proc")).ok());
  auto r = f.Produce("sys", "msg");
  EXPECT_EQ(S((*r)->continuation), "proc");
  EXPECT_EQ(f.Conts({"sys"}), 2u);
}

TEST(InstallTest, InstalledJoinFires) {
  Fixture f;
  ASSERT_TRUE(
      f.space->Install(f.matcher, {T("a"), T("b")}, {T("*"), T("*")}, T("proc"))
          .ok());
  ASSERT_FALSE(f.Produce("a", "1")->has_value());
  auto r = f.Produce("b", "2");
  ASSERT_TRUE(r->has_value());
  EXPECT_TRUE((*r)->installed);
  EXPECT_TRUE(f.Data("a").empty());
  EXPECT_EQ(f.Joins("a"), 1u);
}

TEST(InstallTest, MalformedInstallIsInvalid) {
  Fixture f;
  EXPECT_EQ(f.space->Install(f.matcher, {}, {}, T("p")).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(f.space->Install(f.matcher, {T("a")}, {}, T("p")).code(),
            absl::StatusCode::kInvalidArgument);
}

// Installs (read-copy-update of the install table) while other threads
// produce on other channels, creating entries that read the table. Every
// install is in force afterwards, also after the overlay is rebuilt. Run
// under the tsan preset for races.
TEST(InstallTest, InstallConcurrentWithProducesOnOtherChannels) {
  Fixture f;
  constexpr int kInstalls = 40;
  constexpr int kProducers = 3;
  constexpr int kProduces = 500;
  std::atomic<int> errors{0};
  std::vector<std::thread> producers;
  for (int t = 0; t < kProducers; ++t) {
    producers.emplace_back([&, t] {
      EventLog log;
      OpContext ctx{&log, &f.matcher};
      for (int i = 0; i < kProduces; ++i) {
        TermPtr ch = T("p" + std::to_string(t) + "_" + std::to_string(i));
        if (!f.space->Produce(ctx, ch, T("d"), false).ok()) errors++;
      }
    });
  }
  for (int i = 0; i < kInstalls; ++i) {
    ASSERT_TRUE(f.space
                    ->Install(f.matcher, {T("sys" + std::to_string(i))},
                              {T("*")}, T("proc" + std::to_string(i)))
                    .ok());
  }
  for (auto& th : producers) th.join();
  EXPECT_EQ(errors.load(), 0);
  ASSERT_TRUE(f.space->Clear().ok());
  for (int i = 0; i < kInstalls; ++i) {
    auto r = f.Produce("sys" + std::to_string(i), "msg");
    ASSERT_TRUE(r.ok() && r->has_value()) << i;
    EXPECT_EQ(S((*r)->continuation), "proc" + std::to_string(i));
  }
}

}  // namespace
}  // namespace rnode::rspace

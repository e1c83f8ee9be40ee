// DeployScope: per-deploy changes equal DiffChannelState, revert restores
// the exact state and root, scopes of different deploys revert
// independently (also on two threads), interference is detected, a shared
// join group survives the other deploy's revert, marks die with the
// overlay, and reads count as touches.
#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "rspace/channel_codec.h"
#include "rspace/deploy_scope.h"
#include "rspace/space.h"
#include "rspace/state_change.h"
#include "tests/rspace/test_util.h"

namespace rnode::rspace {
namespace {

using testing::Fixture;
using testing::T;
using testing::TestMatcher;
using Strings = std::vector<std::string>;

// A randomized test's seed (tests/test_seed.h): RNODE_TEST_SEED, else a
// fixed default; printed. The generators take 32 bits of it.
uint32_t Seed(const char* test) {
  return static_cast<uint32_t>(testing::TestSeed(test, 20261201));
}

// One random operation by `ctx` on the channels `prefix` + a..c: a
// produce, a consume (maybe peek, maybe persistent) or a two-channel join.
absl::Status RandomOp(Space& space, const OpContext& ctx,
                      const std::string& prefix, std::mt19937& rng) {
  static const char* kChannels[] = {"a", "b", "c"};
  static const char* kData[] = {"x", "y"};
  const std::string ch = prefix + kChannels[rng() % 3];
  switch (rng() % 4) {
    case 0:
    case 1:
      return space.Produce(ctx, T(ch), T(kData[rng() % 2]), rng() % 5 == 0)
          .status();
    case 2:
      return space
          .Consume(ctx, {T(ch)}, {T(rng() % 2 ? "*" : "x")}, T("k"),
                   rng() % 6 == 0, rng() % 4 == 0)
          .status();
    default:
      return space
          .Consume(ctx, {T(ch), T(prefix + kChannels[rng() % 3])},
                   {T("*"), T("*")}, T("j"), false, false)
          .status();
  }
}

// The state of `channel` under `root`, read from history.
ChannelState StateAt(Space& space, const Hash32& root, const Hash32& channel) {
  absl::StatusOr<std::optional<Bytes>> blob =
      space.history().ReadLeaf(root, channel);
  EXPECT_TRUE(blob.ok()) << blob.status();
  if (!blob.ok() || !blob->has_value()) return {};
  absl::StatusOr<ChannelState> st =
      DecodeChannelState(**blob, [](Bytes b) -> absl::StatusOr<TermPtr> {
        return Term::Make(std::move(b));
      });
  EXPECT_TRUE(st.ok()) << st.status();
  return st.ok() ? *std::move(st) : ChannelState{};
}

// A change as ids in the change's own order (the order is part of the
// contract: the channel's order).
using DatumId = std::tuple<Hash32, bool, Hash32>;
struct ChangeIds {
  std::vector<DatumId> added_data, removed_data;
  std::vector<Hash32> added_k, removed_k;
  std::vector<JoinGroup> added_j, removed_j;
  bool operator==(const ChangeIds&) const = default;
};
ChangeIds IdsOf(const ChannelChange& c) {
  ChangeIds x;
  for (const Datum& d : c.added_data)
    x.added_data.emplace_back(d.source, d.persist, d.value->hash());
  for (const Datum& d : c.removed_data)
    x.removed_data.emplace_back(d.source, d.persist, d.value->hash());
  for (const auto& k : c.added_continuations) x.added_k.push_back(k.source);
  for (const auto& k : c.removed_continuations) x.removed_k.push_back(k.source);
  x.added_j = c.added_joins;
  x.removed_j = c.removed_joins;
  return x;
}

TEST(DeployScopeTest, ChangesEqualDiffChannelStateUnderRandomOps) {
  const uint32_t seed = Seed("ChangesEqualDiffChannelStateUnderRandomOps");
  std::mt19937 gen(seed);
  const std::vector<std::string> names = {"a", "b", "c"};
  for (int trial = 0; trial < 200; ++trial) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " trial " +
                 std::to_string(trial));
    Fixture f;
    const int base_ops = static_cast<int>(gen() % 8);
    const int ops = 1 + static_cast<int>(gen() % 16);
    for (int i = 0; i < base_ops; ++i) {
      ASSERT_TRUE(RandomOp(*f.space, f.ctx, "", gen).ok());
    }
    const Hash32 before = *f.space->CreateCheckpoint();
    DeployScope scope(*f.space);
    OpContext ctx{&f.log, &f.matcher, &scope};
    DeployScope::Mark m = scope.mark();
    for (int i = 0; i < ops; ++i) {
      ASSERT_TRUE(RandomOp(*f.space, ctx, "", gen).ok());
    }
    absl::StatusOr<StateChanges> changes = scope.ChangesSince(m);
    ASSERT_TRUE(changes.ok()) << changes.status();
    const Hash32 after = *f.space->CreateCheckpoint();
    StateChanges diffs;
    for (const std::string& n : names) {
      const Hash32 ch = T(n)->hash();
      ChannelChange c = DiffChannelState(ch, StateAt(*f.space, before, ch),
                                         StateAt(*f.space, after, ch));
      if (!c.empty()) diffs.channels.push_back(std::move(c));
    }
    std::sort(diffs.channels.begin(), diffs.channels.end(),
              [](const ChannelChange& x, const ChannelChange& y) {
                return x.channel < y.channel;
              });
    ASSERT_EQ(changes->channels.size(), diffs.channels.size());
    for (size_t i = 0; i < diffs.channels.size(); ++i) {
      EXPECT_EQ(changes->channels[i].channel, diffs.channels[i].channel);
      EXPECT_TRUE(IdsOf(changes->channels[i]) == IdsOf(diffs.channels[i]))
          << "channel " << i;
    }
  }
}

TEST(DeployScopeTest, RevertRestoresExactStateAndRoot) {
  const uint32_t seed = Seed("RevertRestoresExactStateAndRoot");
  std::mt19937 gen(seed);
  for (int trial = 0; trial < 200; ++trial) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " trial " +
                 std::to_string(trial));
    Fixture f;
    const int base_ops = static_cast<int>(gen() % 8);
    const int ops = 1 + static_cast<int>(gen() % 16);
    for (int i = 0; i < base_ops; ++i) {
      ASSERT_TRUE(RandomOp(*f.space, f.ctx, "", gen).ok());
    }
    // Half the trials revert over a hot overlay, half over a fresh root.
    std::optional<Hash32> root;
    if (trial % 2 == 0) root = *f.space->CreateCheckpoint();
    DeployScope::Mark m = f.scope->mark();
    const Strings data_a = f.Data("a");
    const size_t joins_b = f.Joins("b");
    for (int i = 0; i < ops; ++i) {
      ASSERT_TRUE(RandomOp(*f.space, f.ctx, "", gen).ok());
    }
    ASSERT_TRUE(f.scope->RevertTo(m).ok());
    EXPECT_EQ(f.Data("a"), data_a);
    EXPECT_EQ(f.Joins("b"), joins_b);
    EXPECT_TRUE(f.scope->ChangesSince(m)->channels.empty());
    if (root.has_value()) {
      EXPECT_EQ(*f.space->CreateCheckpoint(), *root);
    }
  }
}

// Two deploys on disjoint channels, each on its own thread with its own log
// and scope; deploy 0 reverts to a mark half way, deploy 1 keeps all. The
// root equals that of running deploy 0's kept prefix and all of deploy 1
// one after the other on another space.
TEST(DeployScopeTest, ScopesOnDisjointChannelsRevertIndependentlyOnTwoThreads) {
  const uint32_t seed =
      Seed("ScopesOnDisjointChannelsRevertIndependentlyOnTwoThreads");
  constexpr int kOps = 400;
  constexpr int kKept = 150;  // deploy 0's operations before its mark
  InMemoryStore store(3);
  auto space = *Space::Open(&store);
  TestMatcher matcher;
  EventLog logs[2];
  DeployScope s0(*space), s1(*space);
  OpContext c0{&logs[0], &matcher, &s0};
  OpContext c1{&logs[1], &matcher, &s1};
  absl::Status st0, st1;
  std::thread t0([&] {
    std::mt19937 rng(seed);
    DeployScope::Mark m;
    for (int i = 0; i < kOps && st0.ok(); ++i) {
      if (i == kKept) m = s0.mark();
      st0 = RandomOp(*space, c0, "d0-", rng);
    }
    if (st0.ok()) st0 = s0.RevertTo(m);
  });
  std::thread t1([&] {
    std::mt19937 rng(seed + 1);
    for (int i = 0; i < kOps && st1.ok(); ++i) {
      st1 = RandomOp(*space, c1, "d1-", rng);
    }
  });
  t0.join();
  t1.join();
  ASSERT_TRUE(st0.ok()) << st0;
  ASSERT_TRUE(st1.ok()) << st1;
  for (const Hash32& h : s0.TouchedChannels()) {
    for (const Hash32& g : s1.TouchedChannels()) ASSERT_NE(h, g);
  }

  Fixture ref;
  EventLog ref_logs[2];
  OpContext r0{&ref_logs[0], &ref.matcher};
  OpContext r1{&ref_logs[1], &ref.matcher};
  std::mt19937 g0(seed), g1(seed + 1);
  for (int i = 0; i < kKept; ++i) {
    ASSERT_TRUE(RandomOp(*ref.space, r0, "d0-", g0).ok());
  }
  for (int i = 0; i < kOps; ++i) {
    ASSERT_TRUE(RandomOp(*ref.space, r1, "d1-", g1).ok());
  }
  EXPECT_EQ(*space->CreateCheckpoint(), *ref.space->CreateCheckpoint());
}

TEST(DeployScopeTest, RevertDetectsAnotherDeployConsumingOurDatum) {
  Fixture f;
  DeployScope a(*f.space), b(*f.space);
  EventLog la, lb;
  OpContext ca{&la, &f.matcher, &a}, cb{&lb, &f.matcher, &b};
  DeployScope::Mark start = a.mark();
  ASSERT_TRUE(f.space->Produce(ca, T("ch"), T("d"), false).ok());
  ASSERT_TRUE(f.space->Consume(cb, {T("ch")}, {T("*")}, T("k"), false, false)
                  ->has_value());
  absl::Status st = a.RevertTo(start);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("interference"), std::string::npos) << st;
}

TEST(DeployScopeTest, RevertKeepsAnotherDeploysJoinOfTheSameGroup) {
  Fixture f;
  DeployScope a(*f.space), b(*f.space);
  EventLog la, lb;
  OpContext ca{&la, &f.matcher, &a}, cb{&lb, &f.matcher, &b};
  DeployScope::Mark start_a = a.mark();
  DeployScope::Mark start_b = b.mark();
  // A adds the join {x, y}; B waits on the same group (no join record).
  ASSERT_TRUE(f.space
                  ->Consume(ca, {T("x"), T("y")}, {T("*"), T("*")}, T("ka"),
                            false, false)
                  .ok());
  ASSERT_TRUE(f.space
                  ->Consume(cb, {T("x"), T("y")}, {T("*"), T("*")}, T("kb"),
                            false, false)
                  .ok());
  ASSERT_TRUE(a.RevertTo(start_a).ok());
  EXPECT_EQ(f.Conts({"x", "y"}), 1u);
  EXPECT_EQ(f.Joins("x"), 1u);
  EXPECT_EQ(f.Joins("y"), 1u);
  // B's continuation still fires through the join.
  ASSERT_TRUE(f.space->Produce(cb, T("x"), T("1"), false).ok());
  ASSERT_EQ(f.space->Produce(cb, T("y"), T("2"), false)->size(), 1u);
  ASSERT_TRUE(b.RevertTo(start_b).ok());
  EXPECT_EQ(f.Conts({"x", "y"}), 0u);
  EXPECT_EQ(f.Joins("x"), 0u);
  EXPECT_EQ(f.Joins("y"), 0u);
  EXPECT_TRUE(f.Data("x").empty());
}

TEST(DeployScopeTest, RevertUndoesAProduceThatFiredSeveralPeeks) {
  Fixture f;
  for (const char* k : {"k1", "k2", "k3"}) {
    ASSERT_TRUE(f.Consume({"ch"}, {"*"}, k, false, true).ok());
  }
  DeployScope::Mark m = f.scope->mark();
  auto r = f.ProduceAll("ch", "d");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ(f.Data("ch"), Strings{"d"});
  ASSERT_TRUE(f.scope->RevertTo(m).ok());
  EXPECT_TRUE(f.Data("ch").empty());
  EXPECT_EQ(f.Conts({"ch"}), 3u);
}

TEST(DeployScopeTest, MarksAreInvalidAfterCheckpointOrReset) {
  Fixture f;
  DeployScope::Mark m = f.scope->mark();
  ASSERT_TRUE(f.Produce("ch", "d").ok());
  const Hash32 root = *f.space->CreateCheckpoint();
  EXPECT_EQ(f.scope->RevertTo(m).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(f.scope->ChangesSince(m).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(f.Data("ch"), Strings{"d"});

  DeployScope::Mark n = f.scope->mark();
  ASSERT_TRUE(f.Produce("ch", "e").ok());
  ASSERT_TRUE(f.space->Reset(root).ok());
  EXPECT_EQ(f.scope->RevertTo(n).code(), absl::StatusCode::kFailedPrecondition);
  // A mark taken after the reset works.
  DeployScope::Mark p = f.scope->mark();
  ASSERT_TRUE(f.Produce("ch", "f").ok());
  ASSERT_TRUE(f.scope->RevertTo(p).ok());
  EXPECT_EQ(f.Data("ch"), Strings{"d"});
}

TEST(DeployScopeTest, TouchedIncludesReadOnlyChannels) {
  Fixture f;
  // "b" waits in a join with "a"; a produce on "a" locks both, fires
  // nothing and changes only "a".
  ASSERT_TRUE(f.Consume({"a", "b"}, {"*", "*"}, "k").ok());
  DeployScope scope(*f.space);
  EventLog log;
  OpContext ctx{&log, &f.matcher, &scope};
  ASSERT_TRUE(f.space->Produce(ctx, T("a"), T("d"), false).ok());
  ASSERT_TRUE(f.space->GetData(T("c")->hash(), &scope).ok());
  std::vector<Hash32> touched = {T("a")->hash(), T("b")->hash(),
                                 T("c")->hash()};
  std::sort(touched.begin(), touched.end());
  EXPECT_EQ(scope.TouchedChannels(), touched);
  EXPECT_EQ(scope.WrittenChannels(), std::vector<Hash32>{T("a")->hash()});
}

TEST(DeployScopeTest, RevertEmptiesWrittenButNotTouched) {
  Fixture f;
  DeployScope::Mark m = f.scope->mark();
  ASSERT_TRUE(f.Produce("ch", "d").ok());
  ASSERT_TRUE(f.scope->RevertTo(m).ok());
  EXPECT_TRUE(f.scope->WrittenChannels().empty());
  EXPECT_EQ(f.scope->TouchedChannels(), std::vector<Hash32>{T("ch")->hash()});
}

// The executor's use: a mark before the program and one before the
// settlement; the composed phases equal the change since the first mark.
TEST(DeployScopeTest, ProgramAndSettlementMarksComposeToTheWhole) {
  Fixture f;
  ASSERT_TRUE(f.Produce("vault", "100").ok());
  DeployScope::Mark program = f.scope->mark();
  ASSERT_TRUE(f.Produce("out", "x").ok());
  ASSERT_TRUE(f.Consume({"vault"}, {"*"}, "take")->has_value());
  StateChanges first = *f.scope->ChangesSince(program);
  DeployScope::Mark settlement = f.scope->mark();
  ASSERT_TRUE(f.Produce("vault", "90").ok());
  ASSERT_TRUE(f.Produce("out", "y").ok());
  StateChanges second = *f.scope->ChangesSince(settlement);
  StateChanges whole = *f.scope->ChangesSince(program);
  StateChanges composed = ComposeChanges(first, second);
  ASSERT_EQ(composed.channels.size(), whole.channels.size());
  for (size_t i = 0; i < whole.channels.size(); ++i) {
    ChangeIds a = IdsOf(composed.channels[i]);
    ChangeIds b = IdsOf(whole.channels[i]);
    std::sort(a.added_data.begin(), a.added_data.end());
    std::sort(b.added_data.begin(), b.added_data.end());
    std::sort(a.removed_data.begin(), a.removed_data.end());
    std::sort(b.removed_data.begin(), b.removed_data.end());
    EXPECT_TRUE(a == b) << "channel " << i;
  }
}

}  // namespace
}  // namespace rnode::rspace

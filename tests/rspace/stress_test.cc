// Concurrency stress: threads produce and consume over overlapping channels
// and joins; no datum or continuation is lost or duplicated. Run under the
// tsan preset for race reports.
#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "rspace/deploy_scope.h"
#include "rspace/space.h"
#include "tests/rspace/test_util.h"

namespace rnode::rspace {
namespace {

using testing::S;
using testing::T;

struct StressParams {
  const char* name;
  int threads;
  int ops_per_thread;
  int channels;
  bool with_checkpoint_rounds;
};

class SpaceStressTest : public ::testing::TestWithParam<StressParams> {};

TEST_P(SpaceStressTest, ConservationUnderConcurrency) {
  const StressParams p = GetParam();
  uint64_t seed = testing::TestSeed(2024);
  SCOPED_TRACE("seed " + std::to_string(seed));
  InMemoryStore store(3);
  auto space = *Space::Open(&store);
  testing::TestMatcher matcher;
  std::vector<std::string> channels;
  for (int i = 0; i < p.channels; ++i)
    channels.push_back("ch" + std::to_string(i));

  // What each thread saw.
  struct Seen {
    std::vector<std::string> produced;      // datum values (unique)
    std::vector<std::string> consumed;      // data removed by COMMs
    std::vector<std::string> conts_stored;  // continuations created
    std::vector<std::string> conts_fired;   // continuations fired by a COMM
  };
  const int rounds = p.with_checkpoint_rounds ? 3 : 1;
  std::vector<Seen> seen(p.threads);
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::thread> threads;
    std::vector<EventLog> logs(p.threads);
    std::atomic<int> errors{0};
    for (int t = 0; t < p.threads; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937_64 rng(seed + t * 7919 + round);
        OpContext ctx{&logs[t], &matcher};
        for (int i = 0; i < p.ops_per_thread; ++i) {
          std::string tag = std::to_string(round) + "_" + std::to_string(t) +
                            "_" + std::to_string(i);
          absl::StatusOr<std::vector<Comm>> r;
          if (rng() % 2 == 0) {
            std::string v = "d" + tag;
            seen[t].produced.push_back(v);
            r = space->Produce(ctx, T(channels[rng() % channels.size()]), T(v),
                               false);
          } else {
            size_t n = 1 + rng() % 3;
            std::vector<TermPtr> cs, ps;
            for (size_t j = 0; j < n; ++j) {
              cs.push_back(T(channels[rng() % channels.size()]));
              ps.push_back(T("*"));
            }
            std::string k = "k" + tag;
            seen[t].conts_stored.push_back(k);
            bool peek = rng() % 8 == 0;
            auto c = space->Consume(ctx, cs, ps, T(k), false, peek);
            if (c.ok()) {
              r.emplace();
              if (c->has_value()) r->push_back(**std::move(c));
            } else {
              r = c.status();
            }
          }
          if (!r.ok()) {
            errors.fetch_add(1);
            continue;
          }
          for (const Comm& comm : *r) {
            seen[t].conts_fired.push_back(S(comm.continuation));
            for (const auto& b : comm.binds) {
              if (b.removed) seen[t].consumed.push_back(S(b.datum));
            }
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    ASSERT_EQ(errors.load(), 0);
    if (p.with_checkpoint_rounds) {
      ASSERT_TRUE(space->CreateCheckpoint().ok());
    }
  }

  std::multiset<std::string> produced, consumed, stored_k, fired_k;
  for (const auto& s : seen) {
    produced.insert(s.produced.begin(), s.produced.end());
    consumed.insert(s.consumed.begin(), s.consumed.end());
    stored_k.insert(s.conts_stored.begin(), s.conts_stored.end());
    fired_k.insert(s.conts_fired.begin(), s.conts_fired.end());
  }
  std::multiset<std::string> remaining;
  std::multiset<std::string> waiting;
  std::set<JoinGroup> groups;
  for (const auto& ch : channels) {
    auto data = space->GetData(T(ch)->hash());
    ASSERT_TRUE(data.ok());
    for (const auto& d : *data) remaining.insert(S(d.value));
    auto joins = space->GetJoins(T(ch)->hash());
    ASSERT_TRUE(joins.ok());
    groups.insert(joins->begin(), joins->end());
  }
  // Continuations are found through the joins of their channels.
  std::map<Hash32, TermPtr> by_hash;
  for (const auto& ch : channels) by_hash[T(ch)->hash()] = T(ch);
  for (const auto& g : groups) {
    std::vector<TermPtr> cs;
    for (const auto& h : g) cs.push_back(by_hash[h]);
    auto ks = space->GetContinuations(cs);
    ASSERT_TRUE(ks.ok());
    for (const auto& k : *ks) waiting.insert(S(k.continuation));
  }
  // Every datum is either consumed exactly once or still stored.
  std::multiset<std::string> accounted = consumed;
  accounted.insert(remaining.begin(), remaining.end());
  EXPECT_EQ(accounted, produced);
  // Every continuation fired exactly once or is still waiting.
  std::multiset<std::string> k_accounted = fired_k;
  k_accounted.insert(waiting.begin(), waiting.end());
  EXPECT_EQ(k_accounted, stored_k);
  for (const auto& k : fired_k) EXPECT_EQ(fired_k.count(k), 1u) << k;
}

// One deploy's log shared by several workers on disjoint channel sets; the
// recorded log then replays, again with concurrent workers, to the same root.
TEST(ConcurrentReplayTest, SharedLogFromWorkersReplaysConcurrently) {
  uint64_t seed = testing::TestSeed(77);
  SCOPED_TRACE("seed " + std::to_string(seed));
  constexpr int kWorkers = 4;
  constexpr int kOps = 600;
  InMemoryStore store(3);
  auto play = *Space::Open(&store);
  auto replay = *Space::Open(&store);
  testing::TestMatcher matcher;
  // Each worker's operations, fixed up front so replay runs the same ones.
  struct Op {
    bool produce;
    std::vector<TermPtr> channels;
    TermPtr value;
    bool persist;
  };
  std::vector<std::vector<Op>> ops(kWorkers);
  std::mt19937_64 rng(seed);
  for (int w = 0; w < kWorkers; ++w) {
    for (int i = 0; i < kOps; ++i) {
      Op op;
      op.produce = rng() % 2 == 0;
      size_t n = op.produce ? 1 : 1 + rng() % 2;
      for (size_t j = 0; j < n; ++j) {
        op.channels.push_back(
            T("w" + std::to_string(w) + "c" + std::to_string(rng() % 5)));
      }
      op.value = T(std::to_string(rng() % 3));
      op.persist = rng() % 10 == 0;
      ops[w].push_back(std::move(op));
    }
  }
  auto run = [&](Space& space, EventLog& log) {
    std::vector<std::thread> threads;
    std::atomic<int> errors{0};
    for (int w = 0; w < kWorkers; ++w) {
      threads.emplace_back([&, w] {
        OpContext ctx{&log, &matcher};
        for (const Op& op : ops[w]) {
          absl::Status st =
              op.produce
                  ? space.Produce(ctx, op.channels[0], op.value, op.persist)
                        .status()
                  : space
                        .Consume(
                            ctx, op.channels,
                            std::vector<TermPtr>(op.channels.size(), T("*")),
                            op.value, op.persist, false)
                        .status();
          if (!st.ok()) errors.fetch_add(1);
        }
      });
    }
    for (auto& t : threads) t.join();
    return errors.load();
  };
  EventLog log;
  ASSERT_EQ(run(*play, log), 0);
  std::vector<Event> recorded = log.Take();
  Hash32 post = *play->CreateCheckpoint();
  auto rig = EventLog::ForReplay(recorded);
  ASSERT_TRUE(rig.ok());
  ASSERT_EQ(run(*replay, **rig), 0);
  EXPECT_TRUE((*rig)->CheckReplayDone().ok()) << (*rig)->CheckReplayDone();
  EXPECT_EQ(*replay->CreateCheckpoint(), post);
  EXPECT_EQ((*rig)->Take(), recorded);
}

// One deploy per thread, each with its own scope and log on its own
// channels (the independence the scheduler guarantees), taking marks and
// reverting to them at random while the others run. Each thread models its
// channels as counts (data stored minus continuations waiting); at the end
// every channel holds what its model says, so no revert touched another
// deploy's items and none lost its own.
TEST(ScopedStressTest, PerThreadScopesRevertAtRandom) {
  uint64_t seed = testing::TestSeed(4242);
  SCOPED_TRACE("seed " + std::to_string(seed));
  constexpr int kThreads = 6;
  constexpr int kOps = 1500;
  constexpr int kChannelsPerThread = 4;
  InMemoryStore store(3);
  auto space = *Space::Open(&store);
  testing::TestMatcher matcher;
  std::vector<std::vector<int>> models(kThreads);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(seed + t * 7919);
      EventLog log;
      DeployScope scope(*space);
      OpContext ctx{&log, &matcher, &scope};
      std::vector<int> model(kChannelsPerThread, 0);
      DeployScope::Mark mark = scope.mark();
      std::vector<int> at_mark = model;
      for (int i = 0; i < kOps; ++i) {
        const int c = static_cast<int>(rng() % kChannelsPerThread);
        TermPtr ch = T("t" + std::to_string(t) + "c" + std::to_string(c));
        const uint64_t what = rng() % 20;
        if (what == 0) {
          if (!scope.RevertTo(mark).ok()) errors.fetch_add(1);
          model = at_mark;
        } else if (what == 1) {
          mark = scope.mark();
          at_mark = model;
        } else if (what % 2 == 0) {
          std::string v = "d" + std::to_string(t) + "_" + std::to_string(i);
          if (!space->Produce(ctx, ch, T(v), false).ok()) errors.fetch_add(1);
          ++model[c];
        } else {
          std::string k = "k" + std::to_string(t) + "_" + std::to_string(i);
          if (!space->Consume(ctx, {ch}, {T("*")}, T(k), false, false).ok()) {
            errors.fetch_add(1);
          }
          --model[c];
        }
      }
      models[t] = model;
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(errors.load(), 0);
  for (int t = 0; t < kThreads; ++t) {
    for (int c = 0; c < kChannelsPerThread; ++c) {
      TermPtr ch = T("t" + std::to_string(t) + "c" + std::to_string(c));
      const int m = models[t][c];
      auto data = space->GetData(ch->hash());
      auto ks = space->GetContinuations({ch});
      ASSERT_TRUE(data.ok() && ks.ok());
      EXPECT_EQ(static_cast<int>(data->size()), std::max(m, 0))
          << "thread " << t << " channel " << c;
      EXPECT_EQ(static_cast<int>(ks->size()), std::max(-m, 0))
          << "thread " << t << " channel " << c;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Loads, SpaceStressTest,
    ::testing::Values(StressParams{"FourThreadsFewChannels", 4, 2000, 4, false},
                      StressParams{"EightThreadsManyChannels", 8, 1500, 32,
                                   false},
                      StressParams{"TwoThreadsOneChannel", 2, 3000, 1, false},
                      StressParams{"WithCheckpointRounds", 4, 800, 8, true}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace rnode::rspace

// Tests for the worker pool (util/worker_pool.h).
#include "util/worker_pool.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace rnode {
namespace {

class WorkerPoolTest : public ::testing::TestWithParam<int> {};

TEST_P(WorkerPoolTest, CallsEveryIndexExactlyOnce) {
  WorkerPool pool(GetParam());
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}}) {
    std::vector<int> calls(n, 0);
    pool.ParallelFor(n, [&](size_t i) { ++calls[i]; });
    EXPECT_EQ(std::count(calls.begin(), calls.end(), 1),
              static_cast<std::ptrdiff_t>(n));
  }
}

TEST_P(WorkerPoolTest, ManyConsecutiveBatchesComplete) {
  WorkerPool pool(GetParam());
  std::vector<int64_t> sums;
  for (int round = 0; round < 200; ++round) {
    std::vector<int64_t> out(16, 0);
    pool.ParallelFor(out.size(), [&](size_t i) {
      out[i] = static_cast<int64_t>(i) * round;
    });
    int64_t sum = 0;
    for (int64_t v : out) sum += v;
    sums.push_back(sum);
  }
  for (int round = 0; round < 200; ++round) {
    EXPECT_EQ(sums[round], 120 * round);
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, WorkerPoolTest, ::testing::Values(1, 2, 4));

// Each call waits (bounded) until every call of the batch has started: that
// can only happen when `threads` calls run at once on distinct threads. A
// pool that ran the calls one after the other would reach no rendezvous.
TEST(WorkerPoolConcurrencyTest, CallsRunAtOnceOnDistinctThreads) {
  for (int threads : {2, 4}) {
    WorkerPool pool(threads);
    ASSERT_EQ(pool.threads(), threads);
    std::mutex mu;
    std::condition_variable cv;
    int started = 0;
    int met = 0;
    std::set<std::thread::id> ids;
    pool.ParallelFor(static_cast<size_t>(threads), [&](size_t) {
      std::unique_lock<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
      ++started;
      cv.notify_all();
      if (cv.wait_for(lock, std::chrono::seconds(30),
                      [&] { return started == threads; })) {
        ++met;
      }
    });
    EXPECT_EQ(met, threads) << threads << " threads";
    EXPECT_EQ(ids.size(), static_cast<size_t>(threads));
  }
}

// Several threads call ParallelFor at once: every job gets every index
// exactly once and each caller returns only when its own job is complete.
TEST(WorkerPoolConcurrencyTest, ConcurrentCallersEachGetTheirWholeJob) {
  WorkerPool pool(3);
  constexpr int kCallers = 4;
  constexpr size_t kN = 500;
  std::vector<int> complete(kCallers, 0);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 20; ++round) {
        std::vector<int> mine(kN, 0);
        pool.ParallelFor(kN, [&](size_t i) { ++mine[i]; });
        if (std::count(mine.begin(), mine.end(), 1) ==
            static_cast<std::ptrdiff_t>(kN)) {
          ++complete[c];
        }
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(complete[c], 20) << c;
}

// A call of a ParallelFor calls ParallelFor again (the replay of a block's
// deploys on the pool, each running the reducer's rounds on it): every
// inner index runs once per outer index, and nothing deadlocks, whatever
// the pool's size.
TEST(WorkerPoolConcurrencyTest, NestedCallsComplete) {
  for (int threads : {1, 2, 4}) {
    WorkerPool pool(threads);
    constexpr size_t kOuter = 16;
    constexpr size_t kInner = 64;
    std::vector<std::vector<int>> calls(kOuter, std::vector<int>(kInner, 0));
    pool.ParallelFor(kOuter, [&](size_t o) {
      pool.ParallelFor(kInner, [&](size_t i) {
        pool.ParallelFor(2, [&](size_t k) {
          if (k == 0) ++calls[o][i];
        });
      });
    });
    for (size_t o = 0; o < kOuter; ++o) {
      EXPECT_EQ(std::count(calls[o].begin(), calls[o].end(), 1),
                static_cast<std::ptrdiff_t>(kInner))
          << threads << " threads, outer " << o;
    }
  }
}

}  // namespace
}  // namespace rnode

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

}  // namespace
}  // namespace rnode

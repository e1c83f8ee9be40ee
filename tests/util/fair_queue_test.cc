// FairQueue: per-key order, turns across keys, bounded by what it holds.
#include "util/fair_queue.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rnode {
namespace {

TEST(FairQueueTest, KeysTakeTurnsAndEachKeepsItsOrder) {
  FairQueue<std::string, int> q;
  for (int i = 0; i < 5; ++i) q.Push("flood", i);
  q.Push("honest", 100);
  q.Push("other", 200);
  q.Push("honest", 101);
  EXPECT_EQ(q.size(), 8u);
  EXPECT_EQ(q.keys(), 3u);
  std::vector<int> got;
  while (!q.empty()) got.push_back(q.Pop());
  EXPECT_EQ(got, (std::vector<int>{0, 100, 200, 1, 101, 2, 3, 4}));
  EXPECT_EQ(q.keys(), 0u);
}

TEST(FairQueueTest, AKeyThatEmptiedJoinsAtTheBackOfTheTurn) {
  FairQueue<int, int> q;
  q.Push(1, 10);
  q.Push(2, 20);
  q.Push(2, 21);
  EXPECT_EQ(q.Pop(), 10);  // key 1 leaves the turn
  q.Push(1, 11);           // and comes back behind key 2
  EXPECT_EQ(q.Pop(), 20);
  EXPECT_EQ(q.Pop(), 11);
  EXPECT_EQ(q.Pop(), 21);
  EXPECT_TRUE(q.empty());
  q.Push(3, 30);
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.keys(), 0u);
  q.Push(4, 40);
  EXPECT_EQ(q.Pop(), 40);
}

}  // namespace
}  // namespace rnode

#include "util/union_find.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace rnode {
namespace {

TEST(UnionFindTest, LabelsAreTheSmallestElementOfEachComponent) {
  UnionFind uf(6);
  uf.Union(4, 1);
  uf.Union(5, 4);
  uf.Union(3, 2);
  EXPECT_EQ(uf.Labels(), (std::vector<uint32_t>{0, 1, 2, 2, 1, 1}));
}

TEST(UnionFindTest, LabelsDoNotDependOnTheOrderOfUnions) {
  UnionFind forward(5);
  forward.Union(0, 1);
  forward.Union(1, 2);
  forward.Union(3, 4);
  UnionFind backward(5);
  backward.Union(4, 3);
  backward.Union(2, 1);
  backward.Union(1, 0);
  EXPECT_EQ(forward.Labels(), backward.Labels());
  EXPECT_EQ(forward.Find(2), forward.Find(0));
  EXPECT_NE(forward.Find(3), forward.Find(0));
}

}  // namespace
}  // namespace rnode

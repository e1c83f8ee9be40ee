// Union-find (disjoint sets) with path halving and union by size: the
// merge's branches and parallel replay's groups of deploys.
#ifndef RNODE_UTIL_UNION_FIND_H_
#define RNODE_UTIL_UNION_FIND_H_

#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace rnode {

// Not thread-safe. Elements are 0..n-1.
class UnionFind {
 public:
  explicit UnionFind(uint32_t n) : parent_(n), size_(n, 1) {
    std::iota(parent_.begin(), parent_.end(), 0u);
  }

  uint32_t Find(uint32_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }

  void Union(uint32_t a, uint32_t b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return;
    if (size_[a] < size_[b]) std::swap(a, b);
    parent_[b] = a;
    size_[a] += size_[b];
  }

  // Component label per element: the smallest element of its component, so
  // labels do not depend on the order of the unions.
  std::vector<uint32_t> Labels() {
    const uint32_t n = static_cast<uint32_t>(parent_.size());
    std::vector<uint32_t> min_of_root(n, n);
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t r = Find(i);
      if (min_of_root[r] == n) min_of_root[r] = i;
    }
    std::vector<uint32_t> out(n);
    for (uint32_t i = 0; i < n; ++i) out[i] = min_of_root[Find(i)];
    return out;
  }

 private:
  std::vector<uint32_t> parent_;
  std::vector<uint32_t> size_;
};

}  // namespace rnode

#endif  // RNODE_UTIL_UNION_FIND_H_

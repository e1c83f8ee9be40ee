// Enumeration of the subsets of a sequence whose size lies in a range, in
// the order the spatial matcher tries sub-Pars for a connective.
#ifndef RNODE_RHOLANG_INTERNAL_SIZED_SUBSETS_H_
#define RNODE_RHOLANG_INTERNAL_SIZED_SUBSETS_H_

#include <cstddef>
#include <vector>

namespace rnode::rholang::internal {

// The subsets of {0, ..., n-1} with lo <= size <= hi, in increasing order
// of their bitmask where element i is bit i (so element 0 varies fastest):
// for n = 3 and sizes 0..3: {}, {0}, {1}, {0,1}, {2}, {0,2}, {1,2},
// {0,1,2}. This is the public node's sub-Par order. Each step costs O(n).
class SizedSubsets {
 public:
  SizedSubsets() = default;
  SizedSubsets(size_t n, size_t lo, size_t hi);

  // False if there is no such subset at all.
  bool valid() const { return valid_; }
  // The current subset: in_subset()[i] says whether element i is in it.
  // REQUIRES: valid().
  const std::vector<bool>& in_subset() const { return bits_; }
  size_t size() const { return count_; }
  // Moves to the next subset; false (and back to the first) when done.
  bool Next();
  // Back to the first subset.
  void Reset();

 private:
  size_t n_ = 0;
  size_t lo_ = 0;
  size_t hi_ = 0;
  bool valid_ = true;
  std::vector<bool> bits_;
  size_t count_ = 0;
};

}  // namespace rnode::rholang::internal

#endif  // RNODE_RHOLANG_INTERNAL_SIZED_SUBSETS_H_

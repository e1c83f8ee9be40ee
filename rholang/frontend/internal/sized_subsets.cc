// Sized subset enumeration in bitmask order (see the header).
#include "rholang/frontend/internal/sized_subsets.h"

#include <algorithm>

namespace rnode::rholang::internal {

SizedSubsets::SizedSubsets(size_t n, size_t lo, size_t hi)
    : n_(n), lo_(lo), hi_(std::min(hi, n)) {
  valid_ = lo_ <= hi_;
  Reset();
}

void SizedSubsets::Reset() {
  bits_.assign(n_, false);
  count_ = 0;
  if (!valid_) return;
  for (size_t i = 0; i < lo_; ++i) bits_[i] = true;
  count_ = lo_;
}

bool SizedSubsets::Next() {
  if (!valid_) return false;
  // The next mask keeps the bits above some clear bit k, sets bit k and
  // fills the fewest lowest bits below k needed to reach lo; the lowest
  // feasible k gives the smallest such mask.
  size_t below = 0;  // set bits below k
  for (size_t k = 0; k < n_; ++k) {
    if (bits_[k]) {
      ++below;
      continue;
    }
    const size_t prefix = count_ - below + 1;  // bits above k, plus k
    if (prefix > hi_ || prefix + k < lo_) continue;
    const size_t fill = lo_ > prefix ? lo_ - prefix : 0;
    for (size_t i = 0; i < k; ++i) bits_[i] = i < fill;
    bits_[k] = true;
    count_ = prefix + fill;
    return true;
  }
  Reset();
  return false;
}

}  // namespace rnode::rholang::internal

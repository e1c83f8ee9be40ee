// A helper of the DAG store's sources: sets of block hashes kept as sorted
// vectors (children, heights, a deploy's holders).
#ifndef RNODE_CASPER_DAG_INTERNAL_SORTED_HASHES_H_
#define RNODE_CASPER_DAG_INTERNAL_SORTED_HASHES_H_

#include <algorithm>
#include <vector>

#include "util/bytes.h"

namespace rnode::casper::dag::internal {

// Inserts `h` into the ascending, duplicate-free `v`, keeping it so; a hash
// already there is left alone.
inline void InsertSorted(std::vector<Hash32>& v, const Hash32& h) {
  auto it = std::lower_bound(v.begin(), v.end(), h);
  if (it == v.end() || *it != h) v.insert(it, h);
}

}  // namespace rnode::casper::dag::internal

#endif  // RNODE_CASPER_DAG_INTERNAL_SORTED_HASHES_H_

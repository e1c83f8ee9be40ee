// Hashing and equality for 32-byte keys in the merger's hash maps: equality
// as four word compares instead of a memcmp call per probe.
#ifndef RNODE_CASPER_MERGE_INTERNAL_HASH_KEY_H_
#define RNODE_CASPER_MERGE_INTERNAL_HASH_KEY_H_

#include <cstdint>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "rspace/term.h"
#include "util/bytes.h"

namespace rnode::casper::merge::internal {

struct Hash32Eq {
  bool operator()(const Hash32& a, const Hash32& b) const {
    uint64_t x[4], y[4];
    std::memcpy(x, a.data(), 32);
    std::memcpy(y, b.data(), 32);
    return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3])) == 0;
  }
};

// Lexicographic byte order (the order of operator< on Hash32) by four
// big-endian word compares.
struct Hash32Less {
  bool operator()(const Hash32& a, const Hash32& b) const {
    for (int i = 0; i < 4; ++i) {
      uint64_t x, y;
      std::memcpy(&x, a.data() + 8 * i, 8);
      std::memcpy(&y, b.data() + 8 * i, 8);
      if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y);
    }
    return false;
  }
};

template <typename V>
using Hash32Map =
    absl::flat_hash_map<Hash32, V, rspace::Hash32Hasher, Hash32Eq>;

}  // namespace rnode::casper::merge::internal

#endif  // RNODE_CASPER_MERGE_INTERNAL_HASH_KEY_H_

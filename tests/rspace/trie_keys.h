// Keys and values for the trie and history tests: distinct hashes by
// number, and keys with chosen leading bytes.
#ifndef RNODE_TESTS_RSPACE_TRIE_KEYS_H_
#define RNODE_TESTS_RSPACE_TRIE_KEYS_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "crypto/hash.h"
#include "util/bytes.h"

namespace rnode::rspace::testing {

// The i-th key and the i-th value: distinct for distinct i, and never equal
// to one another.
inline Hash32 K(int i) {
  return crypto::Blake2b256(AsBytes("key" + std::to_string(i)));
}
inline Hash32 V(int i) {
  return crypto::Blake2b256(AsBytes("val" + std::to_string(i)));
}

// A key whose leading bytes are `head` and whose last byte is `tail`, the
// rest zero: keys with shared (and compressible) paths.
inline Hash32 KP(const std::vector<uint8_t>& head, uint8_t tail) {
  Hash32 k{};
  std::copy(head.begin(), head.end(), k.begin());
  k[31] = tail;
  return k;
}

}  // namespace rnode::rspace::testing

#endif  // RNODE_TESTS_RSPACE_TRIE_KEYS_H_

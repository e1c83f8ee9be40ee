// Hash functions: Blake2b-256/-512, SHA-256 and Keccak-256 (the original
// Keccak padding used by Ethereum, not SHA3-256).
#ifndef RNODE_CRYPTO_HASH_H_
#define RNODE_CRYPTO_HASH_H_

#include <array>
#include <cstdint>

#include "util/bytes.h"

namespace rnode::crypto {

using Hash64 = std::array<uint8_t, 64>;

Hash32 Blake2b256(ByteView data);
Hash64 Blake2b512(ByteView data);
Hash32 Sha256(ByteView data);
Hash32 Keccak256(ByteView data);

// Incremental Blake2b-256, for hashing a value made of several parts without
// concatenating them first. Not thread-safe; cheap to construct.
class Blake2b256Hasher {
 public:
  Blake2b256Hasher();
  Blake2b256Hasher& Update(ByteView data);
  // Finishes the hash; the hasher must not be updated afterwards.
  Hash32 Finish();

 private:
  // Opaque storage for libb2's blake2b_state (kept out of this header).
  alignas(64) uint8_t state_[384];
};

}  // namespace rnode::crypto

#endif  // RNODE_CRYPTO_HASH_H_

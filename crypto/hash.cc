// Hash functions over libb2 (Blake2b), OpenSSL (SHA-256) and Crypto++
// (Keccak-256); see docs/adr/0002-crypto-libraries.md.
#include "crypto/hash.h"

#include <blake2.h>
#include <cryptopp/keccak.h>
#include <openssl/sha.h>

#include "absl/base/macros.h"

namespace rnode::crypto {

static_assert(sizeof(blake2b_state) <= 384, "grow Blake2b256Hasher::state_");

Hash32 Blake2b256(ByteView data) {
  Hash32 out;
  int rc = blake2b(out.data(), data.data(), nullptr, out.size(), data.size(), 0);
  ABSL_ASSERT(rc == 0);
  (void)rc;
  return out;
}

Hash64 Blake2b512(ByteView data) {
  Hash64 out;
  int rc = blake2b(out.data(), data.data(), nullptr, out.size(), data.size(), 0);
  ABSL_ASSERT(rc == 0);
  (void)rc;
  return out;
}

Hash32 Sha256(ByteView data) {
  Hash32 out;
  SHA256(data.data(), data.size(), out.data());
  return out;
}

Hash32 Keccak256(ByteView data) {
  Hash32 out;
  CryptoPP::Keccak_256 keccak;
  keccak.CalculateDigest(out.data(), data.data(), data.size());
  return out;
}

Blake2b256Hasher::Blake2b256Hasher() {
  blake2b_init(reinterpret_cast<blake2b_state*>(state_), 32);
}

Blake2b256Hasher& Blake2b256Hasher::Update(ByteView data) {
  blake2b_update(reinterpret_cast<blake2b_state*>(state_), data.data(),
                 data.size());
  return *this;
}

Hash32 Blake2b256Hasher::Finish() {
  Hash32 out;
  blake2b_final(reinterpret_cast<blake2b_state*>(state_), out.data(),
                out.size());
  return out;
}

}  // namespace rnode::crypto

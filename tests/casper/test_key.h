// A deterministic secp256k1 key with its REV address, for tests and tools
// tests of every library that signs deploys.
#ifndef RNODE_TESTS_CASPER_TEST_KEY_H_
#define RNODE_TESTS_CASPER_TEST_KEY_H_

#include <cstdint>
#include <string>

#include "crypto/rev_address.h"
#include "crypto/secp256k1.h"
#include "util/bytes.h"

namespace rnode::casper::testing {

// Private key bytes all `seed` (1..255).
struct TestKey {
  crypto::Secp256k1PrivateKey sk{};
  crypto::Secp256k1PublicKey pk{};
  std::string address;
  Bytes pk_bytes() const { return Bytes(pk.begin(), pk.end()); }
};

inline TestKey MakeTestKey(uint8_t seed) {
  TestKey k;
  k.sk.fill(seed);
  k.pk = crypto::Secp256k1PublicKeyOf(k.sk);
  k.address = *crypto::RevAddressFromKeyBytes(ByteView(k.pk));
  return k;
}

}  // namespace rnode::casper::testing

#endif  // RNODE_TESTS_CASPER_TEST_KEY_H_

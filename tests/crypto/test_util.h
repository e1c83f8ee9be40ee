// Helpers shared by the crypto tests.
#ifndef RNODE_TESTS_CRYPTO_TEST_UTIL_H_
#define RNODE_TESTS_CRYPTO_TEST_UTIL_H_

#include <string_view>

#include "gtest/gtest.h"
#include "util/bytes.h"

namespace rnode::crypto::testing {

// Hex to bytes for literals in tests; fails the test on bad hex.
inline Bytes Unhex(std::string_view hex) {
  absl::StatusOr<Bytes> b = HexDecode(hex);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? *b : Bytes{};
}

}  // namespace rnode::crypto::testing

#endif  // RNODE_TESTS_CRYPTO_TEST_UTIL_H_

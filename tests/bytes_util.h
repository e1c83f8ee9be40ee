// Byte builders shared by the tests: literals written as hex.
#ifndef RNODE_TESTS_BYTES_UTIL_H_
#define RNODE_TESTS_BYTES_UTIL_H_

#include <string_view>

#include "gtest/gtest.h"
#include "util/bytes.h"

namespace rnode::testing {

// Hex to bytes for literals in tests; bad hex fails the calling test and
// gives empty bytes.
inline Bytes Unhex(std::string_view hex) {
  absl::StatusOr<Bytes> b = HexDecode(hex);
  EXPECT_TRUE(b.ok()) << hex << ": " << b.status();
  return b.ok() ? *b : Bytes{};
}

}  // namespace rnode::testing

#endif  // RNODE_TESTS_BYTES_UTIL_H_

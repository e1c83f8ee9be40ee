// Tests for Base58 (Bitcoin alphabet).
#include "crypto/base58.h"

#include "gtest/gtest.h"
#include "tests/bytes_util.h"

namespace rnode::crypto {
namespace {

using rnode::testing::Unhex;

TEST(Base58Test, KnownVectors) {
  struct V {
    const char* hex;
    const char* text;
  } vectors[] = {
      {"", ""},
      {"61", "2g"},
      {"626262", "a3gV"},
      {"636363", "aPEr"},
      {"00000000000000000000", "1111111111"},
      {"00eb15231dfceb60925886b67d065299925915aeb172c06647", "1NS17iag9jJgTHD1VXjvLCEnZuQ3rJDE9L"},
      {"516b6fcd0f", "ABnLTmg"},
      {"572e4794", "3EFU7m"},
  };
  for (const V& v : vectors) {
    EXPECT_EQ(Base58Encode(Unhex(v.hex)), v.text);
    absl::StatusOr<Bytes> back = Base58Decode(v.text);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(HexEncode(*back), v.hex);
  }
}

TEST(Base58Test, RejectsCharactersOutsideAlphabet) {
  for (const char* bad : {"0", "O", "I", "l", "abc!", "ab c"}) {
    EXPECT_EQ(Base58Decode(bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(Base58Test, RejectsOverlongInput) {
  EXPECT_EQ(Base58Decode(std::string(kMaxBase58Chars + 1, '2')).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Base58Decode(std::string(kMaxBase58Chars, '2')).ok());
}

}  // namespace
}  // namespace rnode::crypto

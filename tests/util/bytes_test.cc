// Tests for hex encoding and byte helpers.
#include "util/bytes.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rnode {
namespace {

TEST(HexTest, EncodesLowerCase) {
  Bytes data = {0x00, 0x01, 0xab, 0xff};
  EXPECT_EQ(HexEncode(data), "0001abff");
  EXPECT_EQ(HexEncode({}), "");
}

TEST(HexTest, DecodesEitherCase) {
  absl::StatusOr<Bytes> b = HexDecode("00aBfF");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, (Bytes{0x00, 0xab, 0xff}));
}

TEST(HexTest, RoundTripsAllByteValues) {
  Bytes all(256);
  for (int i = 0; i < 256; ++i) all[i] = static_cast<uint8_t>(i);
  absl::StatusOr<Bytes> back = HexDecode(HexEncode(all));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, all);
}

TEST(HexTest, OddLengthIsInvalidArgument) {
  absl::StatusOr<Bytes> b = HexDecode("abc");
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status().message(), testing::HasSubstr("odd length"));
}

TEST(HexTest, BadDigitReportsPosition) {
  absl::StatusOr<Bytes> b = HexDecode("00zz");
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status().message(), testing::HasSubstr("position 2"));
  EXPECT_EQ(HexDecode("0x00").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(HexTest, FixedLengthDecodeChecksLength) {
  EXPECT_TRUE(HexDecodeFixed<2>("abcd").ok());
  EXPECT_EQ(HexDecodeFixed<3>("abcd").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(BytesTest, StringConversionsRoundTrip) {
  std::string s("a\0b", 3);
  Bytes b = ToBytes(s);
  EXPECT_EQ(b.size(), 3u);
  EXPECT_EQ(ToString(b), s);
  EXPECT_EQ(AsChars(AsBytes(s)), s);
}

}  // namespace
}  // namespace rnode

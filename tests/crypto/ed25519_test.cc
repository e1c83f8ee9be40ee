// RFC 8032 vectors for Ed25519.
#include "crypto/ed25519.h"

#include "gtest/gtest.h"
#include "tests/bytes_util.h"

namespace rnode::crypto {
namespace {

using rnode::testing::Unhex;

struct Rfc8032Vector {
  const char* secret;
  const char* public_key;
  const char* message;
  const char* signature;
};

// RFC 8032 section 7.1, tests 1 to 3.
const Rfc8032Vector kVectors[] = {
    {"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
     "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"},
    {"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
     "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"},
    {"c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
     "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
     "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac"
     "18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"},
};

TEST(Ed25519Test, Rfc8032VectorsVerifyAndSign) {
  for (const Rfc8032Vector& v : kVectors) {
    Bytes msg = Unhex(v.message);
    absl::StatusOr<bool> ok =
        Ed25519Verify(msg, Unhex(v.signature), Unhex(v.public_key));
    ASSERT_TRUE(ok.ok()) << ok.status();
    EXPECT_TRUE(*ok) << v.public_key;
    EXPECT_EQ(HexEncode(*Ed25519PublicKeyOf(Unhex(v.secret))), v.public_key);
    EXPECT_EQ(HexEncode(*Ed25519Sign(msg, Unhex(v.secret))), v.signature);
  }
}

TEST(Ed25519Test, TamperedMessageOrSignatureFails) {
  const Rfc8032Vector& v = kVectors[1];
  Bytes sig = Unhex(v.signature);
  EXPECT_FALSE(*Ed25519Verify(Unhex("73"), sig, Unhex(v.public_key)));
  sig[10] ^= 0x40;
  EXPECT_FALSE(*Ed25519Verify(Unhex(v.message), sig, Unhex(v.public_key)));
}

TEST(Ed25519Test, WrongLengthsAreInvalidArgument) {
  const Rfc8032Vector& v = kVectors[0];
  EXPECT_EQ(Ed25519Verify({}, Bytes(63, 0), Unhex(v.public_key)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Ed25519Verify({}, Unhex(v.signature), Bytes(31, 0)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Ed25519Sign({}, Bytes(33, 0)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rnode::crypto

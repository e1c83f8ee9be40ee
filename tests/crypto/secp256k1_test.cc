// Tests for secp256k1 keys, signing and strict verification.
#include "crypto/secp256k1.h"

#include <string>

#include "crypto/hash.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/bytes_util.h"

namespace rnode::crypto {
namespace {

using rnode::testing::Unhex;

// The standalone / bootstrap key of the public node's docker setup (a
// well-known development key, not a secret).
constexpr char kPrivHex[] =
    "5f668a7ee96d944a4494cc947e4005e172d7ab3461ee5538f1f2a45a835e9657";
constexpr char kPubHex[] =
    "04ffc016579a68050d655d55df4e09f04605164543e257c8e6df10361e6068a533"
    "6588e9b355ea859c5ab4285a5ef0efdf62bc28b80320ce99e26bb1607b3ad93d";
// Order of the secp256k1 group.
constexpr char kOrderHex[] =
    "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141";

Secp256k1PrivateKey Key(std::string_view hex = kPrivHex) {
  absl::StatusOr<Secp256k1PrivateKey> k = ParseSecp256k1PrivateKey(Unhex(hex));
  EXPECT_TRUE(k.ok()) << k.status();
  return k.ok() ? *k : Secp256k1PrivateKey{};
}

// n - s for a 32-byte big-endian s.
Bytes Negate(ByteView s) {
  Bytes n = Unhex(kOrderHex);
  Bytes out(32);
  int borrow = 0;
  for (int i = 31; i >= 0; --i) {
    int d = n[i] - s[i] - borrow;
    borrow = d < 0;
    out[i] = static_cast<uint8_t>(d + (borrow ? 256 : 0));
  }
  return out;
}

TEST(Secp256k1Test, PublicKeyOfKnownPrivateKey) {
  EXPECT_EQ(HexEncode(Secp256k1PublicKeyOf(Key())), kPubHex);
}

TEST(Secp256k1Test, PrivateKeyValidation) {
  EXPECT_EQ(ParseSecp256k1PrivateKey(Bytes(31, 1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Zero is out of range.
  EXPECT_EQ(ParseSecp256k1PrivateKey(Bytes(32, 0)).status().code(),
            absl::StatusCode::kInvalidArgument);
  // So is the group order n.
  EXPECT_EQ(ParseSecp256k1PrivateKey(Unhex(kOrderHex)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ParseSecp256k1PrivateKey(Bytes(32, 1)).ok());
}

TEST(Secp256k1Test, PrivateKeyFromHexIgnoresSurroundingWhitespaceOnly) {
  const std::string hex = HexEncode(Key());
  EXPECT_EQ(*ParseSecp256k1PrivateKeyHex(hex), Key());
  EXPECT_EQ(*ParseSecp256k1PrivateKeyHex(" \t" + hex + "\n"), Key());
  EXPECT_EQ(
      ParseSecp256k1PrivateKeyHex(hex.substr(0, 10) + " " + hex.substr(10))
          .status()
          .message(),
      "not a hex private key");
  EXPECT_EQ(ParseSecp256k1PrivateKeyHex("zz").status().message(),
            "not a hex private key");
  EXPECT_EQ(
      ParseSecp256k1PrivateKeyHex(std::string(62, '1')).status().message(),
      "private key must be 32 bytes, got 31");
  EXPECT_EQ(ParseSecp256k1PrivateKeyHex(kOrderHex).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Secp256k1Test, PublicKeyMustBeUncompressed65Bytes) {
  Bytes pub = Unhex(kPubHex);
  EXPECT_TRUE(ParseSecp256k1PublicKey(pub).ok());
  Bytes compressed(pub.begin(), pub.begin() + 33);
  compressed[0] = (pub[64] & 1) ? 0x03 : 0x02;
  EXPECT_EQ(ParseSecp256k1PublicKey(compressed).status().code(),
            absl::StatusCode::kInvalidArgument);
  Bytes off_curve = pub;
  off_curve[64] ^= 1;
  EXPECT_THAT(ParseSecp256k1PublicKey(off_curve).status().message(),
              ::testing::HasSubstr("not a point"));
  Bytes hybrid = pub;
  hybrid[0] = 0x06;
  EXPECT_EQ(ParseSecp256k1PublicKey(hybrid).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Secp256k1Test, DecompressRecoversTheUncompressedKey) {
  Bytes pub = Unhex(kPubHex);
  Bytes compressed(pub.begin(), pub.begin() + 33);
  compressed[0] = (pub[64] & 1) ? 0x03 : 0x02;
  absl::StatusOr<Secp256k1PublicKey> full =
      DecompressSecp256k1PublicKey(compressed);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(HexEncode(*full), kPubHex);
  // The other parity is the negated point: a different, valid key.
  compressed[0] ^= 1;
  absl::StatusOr<Secp256k1PublicKey> other =
      DecompressSecp256k1PublicKey(compressed);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE(HexEncode(*other), kPubHex);
  // An uncompressed key is 65 bytes.
  EXPECT_EQ(DecompressSecp256k1PublicKey(pub).status().code(),
            absl::StatusCode::kInvalidArgument);
  Bytes bad_tag = compressed;
  bad_tag[0] = 0x04;
  EXPECT_EQ(DecompressSecp256k1PublicKey(bad_tag).status().code(),
            absl::StatusCode::kInvalidArgument);
  Bytes no_point(33, 0xff);  // X >= p
  no_point[0] = 0x02;
  EXPECT_EQ(DecompressSecp256k1PublicKey(no_point).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Secp256k1Test, Rfc6979VectorForKeyOneSatoshiNakamoto) {
  // Widely published deterministic-nonce vector: key = 1,
  // digest = sha256("Satoshi Nakamoto").
  Secp256k1PrivateKey one{};
  one[31] = 1;
  Hash32 digest = Sha256(AsBytes("Satoshi Nakamoto"));
  absl::StatusOr<Bytes> sig = Secp256k1SignCompact(digest, one);
  ASSERT_TRUE(sig.ok());
  EXPECT_EQ(HexEncode(*sig),
            "934b1ea10a4b3c1757e2b0c017d0b6143ce3c9a7e6a4a49860d7a6ab210ee3d8"
            "2442ce9d2b916064108014783e923ec36b49743e2ffa1c4496f01a512aafd9e5");
}

TEST(Secp256k1Test, SignDerThenVerify) {
  Hash32 digest = Blake2b256(AsBytes("payload"));
  absl::StatusOr<Bytes> sig = Secp256k1SignDer(digest, Key());
  ASSERT_TRUE(sig.ok());
  EXPECT_GE(sig->size(), 8u);
  EXPECT_LE(sig->size(), 72u);
  EXPECT_EQ((*sig)[0], 0x30);
  absl::StatusOr<bool> ok = Secp256k1VerifyDer(digest, *sig, Unhex(kPubHex));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(*ok);
}

TEST(Secp256k1Test, WrongDigestOrKeyDoesNotVerify) {
  Hash32 digest = Blake2b256(AsBytes("payload"));
  Bytes sig = *Secp256k1SignDer(digest, Key());
  Hash32 other_digest = Blake2b256(AsBytes("payloae"));
  EXPECT_FALSE(*Secp256k1VerifyDer(other_digest, sig, Unhex(kPubHex)));
  Secp256k1PublicKey other_key = Secp256k1PublicKeyOf(
      Key("357cdc4201a5650830e0bc5a03299a30038d9934ba4c7ab73ec164ad82471ff9"));
  EXPECT_FALSE(*Secp256k1VerifyDer(digest, sig, other_key));
}

TEST(Secp256k1Test, HighSIsRejected) {
  Hash32 digest = Blake2b256(AsBytes("malleable"));
  Bytes compact = *Secp256k1SignCompact(digest, Key());
  Bytes high = compact;
  Bytes negated = Negate(ByteView(compact).subspan(32));
  std::copy(negated.begin(), negated.end(), high.begin() + 32);
  absl::StatusOr<Bytes> der_high = Secp256k1CompactToDer(high);
  ASSERT_TRUE(der_high.ok());
  absl::StatusOr<bool> r =
      Secp256k1VerifyDer(digest, *der_high, Unhex(kPubHex));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("high S"));
  absl::StatusOr<bool> compact_high =
      Secp256k1VerifyCompact(digest, high, Unhex(kPubHex));
  EXPECT_EQ(compact_high.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(compact_high.status().message(), ::testing::HasSubstr("high S"));
  EXPECT_TRUE(*Secp256k1VerifyCompact(digest, compact, Unhex(kPubHex)));
}

TEST(Secp256k1Test, NonStrictDerIsRejected) {
  Hash32 digest = Blake2b256(AsBytes("strict"));
  Bytes der = *Secp256k1SignDer(digest, Key());
  // Trailing garbage.
  Bytes trailing = der;
  trailing.push_back(0);
  EXPECT_EQ(
      Secp256k1VerifyDer(digest, trailing, Unhex(kPubHex)).status().code(),
      absl::StatusCode::kInvalidArgument);
  // Wrong outer length byte.
  Bytes bad_len = der;
  bad_len[1] ^= 1;
  EXPECT_EQ(Secp256k1VerifyDer(digest, bad_len, Unhex(kPubHex)).status().code(),
            absl::StatusCode::kInvalidArgument);
  // An unnecessary leading zero on r (BER, not DER).
  Bytes padded = der;
  size_t r_len = padded[3];
  padded.insert(padded.begin() + 4, 0x00);
  padded[3] = static_cast<uint8_t>(r_len + 1);
  padded[1] = static_cast<uint8_t>(padded[1] + 1);
  if (padded[5] < 0x80) {  // Zero not needed for sign: non-strict.
    EXPECT_EQ(
        Secp256k1VerifyDer(digest, padded, Unhex(kPubHex)).status().code(),
        absl::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(Secp256k1VerifyDer(digest, {}, Unhex(kPubHex)).status().code(),
            absl::StatusCode::kInvalidArgument);
  const Bytes too_long(73, 0x30);
  EXPECT_EQ(
      Secp256k1VerifyDer(digest, too_long, Unhex(kPubHex)).status().code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(Secp256k1Test, DigestMustBe32Bytes) {
  Hash32 digest = Blake2b256(AsBytes("x"));
  Bytes sig = *Secp256k1SignDer(digest, Key());
  EXPECT_EQ(Secp256k1SignDer(Bytes(31, 0), Key()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      Secp256k1VerifyDer(Bytes(33, 0), sig, Unhex(kPubHex)).status().code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(Secp256k1Test, DerCompactRoundTrip) {
  for (int i = 0; i < 32; ++i) {
    Hash32 digest = Blake2b256(AsBytes(std::to_string(i)));
    Bytes der = *Secp256k1SignDer(digest, Key());
    absl::StatusOr<Bytes> compact = Secp256k1DerToCompact(der);
    ASSERT_TRUE(compact.ok());
    EXPECT_EQ(compact->size(), 64u);
    EXPECT_EQ(*Secp256k1CompactToDer(*compact), der);
    EXPECT_EQ(*Secp256k1SignCompact(digest, Key()), *compact);
  }
  EXPECT_EQ(Secp256k1CompactToDer(Bytes(63, 1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  // An r >= n overflows the order.
  EXPECT_EQ(Secp256k1CompactToDer(Bytes(64, 0xff)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rnode::crypto

// Published REV key / address pairs from the public network's development
// setup, and address parsing.
#include "crypto/rev_address.h"

#include "crypto/base58.h"
#include "crypto/hash.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/bytes_util.h"

namespace rnode::crypto {
namespace {

using rnode::testing::Unhex;

struct KeyAddress {
  const char* private_key;  // Empty where only the public key is published.
  const char* public_key;
  const char* address;
};

// Well-known development keys (not secrets) and their addresses as the
// public node and its wallets compute them.
const KeyAddress kPairs[] = {
    {"5f668a7ee96d944a4494cc947e4005e172d7ab3461ee5538f1f2a45a835e9657",
     "04ffc016579a68050d655d55df4e09f04605164543e257c8e6df10361e6068a533"
     "6588e9b355ea859c5ab4285a5ef0efdf62bc28b80320ce99e26bb1607b3ad93d",
     "1111AtahZeefej4tvVR6ti9TJtv8yxLebT31SCEVDCKMNikBk5r3g"},
    {"357cdc4201a5650830e0bc5a03299a30038d9934ba4c7ab73ec164ad82471ff9",
     "04fa70d7be5eb750e0915c0f6d19e7085d18bb1c22d030feb2a877ca2cd226d044"
     "38aa819359c56c720142fbc66e9da03a5ab960a3d8b75363a226b7c800f60420",
     "111127RX5ZgiAdRaQy4AWy57RdvAAckdELReEBxzvWYVvdnR32PiHA"},
    {"2c02138097d019d263c1d5383fcaddb1ba6416a0f4e64e3a617fe3af45b7851d",
     "04837a4cff833e3157e3135d7b40b8e1f33c6e6b5a4342b9fc784230ca4c4f9d35"
     "6f258debef56ad4984726d6ab3e7709e1632ef079b4bcd653db00b68b2df065f",
     "111129p33f7vaRrpLqK8Nr35Y2aacAjrR5pd6PCzqcdrMuPHzymczH"},
    {"b67533f1f99c0ecaedb7d829e430b1c0e605bda10f339f65d5567cb5bd77cbcb",
     "0457febafcc25dd34ca5e5c025cd445f60e5ea6918931a54eb8c3a204f51760248"
     "090b0c757c2bdad7b8c4dca757e109f8ef64737d90712724c8216c94b4ae661c",
     "1111LAd2PWaHsw84gxarNx99YVK2aZhCThhrPsWTV7cs1BPcvHftP"},
    {"016120657a8f96c8ee5c50b138c70c66a2b1366f81ea41ae66065e51174e158e",
     "042b02e3069f5aaa09fc856d16abbf43a8f3cd45f8fa8889e4a2744ffd14f418a3"
     "98945ec5ea08603c3726e794e9b936c3d45894fdb9f2df5591bdaea6607e6b0a",
     "1111223Vm721NNi1V6i4zAisiY46n5c38PsmQDYqcXK7b8vXFwZSsi"},
    {"61e594124ca6af84a5468d98b34a4f3431ef39c54c6cf07fe6fbf8b079ef64f6",
     "04a1f613710e2a4ac7a5fefa3c74ad97cbff42aefaed083d6134b913dba3e84857"
     "e698a88c23b0ae37668726a2e96c82cc724434ea165a7d0fd9d7cab71d5a8065",
     "1111ocWgUJb5QqnYCvKiPtzcmMyfvD3gS5Eg84NtaLkUtRfw3TDS8"},
    {"34d969f43affa8e5c47900e6db475cb8ddd8520170ee73b2207c54014006ff2b",
     "04c5dfd5ab6ea61de1de4c307454fd95dbeb5399fd1a79ab67e2ed3436f153615e"
     "de974205b863bbe7b0dadfb6b308ea3307560ea2c41b774b9907fcad72e52c9b",
     "11112vYkMFN1c7bycXCmKGwY61royRCkmem7JwEigePsEJ17XxfbPc"},
    {"5438ac0bde91bb813c7b4b17f215cd6ad52b19e7bcbf1f7907adb1d69c8aa7b1",
     "04eb50aed98c8a6af3f46ec0b573ed3e3265d62a487f7995a6a5fb9fedee9e15f4"
     "c9d287e45f48e5782283c016839b0580c8737f1076e53a8733aa12637e3928b5",
     "1111mWznYZL1y62wv5R7skupXVhGmecAHqoME9htgFf5psWhLrRmu"},
    {"304b2893981c36122a687c1fd534628d6f1d4e9dd8f44569039ea762dae2d3e7",
     "04a98a4c7fceb7caec0bd5c1774e5307aad7f4c4a14ec6472cea4b1d262d08bfec"
     "683e0a15d5f78c5040405be3b469889b059e2986d55b239077be0d49aec8a85b",
     "11112DGU7xo6Q5iNivJR86wEL9XLR9aghVBd7EhtoUriSVCCzsmZmK"},
};

TEST(RevAddressTest, PublishedKeyAddressPairs) {
  for (const KeyAddress& p : kPairs) {
    absl::StatusOr<Secp256k1PublicKey> pub =
        ParseSecp256k1PublicKey(Unhex(p.public_key));
    ASSERT_TRUE(pub.ok()) << p.public_key;
    EXPECT_EQ(RevAddressFromPublicKey(*pub), p.address);
    absl::StatusOr<Secp256k1PrivateKey> priv =
        ParseSecp256k1PrivateKey(Unhex(p.private_key));
    ASSERT_TRUE(priv.ok());
    EXPECT_EQ(HexEncode(Secp256k1PublicKeyOf(*priv)), p.public_key);
  }
}

TEST(RevAddressTest, FromEthAddressMatchesFromPublicKey) {
  // Published: the standalone key's Ethereum address.
  absl::StatusOr<EthAddress> eth =
      ParseEthAddress("0xfac7dde9d0fa1df6355bd1382fe75ba0c50e8840");
  ASSERT_TRUE(eth.ok());
  EXPECT_EQ(RevAddressFromEthAddress(*eth), kPairs[0].address);
  Secp256k1PublicKey pub =
      *ParseSecp256k1PublicKey(Unhex(kPairs[0].public_key));
  EXPECT_EQ(EthAddressOf(pub), *eth);
  EXPECT_TRUE(ParseEthAddress("FAC7DDE9D0FA1DF6355BD1382FE75BA0C50E8840").ok());
  EXPECT_EQ(ParseEthAddress("0xfac7").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RevAddressTest, ParseReturnsKeyHashAndRoundTrips) {
  for (const KeyAddress& p : kPairs) {
    absl::StatusOr<Hash32> key_hash = ParseRevAddress(p.address);
    ASSERT_TRUE(key_hash.ok()) << p.address << ": " << key_hash.status();
    EXPECT_EQ(RevAddressFromKeyHash(*key_hash), p.address);
  }
}

TEST(RevAddressTest, ParseRejectsEveryKindOfDamage) {
  std::string good = kPairs[1].address;
  struct Case {
    std::string address;
    const char* reason;
  } cases[] = {
      {"", "Invalid address length"},
      {good.substr(0, good.size() - 5), "Invalid address length"},
      {good + "1", "Invalid address length"},
      {good.substr(0, 10) + "0" + good.substr(11), "Invalid Base58 encoding"},
      {std::string(100, '2'), "Invalid address length"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Hash32> r = ParseRevAddress(c.address);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
        << c.address;
    EXPECT_THAT(r.status().message(), ::testing::HasSubstr(c.reason))
        << c.address;
  }
  // Change one character: the checksum catches it.
  std::string flipped = good;
  flipped[20] = flipped[20] == 'a' ? 'b' : 'a';
  EXPECT_THAT(ParseRevAddress(flipped).status().message(),
              ::testing::HasSubstr("Invalid checksum"));
}

// The public node's order: base58, then length, then checksum, then prefix;
// the first failing check is the verdict.
TEST(RevAddressTest, CheckReportsTheFirstFailureInThePublicOrder) {
  const std::string good = kPairs[1].address;
  Hash32 key_hash{};
  EXPECT_EQ(CheckRevAddress(good, &key_hash), RevAddressError::kNone);
  EXPECT_EQ(RevAddressFromKeyHash(key_hash), good);
  // Not base58 and too short: base58 is reported.
  EXPECT_EQ(CheckRevAddress("0OIl"), RevAddressError::kInvalidBase58);
  EXPECT_EQ(CheckRevAddress("abc"), RevAddressError::kInvalidLength);
  std::string flipped = good;
  flipped[20] = flipped[20] == 'a' ? 'b' : 'a';
  EXPECT_EQ(CheckRevAddress(flipped), RevAddressError::kInvalidChecksum);
  // Beyond the decoder's bound the verdict is still exact.
  EXPECT_EQ(CheckRevAddress(std::string(kMaxBase58Chars + 1, '2')),
            RevAddressError::kInvalidLength);
  EXPECT_EQ(CheckRevAddress(std::string(kMaxBase58Chars, '2') + "0"),
            RevAddressError::kInvalidBase58);
  EXPECT_EQ(RevAddressErrorText(RevAddressError::kInvalidPrefix),
            "Invalid prefix");
  EXPECT_EQ(RevAddressErrorText(RevAddressError::kNone), "");
}

TEST(RevAddressTest, AddressOfKeyBytesChecksOnlyTheLength) {
  for (const auto& p : kPairs) {
    EXPECT_EQ(RevAddressFromKeyBytes(Unhex(p.public_key)), p.address);
  }
  // Any 65 bytes derive an address (the public node does not check the
  // point); another length does not.
  EXPECT_TRUE(RevAddressFromKeyBytes(Bytes(65, 9)).has_value());
  EXPECT_EQ(RevAddressFromKeyBytes(Bytes(64, 9)), std::nullopt);
  EXPECT_EQ(RevAddressFromKeyBytes(Bytes(33, 2)), std::nullopt);
}

TEST(RevAddressTest, WrongPrefixIsRejected) {
  Hash32 key_hash{};
  key_hash[0] = 7;
  // A well-formed 40-byte payload with a correct checksum but prefix 01.
  Bytes raw(36, 0);
  raw[0] = 1;
  std::copy(key_hash.begin(), key_hash.end(), raw.begin() + 4);
  Hash32 check = Blake2b256(raw);
  raw.insert(raw.end(), check.begin(), check.begin() + 4);
  absl::StatusOr<Hash32> r = ParseRevAddress(Base58Encode(raw));
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("Invalid prefix"));
  EXPECT_EQ(CheckRevAddress(Base58Encode(raw)),
            RevAddressError::kInvalidPrefix);
  EXPECT_TRUE(ParseRevAddress(RevAddressFromKeyHash(key_hash)).ok());
}

}  // namespace
}  // namespace rnode::crypto

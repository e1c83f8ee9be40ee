// Validator statements (node/p2p/identity/validator_statement.h): signed by
// the validator's key, bound to one node id, network, shard and time.
#include "node/p2p/identity/validator_statement.h"

#include <string>

#include "crypto/secp256k1.h"
#include "gtest/gtest.h"
#include "tests/bytes_util.h"
#include "util/bytes.h"

namespace rnode::node::p2p {
namespace {

constexpr int64_t kNow = 1'800'000'000'000;

crypto::Secp256k1PrivateKey Key(uint8_t fill) {
  crypto::Secp256k1PrivateKey k;
  k.fill(fill);
  return k;
}

Bytes NodeId(uint8_t fill) { return Bytes(20, fill); }

ValidatorStatement Signed() {
  absl::StatusOr<ValidatorStatement> s =
      SignValidatorStatement(Key(7), NodeId(1), "testnet", "root", kNow);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : ValidatorStatement{};
}

TEST(ValidatorStatementTest, SignedStatementRoundTripsAndChecks) {
  const ValidatorStatement s = Signed();
  EXPECT_EQ(s.validator, crypto::Secp256k1PublicKeyOf(Key(7)));
  const Bytes wire = EncodeValidatorStatement(s);
  EXPECT_LE(wire.size(), kMaxValidatorStatementBytes);
  absl::StatusOr<ValidatorStatement> back = DecodeValidatorStatement(wire);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(EncodeValidatorStatement(*back), wire);
  EXPECT_TRUE(
      CheckValidatorStatement(*back, NodeId(1), "testnet", "root", kNow).ok());
  // Within the skew either way.
  EXPECT_TRUE(CheckValidatorStatement(*back, NodeId(1), "testnet", "root",
                                      kNow + kValidatorStatementMaxSkewMs)
                  .ok());
  EXPECT_TRUE(CheckValidatorStatement(*back, NodeId(1), "testnet", "root",
                                      kNow - kValidatorStatementMaxSkewMs)
                  .ok());
}

// A statement made outside this code base, from the wire form in the
// header alone (Node.js: elliptic for secp256k1, blakejs for Blake2b-256;
// key 0x09 x 32, node id 0011..2233, time 1764892800000, "local-shard",
// "root"). Also the fuzz seed fuzz/corpus/validator_statement/
// signed_local_shard.bin.
TEST(ValidatorStatementTest, AStatementMadeElsewhereFromTheSpecChecks) {
  const Bytes wire = ::rnode::testing::Unhex(
      "0100112233445566778899aabbccddeeff001122330000019aebcef4000b6c6f"
      "63616c2d736861726404726f6f740456b328b30c8bf5839e24058747879408bd"
      "b36241dc9c2e7c619faa12b2920967ab7cd9ff8ea7fd4f421b1e19f52e955d49"
      "7a2c83285a6a8ff72c577d6c2fd49047bca2eb596daf26df193c2d4501a9726f"
      "b08ea278d36b9e0b87955e999f43b737c29966ed05a73a00d9ae016fb4bd8b1c"
      "f65e6173d0940749bc5382a62be7be");
  absl::StatusOr<ValidatorStatement> s = DecodeValidatorStatement(wire);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->node_id, ::rnode::testing::Unhex(
                            "00112233445566778899aabbccddeeff00112233"));
  EXPECT_EQ(s->time_ms, 1764892800000);
  EXPECT_EQ(s->network_id, "local-shard");
  EXPECT_EQ(s->shard_id, "root");
  EXPECT_EQ(s->validator, crypto::Secp256k1PublicKeyOf(Key(9)));
  EXPECT_TRUE(CheckValidatorStatement(*s, s->node_id, "local-shard", "root",
                                      1764892800000)
                  .ok());
  EXPECT_EQ(EncodeValidatorStatement(*s), wire);
}

TEST(ValidatorStatementTest, EachMismatchIsRefusedWithItsReason) {
  const ValidatorStatement s = Signed();
  struct Case {
    const char* what;
    Bytes node;
    std::string network;
    std::string shard;
    int64_t now;
  };
  const Case cases[] = {
      {"another node", NodeId(2), "testnet", "root", kNow},
      {"another network", NodeId(1), "mainnet", "root", kNow},
      {"another shard", NodeId(1), "testnet", "child", kNow},
      {"stale", NodeId(1), "testnet", "root",
       kNow + kValidatorStatementMaxSkewMs + 1},
      {"from the future", NodeId(1), "testnet", "root",
       kNow - kValidatorStatementMaxSkewMs - 1},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(
        CheckValidatorStatement(s, c.node, c.network, c.shard, c.now).code(),
        absl::StatusCode::kPermissionDenied)
        << c.what;
  }
}

TEST(ValidatorStatementTest, AnyChangedSignedByteBreaksTheSignature) {
  const Bytes wire = EncodeValidatorStatement(Signed());
  // Every byte of the time and the validator key, and the signature's
  // first: each change either fails to decode or fails the check.
  for (size_t i = 21; i < wire.size(); ++i) {
    Bytes changed = wire;
    changed[i] ^= 0x01;
    absl::StatusOr<ValidatorStatement> s = DecodeValidatorStatement(changed);
    if (!s.ok()) continue;
    EXPECT_FALSE(CheckValidatorStatement(*s, s->node_id, s->network_id,
                                         s->shard_id, s->time_ms)
                     .ok())
        << "byte " << i;
  }
}

TEST(ValidatorStatementTest, AnotherKeysSignatureIsRefused) {
  ValidatorStatement s = Signed();
  s.validator = crypto::Secp256k1PublicKeyOf(Key(8));
  EXPECT_EQ(
      CheckValidatorStatement(s, NodeId(1), "testnet", "root", kNow).code(),
      absl::StatusCode::kPermissionDenied);
}

TEST(ValidatorStatementTest, MalformedWireFormsAreInvalidArgument) {
  const Bytes wire = EncodeValidatorStatement(Signed());
  Bytes longer = wire;
  longer.push_back(0);
  Bytes version = wire;
  version[0] = 2;
  Bytes empty_network = wire;
  empty_network[29] = 0;  // the network id's length
  Bytes not_a_point = wire;
  // The validator key's prefix (after version, id, time, two names).
  not_a_point[1 + 20 + 8 + 1 + 7 + 1 + 4] = 0x05;
  for (const Bytes& bad : {Bytes{}, Bytes(wire.begin(), wire.end() - 1), longer,
                           version, empty_network, not_a_point,
                           Bytes(kMaxValidatorStatementBytes + 1, 0x01)}) {
    EXPECT_EQ(DecodeValidatorStatement(bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << HexEncode(bad).substr(0, 80);
  }
}

TEST(ValidatorStatementTest, SigningRefusesBadInputs) {
  EXPECT_FALSE(
      SignValidatorStatement(Key(7), Bytes(19, 1), "testnet", "root", kNow)
          .ok());
  EXPECT_FALSE(
      SignValidatorStatement(Key(7), NodeId(1), "", "root", kNow).ok());
  EXPECT_FALSE(SignValidatorStatement(Key(7), NodeId(1), "testnet",
                                      std::string(256, 'x'), kNow)
                   .ok());
}

}  // namespace
}  // namespace rnode::node::p2p

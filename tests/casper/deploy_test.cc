// Tests for deploy signing, the signed preimage and verification errors.
#include "casper/deploy.h"

#include <cstdint>

#include "CasperMessage.pb.h"
#include "crypto/hash.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rnode::casper {
namespace {

using ::testing::HasSubstr;

// Well-known development key of the public network (not a secret).
constexpr char kPrivHex[] =
    "5f668a7ee96d944a4494cc947e4005e172d7ab3461ee5538f1f2a45a835e9657";

crypto::Secp256k1PrivateKey Key() {
  return *crypto::ParseSecp256k1PrivateKey(*HexDecode(kPrivHex));
}

DeployData Sample() {
  DeployData d;
  d.term = "new x in { x!(1) }";
  d.timestamp = 1700000000000;
  d.phlo_price = 1;
  d.phlo_limit = 100000;
  d.valid_after_block_number = 0;
  d.shard_id = "root";
  return d;
}

TEST(DeployTest, SignedPreimageMatchesPublicVectors) {
  DeployData d = Sample();
  EXPECT_EQ(HexEncode(SignedPreimage(d)),
            "12126e6577207820696e207b207821283129207d1880d095ffbc3138014"
            "0a08d065a04726f6f74");
  EXPECT_EQ(HexEncode(SignatureDigest(d, SigAlgorithm::kSecp256k1)),
            "974ace95de3b85a3e5373678ab616732147cd8a7a0463dee9e055403617b3fc6");
  d.valid_after_block_number = -1;
  d.expiration_timestamp = 1700000060000;
  EXPECT_EQ(HexEncode(SignatureDigest(d, SigAlgorithm::kSecp256k1)),
            "62fbd1a44390034e3a62199dff7eb885b95a8bc3b0b9af0932086c65da63ec36");
}

TEST(DeployTest, LanguageIsNotSigned) {
  DeployData a = Sample();
  DeployData b = Sample();
  b.language = "rholang";
  EXPECT_EQ(SignedPreimage(a), SignedPreimage(b));
}

TEST(DeployTest, SignThenFromProtoRoundTrips) {
  absl::StatusOr<SignedDeploy> signed_deploy =
      SignedDeploy::Sign(Sample(), Key());
  ASSERT_TRUE(signed_deploy.ok()) << signed_deploy.status();
  ::casper::DeployDataProto proto = signed_deploy->ToProto();
  EXPECT_EQ(proto.sigalgorithm(), "secp256k1");
  EXPECT_EQ(proto.deployer().size(), 65u);
  absl::StatusOr<SignedDeploy> back = SignedDeploy::FromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->data(), Sample());
  EXPECT_EQ(back->id(), signed_deploy->sig());
  EXPECT_EQ(back->deployer(), signed_deploy->deployer());
}

TEST(DeployTest, EthAlgorithmSignsKeccakOfPrefixedPreimage) {
  absl::StatusOr<SignedDeploy> d =
      SignedDeploy::Sign(Sample(), Key(), SigAlgorithm::kSecp256k1Eth);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->sig().size(), 64u);
  Bytes preimage = SignedPreimage(Sample());
  std::string msg =
      "\x19"
      "Ethereum Signed Message:\n" +
      std::to_string(preimage.size()) + ToString(preimage);
  EXPECT_EQ(SignatureDigest(Sample(), SigAlgorithm::kSecp256k1Eth),
            crypto::Keccak256(AsBytes(msg)));
  ::casper::DeployDataProto proto = d->ToProto();
  EXPECT_EQ(proto.sigalgorithm(), "secp256k1:eth");
  EXPECT_TRUE(SignedDeploy::FromProto(proto).ok());
  // The same signature under the other algorithm name does not verify.
  proto.set_sigalgorithm("secp256k1");
  EXPECT_EQ(SignedDeploy::FromProto(proto).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Each case damages one field of a correctly signed proto and expects a
// clear InvalidArgument naming it.
struct DamageCase {
  const char* name;
  void (*damage)(::casper::DeployDataProto*);
  const char* message;
};

const DamageCase kDamage[] = {
    {"short key", [](auto* p) { p->set_deployer(p->deployer().substr(1)); },
     "deployer: public key must be 65 bytes"},
    {"compressed key",
     [](auto* p) { p->set_deployer(p->deployer().substr(0, 33)); }, "deployer"},
    {"key off curve",
     [](auto* p) {
       std::string k = p->deployer();
       k[64] ^= 1;
       p->set_deployer(k);
     },
     "not a point"},
    {"bad der", [](auto* p) { p->set_sig(p->sig() + "x"); }, "sig: "},
    {"empty sig", [](auto* p) { p->set_sig(""); }, "sig: "},
    {"flipped sig byte",
     [](auto* p) {
       std::string s = p->sig();
       s[s.size() - 3] ^= 1;
       p->set_sig(s);
     },
     "sig: "},
    {"empty term", [](auto* p) { p->set_term(""); }, "term must not be empty"},
    {"tampered term", [](auto* p) { p->set_term("new y in { y!(1) }"); },
     "does not match"},
    {"tampered timestamp",
     [](auto* p) { p->set_timestamp(p->timestamp() + 1); }, "does not match"},
    {"tampered shard", [](auto* p) { p->set_shardid("other"); },
     "does not match"},
    {"negative phlo limit", [](auto* p) { p->set_phlolimit(-1); },
     "phloLimit must not be negative"},
    {"negative phlo price", [](auto* p) { p->set_phloprice(-5); },
     "phloPrice must not be negative"},
    {"negative timestamp", [](auto* p) { p->set_timestamp(-1); },
     "timestamp must not be negative"},
    {"negative expiration", [](auto* p) { p->set_expirationtimestamp(-1); },
     "expirationTimestamp must not be negative"},
    {"unknown algorithm", [](auto* p) { p->set_sigalgorithm("ed25519"); },
     "unsupported signature algorithm"},
    {"empty algorithm", [](auto* p) { p->set_sigalgorithm(""); },
     "unsupported signature algorithm"},
    {"metta", [](auto* p) { p->set_language("metta"); },
     "unsupported deploy language"},
    {"huge term", [](auto* p) { p->set_term(std::string((1 << 20) + 1, 'x')); },
     "term is 1048577 bytes"},
    {"huge shard", [](auto* p) { p->set_shardid(std::string(300, 's')); },
     "shardId is 300 bytes"},
};

TEST(DeployTest, EachMalformedFieldIsRejectedWithItsName) {
  ::casper::DeployDataProto good =
      SignedDeploy::Sign(Sample(), Key())->ToProto();
  ASSERT_TRUE(SignedDeploy::FromProto(good).ok());
  for (const DamageCase& c : kDamage) {
    ::casper::DeployDataProto p = good;
    c.damage(&p);
    absl::StatusOr<SignedDeploy> r = SignedDeploy::FromProto(p);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.message))
        << c.name;
  }
}

TEST(DeployTest, SignRefusesInvalidData) {
  DeployData d = Sample();
  d.term.clear();
  EXPECT_EQ(SignedDeploy::Sign(d, Key()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DeployTest, NegativeValidAfterBlockNumberIsAllowedAndSigned) {
  DeployData d = Sample();
  d.valid_after_block_number = -1;
  absl::StatusOr<SignedDeploy> s = SignedDeploy::Sign(d, Key());
  ASSERT_TRUE(s.ok());
  ::casper::DeployDataProto p = s->ToProto();
  EXPECT_TRUE(SignedDeploy::FromProto(p).ok());
  p.set_validafterblocknumber(0);
  absl::StatusOr<SignedDeploy> changed = SignedDeploy::FromProto(p);
  EXPECT_EQ(changed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(changed.status().message()),
              HasSubstr("signature does not match"));
}

TEST(DeployTest, UnknownFieldsInProtoDoNotAffectVerification) {
  ::casper::DeployDataProto p = SignedDeploy::Sign(Sample(), Key())->ToProto();
  std::string wire = p.SerializeAsString();
  wire += std::string("\xa0\x06\x01", 3);  // Field 100, varint 1.
  ::casper::DeployDataProto with_unknown;
  ASSERT_TRUE(with_unknown.ParseFromString(wire));
  EXPECT_TRUE(SignedDeploy::FromProto(with_unknown).ok());
}

TEST(DeployTest, SigAlgorithmNamesRoundTrip) {
  for (SigAlgorithm a :
       {SigAlgorithm::kSecp256k1, SigAlgorithm::kSecp256k1Eth}) {
    EXPECT_EQ(*ParseSigAlgorithm(SigAlgorithmName(a)), a);
  }
}

TEST(DeployTest, SigAlgorithmAliasesAndCaseAreAccepted) {
  for (const char* name :
       {"secp256k1:eth", "secp256k1-eth", "SECP256K1-ETH", "Secp256k1:Eth"}) {
    ASSERT_TRUE(ParseSigAlgorithm(name).ok()) << name;
    EXPECT_EQ(*ParseSigAlgorithm(name), SigAlgorithm::kSecp256k1Eth) << name;
  }
  EXPECT_EQ(*ParseSigAlgorithm("SECP256K1"), SigAlgorithm::kSecp256k1);
  for (const char* name : {"", "secp256k1 ", "secp256k1_eth", "ed25519"}) {
    absl::StatusOr<SigAlgorithm> a = ParseSigAlgorithm(name);
    ASSERT_FALSE(a.ok()) << name;
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(DeployTest, DeploySignedUnderThePublicEthNameVerifies) {
  ::casper::DeployDataProto p =
      SignedDeploy::Sign(Sample(), Key(), SigAlgorithm::kSecp256k1Eth)
          ->ToProto();
  p.set_sigalgorithm("Secp256k1-ETH");
  absl::StatusOr<SignedDeploy> d = SignedDeploy::FromProto(p);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->sig_algorithm(), SigAlgorithm::kSecp256k1Eth);
  EXPECT_EQ(d->ToProto().sigalgorithm(), "secp256k1:eth");
}

TEST(DeployTest, WindowHalfGoneAtHalfTheLifespan) {
  DeployData d;
  d.valid_after_block_number = 100;
  EXPECT_FALSE(WindowHalfGone(d, 101, 50));
  EXPECT_FALSE(WindowHalfGone(d, 124, 50));
  EXPECT_TRUE(WindowHalfGone(d, 125, 50));  // 25 of the 50 blocks are gone.
  EXPECT_TRUE(WindowHalfGone(d, 200, 50));  // Expired is past half too.
  EXPECT_EQ(WindowAt(d, 125, 0, 50), DeployWindow::kOpen);  // Still open.
  // No overflow at the ends of the range.
  d.valid_after_block_number = INT64_MIN;
  EXPECT_TRUE(WindowHalfGone(d, INT64_MAX, 50));
  d.valid_after_block_number = INT64_MAX;
  EXPECT_FALSE(WindowHalfGone(d, INT64_MIN, 50));
}

}  // namespace
}  // namespace rnode::casper

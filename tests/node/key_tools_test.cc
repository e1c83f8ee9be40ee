// Tests for the offline key and deploy tools of the rnode binary.
#include "node/tools/key_tools.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "crypto/rev_address.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rnode::node {
namespace {

using ::testing::HasSubstr;

constexpr char kPriv[] =
    "5f668a7ee96d944a4494cc947e4005e172d7ab3461ee5538f1f2a45a835e9657";
constexpr char kAddress[] = "1111AtahZeefej4tvVR6ti9TJtv8yxLebT31SCEVDCKMNikBk5r3g";

// A deploy for the signing tests.
casper::DeployData SmallDeploy() {
  casper::DeployData d;
  d.term = "@0!(0)";
  d.timestamp = 1;
  d.phlo_price = 1;
  d.phlo_limit = 1000;
  d.shard_id = "root";
  return d;
}

TEST(KeyToolsTest, RevAddressFromPrivateAndPublicKey) {
  std::ostringstream out, err;
  EXPECT_EQ(RunRevAddress("", kPriv, out, err), 0);
  EXPECT_EQ(out.str(), std::string(kAddress) + "\n");
  std::ostringstream out2;
  EXPECT_EQ(RunRevAddress(
                "04ffc016579a68050d655d55df4e09f04605164543e257c8e6df10361e6068"
                "a5336588e9b355ea859c5ab4285a5ef0efdf62bc28b80320ce99e26bb1607b"
                "3ad93d",
                "", out2, err),
            0);
  EXPECT_EQ(out2.str(), out.str());
}

TEST(KeyToolsTest, RevAddressNeedsExactlyOneKey) {
  std::ostringstream out, err;
  EXPECT_EQ(RunRevAddress("", "", out, err), 1);
  EXPECT_EQ(RunRevAddress("04", kPriv, out, err), 1);
  EXPECT_EQ(RunRevAddress("0411", "", out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("public key"));
  EXPECT_TRUE(out.str().empty());
}

TEST(KeyToolsTest, KeygenPrintsConsistentTriple) {
  std::ostringstream out, err;
  ASSERT_EQ(RunKeygen(out, err), 0);
  std::istringstream lines(out.str());
  std::string priv, pub, address;
  lines >> priv >> priv >> pub >> pub >> address >> address;
  std::ostringstream from_priv;
  ASSERT_EQ(RunRevAddress("", priv, from_priv, err), 0);
  EXPECT_EQ(from_priv.str(), address + "\n");
  EXPECT_EQ(pub.size(), 130u);
  EXPECT_TRUE(crypto::ParseRevAddress(address).ok());
}

TEST(KeyToolsTest, SignThenVerify) {
  const casper::DeployData d = SmallDeploy();
  std::ostringstream signed_json, err;
  ASSERT_EQ(RunSignDeploy(d, kPriv, "", "secp256k1", signed_json, err), 0)
      << err.str();
  std::istringstream in(signed_json.str());
  std::ostringstream out;
  EXPECT_EQ(RunVerifyDeploy(in, out, err), 0) << err.str();
  EXPECT_EQ(out.str(), "valid\n");
}

TEST(KeyToolsTest, VerifyReportsReason) {
  std::istringstream in("{\"term\": 1}");
  std::ostringstream out, err;
  EXPECT_EQ(RunVerifyDeploy(in, out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("invalid: "));
  EXPECT_TRUE(out.str().empty());
}

TEST(KeyToolsTest, VerifyRefusesOversizedInput) {
  std::istringstream in(std::string(kMaxDeployJsonBytes + 10, ' '));
  std::ostringstream out, err;
  EXPECT_EQ(RunVerifyDeploy(in, out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("exceeds"));
}

TEST(KeyToolsTest, SignRejectsBadKeyAndAlgorithm) {
  casper::DeployData d;
  d.term = "Nil";
  d.shard_id = "root";
  std::ostringstream out, err;
  EXPECT_EQ(RunSignDeploy(d, "abcd", "", "secp256k1", out, err), 1);
  EXPECT_EQ(RunSignDeploy(d, kPriv, "", "rsa", out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("unsupported signature algorithm"));
  EXPECT_TRUE(out.str().empty());
}

TEST(KeyToolsTest, SignReadsTheKeyFromAFile) {
  const casper::DeployData d = SmallDeploy();
  const std::string path = ::testing::TempDir() + "/key_tools_test_" +
                           std::to_string(::getpid()) + ".key";
  std::ofstream(path) << kPriv << "\n";
  std::ostringstream from_file, from_hex, err;
  ASSERT_EQ(RunSignDeploy(d, "", path, "secp256k1", from_file, err), 0)
      << err.str();
  ASSERT_EQ(RunSignDeploy(d, kPriv, "", "secp256k1", from_hex, err), 0);
  EXPECT_EQ(from_file.str(), from_hex.str());

  // Exactly one source.
  std::ostringstream out, err2;
  EXPECT_EQ(RunSignDeploy(d, kPriv, path, "secp256k1", out, err2), 1);
  EXPECT_EQ(RunSignDeploy(d, "", "", "secp256k1", out, err2), 1);
  EXPECT_THAT(err2.str(), HasSubstr("exactly one"));
  // A file that is not a small key file.
  EXPECT_EQ(RunSignDeploy(d, "", ::testing::TempDir(), "secp256k1", out, err2),
            1);
  EXPECT_THAT(err2.str(), HasSubstr("not a regular file"));
  EXPECT_TRUE(out.str().empty());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace rnode::node

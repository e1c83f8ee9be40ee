// `rnode genesis` and `rnode eval-deploy`.
#include "node/tools/genesis_tool.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "casper/deploy.h"
#include "gtest/gtest.h"
#include "node/tools/deploy_json.h"
#include "tests/casper/test_key.h"
#include "util/bytes.h"

namespace rnode::node {
namespace {

using casper::testing::MakeTestKey;
using Key = casper::testing::TestKey;

class GenesisToolTest : public ::testing::Test {
 protected:
  GenesisToolTest() : alice(MakeTestKey(1)), bob(MakeTestKey(2)) {
    const std::string dir = ::testing::TempDir();
    options.bonds_path = dir + "/genesis_tool_bonds.txt";
    options.wallets_path = dir + "/genesis_tool_wallets.txt";
    Write(options.bonds_path, HexEncode(ByteView(alice.pk)) + " 1000\n");
    Write(options.wallets_path, alice.address + ",5000000\n");
  }
  ~GenesisToolTest() override {
    std::remove(options.bonds_path.c_str());
    std::remove(options.wallets_path.c_str());
  }
  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }

  GenesisToolOptions options;
  Key alice;
  Key bob;
};

// The whole printout, computed by this code (the thread count does not
// change it: GenesisTest.ThreadCountDoesNotChangeTheBlock).
TEST_F(GenesisToolTest, PrintsThePinnedBlock) {
  std::ostringstream out, err;
  ASSERT_EQ(RunGenesis(options, out, err), 0) << err.str();
  EXPECT_EQ(
      out.str(),
      "shard: root\n"
      "validators: 1\n"
      "wallets: 1\n"
      "total supply: 5001000\n"
      "post-state: "
      "ab03e996d670167d4003085be068c0b53619079d5cbec1e3612c7ef4889f461e\n"
      "block hash: "
      "0a23abc2289f4a0d7be2debcd457925994f808bfb5148e1321ff69062978bbba\n");
}

TEST_F(GenesisToolTest, BadLineIsReportedWithFileAndLine) {
  Write(options.wallets_path, alice.address + ",5\nnot-an-address,7\n");
  std::ostringstream out, err;
  EXPECT_EQ(RunGenesis(options, out, err), 1);
  EXPECT_NE(err.str().find(options.wallets_path + ":2:"), std::string::npos)
      << err.str();
  EXPECT_TRUE(out.str().empty());
}

TEST_F(GenesisToolTest, MissingFileIsAnError) {
  options.bonds_path += ".missing";
  std::ostringstream out, err;
  EXPECT_EQ(RunGenesis(options, out, err), 1);
  EXPECT_NE(err.str().find(options.bonds_path), std::string::npos);
}

TEST_F(GenesisToolTest, EvalDeployRunsATransferWithCostAccounting) {
  casper::DeployData d;
  d.term = absl::StrCat(R"(
new rl(`rho:registry:lookup`), deployerId(`rho:rchain:deployerId`),
    stdout(`rho:io:stdout`), v, f, k, r in {
  rl!(`rho:vault:system`, *v) |
  for (@(_, vaults) <- v) {
    @vaults!("findOrCreate", ")",
                        alice.address, R"(", *f) |
    @vaults!("deployerAuthKey", *deployerId, *k) |
    for (@(true, from) <- f; key <- k) {
      @from!("transfer", ")",
                        bob.address, R"(", 1234, *key, *r) |
      for (@result <- r) { stdout!(result) }
    }
  }
})");
  d.timestamp = 1'700'000'000'000;
  d.phlo_limit = 100'000;
  d.phlo_price = 1;
  d.shard_id = "root";
  auto signed_deploy = casper::SignedDeploy::Sign(d, alice.sk);
  ASSERT_TRUE(signed_deploy.ok());
  std::ostringstream out, err;
  ASSERT_EQ(RunEvalDeploy(options, DeployToJson(*signed_deploy), out, err), 0)
      << err.str();
  const std::string text = out.str();
  EXPECT_NE(text.find("stdout: (true, Nil)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("charged: 100000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("cost: 5764\n"), std::string::npos) << text;
  EXPECT_NE(text.find("refunded: 94236\n"), std::string::npos) << text;
  EXPECT_NE(text.find(absl::StrCat("balance ", bob.address, ": 0 -> 1234\n")),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("error:"), std::string::npos) << text;
}

TEST_F(GenesisToolTest, EvalDeployRefusesAnotherShard) {
  casper::DeployData d;
  d.term = "Nil";
  d.timestamp = 1;
  d.phlo_limit = 1000;
  d.phlo_price = 1;
  d.shard_id = "other";
  auto signed_deploy = casper::SignedDeploy::Sign(d, alice.sk);
  ASSERT_TRUE(signed_deploy.ok());
  std::ostringstream out, err;
  EXPECT_EQ(RunEvalDeploy(options, DeployToJson(*signed_deploy), out, err), 1);
  EXPECT_NE(err.str().find("shardId 'other'"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace rnode::node

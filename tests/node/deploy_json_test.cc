// Tests for the JSON form of deploys.
#include "node/tools/deploy_json.h"

#include <nlohmann/json.hpp>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rnode::node {
namespace {

using ::testing::HasSubstr;

casper::SignedDeploy SampleDeploy() {
  casper::DeployData d;
  d.term = "new out(`rho:io:stdout`) in { out!(\"h\\u00e9\\n\") }";
  d.timestamp = 1700000000000;
  d.phlo_price = 1;
  d.phlo_limit = 500000;
  d.valid_after_block_number = 12;
  d.shard_id = "root";
  auto key = crypto::ParseSecp256k1PrivateKey(*HexDecode(
      "357cdc4201a5650830e0bc5a03299a30038d9934ba4c7ab73ec164ad82471ff9"));
  return *casper::SignedDeploy::Sign(d, *key);
}

TEST(DeployJsonTest, RoundTrips) {
  casper::SignedDeploy d = SampleDeploy();
  absl::StatusOr<casper::SignedDeploy> back = DeployFromJson(DeployToJson(d));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->data(), d.data());
  EXPECT_EQ(back->sig(), d.sig());
}

TEST(DeployJsonTest, UsesProtoFieldNamesAndHex) {
  nlohmann::json j = nlohmann::json::parse(DeployToJson(SampleDeploy()));
  EXPECT_EQ(j["shardId"], "root");
  EXPECT_EQ(j["phloLimit"], 500000);
  EXPECT_EQ(j["sigAlgorithm"], "secp256k1");
  EXPECT_EQ(j["deployer"].get<std::string>().substr(0, 2), "04");
  EXPECT_EQ(j["deployer"].get<std::string>().size(), 130u);
}

TEST(DeployJsonTest, MalformedInputsGiveFieldErrors) {
  nlohmann::json good = nlohmann::json::parse(DeployToJson(SampleDeploy()));
  struct Case {
    std::string json;
    const char* message;
  };
  auto without = [&](const char* field) {
    nlohmann::json j = good;
    j.erase(field);
    return j.dump();
  };
  auto with = [&](const char* field, nlohmann::json v) {
    nlohmann::json j = good;
    j[field] = v;
    return j.dump();
  };
  const Case cases[] = {
      {"{", "not valid JSON"},
      {"[1,2]", "must be an object"},
      {without("term"), "missing field 'term'"},
      {without("sig"), "missing field 'sig'"},
      {with("timestamp", "1"), "'timestamp' must be an integer"},
      {with("phloLimit", 1.5), "'phloLimit' must be an integer"},
      {with("phloLimit", 18446744073709551615ull), "does not fit in int64"},
      {with("deployer", "zz"), "field 'deployer': "},
      {with("sig", 7), "'sig' must be a string"},
      {with("term", "tampered"), "does not match"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<casper::SignedDeploy> r = DeployFromJson(c.json);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.json;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.message))
        << c.json;
  }
}

}  // namespace
}  // namespace rnode::node

// Tests for the shard's deploy rules (casper/deploy_rules.h): each rule at
// its boundary, the order of the checks, and the horizon only when a
// height is given.
#include "casper/deploy_rules.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rnode::casper {
namespace {

using ::testing::HasSubstr;

DeployRules Rules() {
  DeployRules r;
  r.shard_id = "root";
  r.min_phlo_price = 2;
  r.max_phlo_limit = 1000;
  r.max_term_bytes = 16;
  return r;
}

DeployData Keeping() {
  DeployData d;
  d.term = "Nil";
  d.phlo_price = 2;
  d.phlo_limit = 1000;
  d.valid_after_block_number = 10;
  d.shard_id = "root";
  return d;
}

// The fault of `d` (nullopt: it keeps the rules).
std::optional<DeployFault> FaultOf(const DeployData& d,
                                   std::optional<int64_t> height = 10) {
  std::optional<DeployBreach> b = CheckDeployRules(d, Rules(), height);
  if (!b.has_value()) return std::nullopt;
  return b->fault;
}

TEST(DeployRulesTest, ADeployAtEveryBoundaryKeepsTheRules) {
  DeployData d = Keeping();
  d.term = std::string(16, 'x');
  d.valid_after_block_number = 10 + kDeployHorizonBlocks;
  EXPECT_EQ(FaultOf(d), std::nullopt);
  d.phlo_limit = 1;
  d.valid_after_block_number = -5;  // long past: the window's business
  EXPECT_EQ(FaultOf(d), std::nullopt);
}

TEST(DeployRulesTest, EachRuleJustPastItsBoundaryIsBroken) {
  struct Case {
    const char* what;
    void (*change)(DeployData&);
    DeployFault fault;
    const char* message;
  };
  const Case cases[] = {
      {"shard", [](DeployData& d) { d.shard_id = "other"; },
       DeployFault::kWrongShard,
       "Deploy shardId 'other' is not as expected network shard 'root'."},
      {"price", [](DeployData& d) { d.phlo_price = 1; },
       DeployFault::kLowPhloPrice,
       "Phlo price 1 is less than minimum price 2."},
      {"limit 0", [](DeployData& d) { d.phlo_limit = 0; },
       DeployFault::kPhloLimit,
       "Phlo limit 0 is outside this shard's range, 1 to 1000."},
      {"limit above", [](DeployData& d) { d.phlo_limit = 1001; },
       DeployFault::kPhloLimit,
       "Phlo limit 1001 is outside this shard's range, 1 to 1000."},
      {"term", [](DeployData& d) { d.term = std::string(17, 'x'); },
       DeployFault::kTermTooLarge,
       "Deploy term is 17 bytes, more than this shard's limit of 16 bytes."},
      {"horizon",
       [](DeployData& d) {
         d.valid_after_block_number = 10 + kDeployHorizonBlocks + 1;
       },
       DeployFault::kBeyondHorizon, "more than 50 blocks above"},
      {"horizon at int64 max",
       [](DeployData& d) {
         d.valid_after_block_number = std::numeric_limits<int64_t>::max();
       },
       DeployFault::kBeyondHorizon, "set validAfterBlockNumber"},
  };
  for (const Case& c : cases) {
    DeployData d = Keeping();
    c.change(d);
    std::optional<DeployBreach> b = CheckDeployRules(d, Rules(), 10);
    ASSERT_TRUE(b.has_value()) << c.what;
    EXPECT_EQ(b->fault, c.fault) << c.what;
    EXPECT_THAT(b->message, HasSubstr(c.message)) << c.what;
  }
}

TEST(DeployRulesTest, TheFirstBrokenRuleInOrderIsReported) {
  DeployData d = Keeping();
  d.phlo_price = 0;
  d.phlo_limit = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(FaultOf(d), DeployFault::kLowPhloPrice);
  d.shard_id = "other";
  EXPECT_EQ(FaultOf(d), DeployFault::kWrongShard);
}

TEST(DeployRulesTest, TheHorizonIsCheckedOnlyAgainstAHeight) {
  DeployData d = Keeping();
  d.valid_after_block_number = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(FaultOf(d, std::nullopt), std::nullopt);
  EXPECT_EQ(FaultOf(d, std::numeric_limits<int64_t>::max()), std::nullopt);
  EXPECT_EQ(FaultOf(d, 0), DeployFault::kBeyondHorizon);
}

TEST(DeployRulesTest, FaultsHaveMetricNames) {
  EXPECT_STREQ(DeployFaultName(DeployFault::kWrongShard), "wrong_shard");
  EXPECT_STREQ(DeployFaultName(DeployFault::kLowPhloPrice), "low_phlo_price");
  EXPECT_STREQ(DeployFaultName(DeployFault::kPhloLimit), "phlo_limit");
  EXPECT_STREQ(DeployFaultName(DeployFault::kTermTooLarge), "term_too_large");
  EXPECT_STREQ(DeployFaultName(DeployFault::kBeyondHorizon), "beyond_horizon");
}

}  // namespace
}  // namespace rnode::casper

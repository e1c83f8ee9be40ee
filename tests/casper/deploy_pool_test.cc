// Tests for the deploy pool: admission and each refusal, the validity
// window, selection order, removal and pruning, persistence across reopen.
#include "casper/pool/deploy_pool.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "CasperMessage.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rspace/storage/kv_store.h"
#include "rspace/storage/rocksdb_store.h"
#include "tests/casper/test_key.h"
#include "tests/sanitizer.h"

namespace rnode::casper::pool {
namespace {

using ::testing::HasSubstr;
using testing::MakeTestKey;

constexpr int64_t kNow = 1'700'000'000'000;

SignedDeploy Make(int i, int64_t valid_after = 0, int64_t expiration = 0,
                  int64_t timestamp = kNow, size_t term_bytes = 0) {
  DeployData d;
  d.term = term_bytes == 0 ? "@0!(" + std::to_string(i) + ")"
                           : std::string(term_bytes, 'x');
  d.timestamp = timestamp + i;
  d.phlo_price = 1;
  d.phlo_limit = 1000;
  d.valid_after_block_number = valid_after;
  d.expiration_timestamp = expiration;
  d.shard_id = "root";
  return *SignedDeploy::Sign(d, MakeTestKey(7).sk);
}

class DeployPoolTest : public ::testing::Test {
 protected:
  DeployPoolTest() : store_(1) {}
  std::unique_ptr<DeployPool> Open(DeployPoolOptions options = {}) {
    auto p = DeployPool::Open(&store_, 0, options);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *std::move(p) : nullptr;
  }
  rspace::InMemoryStore store_;
};

TEST(InWindowTest, FollowsThePublicRules) {
  DeployData d;
  d.valid_after_block_number = 10;
  EXPECT_FALSE(InWindow(d, 10, kNow));  // Not after block 10 yet.
  EXPECT_TRUE(InWindow(d, 11, kNow));
  EXPECT_TRUE(InWindow(d, 59, kNow));   // 59 - 10 < lifespan.
  EXPECT_FALSE(InWindow(d, 60, kNow));  // 60 - 10 = lifespan: past it.
  d.expiration_timestamp = kNow;
  EXPECT_TRUE(InWindow(d, 11, kNow));
  EXPECT_FALSE(InWindow(d, 11, kNow + 1));
}

TEST_F(DeployPoolTest, AddsOnceAndRefusesWithClearMessages) {
  auto pool = Open();
  const SignedDeploy d = Make(1);
  ASSERT_TRUE(pool->Add(d, 0, kNow).ok());
  EXPECT_TRUE(pool->Contains(d.sig()));
  EXPECT_EQ(pool->size(), 1u);
  auto again = pool->Add(d, 0, kNow);
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(again.message()), HasSubstr("already in the pool"));

  auto old = pool->Add(Make(2, /*valid_after=*/10), 60, kNow);
  EXPECT_EQ(old.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(old.message()),
              HasSubstr("allows blocks up to 59 (lifespan 50 blocks) and the "
                        "chain is at block 60"));
  EXPECT_EQ(pool->Add(Make(3, 10), 59, kNow).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(pool->Add(Make(5, 10), 58, kNow).ok());

  auto expired = pool->Add(Make(4, 0, kNow - 1), 0, kNow);
  EXPECT_EQ(expired.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(expired.message()), HasSubstr("deploy expired"));
  EXPECT_EQ(pool->size(), 2u);
  EXPECT_EQ(store_.KeyCount(0), 2u);
}

// Regression (issue 43): a deploy whose window starts far in the future
// sat in the pool until the chain got there; 20,000 such deploys from
// throwaway keys made every later deploy "pool full". With the shard's
// rules the pool refuses what breaks them, and stores nothing of it.
TEST_F(DeployPoolTest, ADeployBreakingTheShardRulesIsRefused) {
  DeployPoolOptions options;
  options.rules = DeployRules{};
  auto pool = Open(options);
  auto far = pool->Add(Make(1, /*valid_after=*/1'000), 10, kNow);
  EXPECT_EQ(far.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(far.message()),
              HasSubstr("valid only after block 1000"));
  DeployData free = Make(2).data();
  free.phlo_price = 0;
  free.phlo_limit = std::numeric_limits<int64_t>::max();
  auto priced =
      pool->Add(*SignedDeploy::Sign(free, MakeTestKey(7).sk), 10, kNow);
  EXPECT_EQ(priced.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(priced.message()), HasSubstr("minimum price 1"));
  EXPECT_EQ(pool->size(), 0u);
  EXPECT_EQ(store_.KeyCount(0), 0u);
  EXPECT_TRUE(pool->Add(Make(3, /*valid_after=*/60), 10, kNow).ok());
}

TEST_F(DeployPoolTest, FullPoolRefusesAndKeepsWhatItHas) {
  DeployPoolOptions options;
  options.max_deploys = 2;
  options.max_term_bytes = 100;
  auto pool = Open(options);
  ASSERT_TRUE(pool->Add(Make(1), 0, kNow).ok());
  auto big = pool->Add(Make(2, 0, 0, kNow, 95), 0, kNow);
  EXPECT_EQ(big.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(big.message()), HasSubstr("deploy pool is full"));
  ASSERT_TRUE(pool->Add(Make(3), 0, kNow).ok());
  auto third = pool->Add(Make(4), 0, kNow);
  EXPECT_EQ(third.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(pool->size(), 2u);
  // Room again after a removal.
  const Bytes sig = Make(1).sig();
  ASSERT_TRUE(pool->Remove(std::vector<Bytes>{sig}).ok());
  EXPECT_TRUE(pool->Add(Make(4), 0, kNow).ok());
}

// Two clients fill a pool of 30 at once: exactly 30 are acknowledged, and
// those are exactly the ones stored.
TEST_F(DeployPoolTest, ConcurrentAddsNeverExceedTheBound) {
  DeployPoolOptions options;
  options.max_deploys = 30;
  auto pool = Open(options);
  std::vector<SignedDeploy> deploys;
  for (int i = 0; i < 40; ++i) deploys.push_back(Make(i));
  std::atomic<int> accepted{0}, full{0};
  auto client = [&](int first) {
    for (int i = first; i < 40; i += 2) {
      auto s = pool->Add(deploys[i], 0, kNow);
      if (s.ok()) {
        accepted++;
      } else if (s.code() == absl::StatusCode::kResourceExhausted) {
        full++;
      }
    }
  };
  std::thread a(client, 0), b(client, 1);
  a.join();
  b.join();
  EXPECT_EQ(accepted.load(), 30);
  EXPECT_EQ(full.load(), 10);
  EXPECT_EQ(pool->size(), 30u);
  EXPECT_EQ(store_.KeyCount(0), 30u);
}

TEST_F(DeployPoolTest, SelectsWhatFitsTheBlockInOrder) {
  auto pool = Open();
  const SignedDeploy late = Make(1, /*valid_after=*/5);
  const SignedDeploy early_new = Make(2, 0, 0, kNow + 100);
  const SignedDeploy early_old = Make(3, 0, 0, kNow - 100);
  const SignedDeploy future = Make(4, /*valid_after=*/20);
  const SignedDeploy expiring = Make(5, 0, kNow + 10);
  for (const auto* d : {&late, &early_new, &early_old, &future, &expiring}) {
    ASSERT_TRUE(pool->Add(*d, 0, kNow).ok());
  }
  auto sigs = [](const std::vector<SignedDeploy>& v) {
    std::vector<Bytes> out;
    for (const auto& d : v) out.push_back(d.sig());
    return out;
  };
  // Block 6 at kNow: the future one waits; order (validAfter, timestamp):
  // timestamps are kNow - 97, kNow + 5 and kNow + 102 for validAfter 0.
  EXPECT_EQ(sigs(pool->Select(6, kNow, 10)),
            (std::vector<Bytes>{early_old.sig(), expiring.sig(),
                                early_new.sig(), late.sig()}));
  EXPECT_EQ(sigs(pool->Select(6, kNow, 2)),
            (std::vector<Bytes>{early_old.sig(), expiring.sig()}));
  // Later, the expiring one is out; excluded ones are skipped.
  EXPECT_EQ(sigs(pool->Select(6, kNow + 11, 10,
                              [&](const SignedDeploy& d) {
                                return d.sig() != early_new.sig();
                              })),
            (std::vector<Bytes>{early_old.sig(), late.sig()}));
  // Block 52: validAfter 0 is past its lifespan; 5 and 20 are in.
  EXPECT_EQ(sigs(pool->Select(52, kNow, 10)),
            (std::vector<Bytes>{late.sig(), future.sig()}));
}

// Deploy `i` of test key `key` at phlo price `price`.
SignedDeploy MadeBy(uint8_t key, int i, int64_t price = 1,
                    size_t term_bytes = 0) {
  DeployData d;
  d.term = term_bytes == 0 ? "@0!(" + std::to_string(i) + ")"
                           : std::string(term_bytes, 'x');
  d.timestamp = kNow + i;
  d.phlo_price = price;
  d.phlo_limit = 1000;
  d.shard_id = "root";
  return *SignedDeploy::Sign(d, MakeTestKey(key).sk);
}

// Issue 43: one key could fill the pool, and every other client's deploy
// was refused "pool full". A deployer gets its share; the others keep
// theirs, and its room comes back as its deploys leave.
TEST_F(DeployPoolTest, ADeployerBeyondItsShareIsRefusedOthersAreNot) {
  DeployPoolOptions options;
  options.max_deploys = 100;
  options.max_deploys_per_deployer = 3;
  options.max_term_bytes_per_deployer = 1000;
  auto pool = Open(options);
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(pool->Add(MadeBy(1, i), 0, kNow).ok());
  absl::Status over = pool->Add(MadeBy(1, 3), 0, kNow);
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(IsDeployerShareFull(over));
  EXPECT_THAT(std::string(over.message()),
              HasSubstr("this deployer has 3 deploys"));
  EXPECT_TRUE(pool->Add(MadeBy(2, 0), 0, kNow).ok());
  // Bytes count too: key 3's second deploy would pass 1000 bytes.
  ASSERT_TRUE(pool->Add(MadeBy(3, 0, 1, 600), 0, kNow).ok());
  EXPECT_TRUE(IsDeployerShareFull(pool->Add(MadeBy(3, 1, 1, 600), 0, kNow)));
  EXPECT_EQ(pool->size(), 5u);
  // Room again once one of key 1's deploys leaves; a reopened pool counts
  // the same shares.
  const Bytes sig = MadeBy(1, 0).sig();
  ASSERT_TRUE(pool->Remove(std::vector<Bytes>{sig}).ok());
  EXPECT_TRUE(pool->Add(MadeBy(1, 3), 0, kNow).ok());
  pool.reset();
  pool = Open(options);
  EXPECT_TRUE(IsDeployerShareFull(pool->Add(MadeBy(1, 4), 0, kNow)));
  EXPECT_TRUE(pool->Add(MadeBy(2, 1), 0, kNow).ok());
  // A full pool is not a share: the two are told apart.
  DeployPoolOptions tiny;
  tiny.max_deploys = 1;
  rspace::InMemoryStore other(1);
  auto small = DeployPool::Open(&other, 0, tiny);
  ASSERT_TRUE(small.ok());
  ASSERT_TRUE((*small)->Add(MadeBy(1, 0), 0, kNow).ok());
  absl::Status full = (*small)->Add(MadeBy(2, 0), 0, kNow);
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(IsDeployerShareFull(full));
}

// Issue 43: a block with room for fewer deploys than wait takes those that
// pay most; among equal prices, the oldest.
TEST_F(DeployPoolTest, SelectionPrefersAHigherPriceThenAge) {
  auto pool = Open();
  const SignedDeploy cheap_old = MadeBy(1, 0, /*price=*/1);
  const SignedDeploy rich_new = MadeBy(2, 9, /*price=*/5);
  const SignedDeploy mid_old = MadeBy(3, 1, /*price=*/3);
  const SignedDeploy mid_new = MadeBy(4, 5, /*price=*/3);
  for (const auto* d : {&cheap_old, &rich_new, &mid_old, &mid_new}) {
    ASSERT_TRUE(pool->Add(*d, 0, kNow).ok());
  }
  std::vector<Bytes> picked;
  for (const auto& d : pool->Select(1, kNow, 3)) picked.push_back(d.sig());
  EXPECT_EQ(picked,
            (std::vector<Bytes>{rich_new.sig(), mid_old.sig(), mid_new.sig()}));
}

TEST_F(DeployPoolTest, PruneDropsWhatCanNeverBeIncluded) {
  auto pool = Open();
  ASSERT_TRUE(pool->Add(Make(1, 0), 0, kNow).ok());
  ASSERT_TRUE(pool->Add(Make(2, 30), 0, kNow).ok());
  ASSERT_TRUE(pool->Add(Make(3, 30, kNow + 5), 0, kNow).ok());
  auto n = pool->PruneExpired(50, kNow + 6);  // 0 + 50 <= 50; 3 expired.
  ASSERT_TRUE(n.ok());
  std::vector<Bytes> pruned = *n;
  std::vector<Bytes> want{Make(1, 0).sig(), Make(3, 30, kNow + 5).sig()};
  std::sort(pruned.begin(), pruned.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(pruned, want);
  EXPECT_EQ(pool->size(), 1u);
  EXPECT_TRUE(pool->Contains(Make(2, 30).sig()));
  EXPECT_EQ(store_.KeyCount(0), 1u);
}

TEST_F(DeployPoolTest, ReopenBringsBackEveryAcknowledgedDeploy) {
  {
    auto pool = Open();
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(pool->Add(Make(i), 0, kNow).ok());
    ASSERT_TRUE(pool->Remove(std::vector<Bytes>{Make(2).sig()}).ok());
  }
  auto pool = Open();
  EXPECT_EQ(pool->size(), 4u);
  EXPECT_FALSE(pool->Contains(Make(2).sig()));
  EXPECT_EQ(pool->term_bytes(), 4 * Make(0).data().term.size());
  EXPECT_EQ(pool->Select(1, kNow, 10).front().data(), Make(0).data());
}

TEST_F(DeployPoolTest, OpenRefusesARecordThatDoesNotVerify) {
  {
    auto pool = Open();
    ASSERT_TRUE(pool->Add(Make(1), 0, kNow).ok());
  }
  // Tamper with the stored term: the signature no longer covers it.
  ::casper::DeployDataProto tampered = Make(1).ToProto();
  tampered.set_term("@0!(666)");
  rspace::WriteBatch batch;
  const std::string bytes = tampered.SerializeAsString();
  batch.Put(0, Make(1).sig(), AsBytes(bytes));
  ASSERT_TRUE(store_.Write(batch).ok());
  auto p = DeployPool::Open(&store_, 0);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("does not verify"));
}

}  // namespace
}  // namespace rnode::casper::pool

// Differential test: the indexed merger against the pairwise reference on
// random scopes, and independence from the order of the parents.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "casper/merge/merger.h"
#include "gtest/gtest.h"
#include "tests/sanitizer.h"
#include "tests/test_seed.h"
#include "tests/casper/merge/merge_test_util.h"
#include "tests/casper/merge/pairwise_reference.h"

namespace rnode::casper::merge {
namespace {

using testing::RandomScope;
using testing::ReferenceMerge;
using testing::ScopeShape;
using testing::TestHistory;
using testing::TestNumberCodec;

// Default number of random scopes; MERGE_DIFF_SCOPES changes it (the
// acceptance run uses 10000). Sized to stay well inside the unit budget;
// a tenth under a sanitizer, which runs each scope many times slower.
constexpr int kDefaultScopes = 10000;
constexpr int kSanitizerScopes = 1000;

int ScopeCount() {
  if (const char* env = std::getenv("MERGE_DIFF_SCOPES")) return std::atoi(env);
  return ::rnode::testing::kUnderSanitizer ? kSanitizerScopes : kDefaultScopes;
}

ScopeShape RandomShape(std::mt19937_64& rng) {
  ScopeShape s;
  s.channels = std::uniform_int_distribution<int>(2, 24)(rng);
  s.max_blocks = std::uniform_int_distribution<int>(1, 7)(rng);
  s.max_deploys = std::uniform_int_distribution<int>(1, 5)(rng);
  s.max_ops = std::uniform_int_distribution<int>(1, 5)(rng);
  s.number_channels = std::uniform_int_distribution<int>(0, 3)(rng);
  s.hot_channel = std::uniform_real_distribution<double>(0, 0.6)(rng);
  s.join_in_base = std::uniform_real_distribution<double>(0, 0.5)(rng);
  s.duplicate = std::uniform_real_distribution<double>(0, 0.15)(rng);
  s.number_op = std::uniform_real_distribution<double>(0, 0.4)(rng);
  if (std::uniform_int_distribution<int>(0, 19)(rng) == 0) {
    // Large scopes with a small pool: components above the exact bound.
    s.channels = std::uniform_int_distribution<int>(2, 6)(rng);
    s.max_blocks = std::uniform_int_distribution<int>(8, 14)(rng);
    s.max_deploys = std::uniform_int_distribution<int>(3, 6)(rng);
    s.hot_channel = 0.5;
  }
  return s;
}

struct Coverage {
  int scopes = 0, errors = 0, conflicts = 0, rejected = 0, base_join = 0;
  int greedy = 0, exact_multi = 0, multi_chain_branches = 0;
  int reasons[4] = {0, 0, 0, 0};
};

TEST(MergeDifferentialTest, IndexedMergerMatchesPairwiseReference) {
  const uint64_t seed = ::rnode::testing::TestSeed(20261130);
  const int count = ScopeCount();
  std::mt19937_64 rng(seed);
  TestNumberCodec codec;
  MergeOptions options;
  options.number_codec = &codec;
  // Reused across scopes, as a node reuses its context. `eager` runs every
  // parallel and background path even on these small scopes.
  MergeContext two_threads({.threads = 2});
  MergeContext eager({.threads = 2,
                      .parallel_grain = 1,
                      .background_min = 0,
                      .base_read_chunk = 1});
  Coverage cov;
  for (int n = 0; n < count; ++n) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " scope " +
                 std::to_string(n));
    TestHistory th;
    ScopeShape shape = RandomShape(rng);
    auto scope = RandomScope(*th.history, rng, shape);
    ASSERT_TRUE(scope.ok()) << scope.status();
    std::vector<std::shared_ptr<const BlockIndex>> indices;
    for (const auto& b : scope->blocks) {
      auto idx = BuildBlockIndex(b);
      ASSERT_TRUE(idx.ok()) << idx.status();
      indices.push_back(*idx);
    }
    auto got = Merge(*th.history, scope->base_root, indices, options);
    auto want =
        ReferenceMerge(*th.history, scope->base_root, scope->blocks, codec);
    ++cov.scopes;
    ASSERT_EQ(got.ok(), want.ok()) << got.status() << " vs " << want.status();
    if (!got.ok()) {
      EXPECT_EQ(got.status().code(), want.status().code());
      ++cov.errors;
      continue;
    }
    if (got->branches != want->branches) {
      for (size_t i = 0;
           i < std::max(got->branches.size(), want->branches.size()); ++i) {
        auto show = [](const std::vector<BranchInfo>& v, size_t i) {
          if (i >= v.size()) return std::string("-");
          return std::to_string(v[i].chains.size()) + " chains cost " +
                 std::to_string(v[i].cost) +
                 (v[i].rejected ? " rejected " : " kept ") +
                 RejectReasonName(v[i].reason);
        };
        std::printf("branch %zu: got %s | want %s\n", i,
                    show(got->branches, i).c_str(),
                    show(want->branches, i).c_str());
      }
      std::printf("components %zu exact %zu greedy %zu base-join %zu\n",
                  got->metrics.components, got->metrics.exact_components,
                  got->metrics.greedy_components,
                  got->base_join_branches.size());
    }
    ASSERT_EQ(got->branches, want->branches);
    ASSERT_EQ(ExpandConflictPairs(*got), want->conflicts);
    ASSERT_EQ(got->base_join_branches, want->base_join_branches);
    ASSERT_EQ(got->rejected, want->rejected);
    if (got->root != want->root) {
      for (const auto& b : scope->blocks) {
        for (const auto& d : b.deploys) {
          for (const auto& c : d.changes.channels) {
            auto x = testing::ReadState(*th.history, got->root, c.channel);
            auto y = testing::ReadState(*th.history, want->root, c.channel);
            auto bx = th.history->ReadLeaf(got->root, c.channel);
            auto by = th.history->ReadLeaf(want->root, c.channel);
            if (x.ok() && y.ok() && *bx != *by) {
              for (const auto& d : x->data)
                std::printf("got datum %s\n",
                            HexEncode(d.source).substr(0, 8).c_str());
              for (const auto& d : y->data)
                std::printf("want datum %s\n",
                            HexEncode(d.source).substr(0, 8).c_str());
              std::printf(
                  "channel differs: data %zu/%zu conts %zu/%zu joins %zu/%zu\n",
                  x->data.size(), y->data.size(), x->continuations.size(),
                  y->continuations.size(), x->joins.size(), y->joins.size());
            }
          }
        }
      }
    }
    ASSERT_EQ(got->root, want->root);

    std::vector<std::shared_ptr<const BlockIndex>> shuffled = indices;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    auto again = Merge(*th.history, scope->base_root, shuffled, options);
    ASSERT_TRUE(again.ok()) << again.status();
    ASSERT_EQ(again->root, got->root);
    ASSERT_EQ(again->rejected, got->rejected);
    ASSERT_EQ(again->branches, got->branches);
    ASSERT_EQ(again->conflicts, got->conflicts);

    for (MergeContext* context : {&two_threads, &eager}) {
      auto threaded =
          Merge(*th.history, scope->base_root, indices, options, *context);
      ASSERT_TRUE(threaded.ok()) << threaded.status();
      ASSERT_EQ(threaded->root, got->root);
      ASSERT_EQ(threaded->rejected, got->rejected);
      ASSERT_EQ(threaded->branches, got->branches);
    }

    cov.conflicts += !want->conflicts.empty();
    cov.rejected += !want->rejected.empty();
    cov.base_join += !want->base_join_branches.empty();
    cov.greedy += got->metrics.greedy_components > 0;
    for (const auto& b : got->branches) {
      cov.multi_chain_branches += b.chains.size() > 1;
      if (b.rejected) ++cov.reasons[static_cast<int>(b.reason)];
    }
  }
  std::printf(
      "scopes %d, errors %d, with conflicts %d, with rejections %d, with base "
      "joins %d, with greedy components %d, multi-chain branches %d, rejected "
      "branches by reason: conflict %d number %d duplicate %d unavailable %d\n",
      cov.scopes, cov.errors, cov.conflicts, cov.rejected, cov.base_join,
      cov.greedy, cov.multi_chain_branches, cov.reasons[0], cov.reasons[1],
      cov.reasons[2], cov.reasons[3]);
  // The generator must exercise every rule, or agreement proves little
  // (checked at the release default and above; smaller counts are for
  // replaying a failure and for the sanitizer presets, whose release runs
  // check coverage).
  if (count < kDefaultScopes) return;
  EXPECT_GT(cov.conflicts, count / 10);
  EXPECT_GT(cov.rejected, count / 20);
  EXPECT_GT(cov.base_join, 0);
  EXPECT_GT(cov.multi_chain_branches, 0);
  EXPECT_GT(cov.greedy, 0);
  for (int r = 0; r < 4; ++r) EXPECT_GT(cov.reasons[r], 0) << "reason " << r;
}

}  // namespace
}  // namespace rnode::casper::merge

// Blocks for the DAG store's tests: sealed, with distinct states, by the
// test keys (tests/casper/test_key.h).
#ifndef RNODE_TESTS_CASPER_DAG_TEST_BLOCKS_H_
#define RNODE_TESTS_CASPER_DAG_TEST_BLOCKS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "casper/block/block.h"
#include "gtest/gtest.h"
#include "tests/casper/test_key.h"

namespace rnode::casper::dag::blocks_for_tests {

inline Hash32 StateHash(int i) {
  Hash32 h{};
  h[0] = static_cast<uint8_t>(i);
  h[1] = static_cast<uint8_t>(i >> 8);
  h[31] = 0xaa;
  return h;
}

inline block::ProcessedDeploy Deploy(int i) {
  block::ProcessedDeploy d;
  d.data.term = "@0!(" + std::to_string(i) + ")";
  d.data.shard_id = "root";
  d.deployer = testing::MakeTestKey(9).pk;
  d.sig = Bytes{0x30, static_cast<uint8_t>(i), static_cast<uint8_t>(i >> 8)};
  return d;
}

// A sealed block by validator `seed` on `parents`, justifying `justified`.
inline block::Block MakeBlock(uint8_t seed, int32_t seq, int64_t number,
                              std::vector<Hash32> parents,
                              std::vector<block::Justification> justified = {},
                              std::vector<int> deploys = {}) {
  block::Block b;
  b.header.parents = std::move(parents);
  b.header.timestamp = 1'700'000'000'000 + number;
  b.body.state.pre_state = StateHash(number);
  b.body.state.post_state = StateHash(number + 1);
  b.body.state.block_number = number;
  b.body.state.bonds = {{testing::MakeTestKey(1).pk, 10},
                        {testing::MakeTestKey(2).pk, 20}};
  for (int d : deploys) b.body.deploys.push_back(Deploy(d));
  b.justifications = std::move(justified);
  b.seq_num = seq;
  b.shard_id = "root";
  EXPECT_TRUE(block::SignBlock(b, testing::MakeTestKey(seed).sk).ok());
  return b;
}

}  // namespace rnode::casper::dag::blocks_for_tests

#endif  // RNODE_TESTS_CASPER_DAG_TEST_BLOCKS_H_

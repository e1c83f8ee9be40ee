// Test helpers for the merger: an in-memory history, a number codec, and a
// generator of random but internally consistent scopes.
#ifndef RNODE_TESTS_CASPER_MERGE_MERGE_TEST_UTIL_H_
#define RNODE_TESTS_CASPER_MERGE_MERGE_TEST_UTIL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "casper/merge/block_index.h"
#include "casper/merge/number_channel.h"
#include "rspace/history/history.h"
#include "rspace/storage/kv_store.h"
#include "rspace/types.h"

namespace rnode::casper::merge::testing {

// Number channel state: one non-persistent datum whose value is the 8-byte
// little-endian two's complement number and whose source is
// Blake2b(channel ‖ value bytes).
class TestNumberCodec final : public NumberChannelCodec {
 public:
  absl::StatusOr<int64_t> Read(
      const rspace::ChannelState& state) const override;
  absl::StatusOr<rspace::ChannelState> Write(const Hash32& channel,
                                             int64_t value) const override;
};

struct TestHistory {
  TestHistory();
  rspace::InMemoryStore store;
  std::unique_ptr<rspace::History> history;
};

// Writes `states` (channel -> state, empty states skipped) on `base` and
// returns the new root.
absl::StatusOr<Hash32> CommitStates(
    rspace::History& history, const Hash32& base,
    const std::map<Hash32, rspace::ChannelState>& states);

// The state under `root` for `channel` (empty if absent).
absl::StatusOr<rspace::ChannelState> ReadState(rspace::History& history,
                                               const Hash32& root,
                                               const Hash32& channel);

rspace::TermPtr MakeTerm(uint64_t v);
Hash32 HashOf(uint64_t a, uint64_t b = 0, uint64_t c = 0);

struct ScopeShape {
  int channels = 12;  // Pool of ordinary channels (overlap control).
  int max_blocks = 5;
  int max_deploys = 4;        // Per block.
  int max_ops = 4;            // Per deploy.
  int number_channels = 2;    // Vaults.
  double hot_channel = 0.2;   // Probability an op uses the hot channel.
  double join_in_base = 0.3;  // Probability of a 2-channel join in the base.
  double duplicate = 0.05;    // Probability a deploy repeats an earlier one.
  double number_op = 0.25;    // Probability an op is a vault transfer.
};

struct Scope {
  Hash32 base_root{};
  std::vector<BlockInput> blocks;
};

// A random scope on a fresh base written to `history`. Every block runs on
// the base (forks of it); deploy changes match their events.
absl::StatusOr<Scope> RandomScope(rspace::History& history,
                                  std::mt19937_64& rng,
                                  const ScopeShape& shape);

}  // namespace rnode::casper::merge::testing

#endif  // RNODE_TESTS_CASPER_MERGE_MERGE_TEST_UTIL_H_

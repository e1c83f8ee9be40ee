// A helper of the DAG store's sources: the keys of the state column
// (docs/formats/dag.md), shared by the DAG store's sources.
#ifndef RNODE_CASPER_DAG_INTERNAL_STATE_KEYS_H_
#define RNODE_CASPER_DAG_INTERNAL_STATE_KEYS_H_

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "util/bytes.h"

namespace rnode::casper::dag::internal {

// The state column: the last finalized block, the block count, and the
// DAG's indexes (keys of a one-byte prefix and hashes, values empty unless
// said otherwise).
inline constexpr std::string_view kLastFinalizedKey = "last-finalized";
inline constexpr std::string_view kIndexVersionKey = "dag-index";
inline constexpr uint8_t kIndexVersion = 1;
// 8 bytes, little-endian.
inline constexpr std::string_view kBlockCountKey = "block-count";
// H, number (8 bytes, big-endian, sign bit flipped so that they sort), hash.
inline constexpr std::string_view kHeightPrefix = "H";
// C, parent hash, child hash.
inline constexpr std::string_view kChildPrefix = "C";
// F, hash of a finalized block.
inline constexpr std::string_view kFinalizedPrefix = "F";
// T, hash of a tip.
inline constexpr std::string_view kTipPrefix = "T";
// I, hash of a block stored invalid.
inline constexpr std::string_view kInvalidPrefix = "I";
// L, sender's key (65 bytes) -> hash of its latest message.
inline constexpr std::string_view kLatestPrefix = "L";
// The floor of an anchored DAG (8 bytes, little-endian); absent otherwise.
inline constexpr std::string_view kFloorKey = "floor";
// An anchored DAG's anchor (32 bytes) until the join verified it; absent
// otherwise.
inline constexpr std::string_view kUnverifiedAnchorKey = "unverified-anchor";

inline Bytes IndexKey(std::string_view prefix, const Hash32& hash) {
  Bytes key(prefix.begin(), prefix.end());
  key.insert(key.end(), hash.begin(), hash.end());
  return key;
}

inline Bytes HeightKey(int64_t number, const Hash32& hash) {
  Bytes key(kHeightPrefix.begin(), kHeightPrefix.end());
  const uint64_t u = static_cast<uint64_t>(number) ^ (uint64_t{1} << 63);
  for (int i = 7; i >= 0; --i)
    key.push_back(static_cast<uint8_t>(u >> (8 * i)));
  key.insert(key.end(), hash.begin(), hash.end());
  return key;
}

inline bool HasPrefix(ByteView key, ByteView prefix) {
  return key.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), key.begin());
}

// The 32 bytes ending `key` (at least 32 long).
inline Hash32 HashEndingKey(ByteView key) {
  Hash32 h;
  std::copy(key.end() - 32, key.end(), h.begin());
  return h;
}

// The block number of a height index key (HeightKey's).
inline int64_t HeightOfKey(ByteView key) {
  uint64_t u = 0;
  for (int i = 0; i < 8; ++i) u = (u << 8) | key[kHeightPrefix.size() + i];
  return static_cast<int64_t>(u ^ (uint64_t{1} << 63));
}

// An 8-byte little-endian count or number (two's complement).
inline Bytes CountValue(uint64_t count) {
  Bytes out(8);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(count >> (8 * i));
  return out;
}

}  // namespace rnode::casper::dag::internal

#endif  // RNODE_CASPER_DAG_INTERNAL_STATE_KEYS_H_

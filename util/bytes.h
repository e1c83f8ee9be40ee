// Byte strings, views over them, and hex encoding.
#ifndef RNODE_UTIL_BYTES_H_
#define RNODE_UTIL_BYTES_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace rnode {

using Bytes = std::vector<uint8_t>;
using ByteView = std::span<const uint8_t>;

// A 32-byte digest or key, compared and hashed by value.
using Hash32 = std::array<uint8_t, 32>;

// Hash functor for Hash32 keys in hash containers: the first 8 bytes of a
// Blake2b digest are already uniformly distributed.
struct Hash32Hasher {
  size_t operator()(const Hash32& h) const {
    size_t x;
    std::memcpy(&x, h.data(), sizeof(x));
    return x;
  }
};

inline ByteView AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
inline std::string_view AsChars(ByteView b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}
inline Bytes ToBytes(std::string_view s) {
  ByteView v = AsBytes(s);
  return Bytes(v.begin(), v.end());
}
inline std::string ToString(ByteView b) { return std::string(AsChars(b)); }

// Lower-case hex of `data`.
std::string HexEncode(ByteView data);

// Decodes hex (either case, even length, no prefix). Returns InvalidArgument
// naming the first offending position on any other input.
absl::StatusOr<Bytes> HexDecode(std::string_view hex);

// Decodes exactly N bytes of hex; InvalidArgument on wrong length or digits.
template <size_t N>
absl::StatusOr<std::array<uint8_t, N>> HexDecodeFixed(std::string_view hex) {
  absl::StatusOr<Bytes> bytes = HexDecode(hex);
  if (!bytes.ok()) return bytes.status();
  if (bytes->size() != N) {
    return absl::InvalidArgumentError("expected " + std::to_string(N) +
                                      " bytes of hex, got " +
                                      std::to_string(bytes->size()));
  }
  std::array<uint8_t, N> out;
  for (size_t i = 0; i < N; ++i) out[i] = (*bytes)[i];
  return out;
}

}  // namespace rnode

#endif  // RNODE_UTIL_BYTES_H_

// Base58 with the Bitcoin alphabet (used by REV addresses).
#ifndef RNODE_CRYPTO_BASE58_H_
#define RNODE_CRYPTO_BASE58_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "util/bytes.h"

namespace rnode::crypto {

// Each leading zero byte becomes a leading '1'.
std::string Base58Encode(ByteView data);

// InvalidArgument on a character outside the alphabet or input longer than
// kMaxBase58Chars (the codec is quadratic, so its input is bounded).
absl::StatusOr<Bytes> Base58Decode(std::string_view text);

// Whether every character of `text` is a base58 digit (any length).
bool IsBase58Text(std::string_view text);

// Longest text Base58Decode accepts: far above any address (~55 chars).
inline constexpr size_t kMaxBase58Chars = 1024;

}  // namespace rnode::crypto

#endif  // RNODE_CRYPTO_BASE58_H_

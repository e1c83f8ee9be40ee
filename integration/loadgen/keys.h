// The deployer keys of a load run, read from the keys file scripts/shard
// writes (<dir>/genesis/keys.json).
#ifndef RNODE_INTEGRATION_LOADGEN_KEYS_H_
#define RNODE_INTEGRATION_LOADGEN_KEYS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "crypto/secp256k1.h"

namespace rnode::loadgen {

// Largest keys file read. A key entry is about 300 bytes of JSON; 1 MiB is
// thousands of keys, far more than a shard's validators.
inline constexpr size_t kMaxKeysFileBytes = 1u << 20;

// Most keys used. Deploys are signed round-robin by the keys; more keys
// than this add nothing to a load test of a local shard.
inline constexpr size_t kMaxKeys = 1000;

// Parses {"keys": [{"private": HEX, ...}, ...], ...} (other fields are
// ignored); an entry may also be a bare HEX string. InvalidArgument naming
// the entry for text that is not that shape, a key that is not a valid
// secp256k1 private key, no keys, or more than kMaxKeys.
absl::StatusOr<std::vector<crypto::Secp256k1PrivateKey>> ParseKeys(
    std::string_view json_text);

// Reads `path` (NotFound if it cannot be opened, ResourceExhausted past
// kMaxKeysFileBytes) and parses it with ParseKeys.
absl::StatusOr<std::vector<crypto::Secp256k1PrivateKey>> LoadKeysFile(
    const std::string& path);

}  // namespace rnode::loadgen

#endif  // RNODE_INTEGRATION_LOADGEN_KEYS_H_

// The genesis input files: bonds.txt (validators and their stakes) and
// wallets.txt (initial REV balances). Formats: docs/formats/genesis_files.md.
#ifndef RNODE_CASPER_GENESIS_GENESIS_FILES_H_
#define RNODE_CASPER_GENESIS_GENESIS_FILES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "crypto/secp256k1.h"
#include "util/bytes.h"

namespace rnode::casper::genesis {

// Largest genesis file read. The public shards ship files of a few KiB; a
// wallets file of a million accounts is ~60 MiB, so 128 MiB bounds memory
// while leaving room for a large airdrop.
inline constexpr size_t kMaxGenesisFileBytes = 128u << 20;
// Most validators a bonds file may list. The public PoS contract keeps at
// most 100 active validators; 10,000 bonded ones is far beyond any shard.
inline constexpr size_t kMaxBonds = 10000;
// Most wallets a wallets file may list (see kMaxGenesisFileBytes).
inline constexpr size_t kMaxWallets = 1000000;

struct Bond {
  crypto::Secp256k1PublicKey validator{};
  int64_t stake = 0;  // > 0
  friend bool operator==(const Bond&, const Bond&) = default;
};

struct Wallet {
  std::string address;  // as written (a checked REV address)
  Hash32 key_hash{};    // what the address encodes
  int64_t balance = 0;  // >= 0, in dust; a Rholang Int, so <= INT64_MAX
  friend bool operator==(const Wallet&, const Wallet&) = default;
};

// Parses bonds.txt: one `<public key hex> <stake>` per line (the key is the
// 65-byte uncompressed secp256k1 point in hex, one space, a decimal stake).
// Blank lines are skipped; a trailing '\r' is tolerated; no trailing newline
// is needed. Result in file order. Fails with InvalidArgument
// "<file_name>:<line>: <reason>" for a malformed line, a key that is not a
// curve point, a stake <= 0 or above INT64_MAX, a validator listed twice
// (naming the first line), an empty file, or more than kMaxBonds lines
// (ResourceExhausted).
absl::StatusOr<std::vector<Bond>> ParseBonds(std::string_view text,
                                             std::string_view file_name);

// Parses wallets.txt: one `<REV address>,<balance>` per line (decimal
// balance in dust). Blank lines are skipped, '\r' tolerated. The address
// checksum is verified. Fails with InvalidArgument "<file_name>:<line>:
// <reason>" for a malformed line, a bad address, a balance above INT64_MAX,
// an address listed twice (naming the first line), or more than kMaxWallets
// lines (ResourceExhausted). An empty file is valid (no wallets).
absl::StatusOr<std::vector<Wallet>> ParseWallets(std::string_view text,
                                                 std::string_view file_name);

// Reads a whole file of at most kMaxGenesisFileBytes. NotFound if it does
// not exist, ResourceExhausted if larger, the OS error otherwise.
absl::StatusOr<std::string> ReadGenesisFile(const std::string& path);

}  // namespace rnode::casper::genesis

#endif  // RNODE_CASPER_GENESIS_GENESIS_FILES_H_

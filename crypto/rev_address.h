// REV ("vault") addresses: base58(prefix || key hash || checksum).
//
//   eth address  = keccak256(X || Y)[12..32]            (20 bytes)
//   key hash     = keccak256(eth address)                (32 bytes)
//   payload      = kRevAddressPrefix || key hash         (36 bytes)
//   checksum     = blake2b256(payload)[0..4]
//   address      = base58(payload || checksum)           (40 bytes, "1111...")
//
// This is the public network's derivation, so an address a wallet shows
// matches ours. Documented in docs/formats/rev_address.md.
#ifndef RNODE_CRYPTO_REV_ADDRESS_H_
#define RNODE_CRYPTO_REV_ADDRESS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "crypto/secp256k1.h"
#include "util/bytes.h"

namespace rnode::crypto {

// Coin id 000000 and version 00.
inline constexpr std::array<uint8_t, 4> kRevAddressPrefix = {0, 0, 0, 0};

using EthAddress = std::array<uint8_t, 20>;

// The Ethereum address of a secp256k1 public key.
EthAddress EthAddressOf(const Secp256k1PublicKey& key);

// Parses "0x"-prefixed or bare hex of 20 bytes. InvalidArgument otherwise.
absl::StatusOr<EthAddress> ParseEthAddress(std::string_view hex);

std::string RevAddressFromKeyHash(const Hash32& key_hash);
std::string RevAddressFromEthAddress(const EthAddress& eth);
std::string RevAddressFromPublicKey(const Secp256k1PublicKey& key);

// The REV address of a 65-byte public key whose point is not checked, only
// its length (the public node's rule for deployer ids and block senders);
// nullopt for another length.
std::optional<std::string> RevAddressFromKeyBytes(ByteView key);

// Why a text is not a REV address. The checks run in the public node's order
// (base58, length, checksum, prefix) so the first failure is the one it
// reports.
enum class RevAddressError : uint8_t {
  kNone,
  kInvalidBase58,    // a character outside the alphabet
  kInvalidLength,    // does not decode to 40 bytes
  kInvalidChecksum,  // the last 4 bytes are not blake2b256(payload)[0..4]
  kInvalidPrefix,    // the first 4 bytes are not kRevAddressPrefix
};
// The public node's message: "Invalid Base58 encoding", "Invalid address
// length", "Invalid checksum", "Invalid prefix" ("" for kNone).
std::string_view RevAddressErrorText(RevAddressError error);

// Checks `text`; on kNone stores its key hash in `*key_hash` if not null.
// Any length is accepted (a long text is classified without decoding).
RevAddressError CheckRevAddress(std::string_view text,
                                Hash32* key_hash = nullptr);

// The key hash of a REV address; InvalidArgument "REV address: <message of
// CheckRevAddress>" otherwise.
absl::StatusOr<Hash32> ParseRevAddress(std::string_view address);

}  // namespace rnode::crypto

#endif  // RNODE_CRYPTO_REV_ADDRESS_H_

// REV address derivation and parsing.
#include "crypto/rev_address.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "crypto/base58.h"
#include "crypto/hash.h"

namespace rnode::crypto {
namespace {

constexpr size_t kChecksumBytes = 4;
constexpr size_t kPayloadBytes = kRevAddressPrefix.size() + 32;
// base58 of 40 bytes is at most 55 characters; anything longer is not an
// address and is refused before decoding.
constexpr size_t kMaxAddressChars = 64;

}  // namespace

EthAddress EthAddressOf(const Secp256k1PublicKey& key) {
  Hash32 h = Keccak256(ByteView(key).subspan(1));
  EthAddress eth;
  std::memcpy(eth.data(), h.data() + 12, eth.size());
  return eth;
}

absl::StatusOr<EthAddress> ParseEthAddress(std::string_view hex) {
  if (hex.starts_with("0x") || hex.starts_with("0X")) {
    hex.remove_prefix(2);
  }
  return HexDecodeFixed<20>(hex);
}

std::string RevAddressFromKeyHash(const Hash32& key_hash) {
  uint8_t buf[kPayloadBytes + kChecksumBytes];
  std::memcpy(buf, kRevAddressPrefix.data(), kRevAddressPrefix.size());
  std::memcpy(buf + kRevAddressPrefix.size(), key_hash.data(), 32);
  Hash32 check = Blake2b256(ByteView(buf, kPayloadBytes));
  std::memcpy(buf + kPayloadBytes, check.data(), kChecksumBytes);
  return Base58Encode(ByteView(buf, sizeof buf));
}

std::string RevAddressFromEthAddress(const EthAddress& eth) {
  return RevAddressFromKeyHash(Keccak256(eth));
}

std::string RevAddressFromPublicKey(const Secp256k1PublicKey& key) {
  return RevAddressFromEthAddress(EthAddressOf(key));
}

absl::StatusOr<Hash32> ParseRevAddress(std::string_view address) {
  if (address.size() > kMaxAddressChars) {
    return absl::InvalidArgumentError(
        absl::StrCat("REV address is too long (", address.size(), " chars)"));
  }
  absl::StatusOr<Bytes> raw = Base58Decode(address);
  if (!raw.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("REV address is not base58: ", raw.status().message()));
  }
  if (raw->size() != kPayloadBytes + kChecksumBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "REV address must decode to 40 bytes, got ", raw->size()));
  }
  if (!std::equal(kRevAddressPrefix.begin(), kRevAddressPrefix.end(),
                  raw->begin())) {
    return absl::InvalidArgumentError("REV address has a wrong prefix");
  }
  Hash32 check = Blake2b256(ByteView(raw->data(), kPayloadBytes));
  if (std::memcmp(check.data(), raw->data() + kPayloadBytes, kChecksumBytes) !=
      0) {
    return absl::InvalidArgumentError("REV address checksum does not match");
  }
  Hash32 key_hash;
  std::memcpy(key_hash.data(), raw->data() + kRevAddressPrefix.size(), 32);
  return key_hash;
}

}  // namespace rnode::crypto

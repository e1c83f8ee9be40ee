// REV address derivation and parsing.
#include "crypto/rev_address.h"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "crypto/base58.h"
#include "crypto/hash.h"

namespace rnode::crypto {
namespace {

constexpr size_t kChecksumBytes = 4;
constexpr size_t kPayloadBytes = kRevAddressPrefix.size() + 32;
// keccak256(key[1..65])[12..32], the Ethereum address of a 65-byte key
// (the 0x04 tag dropped). REQUIRES: key.size() == 65.
EthAddress EthAddressOfKeyBytes(ByteView key) {
  Hash32 h = Keccak256(key.subspan(1));
  EthAddress eth;
  std::memcpy(eth.data(), h.data() + h.size() - eth.size(), eth.size());
  return eth;
}

}  // namespace

EthAddress EthAddressOf(const Secp256k1PublicKey& key) {
  return EthAddressOfKeyBytes(ByteView(key));
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

std::optional<std::string> RevAddressFromKeyBytes(ByteView key) {
  if (key.size() != std::tuple_size_v<Secp256k1PublicKey>) return std::nullopt;
  return RevAddressFromEthAddress(EthAddressOfKeyBytes(key));
}

std::string_view RevAddressErrorText(RevAddressError error) {
  switch (error) {
    case RevAddressError::kNone:
      return "";
    case RevAddressError::kInvalidBase58:
      return "Invalid Base58 encoding";
    case RevAddressError::kInvalidLength:
      return "Invalid address length";
    case RevAddressError::kInvalidChecksum:
      return "Invalid checksum";
    case RevAddressError::kInvalidPrefix:
      return "Invalid prefix";
  }
  return "";
}

RevAddressError CheckRevAddress(std::string_view text, Hash32* key_hash) {
  if (text.size() > kMaxBase58Chars) {
    // Beyond the decoder's bound; valid digits this many decode to far more
    // than 40 bytes, so only the verdict is computed.
    return IsBase58Text(text) ? RevAddressError::kInvalidLength
                              : RevAddressError::kInvalidBase58;
  }
  absl::StatusOr<Bytes> raw = Base58Decode(text);
  if (!raw.ok()) return RevAddressError::kInvalidBase58;
  if (raw->size() != kPayloadBytes + kChecksumBytes) {
    return RevAddressError::kInvalidLength;
  }
  Hash32 check = Blake2b256(ByteView(raw->data(), kPayloadBytes));
  if (std::memcmp(check.data(), raw->data() + kPayloadBytes, kChecksumBytes) !=
      0) {
    return RevAddressError::kInvalidChecksum;
  }
  if (!std::equal(kRevAddressPrefix.begin(), kRevAddressPrefix.end(),
                  raw->begin())) {
    return RevAddressError::kInvalidPrefix;
  }
  if (key_hash != nullptr) {
    std::memcpy(key_hash->data(), raw->data() + kRevAddressPrefix.size(), 32);
  }
  return RevAddressError::kNone;
}

absl::StatusOr<Hash32> ParseRevAddress(std::string_view address) {
  Hash32 key_hash{};
  RevAddressError error = CheckRevAddress(address, &key_hash);
  if (error != RevAddressError::kNone) {
    return absl::InvalidArgumentError(
        absl::StrCat("REV address: ", std::string(RevAddressErrorText(error))));
  }
  return key_hash;
}

}  // namespace rnode::crypto

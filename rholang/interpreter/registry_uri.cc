// Registry URIs: blake2b256 + CRC-14 + z-base-32 (see registry_uri.h).
#include "rholang/interpreter/registry_uri.h"

#include <array>

#include "crypto/hash.h"

namespace rnode::rholang::interp {
namespace {

constexpr uint16_t kCrc14Poly = 0x4805;  // includes the x^14 bit (0x4000)
constexpr uint16_t kCrc14TopBit = 0x4000;
constexpr char kZBase32Alphabet[] = "ybndrfg8ejkmcpqxot1uwisza345h769";
// 256 bits of hash + the 14 CRC bits.
constexpr size_t kRegistryUriBits = 270;
constexpr char kRegistryUriPrefix[] = "rho:id:";

}  // namespace

uint16_t RegistryCrc14(ByteView data) {
  uint16_t rem = 0;
  for (uint8_t b : data) {
    rem ^= static_cast<uint16_t>(b) << 6;
    for (int i = 0; i < 8; ++i) {
      rem = static_cast<uint16_t>(rem << 1);
      if (rem & kCrc14TopBit) rem ^= kCrc14Poly;
    }
  }
  return rem;
}

std::string ZBase32Encode(ByteView data, size_t bits) {
  std::string out;
  out.reserve((bits + 4) / 5);
  for (size_t pos = 0; pos < bits; pos += 5) {
    unsigned group = 0;
    for (size_t k = 0; k < 5; ++k) {
      size_t bit = pos + k;
      unsigned v = 0;
      if (bit < bits) v = (data[bit / 8] >> (7 - bit % 8)) & 1u;
      group = (group << 1) | v;
    }
    out.push_back(kZBase32Alphabet[group]);
  }
  return out;
}

std::string RegistryUriFromHash(const Hash32& hash) {
  std::array<uint8_t, 34> full{};
  for (size_t i = 0; i < hash.size(); ++i) full[i] = hash[i];
  uint16_t crc = RegistryCrc14(hash);
  full[32] = static_cast<uint8_t>(crc & 0xff);
  full[33] = static_cast<uint8_t>((crc & 0xff00) >> 6);
  return std::string(kRegistryUriPrefix) +
         ZBase32Encode(full, kRegistryUriBits);
}

std::string RegistryUriFromKey(ByteView key) {
  return RegistryUriFromHash(crypto::Blake2b256(key));
}

}  // namespace rnode::rholang::interp

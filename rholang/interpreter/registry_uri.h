// Registry URIs: `rho:id:` names derived from a key, as the public node's
// rho:registry:ops "buildUri" computes them (insertSigned derives a
// contract's URI from its public key this way).
//
//   hash   = blake2b256(key bytes)                       32 bytes
//   crc    = CRC-14 of hash (poly 0x4805, init 0, MSB first)
//   full   = hash || crc[7..0] || crc[13..8] << 2        34 bytes
//   uri    = "rho:id:" + zbase32(first 270 bits of full) 54 characters
#ifndef RNODE_RHOLANG_INTERPRETER_REGISTRY_URI_H_
#define RNODE_RHOLANG_INTERPRETER_REGISTRY_URI_H_

#include <cstdint>
#include <string>

#include "util/bytes.h"

namespace rnode::rholang::interp {

// The CRC-14 over `data`: polynomial x^14 + x^11 + x^10 + x^2 + 1 (0x4805
// with the x^14 term dropped), initial remainder 0, no reflection, no final
// XOR. The result is below 2^14.
uint16_t RegistryCrc14(ByteView data);

// z-base-32 (alphabet "ybndrfg8ejkmcpqxot1uwisza345h769") of the first `bits`
// bits of `data`, most significant bit of each byte first, 5 bits a
// character; a last partial group is padded with zero bits. REQUIRES:
// bits <= 8 * data.size().
std::string ZBase32Encode(ByteView data, size_t bits);

// "rho:id:" + the z-base-32 of blake2b256(key) and its CRC-14 (see the file
// comment). Any byte string is accepted.
std::string RegistryUriFromKey(ByteView key);

// The same from an already computed 32-byte hash.
std::string RegistryUriFromHash(const Hash32& hash);

}  // namespace rnode::rholang::interp

#endif  // RNODE_RHOLANG_INTERPRETER_REGISTRY_URI_H_

// Named limits shared across libraries. Each says why it has its value;
// library-local limits live beside their code.
#ifndef RNODE_UTIL_LIMITS_H_
#define RNODE_UTIL_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace rnode::limits {

// Largest gRPC message the node accepts or sends. The public node's default
// (grpc max-message-size) is 256 MiB for blocks in transit; API requests are
// far smaller, see kMaxDeployTermBytes.
inline constexpr size_t kMaxGrpcMessageBytes = 256u << 20;

// Largest Rholang source accepted in one deploy. Real contracts are a few
// tens of KiB (the biggest genesis contract is under 64 KiB); 1 MiB leaves
// room while keeping a malicious deploy from costing the parser real memory.
inline constexpr size_t kMaxDeployTermBytes = 1u << 20;

// Largest shard id accepted in a deploy. Shard names are short identifiers
// ("root"); 256 bytes is generous and keeps the signed preimage small.
inline constexpr size_t kMaxShardIdBytes = 256;

// Length of an uncompressed SEC1 secp256k1 public key: 0x04 || X || Y.
inline constexpr size_t kSecp256k1PublicKeyBytes = 65;

// A DER ECDSA signature over secp256k1 is at most 72 bytes (two 33-byte
// INTEGERs with headers); anything longer is malformed.
inline constexpr size_t kMaxDerSignatureBytes = 72;

// Lists in a block, bounded at decode so a peer's block cannot make the
// node allocate or look up without limit. Parents: the setting
// casper.max-number-of-parents may not exceed it (shards run with a few).
// Justifications and bonds: one per bonded validator; public shards bond
// tens. Extra bytes (header, body, block): unused by both implementations.
inline constexpr size_t kMaxBlockParents = 256;
inline constexpr size_t kMaxBlockValidators = 1024;
inline constexpr size_t kMaxBlockExtraBytes = 4096;

// Largest encoded block a node decodes at all: 128 deploys of the largest
// term (kMaxDeployTermBytes) with room for their logs. A shard's own limit,
// casper.max-block-bytes (32 MiB by default), may not exceed it.
inline constexpr size_t kMaxBlockBytes = 192u << 20;

}  // namespace rnode::limits

#endif  // RNODE_UTIL_LIMITS_H_

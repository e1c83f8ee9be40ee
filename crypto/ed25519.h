// Ed25519 signature verification (RFC 8032), over OpenSSL.
#ifndef RNODE_CRYPTO_ED25519_H_
#define RNODE_CRYPTO_ED25519_H_

#include "absl/status/statusor.h"
#include "util/bytes.h"

namespace rnode::crypto {

// True if `signature` (64 bytes) is a valid Ed25519 signature of `message`
// under `public_key` (32 bytes); false if it does not verify.
// InvalidArgument on wrong key or signature lengths. Thread-safe.
absl::StatusOr<bool> Ed25519Verify(ByteView message, ByteView signature,
                                   ByteView public_key);

// Signs `message` with a 32-byte Ed25519 seed (private key). Used by tests
// and tools; InvalidArgument on a wrong key length.
absl::StatusOr<Bytes> Ed25519Sign(ByteView message, ByteView private_key);

// The 32-byte public key of a 32-byte private key.
absl::StatusOr<Bytes> Ed25519PublicKeyOf(ByteView private_key);

}  // namespace rnode::crypto

#endif  // RNODE_CRYPTO_ED25519_H_

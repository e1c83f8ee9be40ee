// ECDSA over secp256k1: keys, signing (low-S, RFC 6979 nonces) and strict
// verification of DER and compact signatures. Backed by libsecp256k1.
//
// Thread safety: every function is safe to call from any thread.
#ifndef RNODE_CRYPTO_SECP256K1_H_
#define RNODE_CRYPTO_SECP256K1_H_

#include <array>
#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "util/bytes.h"

namespace rnode::crypto {

// A 32-byte private key; the caller owns and wipes it.
using Secp256k1PrivateKey = std::array<uint8_t, 32>;
// A 65-byte uncompressed SEC1 public key: 0x04 || X || Y.
using Secp256k1PublicKey = std::array<uint8_t, 65>;

// Parses a private key; InvalidArgument unless it is 32 bytes in [1, n-1].
absl::StatusOr<Secp256k1PrivateKey> ParseSecp256k1PrivateKey(ByteView key);

// A private key written as hex (as key files, the command line and the
// configuration hold it), surrounding ASCII whitespace ignored.
// InvalidArgument "not a hex private key", or ParseSecp256k1PrivateKey's.
absl::StatusOr<Secp256k1PrivateKey> ParseSecp256k1PrivateKeyHex(
    std::string_view hex);

// The uncompressed public key of `key` (which ParseSecp256k1PrivateKey
// accepted).
Secp256k1PublicKey Secp256k1PublicKeyOf(const Secp256k1PrivateKey& key);

// Checks that `key` is a 65-byte uncompressed point on the curve; compressed
// and hybrid encodings are refused. InvalidArgument otherwise.
absl::StatusOr<Secp256k1PublicKey> ParseSecp256k1PublicKey(ByteView key);

// The uncompressed form of a 33-byte compressed SEC1 key (02/03 || X).
// InvalidArgument for any other length or tag, or an X with no curve point.
// (Deploy keys are always uncompressed; Rholang's rho:crypto:secp256k1Verify
// accepts compressed keys too, as the public node does.)
absl::StatusOr<Secp256k1PublicKey> DecompressSecp256k1PublicKey(ByteView key);

// Signs a 32-byte digest (used as is, not hashed again). The signature is
// low-S, DER-encoded (70 to 72 bytes). InvalidArgument if the digest is not
// 32 bytes.
absl::StatusOr<Bytes> Secp256k1SignDer(ByteView digest,
                                       const Secp256k1PrivateKey& key);

// Same, as 64 bytes r || s (big-endian).
absl::StatusOr<Bytes> Secp256k1SignCompact(ByteView digest,
                                           const Secp256k1PrivateKey& key);

// Verifies a strict DER signature over a 32-byte digest with a 65-byte
// uncompressed public key. Returns true if it verifies, false if it is a
// well-formed signature that does not. Returns InvalidArgument for a digest
// that is not 32 bytes, a malformed key, a signature that is not strict DER,
// or one with a high S value (which a malleated copy would have).
absl::StatusOr<bool> Secp256k1VerifyDer(ByteView digest, ByteView der_sig,
                                        ByteView public_key);

// Same for a 64-byte compact (r || s) signature.
absl::StatusOr<bool> Secp256k1VerifyCompact(ByteView digest,
                                            ByteView compact_sig,
                                            ByteView public_key);

// Converts between strict DER and 64-byte compact encodings. InvalidArgument
// on a malformed input. Neither changes S.
absl::StatusOr<Bytes> Secp256k1DerToCompact(ByteView der_sig);
absl::StatusOr<Bytes> Secp256k1CompactToDer(ByteView compact_sig);

}  // namespace rnode::crypto

#endif  // RNODE_CRYPTO_SECP256K1_H_

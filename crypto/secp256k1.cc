// secp256k1 ECDSA over libsecp256k1.
#include "crypto/secp256k1.h"

#include <secp256k1.h>
#include <sys/random.h>

#include <cstring>

#include "absl/base/macros.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "util/limits.h"
#include "util/logging.h"

namespace rnode::crypto {
namespace {

// One context for the process, randomized once against side channels. All
// calls below take it as const, which libsecp256k1 documents as thread-safe.
const secp256k1_context* Context() {
  static const secp256k1_context* ctx = [] {
    secp256k1_context* c = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
    uint8_t seed[32];
    if (getrandom(seed, sizeof seed, 0) == sizeof seed) {
      // Blinding is a hardening measure; without it we go on unblinded.
      if (!secp256k1_context_randomize(c, seed)) {
        Log("crypto")->warn("secp256k1 context blinding failed");
      }
    }
    return c;
  }();
  return ctx;
}

absl::Status CheckDigest(ByteView digest) {
  if (digest.size() != 32) {
    return absl::InvalidArgumentError(
        absl::StrCat("digest must be 32 bytes, got ", digest.size()));
  }
  return absl::OkStatus();
}

absl::StatusOr<secp256k1_pubkey> ParsePoint(ByteView key) {
  if (key.size() != limits::kSecp256k1PublicKeyBytes || key[0] != 0x04) {
    return absl::InvalidArgumentError(absl::StrCat(
        "public key must be 65 bytes of uncompressed SEC1 (04||X||Y), got ",
        key.size(), " bytes"));
  }
  secp256k1_pubkey point;
  if (!secp256k1_ec_pubkey_parse(Context(), &point, key.data(), key.size())) {
    return absl::InvalidArgumentError("public key is not a point on secp256k1");
  }
  return point;
}

absl::StatusOr<secp256k1_ecdsa_signature> ParseDer(ByteView der) {
  if (der.empty() || der.size() > limits::kMaxDerSignatureBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DER signature must be 1 to ", limits::kMaxDerSignatureBytes,
        " bytes, got ", der.size()));
  }
  secp256k1_ecdsa_signature sig;
  if (!secp256k1_ecdsa_signature_parse_der(Context(), &sig, der.data(),
                                           der.size())) {
    return absl::InvalidArgumentError("signature is not valid DER");
  }
  // libsecp256k1's parser accepts some BER laxness; re-encoding and comparing
  // enforces strict DER so one signature has exactly one encoding.
  uint8_t again[72];
  size_t len = sizeof again;
  secp256k1_ecdsa_signature_serialize_der(Context(), again, &len, &sig);
  if (len != der.size() || std::memcmp(again, der.data(), len) != 0) {
    return absl::InvalidArgumentError("signature is not strict DER");
  }
  return sig;
}

absl::StatusOr<secp256k1_ecdsa_signature> ParseCompact(ByteView compact) {
  if (compact.size() != 64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "compact signature must be 64 bytes, got ", compact.size()));
  }
  secp256k1_ecdsa_signature sig;
  if (!secp256k1_ecdsa_signature_parse_compact(Context(), &sig,
                                               compact.data())) {
    return absl::InvalidArgumentError("compact signature overflows the order");
  }
  return sig;
}

absl::StatusOr<bool> Verify(ByteView digest,
                            const secp256k1_ecdsa_signature& sig,
                            ByteView public_key) {
  if (absl::Status s = CheckDigest(digest); !s.ok()) return s;
  absl::StatusOr<secp256k1_pubkey> point = ParsePoint(public_key);
  if (!point.ok()) return point.status();
  secp256k1_ecdsa_signature normalized;
  if (secp256k1_ecdsa_signature_normalize(Context(), &normalized, &sig)) {
    return absl::InvalidArgumentError("signature has a high S value");
  }
  return secp256k1_ecdsa_verify(Context(), &sig, digest.data(), &*point) == 1;
}

absl::StatusOr<secp256k1_ecdsa_signature> Sign(ByteView digest,
                                               const Secp256k1PrivateKey& key) {
  if (absl::Status s = CheckDigest(digest); !s.ok()) return s;
  secp256k1_ecdsa_signature sig;
  // Default nonce function: RFC 6979; the result is already low-S.
  if (!secp256k1_ecdsa_sign(Context(), &sig, digest.data(), key.data(), nullptr,
                            nullptr)) {
    return absl::InvalidArgumentError("private key is not valid");
  }
  return sig;
}

}  // namespace

absl::StatusOr<Secp256k1PrivateKey> ParseSecp256k1PrivateKey(ByteView key) {
  if (key.size() != 32) {
    return absl::InvalidArgumentError(
        absl::StrCat("private key must be 32 bytes, got ", key.size()));
  }
  Secp256k1PrivateKey out;
  std::memcpy(out.data(), key.data(), 32);
  if (!secp256k1_ec_seckey_verify(Context(), out.data())) {
    return absl::InvalidArgumentError("private key is out of range");
  }
  return out;
}

absl::StatusOr<Secp256k1PrivateKey> ParseSecp256k1PrivateKeyHex(
    std::string_view hex) {
  const absl::string_view trimmed =
      absl::StripAsciiWhitespace(absl::string_view(hex.data(), hex.size()));
  absl::StatusOr<Bytes> raw =
      HexDecode(std::string_view(trimmed.data(), trimmed.size()));
  if (!raw.ok()) return absl::InvalidArgumentError("not a hex private key");
  return ParseSecp256k1PrivateKey(*raw);
}

Secp256k1PublicKey Secp256k1PublicKeyOf(const Secp256k1PrivateKey& key) {
  secp256k1_pubkey point;
  int ok = secp256k1_ec_pubkey_create(Context(), &point, key.data());
  ABSL_ASSERT(ok == 1);
  (void)ok;
  Secp256k1PublicKey out;
  size_t len = out.size();
  secp256k1_ec_pubkey_serialize(Context(), out.data(), &len, &point,
                                SECP256K1_EC_UNCOMPRESSED);
  return out;
}

absl::StatusOr<Secp256k1PublicKey> ParseSecp256k1PublicKey(ByteView key) {
  absl::StatusOr<secp256k1_pubkey> point = ParsePoint(key);
  if (!point.ok()) return point.status();
  Secp256k1PublicKey out;
  std::memcpy(out.data(), key.data(), out.size());
  return out;
}

absl::StatusOr<Secp256k1PublicKey> DecompressSecp256k1PublicKey(ByteView key) {
  constexpr size_t kCompressedBytes = 33;
  if (key.size() != kCompressedBytes || (key[0] != 0x02 && key[0] != 0x03)) {
    return absl::InvalidArgumentError(
        absl::StrCat("compressed public key must be 33 bytes (02/03||X), got ",
                     key.size(), " bytes"));
  }
  secp256k1_pubkey point;
  if (!secp256k1_ec_pubkey_parse(Context(), &point, key.data(), key.size())) {
    return absl::InvalidArgumentError("public key is not a point on secp256k1");
  }
  Secp256k1PublicKey out;
  size_t len = out.size();
  secp256k1_ec_pubkey_serialize(Context(), out.data(), &len, &point,
                                SECP256K1_EC_UNCOMPRESSED);
  return out;
}

absl::StatusOr<Bytes> Secp256k1SignDer(ByteView digest,
                                       const Secp256k1PrivateKey& key) {
  absl::StatusOr<secp256k1_ecdsa_signature> sig = Sign(digest, key);
  if (!sig.ok()) return sig.status();
  Bytes out(72);
  size_t len = out.size();
  secp256k1_ecdsa_signature_serialize_der(Context(), out.data(), &len, &*sig);
  out.resize(len);
  return out;
}

absl::StatusOr<Bytes> Secp256k1SignCompact(ByteView digest,
                                           const Secp256k1PrivateKey& key) {
  absl::StatusOr<secp256k1_ecdsa_signature> sig = Sign(digest, key);
  if (!sig.ok()) return sig.status();
  Bytes out(64);
  secp256k1_ecdsa_signature_serialize_compact(Context(), out.data(), &*sig);
  return out;
}

absl::StatusOr<bool> Secp256k1VerifyDer(ByteView digest, ByteView der_sig,
                                        ByteView public_key) {
  absl::StatusOr<secp256k1_ecdsa_signature> sig = ParseDer(der_sig);
  if (!sig.ok()) return sig.status();
  return Verify(digest, *sig, public_key);
}

absl::StatusOr<bool> Secp256k1VerifyCompact(ByteView digest,
                                            ByteView compact_sig,
                                            ByteView public_key) {
  absl::StatusOr<secp256k1_ecdsa_signature> sig = ParseCompact(compact_sig);
  if (!sig.ok()) return sig.status();
  return Verify(digest, *sig, public_key);
}

absl::StatusOr<Bytes> Secp256k1DerToCompact(ByteView der_sig) {
  absl::StatusOr<secp256k1_ecdsa_signature> sig = ParseDer(der_sig);
  if (!sig.ok()) return sig.status();
  Bytes out(64);
  secp256k1_ecdsa_signature_serialize_compact(Context(), out.data(), &*sig);
  return out;
}

absl::StatusOr<Bytes> Secp256k1CompactToDer(ByteView compact_sig) {
  absl::StatusOr<secp256k1_ecdsa_signature> sig = ParseCompact(compact_sig);
  if (!sig.ok()) return sig.status();
  Bytes out(72);
  size_t len = out.size();
  secp256k1_ecdsa_signature_serialize_der(Context(), out.data(), &len, &*sig);
  out.resize(len);
  return out;
}

}  // namespace rnode::crypto

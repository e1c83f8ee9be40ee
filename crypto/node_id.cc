// Node id derivation; PEM parsing over OpenSSL.
#include "crypto/node_id.h"

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "crypto/hash.h"
#include "crypto/openssl_ptr.h"

namespace rnode::crypto {
namespace {

// Tries certificate, public key, then private key.
PkeyPtr ReadKey(std::string_view pem) {
  if (BioPtr bio = PemReader(pem)) {
    X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (cert) return PkeyPtr(X509_get_pubkey(cert.get()));
  }
  if (BioPtr bio = PemReader(pem)) {
    if (EVP_PKEY* k = PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr))
      return PkeyPtr(k);
  }
  if (BioPtr bio = PemReader(pem)) {
    if (EVP_PKEY* k =
            PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr))
      return PkeyPtr(k);
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<std::string> NodeIdFromP256Point(ByteView point) {
  if (point.size() == 65 && point[0] == 0x04) point = point.subspan(1);
  if (point.size() != 64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "P-256 point must be 64 bytes X||Y or 65 bytes 04||X||Y, got ",
        point.size()));
  }
  Hash32 h = Keccak256(point);
  return HexEncode(ByteView(h).subspan(12));
}

absl::StatusOr<std::string> NodeIdFromPem(std::string_view pem) {
  PkeyPtr key = ReadKey(pem);
  if (key == nullptr) {
    return absl::InvalidArgumentError(
        "PEM holds no readable certificate or key");
  }
  char group[64] = {0};
  size_t group_len = 0;
  if (EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_EC ||
      EVP_PKEY_get_utf8_string_param(key.get(), OSSL_PKEY_PARAM_GROUP_NAME,
                                     group, sizeof group, &group_len) != 1 ||
      std::string_view(group, group_len) != SN_X9_62_prime256v1) {
    return absl::InvalidArgumentError("key is not a P-256 (prime256v1) key");
  }
  uint8_t point[65];
  size_t len = 0;
  if (EVP_PKEY_get_octet_string_param(key.get(),
                                      OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, point,
                                      sizeof point, &len) != 1 ||
      len != 65) {
    return absl::InvalidArgumentError("could not read the uncompressed point");
  }
  return NodeIdFromP256Point(ByteView(point, len));
}

}  // namespace rnode::crypto

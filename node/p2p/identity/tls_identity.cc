// The node's TLS identity: its P-256 key, a self-signed certificate for it,
// and the node id both prove.
#include "node/p2p/identity/tls_identity.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "crypto/node_id.h"
#include "crypto/openssl_ptr.h"
#include "node/p2p/identity/key_file.h"
#include "node/p2p/peer.h"
#include "util/status_macros.h"

namespace rnode::node::p2p {
namespace {

using crypto::BioPtr;
using crypto::PemReader;
using crypto::PkeyPtr;
using crypto::X509Ptr;

// Validity of a new certificate. Peers do not check dates (there is no
// CA; the key is the identity), but tools that print the certificate do.
constexpr long kNotBeforeSeconds = -3600;
constexpr long kValidDays = 100L * 365;

// OpenSSL leaves errors on a thread-local queue; a failure here must not
// show up in an unrelated later call.
struct ClearOpenSslErrors {
  ~ClearOpenSslErrors() { ERR_clear_error(); }
};

// A password callback that refuses: an encrypted key is an error, never a
// prompt on the terminal.
int NoPassword(char*, int, int, void*) { return 0; }

absl::StatusOr<std::string> BioText(BIO* bio, std::string_view what) {
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  if (len <= 0 || data == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot encode ", std::string(what), " as PEM"));
  }
  return std::string(data, static_cast<size_t>(len));
}

PkeyPtr ReadPrivateKey(std::string_view pem) {
  BioPtr bio = PemReader(pem);
  if (bio == nullptr) return nullptr;
  return PkeyPtr(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassword, nullptr));
}

X509Ptr ReadCertificate(std::string_view pem) {
  BioPtr bio = PemReader(pem);
  if (bio == nullptr) return nullptr;
  return X509Ptr(PEM_read_bio_X509(bio.get(), nullptr, NoPassword, nullptr));
}

absl::StatusOr<Bytes> IdOfHex(absl::StatusOr<std::string> hex) {
  if (!hex.ok()) return absl::InvalidArgumentError(hex.status().message());
  absl::StatusOr<Bytes> id = HexDecode(*hex);
  if (!id.ok() || id->size() != kNodeIdBytes) {
    return absl::InternalError("node id derivation gave a malformed id");
  }
  return *std::move(id);
}

// The node id of an unencrypted P-256 private key in `key_pem`.
absl::StatusOr<Bytes> IdOfPrivateKey(std::string_view key_pem) {
  ClearOpenSslErrors clear;
  if (ReadPrivateKey(key_pem) == nullptr) {
    return absl::InvalidArgumentError("holds no unencrypted PEM private key");
  }
  return IdOfHex(crypto::NodeIdFromPem(key_pem));
}

absl::StatusOr<std::string> NewKeyPem() {
  ClearOpenSslErrors clear;
  PkeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (key == nullptr) return absl::InternalError("P-256 key generation failed");
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr ||
      PEM_write_bio_PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0,
                               nullptr, nullptr) != 1) {
    return absl::InternalError("cannot encode the node key as PEM");
  }
  return BioText(bio.get(), "the node key");
}

// Adds subject CN = `name` (also the issuer: self-signed) and a DNS
// subjectAltName `name` to `cert`.
absl::Status NameCertificate(X509* cert, const std::string& name) {
  X509_NAME* subject = X509_get_subject_name(cert);
  if (X509_NAME_add_entry_by_txt(
          subject, "CN", MBSTRING_ASC,
          reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1,
          0) != 1 ||
      X509_set_issuer_name(cert, subject) != 1) {
    return absl::InternalError("cannot name the certificate");
  }
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  const std::string san = absl::StrCat("DNS:", name);
  crypto::X509ExtensionPtr ext(
      X509V3_EXT_conf_nid(nullptr, &ctx, NID_subject_alt_name, san.c_str()));
  if (ext == nullptr || X509_add_ext(cert, ext.get(), -1) != 1) {
    return absl::InternalError("cannot add the certificate's subjectAltName");
  }
  return absl::OkStatus();
}

// A random positive 63-bit serial: certificates of one key made twice
// differ, as tools expect.
absl::Status SetSerial(X509* cert) {
  crypto::BignumPtr serial(BN_new());
  if (serial == nullptr ||
      BN_rand(serial.get(), 63, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert)) ==
          nullptr) {
    return absl::InternalError("cannot set the certificate's serial number");
  }
  return absl::OkStatus();
}

}  // namespace

std::string TlsIdentity::IdHex() const { return HexEncode(node_id); }

absl::StatusOr<Bytes> NodeIdOfCertificate(std::string_view certificate_pem) {
  ClearOpenSslErrors clear;
  X509Ptr cert = ReadCertificate(certificate_pem);
  if (cert == nullptr) {
    return absl::InvalidArgumentError("holds no readable PEM certificate");
  }
  return IdOfHex(crypto::NodeIdFromPem(certificate_pem));
}

absl::StatusOr<std::string> SelfSignedCertificate(std::string_view key_pem) {
  ASSIGN_OR_RETURN(Bytes id, IdOfPrivateKey(key_pem));
  ClearOpenSslErrors clear;
  PkeyPtr key = ReadPrivateKey(key_pem);
  X509Ptr cert(X509_new());
  if (key == nullptr || cert == nullptr) {
    return absl::InternalError("cannot start a certificate");
  }
  if (X509_set_version(cert.get(), X509_VERSION_3) != 1 ||
      X509_gmtime_adj(X509_getm_notBefore(cert.get()), kNotBeforeSeconds) ==
          nullptr ||
      X509_time_adj_ex(X509_getm_notAfter(cert.get()), kValidDays, 0,
                       nullptr) == nullptr ||
      X509_set_pubkey(cert.get(), key.get()) != 1) {
    return absl::InternalError("cannot fill the certificate");
  }
  RETURN_IF_ERROR(SetSerial(cert.get()));
  RETURN_IF_ERROR(NameCertificate(cert.get(), HexEncode(id)));
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) <= 0) {
    return absl::InternalError("cannot sign the certificate");
  }
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || PEM_write_bio_X509(bio.get(), cert.get()) != 1) {
    return absl::InternalError("cannot encode the certificate as PEM");
  }
  return BioText(bio.get(), "the certificate");
}

absl::StatusOr<TlsIdentity> TlsIdentityFromPem(std::string key_pem,
                                               std::string certificate_pem) {
  absl::StatusOr<Bytes> key_id = IdOfPrivateKey(key_pem);
  if (!key_id.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("key: ", key_id.status().message()));
  }
  absl::StatusOr<Bytes> cert_id = NodeIdOfCertificate(certificate_pem);
  if (!cert_id.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("certificate: ", cert_id.status().message()));
  }
  if (*cert_id != *key_id) {
    return absl::InvalidArgumentError(
        absl::StrCat("the certificate is for node ", HexEncode(*cert_id),
                     ", not for the key's node ", HexEncode(*key_id)));
  }
  TlsIdentity identity;
  identity.key_pem = std::move(key_pem);
  identity.certificate_pem = std::move(certificate_pem);
  identity.node_id = *std::move(key_id);
  return identity;
}

absl::StatusOr<TlsIdentity> NewTlsIdentity() {
  ASSIGN_OR_RETURN(std::string key, NewKeyPem());
  ASSIGN_OR_RETURN(std::string cert, SelfSignedCertificate(key));
  return TlsIdentityFromPem(std::move(key), std::move(cert));
}

absl::StatusOr<TlsIdentity> LoadOrCreateTlsIdentity(
    const std::string& key_path, const std::string& certificate_path,
    std::string* created_files) {
  if (created_files != nullptr) created_files->clear();
  absl::StatusOr<std::string> cert = ReadKeyFile(certificate_path);
  if (!cert.ok() && !absl::IsNotFound(cert.status())) return cert.status();
  bool key_created = false;
  absl::StatusOr<Bytes> id = LoadOrCreateNodeKey(key_path, &key_created);
  if (!id.ok()) return id.status();
  if (key_created && cert.ok()) {
    // The certificate was for a key that is gone: refuse rather than
    // replace what the operator may have placed on purpose.
    return absl::InvalidArgumentError(absl::StrCat(
        certificate_path, ": a certificate without its key (", key_path,
        " was missing); remove the certificate to start a new identity"));
  }
  ASSIGN_OR_RETURN(std::string key, ReadKeyFile(key_path));
  std::string created = key_created ? key_path : "";
  if (absl::IsNotFound(cert.status())) {
    ASSIGN_OR_RETURN(std::string fresh, SelfSignedCertificate(key));
    RETURN_IF_ERROR(WriteKeyFile(certificate_path, fresh));
    cert = std::move(fresh);
    created = created.empty() ? certificate_path
                              : absl::StrCat(created, ", ", certificate_path);
  }
  absl::StatusOr<TlsIdentity> identity =
      TlsIdentityFromPem(std::move(key), *std::move(cert));
  if (!identity.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(certificate_path, ": ", identity.status().message()));
  }
  if (created_files != nullptr) *created_files = created;
  return identity;
}

absl::StatusOr<Bytes> LoadOrCreateNodeKey(const std::string& path,
                                          bool* created) {
  if (created != nullptr) *created = false;
  absl::StatusOr<std::string> pem = ReadKeyFile(path);
  if (pem.ok()) {
    absl::StatusOr<Bytes> id = IdOfPrivateKey(*pem);
    if (!id.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": ", id.status().message()));
    }
    return id;
  }
  if (!absl::IsNotFound(pem.status())) return pem.status();
  ASSIGN_OR_RETURN(std::string fresh, NewKeyPem());
  // The id comes from what is written, so a later load gives the same.
  absl::StatusOr<Bytes> id = IdOfPrivateKey(fresh);
  if (!id.ok()) {
    return absl::InternalError(
        absl::StrCat("fresh node key unreadable: ", id.status().message()));
  }
  RETURN_IF_ERROR(WriteKeyFile(path, fresh));
  if (created != nullptr) *created = true;
  return id;
}

}  // namespace rnode::node::p2p

// Ed25519 over OpenSSL's EVP one-shot interface.
#include "crypto/ed25519.h"

#include <openssl/evp.h>

#include <memory>

#include "absl/strings/str_cat.h"

namespace rnode::crypto {
namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* p) const { EVP_MD_CTX_free(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

absl::Status CheckLength(ByteView v, size_t n, const char* what) {
  if (v.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("ed25519 ", what, " must be ", n, " bytes, got ", v.size()));
  }
  return absl::OkStatus();
}

absl::StatusOr<PkeyPtr> PrivateKey(ByteView private_key) {
  if (absl::Status s = CheckLength(private_key, 32, "private key"); !s.ok()) {
    return s;
  }
  PkeyPtr key(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr,
                                           private_key.data(), 32));
  if (key == nullptr) return absl::InternalError("OpenSSL rejected the key");
  return key;
}

}  // namespace

absl::StatusOr<bool> Ed25519Verify(ByteView message, ByteView signature,
                                   ByteView public_key) {
  if (absl::Status s = CheckLength(public_key, 32, "public key"); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckLength(signature, 64, "signature"); !s.ok()) {
    return s;
  }
  PkeyPtr key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                          public_key.data(), 32));
  if (key == nullptr) return false;  // Not a valid point: cannot verify.
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (ctx == nullptr ||
      EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) !=
          1) {
    return absl::InternalError("OpenSSL could not set up ed25519 verify");
  }
  return EVP_DigestVerify(ctx.get(), signature.data(), signature.size(),
                          message.data(), message.size()) == 1;
}

absl::StatusOr<Bytes> Ed25519Sign(ByteView message, ByteView private_key) {
  absl::StatusOr<PkeyPtr> key = PrivateKey(private_key);
  if (!key.ok()) return key.status();
  MdCtxPtr ctx(EVP_MD_CTX_new());
  Bytes sig(64);
  size_t len = sig.size();
  if (ctx == nullptr ||
      EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key->get()) !=
          1 ||
      EVP_DigestSign(ctx.get(), sig.data(), &len, message.data(),
                     message.size()) != 1) {
    return absl::InternalError("OpenSSL ed25519 signing failed");
  }
  return sig;
}

absl::StatusOr<Bytes> Ed25519PublicKeyOf(ByteView private_key) {
  absl::StatusOr<PkeyPtr> key = PrivateKey(private_key);
  if (!key.ok()) return key.status();
  Bytes pub(32);
  size_t len = pub.size();
  if (EVP_PKEY_get_raw_public_key(key->get(), pub.data(), &len) != 1) {
    return absl::InternalError("OpenSSL could not derive the public key");
  }
  return pub;
}

}  // namespace rnode::crypto

// Owning pointers for the OpenSSL objects the node makes (keys,
// certificates, the memory BIOs that read and write their PEM): each frees
// its object with the matching OpenSSL function.
#ifndef RNODE_CRYPTO_OPENSSL_PTR_H_
#define RNODE_CRYPTO_OPENSSL_PTR_H_

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string_view>

namespace rnode::crypto {

struct OpensslFree {
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
};

using BioPtr = std::unique_ptr<BIO, OpensslFree>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, OpensslFree>;
using X509Ptr = std::unique_ptr<X509, OpensslFree>;
using X509ExtensionPtr = std::unique_ptr<X509_EXTENSION, OpensslFree>;
using BignumPtr = std::unique_ptr<BIGNUM, OpensslFree>;

// A read-only memory BIO over `pem` (which must outlive it); null when
// OpenSSL cannot allocate one.
inline BioPtr PemReader(std::string_view pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

}  // namespace rnode::crypto

#endif  // RNODE_CRYPTO_OPENSSL_PTR_H_

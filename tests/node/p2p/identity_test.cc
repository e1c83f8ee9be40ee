// The node's TLS identity (node/p2p/identity/): certificates made for its
// key, node ids read from certificates, and the key and certificate files.
#include "node/p2p/identity/tls_identity.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "node/p2p/identity/key_file.h"
#include "node/p2p/peer.h"
#include "util/bytes.h"

namespace rnode::node::p2p {
namespace {

using ::testing::HasSubstr;

// A P-256 key made with `openssl genpkey` and the node id of its public
// point computed outside this code base with keccak-256, the public
// network's rule (the same vector as peer_test.cc's).
constexpr char kKnownKeyPem[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg2ngCs3NKnnmLzawC\n"
    "aPNhxSvOzF5rPmjv9Gxm6Oq/U6ihRANCAAR09MKyhtbHrEKi/j0Yly3/7HevX3I4\n"
    "ygpEE9evS4QkMg/iJdZjg3fhhcaD/LjrgF4JKXSsxTU5jp5HU2Z2SAwO\n"
    "-----END PRIVATE KEY-----\n";
constexpr char kKnownKeyId[] = "5cde5c6debd4e8a3a02841f6afd94aee554fd129";

struct X509Free {
  void operator()(X509* p) const { X509_free(p); }
};

std::unique_ptr<X509, X509Free> ParseCertificate(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  return std::unique_ptr<X509, X509Free>(
      PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

std::string CommonName(X509* cert) {
  char buf[256] = {0};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, buf,
                            sizeof buf);
  return buf;
}

std::string FirstDnsName(X509* cert) {
  auto* names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  std::string out;
  for (int i = 0; names != nullptr && i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names, i);
    if (n->type == GEN_DNS) {
      out.assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(n->d.dNSName)),
                 static_cast<size_t>(ASN1_STRING_length(n->d.dNSName)));
      break;
    }
  }
  GENERAL_NAMES_free(names);
  return out;
}

TEST(TlsIdentityTest, CertificateOfAKnownKeyProvesItsPublicNodeId) {
  absl::StatusOr<std::string> cert = SelfSignedCertificate(kKnownKeyPem);
  ASSERT_TRUE(cert.ok()) << cert.status();
  absl::StatusOr<Bytes> id = NodeIdOfCertificate(*cert);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(HexEncode(*id), kKnownKeyId);

  // Named as the public nodes name theirs: CN and DNS SAN = the id.
  std::unique_ptr<X509, X509Free> x509 = ParseCertificate(*cert);
  ASSERT_NE(x509, nullptr);
  EXPECT_EQ(CommonName(x509.get()), kKnownKeyId);
  EXPECT_EQ(FirstDnsName(x509.get()), kKnownKeyId);
  // Self-signed by the key.
  EXPECT_EQ(X509_verify(x509.get(), X509_get0_pubkey(x509.get())), 1);

  absl::StatusOr<TlsIdentity> identity = TlsIdentityFromPem(kKnownKeyPem, *cert);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ(identity->IdHex(), kKnownKeyId);
}

TEST(TlsIdentityTest, FreshIdentitiesDifferAndHoldTogether) {
  absl::StatusOr<TlsIdentity> a = NewTlsIdentity();
  absl::StatusOr<TlsIdentity> b = NewTlsIdentity();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE(a->node_id, b->node_id);
  EXPECT_EQ(a->node_id.size(), kNodeIdBytes);
  EXPECT_EQ(*NodeIdOfCertificate(a->certificate_pem), a->node_id);
}

TEST(TlsIdentityTest, CertificateOfAnotherKeyIsRefused) {
  absl::StatusOr<TlsIdentity> other = NewTlsIdentity();
  ASSERT_TRUE(other.ok()) << other.status();
  absl::StatusOr<TlsIdentity> mixed =
      TlsIdentityFromPem(kKnownKeyPem, other->certificate_pem);
  EXPECT_EQ(mixed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mixed.status().message(), HasSubstr(kKnownKeyId));
}

TEST(TlsIdentityTest, NamesInACertificateAreNotTheId) {
  // A certificate whose CN claims the known id but holds another key: the
  // id is the key's, whatever the names say.
  absl::StatusOr<TlsIdentity> other = NewTlsIdentity();
  ASSERT_TRUE(other.ok()) << other.status();
  std::unique_ptr<X509, X509Free> cert(X509_new());
  ASSERT_NE(cert, nullptr);
  std::unique_ptr<BIO, decltype(&BIO_free)> key_bio(
      BIO_new_mem_buf(other->key_pem.data(),
                      static_cast<int>(other->key_pem.size())),
      &BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr),
      &EVP_PKEY_free);
  ASSERT_NE(key, nullptr);
  X509_set_version(cert.get(), X509_VERSION_3);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(
      name, "CN", MBSTRING_ASC,
      reinterpret_cast<const unsigned char*>(kKnownKeyId), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  ASSERT_GT(X509_sign(cert.get(), key.get(), EVP_sha256()), 0);
  std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()),
                                                &BIO_free);
  ASSERT_EQ(PEM_write_bio_X509(out.get(), cert.get()), 1);
  char* data = nullptr;
  const long len = BIO_get_mem_data(out.get(), &data);
  const std::string pem(data, static_cast<size_t>(len));

  absl::StatusOr<Bytes> id = NodeIdOfCertificate(pem);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, other->node_id);
  EXPECT_NE(HexEncode(*id), kKnownKeyId);
}

TEST(TlsIdentityTest, UnreadableCertificatesAreInvalidArgument) {
  for (const std::string& text :
       {std::string(), std::string("garbage"), std::string(kKnownKeyPem),
        std::string("-----BEGIN CERTIFICATE-----\nAAAA\n-----END "
                    "CERTIFICATE-----\n")}) {
    EXPECT_EQ(NodeIdOfCertificate(text).status().code(),
              absl::StatusCode::kInvalidArgument)
        << text;
  }
  EXPECT_EQ(SelfSignedCertificate("garbage").status().code(),
            absl::StatusCode::kInvalidArgument);
}

class TlsIdentityFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rnode_tls_identity_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    key_ = (dir_ / "node.key.pem").string();
    cert_ = (dir_ / "node.certificate.pem").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
  }
  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  static unsigned Mode(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 0777) : 0;
  }

  std::filesystem::path dir_;
  std::string key_;
  std::string cert_;
};

TEST_F(TlsIdentityFilesTest, MadeOnceWithOwnerOnlyModesThenReloaded) {
  std::string created;
  absl::StatusOr<TlsIdentity> first =
      LoadOrCreateTlsIdentity(key_, cert_, &created);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(created, HasSubstr(key_));
  EXPECT_THAT(created, HasSubstr(cert_));
  EXPECT_EQ(Mode(key_), 0600u);
  EXPECT_EQ(Mode(cert_), 0600u);
  EXPECT_EQ(Read(cert_), first->certificate_pem);

  absl::StatusOr<TlsIdentity> again =
      LoadOrCreateTlsIdentity(key_, cert_, &created);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(created, "");
  EXPECT_EQ(again->node_id, first->node_id);
  EXPECT_EQ(again->certificate_pem, first->certificate_pem);
}

TEST_F(TlsIdentityFilesTest, AKeyWithoutCertificateGetsOneForItself) {
  Write(key_, kKnownKeyPem);
  std::string created;
  absl::StatusOr<TlsIdentity> identity =
      LoadOrCreateTlsIdentity(key_, cert_, &created);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ(created, cert_);
  EXPECT_EQ(identity->IdHex(), kKnownKeyId);
  EXPECT_EQ(*NodeIdOfCertificate(Read(cert_)), identity->node_id);
  EXPECT_EQ(Read(key_), kKnownKeyPem);  // the key is kept
}

TEST_F(TlsIdentityFilesTest, ACertificateWithoutItsKeyIsRefusedAndKept) {
  absl::StatusOr<TlsIdentity> other = NewTlsIdentity();
  ASSERT_TRUE(other.ok()) << other.status();
  Write(cert_, other->certificate_pem);
  absl::StatusOr<TlsIdentity> identity = LoadOrCreateTlsIdentity(key_, cert_);
  EXPECT_EQ(identity.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Read(cert_), other->certificate_pem);
}

TEST_F(TlsIdentityFilesTest, ACertificateForAnotherKeyIsRefused) {
  absl::StatusOr<TlsIdentity> other = NewTlsIdentity();
  ASSERT_TRUE(other.ok()) << other.status();
  Write(key_, kKnownKeyPem);
  Write(cert_, other->certificate_pem);
  absl::StatusOr<TlsIdentity> identity = LoadOrCreateTlsIdentity(key_, cert_);
  EXPECT_EQ(identity.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(identity.status().message(), HasSubstr(cert_));
  EXPECT_EQ(Read(cert_), other->certificate_pem);  // never replaced
}

TEST_F(TlsIdentityFilesTest, OversizedOrMissingFilesAreTold) {
  EXPECT_EQ(ReadKeyFile(key_).status().code(), absl::StatusCode::kNotFound);
  Write(key_, std::string(kMaxKeyFileBytes + 1, 'x'));
  EXPECT_EQ(ReadKeyFile(key_).status().code(),
            absl::StatusCode::kInvalidArgument);
  std::filesystem::create_directory(cert_);
  EXPECT_EQ(ReadKeyFile(cert_).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rnode::node::p2p

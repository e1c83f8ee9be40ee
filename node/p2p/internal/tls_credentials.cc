// Mutual TLS credentials, outbound pinning and inbound proven ids.
#include "node/p2p/internal/tls_credentials.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpc/grpc_security_constants.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_certificate_verifier.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "openssl/crypto.h"
#include "util/bounded_cache.h"

namespace rnode::node::p2p::internal {
namespace {

using grpc::experimental::ExternalCertificateVerifier;
using grpc::experimental::IdentityKeyCertPair;
using grpc::experimental::StaticDataCertificateProvider;
using grpc::experimental::TlsCustomVerificationCheckRequest;

// OpenSSL is kept until the process is gone, not cleaned up by its own
// atexit handler: gRPC's threads may still be completing a TLS handshake
// while the process exits (a subchannel's connection attempt outlives the
// channel that started it), and the handler frees the locks they take
// (found by TSan: a SEGV in RAND_priv_bytes_ex after a test's last line).
// It must be OpenSSL's first initialisation, hence at static
// initialisation; exit frees the memory anyway.
[[maybe_unused]] const bool kOpenSslKeptUntilExit =
    OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr) == 1;

// Distinct peer certificates whose ids are remembered. A peer presents
// one certificate for all its calls, so this covers a full peer table and
// some churn; an attacker cycling certificates only costs itself the
// derivation (~0.2 ms each).
constexpr size_t kCertificateIdCacheEntries = 1024;

BoundedCache<std::string, Bytes>& CertificateIds() {
  // Never destroyed: gRPC threads may still ask while the process exits.
  static auto* cache =
      new BoundedCache<std::string, Bytes>(kCertificateIdCacheEntries);
  return *cache;
}

absl::StatusOr<Bytes> IdOfPeerCertificate(const std::string& pem) {
  if (std::optional<Bytes> id = CertificateIds().Get(pem)) return *id;
  absl::StatusOr<Bytes> id = NodeIdOfCertificate(pem);
  if (!id.ok()) return id.status();
  return CertificateIds().Put(pem, *std::move(id));
}

std::shared_ptr<StaticDataCertificateProvider> ProviderOf(
    const TlsIdentity& identity) {
  return std::make_shared<StaticDataCertificateProvider>(
      std::vector<IdentityKeyCertPair>{
          {identity.key_pem, identity.certificate_pem}});
}

// The client's check of a server: the node id of the key in the server's
// certificate must be the pinned one (the TLS target name). Called by
// gRPC once per connection, on its own threads, concurrently: stateless.
class PinnedIdVerifier final : public ExternalCertificateVerifier {
 public:
  bool Verify(TlsCustomVerificationCheckRequest* request,
              std::function<void(grpc::Status)> /*callback*/,
              grpc::Status* sync_status) override {
    const std::string expected(request->target_name().data(),
                               request->target_name().size());
    const std::string pem(request->peer_cert().data(),
                          request->peer_cert().size());
    absl::StatusOr<Bytes> id = IdOfPeerCertificate(pem);
    if (!id.ok()) {
      *sync_status = grpc::Status(
          grpc::StatusCode::UNAUTHENTICATED,
          absl::StrCat("peer certificate: ", id.status().message()));
    } else if (HexEncode(*id) != expected) {
      *sync_status = grpc::Status(
          grpc::StatusCode::UNAUTHENTICATED,
          absl::StrCat("peer is node ", HexEncode(*id), ", not ", expected));
    } else {
      *sync_status = grpc::Status::OK;
    }
    return true;  // answered synchronously
  }

  void Cancel(TlsCustomVerificationCheckRequest* /*request*/) override {}
};

}  // namespace

std::shared_ptr<grpc::ServerCredentials> ServerCredentialsFor(
    const TlsIdentity& identity) {
  grpc::experimental::TlsServerCredentialsOptions options(
      ProviderOf(identity));
  options.watch_identity_key_cert_pairs();
  // No CA: the client's certificate is not checked against a root, but TLS
  // still requires it and proves the client holds its key. The id is read
  // from it per call (ProvenPeerId).
  options.set_cert_request_type(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_BUT_DONT_VERIFY);
  return grpc::experimental::TlsServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentialsFor(
    const TlsIdentity& identity) {
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(ProviderOf(identity));
  options.watch_identity_key_cert_pairs();
  // No roots: PinnedIdVerifier is the whole check of the server.
  options.set_verify_server_certs(false);
  options.set_check_call_host(false);
  options.set_certificate_verifier(
      ExternalCertificateVerifier::Create<PinnedIdVerifier>());
  return grpc::experimental::TlsCredentials(options);
}

void PinChannel(grpc::ChannelArguments* args, ByteView expected_id) {
  args->SetSslTargetNameOverride(HexEncode(expected_id));
}

absl::StatusOr<Bytes> ProvenPeerId(const grpc::ServerContext& ctx) {
  std::shared_ptr<const grpc::AuthContext> auth = ctx.auth_context();
  if (auth == nullptr) {
    return absl::UnauthenticatedError("the call carries no TLS identity");
  }
  std::vector<grpc::string_ref> certs =
      auth->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME);
  if (certs.empty()) {
    return absl::UnauthenticatedError("the call carries no peer certificate");
  }
  absl::StatusOr<Bytes> id = IdOfPeerCertificate(
      std::string(certs.front().data(), certs.front().size()));
  if (!id.ok()) {
    return absl::UnauthenticatedError(
        absl::StrCat("peer certificate: ", id.status().message()));
  }
  return id;
}

}  // namespace rnode::node::p2p::internal

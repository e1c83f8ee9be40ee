// Mutual TLS for the protocol and discovery ports (docs/security.md):
// gRPC credentials made from the node's TlsIdentity, the check that pins
// an outbound connection to the node id its peer was dialled for, and the
// node id an inbound caller's certificate proves.
//
// Both sides present their self-signed certificate; there is no CA. A
// client accepts a server only when the id derived from the key in the
// server's certificate is the id it dialled (PinnedChannelArguments); a
// server requires a client certificate (TLS proves the client holds its
// key) and reads the id from it per call (ProvenPeerId). Names in the
// certificates are never trusted.
#ifndef RNODE_NODE_P2P_INTERNAL_TLS_CREDENTIALS_H_
#define RNODE_NODE_P2P_INTERNAL_TLS_CREDENTIALS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "node/p2p/identity/tls_identity.h"
#include "util/bytes.h"

namespace rnode::node::p2p::internal {

// Server credentials presenting `identity` and requiring a client
// certificate.
std::shared_ptr<grpc::ServerCredentials> ServerCredentialsFor(
    const TlsIdentity& identity);

// Channel credentials presenting `identity` whose server check accepts
// only a certificate for the node id set by PinChannel.
std::shared_ptr<grpc::ChannelCredentials> ChannelCredentialsFor(
    const TlsIdentity& identity);

// Pins a channel (made with ChannelCredentialsFor) to `expected_id`: its
// TLS handshake fails unless the server's certificate holds that node's
// key. (The id travels as the TLS server name.)
void PinChannel(grpc::ChannelArguments* args, ByteView expected_id);

// The node id proven by the caller's certificate in `ctx`.
// Unauthenticated when the call carries no certificate (a plaintext
// server) or an unreadable one. Cached by certificate (bounded), since
// every call asks.
absl::StatusOr<Bytes> ProvenPeerId(const grpc::ServerContext& ctx);

}  // namespace rnode::node::p2p::internal

#endif  // RNODE_NODE_P2P_INTERNAL_TLS_CREDENTIALS_H_

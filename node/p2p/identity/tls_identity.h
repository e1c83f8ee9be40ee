// Who this node is on the peer-to-peer network (docs/security.md): a P-256
// key, a self-signed X.509 certificate for it, and the node id both prove.
//
// The node id is the public network's rule: the last 20 bytes of
// keccak-256 of the key's public point X || Y (crypto/node_id.h). The
// certificate names the id as its subject CN and DNS subjectAltName, as
// the public nodes' do, but a peer's id is always derived from the key in
// the certificate it presented, never read from those names (the peer
// chose them).
//
// Files: the key is PKCS#8 PEM (`tls.key-path`, default
// <data-dir>/node.key.pem), the certificate PEM (`tls.certificate-path`,
// default <data-dir>/node.certificate.pem); both are made on first start
// when absent, with mode 0600.
#ifndef RNODE_NODE_P2P_IDENTITY_TLS_IDENTITY_H_
#define RNODE_NODE_P2P_IDENTITY_TLS_IDENTITY_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "util/bytes.h"

namespace rnode::node::p2p {

struct TlsIdentity {
  std::string key_pem;          // PKCS#8, unencrypted, P-256
  std::string certificate_pem;  // self-signed, for key_pem's public key
  Bytes node_id;                // kNodeIdBytes, derived from the key

  // 40 lower-case hex characters.
  std::string IdHex() const;
};

// The node id of the P-256 key in `certificate_pem`. InvalidArgument when
// the PEM holds no readable certificate or its key is not P-256. The
// certificate's signature, names and dates are not looked at: the TLS
// handshake has already proven that the peer holds the key.
absl::StatusOr<Bytes> NodeIdOfCertificate(std::string_view certificate_pem);

// A self-signed certificate (X.509 v3, SHA-256, valid from an hour ago for
// 100 years, subject CN and DNS subjectAltName = the node id in hex) for
// the key in `key_pem`. InvalidArgument when `key_pem` holds no unencrypted
// P-256 private key.
absl::StatusOr<std::string> SelfSignedCertificate(std::string_view key_pem);

// An identity from PEM texts: InvalidArgument naming the problem when the
// key is not an unencrypted P-256 private key, the certificate is
// unreadable, or the certificate is for another key.
absl::StatusOr<TlsIdentity> TlsIdentityFromPem(std::string key_pem,
                                               std::string certificate_pem);

// A fresh identity in memory (a new key and its certificate).
absl::StatusOr<TlsIdentity> NewTlsIdentity();

// The identity kept at `key_path` and `certificate_path`. A missing key is
// made (and then its certificate); a missing certificate is made for the
// key; each new file is written with mode 0600 (WriteKeyFile) and named in
// `*created_files` when given. InvalidArgument when a file holds something
// else than expected, when the certificate is for another key, or when a
// certificate exists without its key (it would be replaced silently);
// Internal when a file cannot be read or written.
absl::StatusOr<TlsIdentity> LoadOrCreateTlsIdentity(
    const std::string& key_path, const std::string& certificate_path,
    std::string* created_files = nullptr);

// The node id of the P-256 key at `path` (PKCS#8 PEM); when no file is
// there, makes a fresh key and writes it (mode 0600) first and sets
// `*created`. InvalidArgument for a file that holds no P-256 key; Internal
// when it cannot be written. (The key without its certificate: tools.)
absl::StatusOr<Bytes> LoadOrCreateNodeKey(const std::string& path,
                                          bool* created = nullptr);

}  // namespace rnode::node::p2p

#endif  // RNODE_NODE_P2P_IDENTITY_TLS_IDENTITY_H_

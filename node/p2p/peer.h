// Peers of the peer-to-peer network (docs/p2p.md): who a node is (its node
// id, host and the two ports), the `rnode://` address operators write in
// `--bootstrap`, the wire form (`routing.Node`, and the same layout in
// discovery's `Node`), and the node's own P2P key.
//
// A node id is the public network's: the last 20 bytes of
// keccak256(X || Y) of the node's P-256 key (crypto/node_id.h); the key and
// its certificate are node/p2p/identity/tls_identity.h.
#ifndef RNODE_NODE_P2P_PEER_H_
#define RNODE_NODE_P2P_PEER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "kademlia.pb.h"
#include "routing.pb.h"
#include "util/bytes.h"

namespace rnode::node::p2p {

inline constexpr size_t kNodeIdBytes = 20;
// Longest host name accepted from the wire or an address (DNS limit).
inline constexpr size_t kMaxHostBytes = 253;

struct PeerNode {
  Bytes id;  // kNodeIdBytes
  std::string host;
  uint32_t tcp_port = 0;  // protocol port (40400)
  uint32_t udp_port = 0;  // discovery port (40404); the name is the wire's

  // 40 lower-case hex characters.
  std::string IdHex() const;
  // "host:tcp_port", what a gRPC channel to the protocol port dials (an
  // IPv6 literal host is put in brackets).
  std::string ProtocolTarget() const;
  // "host:udp_port", what a gRPC channel to the discovery port dials.
  std::string DiscoveryTarget() const;
  bool operator==(const PeerNode&) const = default;
};

// "host:port", what a gRPC channel dials or a server listens on: an IPv6
// literal host given without brackets is put in them.
std::string HostPort(const std::string& host, uint32_t port);

// The IP address in a gRPC peer string ("ipv4:1.2.3.4:5" -> "1.2.3.4",
// "ipv6:[::1]:5" -> "::1"); empty for any other form.
std::string HostOfGrpcPeer(std::string_view peer);

// "rnode://<40 hex>@<host>?protocol=<port>&discovery=<port>".
std::string FormatPeerAddress(const PeerNode& peer);
// The inverse. InvalidArgument naming what is wrong (scheme, id length or
// digits, empty or overlong host, a missing or out-of-range port, unknown
// query keys).
absl::StatusOr<PeerNode> ParsePeerAddress(std::string_view address);

void PeerToProto(const PeerNode& peer, ::routing::Node* out);
void PeerToProto(const PeerNode& peer,
                 ::coop::rchain::comm::discovery::Node* out);
// InvalidArgument unless the id has kNodeIdBytes bytes, the host is
// non-empty, at most kMaxHostBytes and printable ASCII without spaces, and
// both ports are in 1..65535.
absl::StatusOr<PeerNode> PeerFromProto(const ::routing::Node& node);
absl::StatusOr<PeerNode> PeerFromProto(
    const ::coop::rchain::comm::discovery::Node& node);

}  // namespace rnode::node::p2p

#endif  // RNODE_NODE_P2P_PEER_H_

// Peer discovery (docs/p2p.md "Discovery"): the public Kademlia service
// (`KademliaRPCService`: SendPing, SendLookup) on the discovery port, over
// mutual TLS with the node's identity (as the protocol port:
// docs/security.md), over a flat peer table. A shard has tens of nodes, so
// the table keeps every peer it hears of (up to a bound) and a lookup
// answers the k closest by XOR distance; a node learns the shard by
// looking up its own id at the bootstrap and then at what that returns.
#ifndef RNODE_NODE_P2P_DISCOVERY_H_
#define RNODE_NODE_P2P_DISCOVERY_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "node/p2p/identity/tls_identity.h"
#include "node/p2p/peer.h"
#include "util/bytes.h"
#include "util/mutex.h"

namespace rnode::node::p2p {

// Peers a lookup answers at most (Kademlia's k).
inline constexpr size_t kLookupPeers = 20;

// Thread-safe table of known peers, keyed by node id; never holds `self`.
class PeerTable {
 public:
  // `max_peers`: beyond it new peers are ignored (Upsert returns false)
  // until some are removed.
  PeerTable(Bytes self_id, size_t max_peers);

  // Adds the peer or refreshes its address. False when it is `self`, or
  // new and the table is full.
  bool Upsert(const PeerNode& peer);
  void Remove(ByteView id);
  std::optional<PeerNode> Find(ByteView id) const;
  // Up to `k` peers ordered by XOR distance of their id to `id`, nearest
  // first (ties by id).
  std::vector<PeerNode> Closest(ByteView id, size_t k) const;
  std::vector<PeerNode> All() const;
  size_t size() const;

 private:
  const Bytes self_id_;
  const size_t max_peers_;
  mutable Mutex mu_;
  std::vector<PeerNode> peers_ ABSL_GUARDED_BY(mu_);
};

struct DiscoveryOptions {
  PeerNode self;
  std::string network_id;
  // Address the server binds; its port is self.udp_port (0 picks a free
  // one, then port() tells which).
  std::string listen_host = "127.0.0.1";
  // Off: peers whose host is loopback or a private range are not added.
  bool allow_private_addresses = true;
  // Requests handled at once; more are answered RESOURCE_EXHAUSTED.
  int max_in_flight = 16;
  // Mutual TLS with this identity (self.id must be its node id); a request
  // whose sender is not the node the caller's certificate proves is
  // refused PERMISSION_DENIED and adds nothing. Null: plaintext and the
  // sender is believed (in-process tests only; the node always sets it).
  std::shared_ptr<const TlsIdentity> tls;
};

// The discovery server. Each handled Ping or Lookup from the right network
// also adds its sender to the table; a request naming another network is
// answered PERMISSION_DENIED and adds nothing; a malformed sender
// INVALID_ARGUMENT.
class DiscoveryServer {
 public:
  // `table` is not owned and must outlive the server.
  static absl::StatusOr<std::unique_ptr<DiscoveryServer>> Start(
      const DiscoveryOptions& options, PeerTable* table);
  ~DiscoveryServer();  // Stop()
  void Stop();
  int port() const;

 private:
  struct Impl;
  explicit DiscoveryServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Client calls to a peer's discovery port, each with `timeout`. With
// `tls` (this node's identity), the connection is mutual TLS pinned to
// `to.id`: a server that is not that node fails the handshake
// (Unavailable); null: plaintext (tests only).
// Unavailable / DeadlineExceeded when the peer does not answer;
// PermissionDenied when it answers for another network.
absl::Status Ping(const PeerNode& to, const PeerNode& self,
                  const std::string& network_id,
                  std::chrono::milliseconds timeout,
                  const TlsIdentity* tls = nullptr);
// The peers `to` knows nearest to `id` (malformed entries are skipped; at
// most kLookupPeers are kept).
absl::StatusOr<std::vector<PeerNode>> Lookup(const PeerNode& to, ByteView id,
                                             const PeerNode& self,
                                             const std::string& network_id,
                                             std::chrono::milliseconds timeout,
                                             const TlsIdentity* tls = nullptr);

}  // namespace rnode::node::p2p

#endif  // RNODE_NODE_P2P_DISCOVERY_H_

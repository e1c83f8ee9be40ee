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
#include <cstdint>
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

// How much a table entry's address is worth (docs/security.md).
enum class PeerGrade : uint8_t {
  // Heard of: from a lookup answer, a request's sender, a transport link.
  // Anyone can name any id at any address; nothing was checked.
  kHeard,
  // Reached: this node called that id at that address, the TLS handshake
  // pinned to the id succeeded and the peer answered.
  kProven,
};

// How many calls in a row a proven peer may fail before it is only heard
// of again (one more failure then forgets it).
inline constexpr int kProvenPeerFailures = 3;

// Thread-safe table of known peers, keyed by node id; never holds `self`.
// Under Sybil pressure (ids cost nothing; an attacker can announce any
// number) heard-of peers hold at most half the table, the oldest heard of
// giving way to a newer one, while a proven peer may take a heard-of one's
// place in a full table; and lookups are answered from proven peers only,
// so a node passes on no address it has not reached itself.
class PeerTable {
 public:
  // `max_peers` >= 1: entries at most; at most max(1, max_peers / 2) of
  // them heard of.
  PeerTable(Bytes self_id, size_t max_peers);

  // Adds `peer` with `grade`, or refreshes a known id: a proven address
  // replaces any; a heard-of address replaces only a heard-of one (a
  // proven peer's address is not moved by hearsay). A new heard-of peer
  // replaces the oldest heard-of one when those fill their half; a new
  // proven one replaces the oldest heard-of one in a full table. False
  // when it is `self`, or new with no room.
  bool Upsert(const PeerNode& peer, PeerGrade grade = PeerGrade::kHeard);
  // A call to `id` failed: a heard-of peer is forgotten; a proven one
  // after kProvenPeerFailures in a row is heard-of again.
  void Failed(ByteView id);
  void Remove(ByteView id);
  std::optional<PeerNode> Find(ByteView id) const;
  // The grade of `id`; nullopt when unknown.
  std::optional<PeerGrade> GradeOf(ByteView id) const;
  // Up to `k` proven peers ordered by XOR distance of their id to `id`,
  // nearest first (ties by id).
  std::vector<PeerNode> Closest(ByteView id, size_t k) const;
  // Every peer, heard of or proven, in the order they were added.
  std::vector<PeerNode> All() const;
  size_t size() const;
  // Heard-of entries.
  size_t heard() const;

 private:
  struct Entry {
    PeerNode peer;
    PeerGrade grade = PeerGrade::kHeard;
    int failures = 0;
    uint64_t heard_at = 0;  // Upsert order: the oldest heard-of goes first
  };
  // The index of the oldest heard-of entry; entries_.size() if none.
  size_t OldestHeardLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Bytes self_id_;
  const size_t max_peers_;
  const size_t max_heard_;
  mutable Mutex mu_;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
  uint64_t next_heard_at_ ABSL_GUARDED_BY(mu_) = 0;
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
  // refused PERMISSION_DENIED and adds nothing. Required (Start refuses
  // null: there is no plaintext mode).
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

// Client calls to a peer's discovery port, each with `timeout`, over
// mutual TLS as `tls` (this node's identity) pinned to `to.id`: a server
// that is not that node fails the handshake (Unavailable).
// Unavailable / DeadlineExceeded when the peer does not answer;
// PermissionDenied when it answers for another network.
absl::Status Ping(const PeerNode& to, const PeerNode& self,
                  const std::string& network_id,
                  std::chrono::milliseconds timeout,
                  const TlsIdentity& tls);
// The peers `to` knows nearest to `id` (malformed entries are skipped; at
// most kLookupPeers are kept).
absl::StatusOr<std::vector<PeerNode>> Lookup(const PeerNode& to, ByteView id,
                                             const PeerNode& self,
                                             const std::string& network_id,
                                             std::chrono::milliseconds timeout,
                                             const TlsIdentity& tls);

}  // namespace rnode::node::p2p

#endif  // RNODE_NODE_P2P_DISCOVERY_H_

// The peer-to-peer transport (docs/p2p.md): the public `routing`
// service (`TransportLayer.Send` for small packets, `.Stream` for chunked
// large ones) served on the protocol port, one outbound link per peer, and
// the connection life cycle (handshake, heartbeat, eviction after failed
// heartbeats, reconnection with back-off).
//
// Bounded everywhere (docs/p2p.md "Budgets"): every queue has a bound and
// a full queue answers "busy" (inbound: an InternalServerError the sender
// sees; outbound: ResourceExhausted to the caller), each counted in the
// metrics; nothing is dropped silently. A stream's byte permit is taken
// before the stream is built or read; small packets have their own queue
// and thread, so they never wait behind a block transfer.
//
// Threads: a gRPC server pool (bounded), two dispatcher threads that call
// the PacketHandler (one for small packets, one for streamed ones), and
// two sender threads per peer (small packets with the heartbeat, streams).
// All methods are thread-safe.
#ifndef RNODE_NODE_P2P_TRANSPORT_H_
#define RNODE_NODE_P2P_TRANSPORT_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "crypto/secp256k1.h"
#include "node/metrics/metrics.h"
#include "node/p2p/chunker.h"
#include "node/p2p/identity/tls_identity.h"
#include "node/p2p/peer.h"
#include "util/bytes.h"

namespace rnode::node::p2p {

struct TransportOptions {
  // This node: its id, the host peers reach it at, its protocol port
  // (0: pick a free one, then port() tells which) and discovery port.
  PeerNode self;
  // Who this node proves to be (docs/security.md): the protocol port
  // speaks mutual TLS with it, every outbound connection is pinned to the
  // id it dials, and an inbound header whose sender is not the node the
  // caller's certificate proves is refused (PERMISSION_DENIED, counted in
  // `impersonations`). Required (Start refuses null: there is no
  // plaintext mode); self.id must be its node id.
  std::shared_ptr<const TlsIdentity> tls;
  // Validator identity (docs/security.md). When set, called (on the
  // sender threads, about once a minute) for this node's validator
  // statement (node/p2p/identity/validator_statement.h), which every
  // message it sends carries. A validator sets it; other nodes leave it
  // empty.
  std::function<Bytes()> validator_statement;
  // The shard a peer's statement must name (with network_id).
  std::string shard_id;
  // The peer table under Sybil pressure (docs/security.md): node ids cost
  // nothing, so peers that are not proven bonded validators may hold at
  // most max_peers - reserved_validator_slots links; a peer proven (by its
  // statement) to run a validator for which is_bonded_validator says yes
  // may use any slot, and at a full table takes the one of the least
  // recently heard other peer that is not persistent. Unset predicate: no
  // peer is a validator here (all share the unreserved slots). 0 (the
  // default): no reservation; the node reserves half of max_peers.
  size_t reserved_validator_slots = 0;
  std::function<bool(const crypto::Secp256k1PublicKey&)> is_bonded_validator;
  // How many statements of peers without a slot (at full unreserved slots)
  // are verified a second at most, overall (as many at once): each is a
  // signature check a fresh identity could otherwise cause at will.
  double slotless_statement_checks_per_second = 20;
  std::string network_id;
  std::string listen_host = "127.0.0.1";

  // Wire limits. A unary Send above max_unary_bytes is refused
  // (RESOURCE_EXHAUSTED; by gRPC before it is read when it is also above
  // chunk_bytes); a stream announcing more than max_stream_bytes is
  // refused at its header.
  size_t max_unary_bytes = 256 << 10;
  size_t chunk_bytes = 1 << 20;
  size_t max_stream_bytes = 200 << 20;
  size_t max_peers = 32;

  // Inbound budgets: small packets waiting for the dispatcher per peer;
  // bytes of streams being read or waiting, per peer and for all.
  size_t inbound_packets_per_peer = 512;
  size_t inbound_stream_bytes_per_peer = 64 << 20;
  size_t inbound_stream_bytes = 256 << 20;
  // Outbound budgets: small packets queued per peer; bytes of streams
  // queued or in flight, per peer and for all.
  size_t outbound_packets_per_peer = 1024;
  size_t outbound_stream_bytes_per_peer = 64 << 20;
  size_t outbound_stream_bytes = 256 << 20;

  std::chrono::milliseconds network_timeout{5000};
  std::chrono::milliseconds heartbeat_interval{2000};
  // Consecutive failed sends or heartbeats that disconnect a peer.
  int heartbeat_failures = 3;
  // Reconnection back-off: doubles from min to max after each failure.
  std::chrono::milliseconds reconnect_min{500};
  std::chrono::milliseconds reconnect_max{15000};
  // A disconnected peer that is not persistent is forgotten after this
  // many failed reconnections.
  int forget_after_failures = 20;
  // How long a peer that sent malformed or invalid data is refused. The
  // ban holds its proven id and the host its calls came from (the
  // connection's IP address, not the one it advertises): a fresh id from
  // that host is refused too, and no link is made to it. Loopback hosts
  // are exempt unless ban_loopback_hosts (a local shard's nodes share
  // 127.0.0.1; the ban's tests set it).
  std::chrono::milliseconds ban{60000};
  bool ban_loopback_hosts = false;
  // gRPC server threads (streams being read hold one each).
  int max_server_threads = 32;
};

// Receives packets. OnPacket is called on one of two dispatcher threads:
// small packets on one (in arrival order per peer), streamed packets on
// the other; a handler that blocks holds back only its own kind, and
// while it blocks the transport answers that kind "busy" once its budget
// is spent (back-pressure to the sender).
class PacketHandler {
 public:
  virtual ~PacketHandler() = default;
  virtual void OnPacket(const PeerNode& from, const std::string& type_id,
                        std::string content, bool streamed) = 0;
  // Called for every small packet on the server thread that received it,
  // before the sender is answered. nullopt (the default): the packet is
  // queued for OnPacket and the sender hears it was taken. A status: the
  // packet was handled here and OnPacket is not called; OK answers the
  // sender "taken", an error "declined" with the error's message
  // (Transport::SendNow returns FailedPrecondition). For packets whose
  // sender must know the receiver holds them, not merely queued them.
  // Runs concurrently on several server threads: fast and thread-safe.
  virtual std::optional<absl::Status> TakeNow(const PeerNode& from,
                                              const std::string& type_id,
                                              const std::string& content) {
    return std::nullopt;
  }
  // A peer completed a handshake (either side started it).
  virtual void OnConnected(const PeerNode& peer) {}
  virtual void OnDisconnected(const PeerNode& peer) {}
};

struct TransportCounters {
  uint64_t packets_in = 0;
  uint64_t streams_in = 0;
  uint64_t packets_out = 0;
  uint64_t streams_out = 0;
  uint64_t busy_in = 0;         // inbound refused for a spent budget
  uint64_t busy_out = 0;        // outbound refused for a spent budget
  uint64_t declined_in = 0;     // inbound the handler declined (TakeNow)
  uint64_t declined_out = 0;    // outbound a peer's handler declined
  uint64_t malformed = 0;       // inbound refused as malformed
  uint64_t impersonations = 0;  // inbound naming a sender its TLS key is not
  uint64_t hosts_banned = 0;    // hosts banned with a punished id
  uint64_t readdressed = 0;     // links moved to a peer's own address
  uint64_t statements_checked = 0;  // validator statements verified
  uint64_t statements_refused = 0;  // validator statements that did not check
  uint64_t peers_refused = 0;       // new peers refused: their slots were full
  // Other peers dropped for a bonded validator, or silent ones (that left)
  // for a peer that is here.
  uint64_t peers_evicted = 0;
  uint64_t send_failures = 0;
  uint64_t disconnects = 0;
};

class Transport {
  struct Impl;

 public:
  // Bytes of outbound stream budget held for one stream: taken before the
  // stream's blob is built, handed to Stream(). Released on destruction if
  // unused.
  class Permit {
   public:
    Permit() = default;
    Permit(Permit&& other) noexcept;
    Permit& operator=(Permit&& other) noexcept;
    ~Permit();
    size_t bytes() const { return bytes_; }

    // A byte budget (opaque outside the transport).
    struct Budget;

   private:
    friend class Transport;
    friend struct Transport::Impl;
    Permit(std::shared_ptr<Budget> peer, std::shared_ptr<Budget> global,
           size_t bytes);
    void Release();
    std::shared_ptr<Budget> peer_;
    std::shared_ptr<Budget> global_;
    size_t bytes_ = 0;
  };

  // Starts the server and the dispatcher threads. `handler` (not owned)
  // must outlive the transport; `metrics` (may be null) receives the
  // transport's metrics (docs/metrics.md "p2p").
  static absl::StatusOr<std::unique_ptr<Transport>> Start(
      const TransportOptions& options, PacketHandler* handler,
      metrics::Registry* metrics);
  ~Transport();  // Stop()
  // Stops serving and sending; queued packets are discarded (counted).
  // Idempotent.
  void Stop();

  int port() const;
  // This node as peers see it (with the bound port).
  const PeerNode& self() const;

  // Makes `peer` known: the transport handshakes it and keeps it
  // connected. A persistent peer (the bootstrap) is never forgotten. False
  // for this node itself, a banned peer, or full unreserved slots (a peer
  // becomes a validator only by its own statement).
  bool AddPeer(const PeerNode& peer, bool persistent = false);
  // Connected peers (handshake done, not failed since).
  std::vector<PeerNode> Connected() const;
  // Every peer known (connected or not).
  std::vector<PeerNode> Known() const;
  // The validator key `peer_id` has proven to run at it: the key of the
  // last validator statement it sent (on any message) over its proven TLS
  // connection that checked for this network and shard, while that
  // statement's time is within kValidatorStatementMaxSkewMs of now;
  // nullopt when none, or not known.
  std::optional<crypto::Secp256k1PublicKey> ValidatorOf(ByteView peer_id) const;
  // ValidatorOf(peer_id) when TransportOptions::is_bonded_validator says
  // that key is bonded now; nullopt otherwise (always, without the
  // predicate). The answer also decides whether the peer keeps a reserved
  // slot, so the table and the caller judge a peer alike.
  std::optional<crypto::Secp256k1PublicKey> BondedValidatorOf(ByteView peer_id);

  // Queues a small packet for a connected peer. NotFound when it is not
  // connected, ResourceExhausted when its queue is full. Never blocks.
  absl::Status Send(ByteView peer_id, std::string type_id, std::string content);
  // Send to every connected peer; how many accepted it.
  size_t SendToAll(const std::string& type_id, const std::string& content);
  // Sends a small packet now, on the caller's thread, and waits up to
  // `timeout` for the peer to take it (into its inbound queue, or by its
  // handler's TakeNow). OK when it did; NotFound when the peer is not
  // connected; FailedPrecondition when the peer's handler declined it (the
  // peer's reason in the message; the link is fine); Unavailable when it
  // answered busy or the call failed (DeadlineExceeded past `timeout`; a
  // failure counts towards disconnecting the peer, as a queued send's
  // does). For the few packets whose sender must know a peer holds them.
  absl::Status SendNow(ByteView peer_id, std::string type_id,
                       std::string content, std::chrono::milliseconds timeout);

  // Takes `bytes` of the peer's and the global outbound stream budget.
  // ResourceExhausted when either lacks room (counted as busy), NotFound
  // when the peer is not connected. Never blocks.
  absl::StatusOr<Permit> ReserveStream(ByteView peer_id, size_t bytes);
  // Queues `blob` for the peer under `permit` (taken for this peer, at
  // least the blob's wire size); the permit is released when the stream
  // ends. The blob is shared, not copied.
  absl::Status Stream(ByteView peer_id, Permit permit, const Blob& blob);

  // Malformed or invalid data came from `peer_id`: it is disconnected,
  // forgotten, and refused for options.ban. Counted with `reason`.
  void Punish(ByteView peer_id, std::string_view reason);

  // Fault injection (docs/reliability.md "partition"): while isolated the
  // transport refuses every inbound call (UNAVAILABLE) and fails every
  // outbound one without touching the network, as if the machine's
  // network were cut; heartbeats then fail on both sides and the peers
  // disconnect. Lifting it lets the reconnection back-off heal the links.
  // Discovery is not affected.
  void SetIsolated(bool isolated);
  bool isolated() const;

  TransportCounters counters() const;

 private:
  explicit Transport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rnode::node::p2p

#endif  // RNODE_NODE_P2P_TRANSPORT_H_

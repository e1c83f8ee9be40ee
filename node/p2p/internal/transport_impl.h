// The transport's private state (node/p2p/transport.h): the byte budgets,
// one peer's link, and Transport::Impl, whose methods are defined by room:
// transport_links.cc (the link table and each link's life cycle),
// transport_senders.cc (the two sender threads of a link and its gRPC
// client), transport_server.cc (the routing service's handlers and the
// dispatcher threads).
#ifndef RNODE_NODE_P2P_INTERNAL_TRANSPORT_IMPL_H_
#define RNODE_NODE_P2P_INTERNAL_TRANSPORT_IMPL_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/impl/service_type.h"
#include "node/p2p/chunker.h"
#include "node/p2p/identity/validator_statement.h"
#include "node/p2p/internal/transport_metrics.h"
#include "node/p2p/peer.h"
#include "node/p2p/transport.h"
#include "routing.pb.h"
#include "util/bytes.h"
#include "util/fair_queue.h"
#include "util/logging.h"
#include "util/mutex.h"
#include "util/token_bucket.h"
#include "util/unix_time.h"

namespace rnode::node::p2p {

using Clock = std::chrono::steady_clock;

// Bytes of a budget in use; taken without waiting, never beyond the limit.
struct Transport::Permit::Budget {
  explicit Budget(size_t limit) : limit(limit) {}
  bool TryTake(size_t n) {
    size_t cur = used.load(std::memory_order_relaxed);
    for (;;) {
      if (n > limit || cur > limit - n) return false;
      if (used.compare_exchange_weak(cur, cur + n, std::memory_order_acq_rel)) {
        return true;
      }
    }
  }
  void Give(size_t n) { used.fetch_sub(n, std::memory_order_acq_rel); }
  const size_t limit;
  std::atomic<size_t> used{0};
};

namespace internal {

using Budget = Transport::Permit::Budget;

// Slack above the largest unary packet for the envelope (header, type).
inline constexpr size_t kEnvelopeBytes = 4096;
// How long this node's validator statement is reused before a fresh one
// is signed: well inside the receivers' kValidatorStatementMaxSkewMs.
inline constexpr std::chrono::seconds kStatementRefresh{60};
// A peer's statement that differs from the last one verified for it is
// verified at most this often (an honest one changes every
// kStatementRefresh); until then it is ignored and the earlier verdict
// stands. Bounds the signature checks one peer can cause.
inline constexpr std::chrono::seconds kStatementCheckInterval{1};
// How a declined packet's answer starts (PacketHandler::TakeNow); the
// peer's reason follows.
inline constexpr char kDeclinedPrefix[] = "declined: ";
// How soon a link Readdress made may be readdressed again.
inline constexpr std::chrono::seconds kReaddressInterval{10};
// Bans kept at most, per kind (ids, hosts): fresh ids cost an attacker
// nothing, so the lists are bounded, not only timed.
inline constexpr size_t kMaxBans = 4096;

// What an isolated transport (Transport::SetIsolated) answers and fails with.
inline absl::Status IsolatedError() {
  return absl::UnavailableError("isolated from its peers (fault injection)");
}

// The gRPC client of one link (its channel and the generated stub); opaque
// here, so that only transport_senders.cc sees the generated service.
struct LinkClient;
struct LinkClientDeleter {
  void operator()(LinkClient* client) const;
};
using LinkClientPtr = std::unique_ptr<LinkClient, LinkClientDeleter>;

// A client for `peer` with the transport's message limits and a reconnect
// back-off of seconds, not gRPC's minutes. Never null; connects lazily.
LinkClientPtr OpenClient(const PeerNode& peer, const TransportOptions& options);

// One known peer: its channel, outbound queues and their two threads.
struct Link {
  Link(PeerNode node, bool persistent, size_t out_bytes)
      : node(std::move(node)),
        persistent(persistent),
        out_budget(std::make_shared<Budget>(out_bytes)) {}

  const PeerNode node;
  const bool persistent;
  LinkClientPtr client;
  const std::shared_ptr<Budget> out_budget;
  // Small packets from this peer waiting for the dispatcher.
  std::atomic<size_t> inbound_packets{0};
  // Inbound stream bytes being read or waiting (per-peer budget).
  std::shared_ptr<Budget> in_budget;

  Mutex mu;
  CondVar cv;
  bool stopping ABSL_GUARDED_BY(mu) = false;
  bool connected ABSL_GUARDED_BY(mu) = false;
  // The validator key this peer has proven to run at it (ValidatorOf).
  std::optional<crypto::Secp256k1PublicKey> validator ABSL_GUARDED_BY(mu);
  // The last statement verified for this peer, accepted (statement_ok,
  // with its time) or refused, and when: the same bytes again are not
  // verified again (an accepted one's time is checked again), different
  // ones at most once per kStatementCheckInterval.
  std::string statement ABSL_GUARDED_BY(mu);
  bool statement_ok ABSL_GUARDED_BY(mu) = false;
  int64_t statement_time_ms ABSL_GUARDED_BY(mu) = 0;
  Clock::time_point statement_checked ABSL_GUARDED_BY(mu){};
  // A proven bonded validator: holds a reserved slot (read by Ensure under
  // the table's lock, so not under mu). Judged when its statement is, and
  // again by BondedValidatorOf.
  std::atomic<bool> reserved{false};
  // When this peer was last heard from or answered (steady clock, ns):
  // the least recently heard other peer makes room for a validator.
  std::atomic<int64_t> last_heard_ns{0};
  // When the link was made, and whether Readdress made it (to replace a
  // link at another address): such a link is not replaced again within
  // kReaddressInterval, so a peer changing its advertised address on every
  // call cannot make this node tear down and start link threads per call.
  const Clock::time_point created = Clock::now();
  std::atomic<bool> readdressed{false};
  // The IP address this peer's last inbound call came from (empty before
  // one): banned with its id when it is punished.
  std::string last_host ABSL_GUARDED_BY(mu);
  // Consecutive failed sends while connected.
  int failures ABSL_GUARDED_BY(mu) = 0;
  // Consecutive failed handshakes while disconnected.
  int reconnect_failures ABSL_GUARDED_BY(mu) = 0;
  std::chrono::milliseconds backoff ABSL_GUARDED_BY(mu){0};
  Clock::time_point next_attempt ABSL_GUARDED_BY(mu){};
  Clock::time_point last_sent ABSL_GUARDED_BY(mu){};
  std::deque<::routing::Protocol> packets ABSL_GUARDED_BY(mu);
  struct Outgoing {
    Blob blob;
    Transport::Permit permit;
  };
  std::deque<Outgoing> streams ABSL_GUARDED_BY(mu);

  std::thread control;
  std::thread bulk;
};

}  // namespace internal

struct Transport::Impl final {
  using Budget = internal::Budget;
  using Link = internal::Link;
  using P2pMetrics = internal::P2pMetrics;

  Impl(const TransportOptions& o, PacketHandler* h)
      : options(o),
        handler(h),
        out_global(std::make_shared<Budget>(o.outbound_stream_bytes)),
        in_global(std::make_shared<Budget>(o.inbound_stream_bytes)),
        slotless_checks(o.slotless_statement_checks_per_second,
                        o.slotless_statement_checks_per_second) {}

  const TransportOptions options;
  PacketHandler* const handler;
  PeerNode self;
  P2pMetrics m;
  const std::shared_ptr<Budget> out_global;
  const std::shared_ptr<Budget> in_global;
  // Statement checks for peers without a slot (HandleSend; options).
  TokenBucket slotless_checks;
  // Lines a peer's doing causes (a ban, an eviction, a move, a lost link).
  RateLimitedLog peer_log{"p2p", kPeerLogLinesPerSecond};
  // The routing service (transport_server.cc) and the server serving it;
  // the service outlives the server.
  class RoutingService;
  std::unique_ptr<grpc::Service> service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;

  // Counters (also the tests' view).
  std::atomic<uint64_t> packets_in{0}, streams_in{0}, packets_out{0},
      streams_out{0}, busy_in{0}, busy_out{0}, declined_in{0}, declined_out{0},
      malformed{0}, impersonations{0}, hosts_banned{0}, readdressed{0},
      statements_checked{0}, statements_refused{0}, peers_refused{0},
      peers_evicted{0}, send_failures{0}, disconnects{0};
  // Fault injection (Transport::SetIsolated).
  std::atomic<bool> isolated{false};

  Mutex mu;
  bool stopped ABSL_GUARDED_BY(mu) = false;
  std::map<Bytes, std::shared_ptr<Link>> links ABSL_GUARDED_BY(mu);
  // Banned ids and hosts (IP addresses), each until its expiry; each map
  // holds at most kMaxBans (the soonest to expire go first).
  std::map<Bytes, Clock::time_point> banned ABSL_GUARDED_BY(mu);
  std::map<std::string, Clock::time_point> banned_hosts ABSL_GUARDED_BY(mu);
  // Links taken out of the table whose threads the reaper joins.
  std::vector<std::shared_ptr<Link>> dead ABSL_GUARDED_BY(mu);

  // What the dispatchers hand to the handler.
  struct Event {
    enum class Kind : uint8_t { kPacket, kConnected, kDisconnected };
    Kind kind = Kind::kPacket;
    PeerNode from;
    std::string type_id;
    std::string content;
    std::shared_ptr<Link> link;  // packets: whose inbound count to return
    Permit reservation;          // streams: the inbound bytes held
  };
  Mutex queue_mu;
  CondVar queue_cv;
  bool queue_stopping ABSL_GUARDED_BY(queue_mu) = false;
  // Per sender, served in turn (a flooding peer holds back another's
  // packets by at most one of its own each; docs/p2p.md "Budgets").
  FairQueue<Bytes, Event> small ABSL_GUARDED_BY(queue_mu);
  FairQueue<Bytes, Event> large ABSL_GUARDED_BY(queue_mu);
  std::thread small_dispatcher;
  std::thread large_dispatcher;
  std::thread reaper;
  CondVar reaper_cv;  // on mu

  // --- The link table (transport_links.cc) -----------------------------

  // Queues a connect or disconnect for the small dispatcher, and counts it.
  void Announce(const std::shared_ptr<Link>& link, bool connected);
  bool IsBanned(ByteView id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Whether `host` (an IP address; empty: unknown) is banned.
  bool IsHostBanned(const std::string& host) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // The link of `id`; null when it is not known.
  std::shared_ptr<Link> Find(ByteView id);
  // The link of `peer`, made (and its threads started) when new. Null for
  // this node, a banned peer, a stopped transport, or full slots: a peer
  // that is not `validator` (a proven bonded validator) gets only the
  // unreserved ones; a validator at a full table evicts the least recently
  // heard non-validator, non-persistent link (TransportOptions).
  std::shared_ptr<Link> Ensure(const PeerNode& peer, bool persistent,
                               bool validator = false);
  // `link`, or a new link in its place at `sender`'s own address when the
  // peer (proven as sender.id) advertises another one than the link dials
  // and the link is neither connected nor persistent, nor itself made by
  // Readdress within kReaddressInterval: an address heard of (a lookup
  // answer, anyone's word) gives way to the peer's own. Null when the new
  // link cannot be made.
  std::shared_ptr<Link> Readdress(const std::shared_ptr<Link>& link,
                                  const PeerNode& sender);
  // The link to make room for a validator at a full table: the least
  // recently heard one that is neither reserved nor persistent; null if
  // none.
  std::shared_ptr<Link> EvictionCandidate() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // The unreserved, not persistent link heard from least recently, if it
  // has been silent for longer than a live peer can be (its heartbeats
  // would have failed and its link dropped): such a link, of a peer that
  // left, gives its slot to a peer that is here. nullptr when none.
  std::shared_ptr<Link> SilentCandidate() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Links not holding a reserved slot, and the slots they may hold.
  size_t UnreservedLinks() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  size_t UnreservedSlots() const;
  // Takes `link` out of the table (its threads end; the reaper joins
  // them).
  void Drop(const std::shared_ptr<Link>& link);
  // Marks `link` connected (an inbound handshake or heartbeat, or an
  // answered one of ours).
  void MarkConnected(const std::shared_ptr<Link>& link);
  // A send to `link` failed: after options.heartbeat_failures in a row it
  // is disconnected and retried with back-off.
  void SendFailed(const std::shared_ptr<Link>& link);
  // Joins the threads of the links Drop() took out, until stopped.
  void ReaperLoop();
  // Transport::Punish: disconnects, forgets and bans `id` for options.ban,
  // and the host its calls come from: `host` when given (the call being
  // answered), else the link's last_host (options.ban_loopback_hosts).
  void Punish(ByteView id, std::string_view reason,
              const std::string& host = {});
  // Transport::Stop: the server, every link's threads, the reaper and the
  // dispatchers, in that order; queued events are discarded. Idempotent.
  void StopAll();

  // --- Sending (transport_senders.cc) ----------------------------------

  // How a peer answered one small-packet call.
  enum class Answer {
    kTaken,     // acknowledged
    kBusy,      // refused for a spent budget: not a failure of the link
    kDeclined,  // refused by its handler (PacketHandler::TakeNow): the link
                // is fine, the packet is not held there
    kFailed,    // no answer: counts towards disconnecting the peer
  };

  // This node's validator statement, when it has one (options): made by
  // options.validator_statement, kept for kStatementRefresh (every message
  // carries it).
  std::string Statement() const;
  mutable Mutex statement_mu;
  mutable std::string statement ABSL_GUARDED_BY(statement_mu);
  mutable Clock::time_point statement_made ABSL_GUARDED_BY(statement_mu);
  // The validator key a statement proves for `proven_id` (decoded and
  // checked for this network and shard, now, its signature verified:
  // counted in statements_checked); the reason when it does not (counted
  // in statements_refused).
  absl::StatusOr<ValidatorStatement> CheckStatement(ByteView proven_id,
                                                    const std::string& encoded);
  // Whether `key` is bonded (options.is_bonded_validator; false without).
  bool IsBonded(const crypto::Secp256k1PublicKey& key) const;
  // Records the verdict `checked` on the statement `encoded` of `link`'s
  // peer: an accepted statement's key becomes the link's validator
  // (reserved when bonded); after a refusal the link's earlier validator
  // stands.
  void RecordStatement(const std::shared_ptr<Link>& link,
                       const std::string& encoded,
                       const absl::StatusOr<ValidatorStatement>& checked);
  // Takes the validator statement `encoded` from `link`'s peer (proven as
  // link->node.id): verified and recorded unless it repeats the last one
  // verified for the link (then only an accepted one's time is checked) or
  // differs from it within kStatementCheckInterval (then ignored).
  void TakeStatement(const std::shared_ptr<Link>& link,
                     const std::string& encoded);

  // Fills `h` with this node as the sender on this network.
  void Header(::routing::Header* h) const;
  // An empty message in this node's envelope.
  ::routing::Protocol Envelope() const;
  // A small packet of `type_id` carrying `content`, in this node's envelope.
  ::routing::Protocol Packet(std::string type_id, std::string content) const;
  // Sends `protocol` and says how the peer answered in `*answer` (when
  // given). OK when it took it; Unavailable when it answered busy or the
  // call failed; FailedPrecondition when it declined.
  absl::Status Call(const std::shared_ptr<Link>& link,
                    const ::routing::Protocol& protocol,
                    Answer* answer = nullptr,
                    std::optional<std::chrono::milliseconds> timeout = {});
  // The small-packet sender of one peer: handshake while disconnected
  // (with back-off), queued packets, and a heartbeat when idle.
  void ControlLoop(const std::shared_ptr<Link>& link);
  // Records the outcome `s` of one small-packet call `out` to `link`:
  // counted, and the link's failures reset, or counted towards
  // disconnecting it. A busy peer is not gone (as for streams in
  // BulkLoop): the packet is lost to it (counted), the link stays; so for
  // a peer that declined it.
  void Sent(const std::shared_ptr<Link>& link, const ::routing::Protocol& out,
            const absl::Status& s, Answer answer);
  // The stream sender of one peer: one blob at a time, chunk by chunk.
  void BulkLoop(const std::shared_ptr<Link>& link);

  // --- Receiving (transport_server.cc) ---------------------------------

  // The routing service answering with HandleSend and HandleStream.
  std::unique_ptr<grpc::Service> NewRoutingService();
  // Queues `e` for the dispatcher of its kind (dropped once stopping).
  void Post(Event e, bool large_queue);
  // One dispatcher thread: hands the events of its queue to the handler.
  void DispatchLoop(bool large_queue);
  // Checks an inbound header: the right network, a well-formed sender
  // that is the node the caller's certificate proves (with TLS) and is not
  // banned.
  grpc::Status CheckSender(const grpc::ServerContext& ctx,
                           const ::routing::Header& h, PeerNode* sender);
  // With TLS: PERMISSION_DENIED (counted) unless `claimed` is the node id
  // the caller's certificate proves. Without: OK.
  grpc::Status CheckProven(const grpc::ServerContext& ctx, ByteView claimed);
  // Answers `resp` "busy" for `what`, and counts it.
  void Busy(::routing::TLResponse* resp, std::string_view what);
  // TransportLayer.Send: a handshake, heartbeat, disconnect or small packet.
  grpc::Status HandleSend(const grpc::ServerContext& ctx,
                          const ::routing::TLRequest* req,
                          ::routing::TLResponse* resp);
  // TransportLayer.Stream: one chunked packet, read under its byte budget.
  grpc::Status HandleStream(grpc::ServerContext* ctx,
                            grpc::ServerReader<::routing::Chunk>* reader,
                            ::routing::TLResponse* resp);
};

}  // namespace rnode::node::p2p

#endif  // RNODE_NODE_P2P_INTERNAL_TRANSPORT_IMPL_H_

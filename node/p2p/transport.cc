#include "node/p2p/transport.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "node/p2p/grpc_status.h"
#include "routing.grpc.pb.h"
#include "util/logging.h"
#include "util/mutex.h"
#include "util/status_macros.h"

namespace rnode::node::p2p {

using Clock = std::chrono::steady_clock;

// --- Budgets ----------------------------------------------------------

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

Transport::Permit::Permit(std::shared_ptr<Budget> peer,
                          std::shared_ptr<Budget> global, size_t bytes)
    : peer_(std::move(peer)), global_(std::move(global)), bytes_(bytes) {}

Transport::Permit::Permit(Permit&& other) noexcept
    : peer_(std::move(other.peer_)),
      global_(std::move(other.global_)),
      bytes_(std::exchange(other.bytes_, 0)) {}

Transport::Permit& Transport::Permit::operator=(Permit&& other) noexcept {
  if (this != &other) {
    Release();
    peer_ = std::move(other.peer_);
    global_ = std::move(other.global_);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

Transport::Permit::~Permit() { Release(); }

void Transport::Permit::Release() {
  if (bytes_ == 0) return;
  if (peer_ != nullptr) peer_->Give(bytes_);
  if (global_ != nullptr) global_->Give(bytes_);
  bytes_ = 0;
  peer_.reset();
  global_.reset();
}

namespace {

using Budget = Transport::Permit::Budget;

// Longest packet type name accepted from the wire.
constexpr size_t kMaxTypeIdBytes = 64;
// Slack above the largest unary packet for the envelope (header, type).
constexpr size_t kEnvelopeBytes = 4096;
// How a declined packet's answer starts (PacketHandler::TakeNow); the
// peer's reason follows.
constexpr char kDeclinedPrefix[] = "declined: ";

// A small packet a peer answered busy is sent again this many times, after
// pauses doubling from kBusyPause.
constexpr int kBusyRetries = 3;
constexpr auto kBusyPause = std::chrono::milliseconds(20);
// Calls one peer connection may have open at once on our server: an honest
// peer has two (its small-packet and its stream sender); a flooding peer
// cannot take every server thread through one connection.
constexpr int kMaxStreamsPerConnection = 4;
// A stream may take this long per byte beyond the network timeout (the
// public node's 5 microseconds per byte).
constexpr double kStreamSecondsPerByte = 5e-6;

bool ValidTypeId(const std::string& type) {
  if (type.empty() || type.size() > kMaxTypeIdBytes) return false;
  return std::all_of(type.begin(), type.end(),
                     [](char c) { return c > 0x20 && c < 0x7f; });
}

// What an isolated transport (Transport::SetIsolated) answers and fails with.
absl::Status IsolatedError() {
  return absl::UnavailableError("isolated from its peers (fault injection)");
}

// The transport's metrics (docs/metrics.md "p2p"); null members when the
// node has no registry.
struct P2pMetrics {
  metrics::Gauge* peers = nullptr;
  metrics::Counter* packets_in = nullptr;
  metrics::Counter* streams_in = nullptr;
  metrics::Counter* packets_out = nullptr;
  metrics::Counter* streams_out = nullptr;
  metrics::Counter* busy_in = nullptr;
  metrics::Counter* busy_out = nullptr;
  metrics::Counter* declined_in = nullptr;
  metrics::Counter* declined_out = nullptr;
  metrics::Counter* malformed = nullptr;
  metrics::Counter* send_failures = nullptr;
  metrics::Counter* disconnects = nullptr;
  metrics::Counter* bytes_in = nullptr;
  metrics::Counter* bytes_out = nullptr;

  absl::Status Register(metrics::Registry* r) {
    if (r == nullptr) return absl::OkStatus();
    auto counter = [&](metrics::Counter** out, std::string_view name,
                       std::string_view help) -> absl::Status {
      absl::StatusOr<metrics::Counter*> c = r->AddCounter(name, help);
      if (!c.ok()) return c.status();
      *out = *c;
      return absl::OkStatus();
    };
    absl::StatusOr<metrics::Gauge*> g =
        r->AddGauge("p2p_peers", "peers connected (handshake done)");
    if (!g.ok()) return g.status();
    peers = *g;
    for (absl::Status s : {
             counter(&packets_in, "p2p_packets_received_total",
                     "small packets received and queued for the node"),
             counter(&streams_in, "p2p_streams_received_total",
                     "streamed packets (blocks) received whole"),
             counter(&packets_out, "p2p_packets_sent_total",
                     "small packets sent (heartbeats included)"),
             counter(&streams_out, "p2p_streams_sent_total",
                     "streamed packets sent whole"),
             counter(&busy_in, "p2p_busy_refused_total",
                     "inbound packets refused 'busy': the sender's queue or "
                     "byte budget was spent"),
             counter(&busy_out, "p2p_busy_deferred_total",
                     "outbound packets not queued: the peer's queue or the "
                     "byte budget was spent (the caller retries)"),
             counter(&declined_in, "p2p_declined_total",
                     "inbound packets this node's handler declined to hold "
                     "(e.g. a deploy sent to an observer)"),
             counter(&declined_out, "p2p_declined_by_peer_total",
                     "outbound packets a peer's handler declined to hold"),
             counter(&malformed, "p2p_malformed_total",
                     "inbound messages refused as malformed or invalid"),
             counter(&send_failures, "p2p_send_failures_total",
                     "sends that failed or were discarded with their link"),
             counter(&disconnects, "p2p_disconnects_total",
                     "peers disconnected (failures, their request, or "
                     "punishment)"),
             counter(&bytes_in, "p2p_received_bytes_total",
                     "payload bytes received"),
             counter(&bytes_out, "p2p_sent_bytes_total", "payload bytes sent"),
         }) {
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }
  static void Inc(metrics::Counter* c, uint64_t n = 1) {
    if (c != nullptr) c->Inc(n);
  }
};

}  // namespace

// --- Links ------------------------------------------------------------

// One known peer: its channel, outbound queues and their two threads.
struct Link {
  Link(PeerNode node, bool persistent, size_t out_bytes)
      : node(std::move(node)),
        persistent(persistent),
        out_budget(std::make_shared<Budget>(out_bytes)) {}

  const PeerNode node;
  const bool persistent;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<::routing::TransportLayer::Stub> stub;
  const std::shared_ptr<Budget> out_budget;
  // Small packets from this peer waiting for the dispatcher.
  std::atomic<size_t> inbound_packets{0};
  // Inbound stream bytes being read or waiting (per-peer budget).
  std::shared_ptr<Budget> in_budget;

  Mutex mu;
  CondVar cv;
  bool stopping ABSL_GUARDED_BY(mu) = false;
  bool connected ABSL_GUARDED_BY(mu) = false;
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

struct Transport::Impl final : public ::routing::TransportLayer::Service {
  Impl(const TransportOptions& o, PacketHandler* h)
      : options(o),
        handler(h),
        out_global(std::make_shared<Budget>(o.outbound_stream_bytes)),
        in_global(std::make_shared<Budget>(o.inbound_stream_bytes)) {}

  const TransportOptions options;
  PacketHandler* const handler;
  PeerNode self;
  P2pMetrics m;
  const std::shared_ptr<Budget> out_global;
  const std::shared_ptr<Budget> in_global;
  std::unique_ptr<grpc::Server> server;
  int port = 0;

  // Counters (also the tests' view).
  std::atomic<uint64_t> packets_in{0}, streams_in{0}, packets_out{0},
      streams_out{0}, busy_in{0}, busy_out{0}, declined_in{0}, declined_out{0},
      malformed{0}, send_failures{0}, disconnects{0};
  // Fault injection (Transport::SetIsolated).
  std::atomic<bool> isolated{false};

  Mutex mu;
  bool stopped ABSL_GUARDED_BY(mu) = false;
  std::map<Bytes, std::shared_ptr<Link>> links ABSL_GUARDED_BY(mu);
  std::map<Bytes, Clock::time_point> banned ABSL_GUARDED_BY(mu);
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
  std::deque<Event> small ABSL_GUARDED_BY(queue_mu);
  std::deque<Event> large ABSL_GUARDED_BY(queue_mu);
  std::thread small_dispatcher;
  std::thread large_dispatcher;
  std::thread reaper;
  CondVar reaper_cv;  // on mu

  // --- Helpers ---------------------------------------------------------

  void Header(::routing::Header* h) const {
    PeerToProto(self, h->mutable_sender());
    h->set_networkid(options.network_id);
  }

  void Post(Event e, bool large_queue) {
    MutexLock lock(&queue_mu);
    if (queue_stopping) return;
    (large_queue ? large : small).push_back(std::move(e));
    queue_cv.SignalAll();
  }

  void Announce(const std::shared_ptr<Link>& link, bool connected) {
    Event e;
    e.kind = connected ? Event::Kind::kConnected : Event::Kind::kDisconnected;
    e.from = link->node;
    Post(std::move(e), false);
    if (m.peers != nullptr) m.peers->Add(connected ? 1 : -1);
    if (!connected) {
      ++disconnects;
      P2pMetrics::Inc(m.disconnects);
    }
  }

  bool IsBanned(ByteView id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto it = banned.find(Bytes(id.begin(), id.end()));
    if (it == banned.end()) return false;
    if (Clock::now() >= it->second) {
      banned.erase(it);
      return false;
    }
    return true;
  }

  std::shared_ptr<Link> Find(ByteView id) {
    MutexLock lock(&mu);
    auto it = links.find(Bytes(id.begin(), id.end()));
    return it == links.end() ? nullptr : it->second;
  }

  // The link of `peer`, made (and its threads started) when new. Null for
  // this node, a banned peer, a full table, or a stopped transport.
  std::shared_ptr<Link> Ensure(const PeerNode& peer, bool persistent) {
    if (peer.id == self.id) return nullptr;
    MutexLock lock(&mu);
    if (stopped || IsBanned(peer.id)) return nullptr;
    auto it = links.find(peer.id);
    if (it != links.end()) return it->second;
    if (links.size() >= options.max_peers) return nullptr;
    auto link = std::make_shared<Link>(peer, persistent,
                                       options.outbound_stream_bytes_per_peer);
    link->in_budget =
        std::make_shared<Budget>(options.inbound_stream_bytes_per_peer);
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(static_cast<int>(kEnvelopeBytes));
    args.SetMaxSendMessageSize(static_cast<int>(
        std::max(options.max_unary_bytes, options.chunk_bytes) +
        kEnvelopeBytes));
    // A restarted peer is dialled again within a second or two, not after
    // gRPC's default back-off of up to two minutes.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
    link->channel = grpc::CreateCustomChannel(
        peer.ProtocolTarget(), grpc::InsecureChannelCredentials(), args);
    link->stub = ::routing::TransportLayer::NewStub(link->channel);
    links.emplace(peer.id, link);
    link->control = std::thread([this, link] { ControlLoop(link); });
    link->bulk = std::thread([this, link] { BulkLoop(link); });
    return link;
  }

  // Takes `link` out of the table (its threads end; the reaper joins
  // them).
  void Drop(const std::shared_ptr<Link>& link) {
    bool was_connected = false;
    {
      MutexLock lock(&link->mu);
      if (link->stopping) return;
      link->stopping = true;
      was_connected = link->connected;
      link->connected = false;
      link->cv.SignalAll();
    }
    if (was_connected) Announce(link, false);
    MutexLock lock(&mu);
    auto it = links.find(link->node.id);
    if (it != links.end() && it->second == link) links.erase(it);
    dead.push_back(link);
    reaper_cv.Signal();
  }

  // Marks `link` connected (an inbound handshake or heartbeat, or an
  // answered one of ours).
  void MarkConnected(const std::shared_ptr<Link>& link) {
    bool newly = false;
    {
      MutexLock lock(&link->mu);
      if (link->stopping) return;
      newly = !link->connected;
      link->connected = true;
      link->failures = 0;
      link->reconnect_failures = 0;
      link->backoff = std::chrono::milliseconds(0);
      link->cv.SignalAll();
    }
    if (newly) Announce(link, true);
  }

  // A send to `link` failed: after options.heartbeat_failures in a row it
  // is disconnected and retried with back-off.
  void SendFailed(const std::shared_ptr<Link>& link) {
    ++send_failures;
    P2pMetrics::Inc(m.send_failures);
    bool disconnected = false;
    {
      MutexLock lock(&link->mu);
      if (!link->connected) return;
      if (++link->failures < options.heartbeat_failures) return;
      link->connected = false;
      disconnected = true;
      link->backoff = options.reconnect_min;
      link->next_attempt = Clock::now() + link->backoff;
      // Queued packets go with the connection (counted).
      const size_t lost = link->packets.size() + link->streams.size();
      link->packets.clear();
      link->streams.clear();
      send_failures += lost;
      P2pMetrics::Inc(m.send_failures, lost);
    }
    if (disconnected) {
      Log("p2p")->info("peer {} disconnected after failed sends",
                       FormatPeerAddress(link->node));
      Announce(link, false);
    }
  }

  // How a peer answered one small-packet call.
  enum class Answer {
    kTaken,     // acknowledged
    kBusy,      // refused for a spent budget: not a failure of the link
    kDeclined,  // refused by its handler (PacketHandler::TakeNow): the link
                // is fine, the packet is not held there
    kFailed,    // no answer: counts towards disconnecting the peer
  };

  // Sends `protocol` and says how the peer answered in `*answer` (when
  // given). OK when it took it; Unavailable when it answered busy or the
  // call failed; FailedPrecondition when it declined.
  absl::Status Call(const std::shared_ptr<Link>& link,
                    const ::routing::Protocol& protocol,
                    Answer* answer = nullptr,
                    std::optional<std::chrono::milliseconds> timeout = {}) {
    Answer ignored;
    Answer& a = answer != nullptr ? *answer : ignored;
    a = Answer::kFailed;
    if (isolated.load()) return IsolatedError();
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     timeout.value_or(options.network_timeout));
    ::routing::TLRequest req;
    *req.mutable_protocol() = protocol;
    ::routing::TLResponse resp;
    grpc::Status s = link->stub->Send(&ctx, req, &resp);
    // gRPC's own refusal when the peer's server threads are all taken is
    // back-pressure too, not a dead link.
    if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      a = Answer::kBusy;
    }
    if (!s.ok()) return FromGrpc(s);
    if (resp.has_internalservererror()) {
      const std::string& error = resp.internalservererror().error();
      if (absl::StartsWith(error, kDeclinedPrefix)) {
        a = Answer::kDeclined;
        return absl::FailedPreconditionError(error);
      }
      a = Answer::kBusy;
      return absl::UnavailableError(error);
    }
    a = Answer::kTaken;
    return absl::OkStatus();
  }

  ::routing::Protocol Envelope() const {
    ::routing::Protocol p;
    Header(p.mutable_header());
    return p;
  }

  // The small-packet sender of one peer: handshake while disconnected
  // (with back-off), queued packets, and a heartbeat when idle.
  void ControlLoop(std::shared_ptr<Link> link) {
    for (;;) {
      ::routing::Protocol out;
      enum class Action {
        kNone,
        kHandshake,
        kPacket,
        kHeartbeat
      } action = Action::kNone;
      {
        MutexLock lock(&link->mu);
        for (;;) {
          if (link->stopping) return;
          const auto now = Clock::now();
          if (!link->connected) {
            if (now >= link->next_attempt) {
              action = Action::kHandshake;
              break;
            }
            link->cv.WaitUntil(&link->mu, link->next_attempt);
            continue;
          }
          if (!link->packets.empty()) {
            out = std::move(link->packets.front());
            link->packets.pop_front();
            action = Action::kPacket;
            break;
          }
          const auto due = link->last_sent + options.heartbeat_interval;
          if (now >= due) {
            action = Action::kHeartbeat;
            break;
          }
          link->cv.WaitUntil(&link->mu, due);
        }
      }
      if (action == Action::kHandshake) {
        out = Envelope();
        out.mutable_protocol_handshake();
        absl::Status s = Call(link, out);
        if (s.ok()) {
          {
            MutexLock lock(&link->mu);
            link->last_sent = Clock::now();
          }
          MarkConnected(link);
          continue;
        }
        bool forget = false;
        {
          MutexLock lock(&link->mu);
          ++link->reconnect_failures;
          link->backoff =
              std::min(options.reconnect_max,
                       std::max(options.reconnect_min, link->backoff * 2));
          link->next_attempt = Clock::now() + link->backoff;
          forget = !link->persistent &&
                   link->reconnect_failures >= options.forget_after_failures;
        }
        if (forget) {
          Drop(link);
          return;
        }
        continue;
      }
      if (action == Action::kHeartbeat) {
        out = Envelope();
        out.mutable_heartbeat();
      }
      Answer answer = Answer::kFailed;
      absl::Status s = Call(link, out, &answer);
      // A busy peer gets the packet again after a short pause (a few
      // times), so a burst at the peer costs latency, not the packet.
      for (int retry = 0; answer == Answer::kBusy && retry < kBusyRetries;
           ++retry) {
        {
          MutexLock lock(&link->mu);
          link->cv.WaitUntil(&link->mu,
                             Clock::now() + kBusyPause * (1 << retry));
          if (link->stopping) return;
        }
        s = Call(link, out, &answer);
      }
      Sent(link, out, s, answer);
    }
  }

  // Records the outcome `s` of one small-packet call `out` to `link`:
  // counted, and the link's failures reset, or counted towards
  // disconnecting it. A busy peer is not gone (as for streams in
  // BulkLoop): the packet is lost to it (counted), the link stays; so for
  // a peer that declined it.
  void Sent(const std::shared_ptr<Link>& link, const ::routing::Protocol& out,
            const absl::Status& s, Answer answer) {
    const bool answered = answer != Answer::kFailed;
    if (answer == Answer::kBusy) {
      ++busy_out;
      P2pMetrics::Inc(m.busy_out);
      Log("p2p")->debug("packet to {} refused: {}", link->node.IdHex(),
                        s.ToString());
    } else if (answer == Answer::kDeclined) {
      ++declined_out;
      P2pMetrics::Inc(m.declined_out);
      Log("p2p")->debug("packet to {} declined: {}", link->node.IdHex(),
                        s.ToString());
    } else if (s.ok()) {
      ++packets_out;
      P2pMetrics::Inc(m.packets_out);
      if (out.has_packet()) {
        P2pMetrics::Inc(m.bytes_out, out.packet().content().size());
      }
    } else if (out.has_packet()) {
      Log("p2p")->debug("send of {} to {} failed: {}", out.packet().typeid_(),
                        link->node.IdHex(), s.ToString());
    }
    {
      MutexLock lock(&link->mu);
      if (answered) link->failures = 0;
      link->last_sent = Clock::now();
    }
    if (!answered) SendFailed(link);
  }

  // A small packet of `type_id` carrying `content`, in this node's envelope.
  ::routing::Protocol Packet(std::string type_id, std::string content) const {
    ::routing::Protocol p = Envelope();
    p.mutable_packet()->set_typeid_(std::move(type_id));
    p.mutable_packet()->set_content(std::move(content));
    return p;
  }

  // The stream sender of one peer: one blob at a time, chunk by chunk.
  void BulkLoop(std::shared_ptr<Link> link) {
    for (;;) {
      Link::Outgoing item;
      {
        MutexLock lock(&link->mu);
        while (!link->stopping && link->streams.empty()) {
          link->cv.Wait(&link->mu);
        }
        if (link->stopping) return;
        item = std::move(link->streams.front());
        link->streams.pop_front();
      }
      const size_t bytes = item.blob.wire->size();
      if (isolated.load()) {
        SendFailed(link);
        continue;
      }
      grpc::ClientContext ctx;
      ctx.set_deadline(
          std::chrono::system_clock::now() + options.network_timeout +
          std::chrono::microseconds(static_cast<int64_t>(
              static_cast<double>(bytes) * kStreamSecondsPerByte * 1e6)));
      ::routing::TLResponse resp;
      std::unique_ptr<grpc::ClientWriter<::routing::Chunk>> writer =
          link->stub->Stream(&ctx, &resp);
      bool ok = true;
      {
        ::routing::Chunk chunk;
        FillHeaderChunk(item.blob, self, options.network_id, &chunk);
        ok = writer->Write(chunk);
      }
      const size_t n = DataChunkCount(item.blob, options.chunk_bytes);
      for (size_t i = 0; ok && i < n; ++i) {
        ::routing::Chunk chunk;  // one chunk in memory per send
        FillDataChunk(item.blob, i, options.chunk_bytes, &chunk);
        ok = writer->Write(chunk);
      }
      if (ok) writer->WritesDone();
      grpc::Status s = writer->Finish();
      if (ok && s.ok() && !resp.has_internalservererror()) {
        ++streams_out;
        P2pMetrics::Inc(m.streams_out);
        P2pMetrics::Inc(m.bytes_out, bytes);
        MutexLock lock(&link->mu);
        link->failures = 0;
        continue;
      }
      if (resp.has_internalservererror()) {
        // The peer is busy: not a failure of the link, but the stream is
        // lost to this peer (its requester asks again).
        ++busy_out;
        P2pMetrics::Inc(m.busy_out);
        Log("p2p")->debug("stream {} to {} refused: {}", item.blob.type_id,
                          link->node.IdHex(),
                          resp.internalservererror().error());
        continue;
      }
      Log("p2p")->debug("stream {} to {} failed: {}", item.blob.type_id,
                        link->node.IdHex(), s.error_message());
      SendFailed(link);
    }
  }

  void DispatchLoop(bool large_queue) {
    for (;;) {
      Event e;
      {
        MutexLock lock(&queue_mu);
        std::deque<Event>& q = large_queue ? large : small;
        while (!queue_stopping && q.empty()) queue_cv.Wait(&queue_mu);
        if (queue_stopping) return;
        e = std::move(q.front());
        q.pop_front();
      }
      switch (e.kind) {
        case Event::Kind::kConnected:
          handler->OnConnected(e.from);
          break;
        case Event::Kind::kDisconnected:
          handler->OnDisconnected(e.from);
          break;
        case Event::Kind::kPacket:
          if (e.link != nullptr) e.link->inbound_packets.fetch_sub(1);
          handler->OnPacket(e.from, e.type_id, std::move(e.content),
                            large_queue);
          break;
      }
      // e.reservation is released here, after the handler is done.
    }
  }

  void ReaperLoop() {
    for (;;) {
      std::vector<std::shared_ptr<Link>> todo;
      {
        MutexLock lock(&mu);
        while (!stopped && dead.empty()) reaper_cv.Wait(&mu);
        todo.swap(dead);
        if (todo.empty() && stopped) return;
      }
      for (auto& link : todo) {
        if (link->control.joinable()) link->control.join();
        if (link->bulk.joinable()) link->bulk.join();
        // Its queued streams release their permits with it.
      }
    }
  }

  // --- The service -----------------------------------------------------

  // Checks an inbound header: the right network, a well-formed sender
  // that is not banned.
  grpc::Status CheckSender(const ::routing::Header& h, PeerNode* sender) {
    if (h.networkid() != options.network_id) {
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                          absl::StrCat("network id '", h.networkid(),
                                       "' is not '", options.network_id, "'"));
    }
    absl::StatusOr<PeerNode> p = PeerFromProto(h.sender());
    if (!p.ok()) {
      ++malformed;
      P2pMetrics::Inc(m.malformed);
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          std::string(p.status().message()));
    }
    {
      MutexLock lock(&mu);
      if (IsBanned(p->id)) {
        return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "banned");
      }
    }
    *sender = *std::move(p);
    return grpc::Status::OK;
  }

  void Busy(::routing::TLResponse* resp, std::string_view what) {
    ++busy_in;
    P2pMetrics::Inc(m.busy_in);
    resp->mutable_internalservererror()->set_error(
        absl::StrCat("busy: ", std::string(what), "; retry later"));
  }

  grpc::Status Send(grpc::ServerContext*, const ::routing::TLRequest* req,
                    ::routing::TLResponse* resp) override {
    if (isolated.load()) return ToGrpc(IsolatedError());
    // gRPC refuses a message above the server's limit, but that limit is
    // also the stream chunks' (chunk_bytes may be above max_unary_bytes).
    if (req->ByteSizeLong() > options.max_unary_bytes + kEnvelopeBytes) {
      ++malformed;
      P2pMetrics::Inc(m.malformed);
      return grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          absl::StrCat("a request above ", options.max_unary_bytes,
                       " bytes of payload"));
    }
    if (!req->has_protocol() || !req->protocol().has_header()) {
      ++malformed;
      P2pMetrics::Inc(m.malformed);
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "a request needs a protocol header");
    }
    const ::routing::Protocol& p = req->protocol();
    PeerNode sender;
    if (grpc::Status s = CheckSender(p.header(), &sender); !s.ok()) return s;
    if (p.message_case() == ::routing::Protocol::MESSAGE_NOT_SET) {
      ++malformed;
      P2pMetrics::Inc(m.malformed);
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "a protocol message needs a body");
    }
    // Validated before the sender becomes a peer: a refused request adds
    // nothing to the table.
    if (p.has_packet() && !ValidTypeId(p.packet().typeid_())) {
      ++malformed;
      P2pMetrics::Inc(m.malformed);
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "a packet needs a type of 1 to 64 printable "
                          "characters");
    }
    if (p.has_disconnect()) {
      if (std::shared_ptr<Link> link = Find(sender.id)) {
        bool was = false;
        {
          MutexLock lock(&link->mu);
          was = link->connected;
          link->connected = false;
          link->backoff = options.reconnect_max;
          link->next_attempt = Clock::now() + link->backoff;
        }
        if (was) Announce(link, false);
      }
      Header(resp->mutable_ack()->mutable_header());
      return grpc::Status::OK;
    }
    std::shared_ptr<Link> link = Ensure(sender, false);
    if (link == nullptr) {
      return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          "this node takes no more peers");
    }
    MarkConnected(link);
    if (p.has_packet()) {
      std::optional<absl::Status> now =
          handler->TakeNow(sender, p.packet().typeid_(), p.packet().content());
      if (now.has_value()) {
        if (now->ok()) {
          ++packets_in;
          P2pMetrics::Inc(m.packets_in);
          P2pMetrics::Inc(m.bytes_in, p.packet().content().size());
          Header(resp->mutable_ack()->mutable_header());
        } else {
          ++declined_in;
          P2pMetrics::Inc(m.declined_in);
          resp->mutable_internalservererror()->set_error(
              absl::StrCat(kDeclinedPrefix, now->message()));
        }
        return grpc::Status::OK;
      }
      if (link->inbound_packets.fetch_add(1) >=
          options.inbound_packets_per_peer) {
        link->inbound_packets.fetch_sub(1);
        Busy(resp, "too many packets from this peer wait");
        return grpc::Status::OK;
      }
      ++packets_in;
      P2pMetrics::Inc(m.packets_in);
      P2pMetrics::Inc(m.bytes_in, p.packet().content().size());
      Event e;
      e.from = sender;
      e.type_id = p.packet().typeid_();
      e.content = p.packet().content();
      e.link = link;
      Post(std::move(e), false);
    }
    Header(resp->mutable_ack()->mutable_header());
    return grpc::Status::OK;
  }

  grpc::Status Stream(grpc::ServerContext* ctx,
                      grpc::ServerReader<::routing::Chunk>* reader,
                      ::routing::TLResponse* resp) override {
    if (isolated.load()) return ToGrpc(IsolatedError());
    StreamAssembler assembler(options.network_id, options.max_stream_bytes);
    ::routing::Chunk chunk;
    if (!reader->Read(&chunk)) {
      ++malformed;
      P2pMetrics::Inc(m.malformed);
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "empty stream");
    }
    if (absl::Status s = assembler.Add(chunk); !s.ok()) {
      if (s.code() != absl::StatusCode::kPermissionDenied) {
        ++malformed;
        P2pMetrics::Inc(m.malformed);
      }
      return ToGrpc(s);
    }
    const PeerNode sender = *assembler.sender();
    {
      MutexLock lock(&mu);
      if (IsBanned(sender.id)) {
        return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "banned");
      }
    }
    std::shared_ptr<Link> link = Ensure(sender, false);
    if (link == nullptr) {
      return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          "this node takes no more peers");
    }
    MarkConnected(link);
    // The budget for the whole stream before any data is read: the wire
    // bytes and the content they become.
    const size_t content = assembler.content_length();
    const size_t reserve =
        assembler.compressed() ? 2 * content + kEnvelopeBytes : content;
    if (!link->in_budget->TryTake(reserve)) {
      Busy(resp, "this peer's streams use their byte budget");
      return grpc::Status::OK;
    }
    if (!in_global->TryTake(reserve)) {
      link->in_budget->Give(reserve);
      Busy(resp, "inbound streams use the node's byte budget");
      return grpc::Status::OK;
    }
    Permit held(link->in_budget, in_global, reserve);
    while (reader->Read(&chunk)) {
      if (absl::Status s = assembler.Add(chunk); !s.ok()) {
        Punish(sender.id, std::string(s.message()));
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            std::string(s.message()));
      }
    }
    // Cut off by its sender, a deadline or a broken connection (a node
    // restarting mid-transfer): dropped, not punished.
    if (ctx->IsCancelled()) {
      return grpc::Status(grpc::StatusCode::CANCELLED, "stream cancelled");
    }
    const std::string type_id = assembler.type_id();
    absl::StatusOr<std::string> body = std::move(assembler).Finish();
    if (!body.ok()) {
      Punish(sender.id, std::string(body.status().message()));
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          std::string(body.status().message()));
    }
    ++streams_in;
    P2pMetrics::Inc(m.streams_in);
    P2pMetrics::Inc(m.bytes_in, body->size());
    Event e;
    e.from = sender;
    e.type_id = type_id;
    e.content = *std::move(body);
    e.reservation = std::move(held);
    Post(std::move(e), true);
    Header(resp->mutable_ack()->mutable_header());
    return grpc::Status::OK;
  }

  void Punish(ByteView id, std::string_view reason) {
    ++malformed;
    P2pMetrics::Inc(m.malformed);
    Log("p2p")->warn("peer {} refused for {} ms: {}", HexEncode(id),
                     options.ban.count(), reason);
    {
      MutexLock lock(&mu);
      banned[Bytes(id.begin(), id.end())] = Clock::now() + options.ban;
      // The ban list is bounded like the table.
      if (banned.size() > 4 * options.max_peers) {
        const auto now = Clock::now();
        for (auto it = banned.begin(); it != banned.end();) {
          it = it->second <= now ? banned.erase(it) : std::next(it);
        }
      }
    }
    if (std::shared_ptr<Link> link = Find(id)) Drop(link);
  }

  void StopAll() {
    {
      MutexLock lock(&mu);
      if (stopped) return;
      stopped = true;
    }
    if (server != nullptr) {
      server->Shutdown(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(500));
      server->Wait();
    }
    std::vector<std::shared_ptr<Link>> all;
    {
      MutexLock lock(&mu);
      for (auto& [id, link] : links) all.push_back(link);
      links.clear();
    }
    // A link Drop() stopped meanwhile is in `dead`: the reaper joins it,
    // so only the links stopped here are joined here.
    std::vector<std::shared_ptr<Link>> mine;
    for (auto& link : all) {
      MutexLock lock(&link->mu);
      if (link->stopping) continue;
      link->stopping = true;
      link->cv.SignalAll();
      mine.push_back(link);
    }
    for (auto& link : mine) {
      if (link->control.joinable()) link->control.join();
      if (link->bulk.joinable()) link->bulk.join();
    }
    {
      MutexLock lock(&mu);
      reaper_cv.SignalAll();
    }
    if (reaper.joinable()) reaper.join();
    {
      MutexLock lock(&queue_mu);
      queue_stopping = true;
      queue_cv.SignalAll();
    }
    if (small_dispatcher.joinable()) small_dispatcher.join();
    if (large_dispatcher.joinable()) large_dispatcher.join();
    MutexLock lock(&queue_mu);
    small.clear();
    large.clear();
  }
};

// --- Transport --------------------------------------------------------

Transport::Transport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Transport::~Transport() { Stop(); }

absl::StatusOr<std::unique_ptr<Transport>> Transport::Start(
    const TransportOptions& options, PacketHandler* handler,
    metrics::Registry* registry) {
  if (options.self.id.size() != kNodeIdBytes) {
    return absl::InvalidArgumentError("the node id must have 20 bytes");
  }
  if (options.chunk_bytes == 0 || options.max_peers == 0) {
    return absl::InvalidArgumentError("chunk size and peer bound must be > 0");
  }
  auto impl = std::make_unique<Impl>(options, handler);
  RETURN_IF_ERROR(impl->m.Register(registry));
  impl->self = options.self;
  grpc::ServerBuilder builder;
  const std::string address =
      absl::StrCat(options.listen_host, ":", options.self.tcp_port);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(),
                           &impl->port);
  grpc::ResourceQuota quota(absl::StrCat("rnode-p2p-", address));
  quota.SetMaxThreads(options.max_server_threads + 2);
  builder.SetResourceQuota(quota);
  builder.SetMaxReceiveMessageSize(static_cast<int>(
      std::max(options.max_unary_bytes, options.chunk_bytes) + kEnvelopeBytes));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             kMaxStreamsPerConnection);
  builder.RegisterService(impl.get());
  impl->server = builder.BuildAndStart();
  if (impl->server == nullptr || impl->port == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", address, " (protocol port)"));
  }
  impl->self.tcp_port = static_cast<uint32_t>(impl->port);
  Impl* raw = impl.get();
  impl->small_dispatcher = std::thread([raw] { raw->DispatchLoop(false); });
  impl->large_dispatcher = std::thread([raw] { raw->DispatchLoop(true); });
  impl->reaper = std::thread([raw] { raw->ReaperLoop(); });
  return std::unique_ptr<Transport>(new Transport(std::move(impl)));
}

void Transport::Stop() {
  if (impl_ != nullptr) impl_->StopAll();
}

int Transport::port() const { return impl_->port; }
const PeerNode& Transport::self() const { return impl_->self; }

bool Transport::AddPeer(const PeerNode& peer, bool persistent) {
  return impl_->Ensure(peer, persistent) != nullptr;
}

std::vector<PeerNode> Transport::Connected() const {
  std::vector<std::shared_ptr<Link>> all;
  {
    MutexLock lock(&impl_->mu);
    for (auto& [id, link] : impl_->links) all.push_back(link);
  }
  std::vector<PeerNode> out;
  for (auto& link : all) {
    MutexLock lock(&link->mu);
    if (link->connected) out.push_back(link->node);
  }
  return out;
}

std::vector<PeerNode> Transport::Known() const {
  MutexLock lock(&impl_->mu);
  std::vector<PeerNode> out;
  for (auto& [id, link] : impl_->links) out.push_back(link->node);
  return out;
}

absl::Status Transport::Send(ByteView peer_id, std::string type_id,
                             std::string content) {
  std::shared_ptr<Link> link = impl_->Find(peer_id);
  if (link == nullptr) return absl::NotFoundError("peer not connected");
  ::routing::Protocol p = impl_->Packet(std::move(type_id), std::move(content));
  MutexLock lock(&link->mu);
  if (!link->connected || link->stopping) {
    return absl::NotFoundError("peer not connected");
  }
  if (link->packets.size() >= impl_->options.outbound_packets_per_peer) {
    ++impl_->busy_out;
    P2pMetrics::Inc(impl_->m.busy_out);
    return absl::ResourceExhaustedError("busy: the peer's send queue is full");
  }
  link->packets.push_back(std::move(p));
  link->cv.SignalAll();
  return absl::OkStatus();
}

absl::Status Transport::SendNow(ByteView peer_id, std::string type_id,
                                std::string content,
                                std::chrono::milliseconds timeout) {
  std::shared_ptr<Link> link = impl_->Find(peer_id);
  if (link == nullptr) return absl::NotFoundError("peer not connected");
  {
    MutexLock lock(&link->mu);
    if (!link->connected || link->stopping) {
      return absl::NotFoundError("peer not connected");
    }
  }
  const ::routing::Protocol p =
      impl_->Packet(std::move(type_id), std::move(content));
  Impl::Answer answer = Impl::Answer::kFailed;
  absl::Status s = impl_->Call(link, p, &answer, timeout);
  // Counted as a queued send's outcome would be (a failure counts towards
  // disconnecting a dead peer).
  impl_->Sent(link, p, s, answer);
  return s;
}

size_t Transport::SendToAll(const std::string& type_id,
                            const std::string& content) {
  size_t sent = 0;
  for (const PeerNode& peer : Connected()) {
    if (Send(peer.id, type_id, content).ok()) ++sent;
  }
  return sent;
}

absl::StatusOr<Transport::Permit> Transport::ReserveStream(ByteView peer_id,
                                                           size_t bytes) {
  std::shared_ptr<Link> link = impl_->Find(peer_id);
  if (link == nullptr) return absl::NotFoundError("peer not connected");
  {
    MutexLock lock(&link->mu);
    if (!link->connected) return absl::NotFoundError("peer not connected");
  }
  if (!link->out_budget->TryTake(bytes)) {
    ++impl_->busy_out;
    P2pMetrics::Inc(impl_->m.busy_out);
    return absl::ResourceExhaustedError(
        "busy: streams to this peer use their byte budget");
  }
  if (!impl_->out_global->TryTake(bytes)) {
    link->out_budget->Give(bytes);
    ++impl_->busy_out;
    P2pMetrics::Inc(impl_->m.busy_out);
    return absl::ResourceExhaustedError(
        "busy: outbound streams use the node's byte budget");
  }
  return Permit(link->out_budget, impl_->out_global, bytes);
}

absl::Status Transport::Stream(ByteView peer_id, Permit permit,
                               const Blob& blob) {
  if (blob.wire == nullptr) return absl::InvalidArgumentError("empty blob");
  std::shared_ptr<Link> link = impl_->Find(peer_id);
  if (link == nullptr) return absl::NotFoundError("peer not connected");
  if (permit.peer_ != link->out_budget || permit.bytes() < blob.wire->size()) {
    return absl::InvalidArgumentError(
        "the permit was not taken for this peer and size");
  }
  MutexLock lock(&link->mu);
  if (!link->connected || link->stopping) {
    return absl::NotFoundError("peer not connected");
  }
  link->streams.push_back(Link::Outgoing{blob, std::move(permit)});
  link->cv.SignalAll();
  return absl::OkStatus();
}

void Transport::Punish(ByteView peer_id, std::string_view reason) {
  impl_->Punish(peer_id, reason);
}

void Transport::SetIsolated(bool isolated) {
  if (impl_->isolated.exchange(isolated) != isolated) {
    Log("p2p")->warn(isolated ? "fault injection: isolated from every peer"
                              : "fault injection: isolation lifted");
  }
}

bool Transport::isolated() const { return impl_->isolated.load(); }

TransportCounters Transport::counters() const {
  const Impl& i = *impl_;
  return TransportCounters{
      .packets_in = i.packets_in.load(),
      .streams_in = i.streams_in.load(),
      .packets_out = i.packets_out.load(),
      .streams_out = i.streams_out.load(),
      .busy_in = i.busy_in.load(),
      .busy_out = i.busy_out.load(),
      .declined_in = i.declined_in.load(),
      .declined_out = i.declined_out.load(),
      .malformed = i.malformed.load(),
      .send_failures = i.send_failures.load(),
      .disconnects = i.disconnects.load(),
  };
}

}  // namespace rnode::node::p2p

// The transport's inbound side: the routing service's handlers (small
// packets, streams, handshakes and heartbeats, disconnects), each checked
// and bounded before it is taken, and the two dispatcher threads that hand
// what was taken to the PacketHandler.
#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "node/p2p/grpc_status.h"
#include "node/p2p/identity/validator_statement.h"
#include "node/p2p/internal/tls_credentials.h"
#include "node/p2p/internal/transport_impl.h"
#include "routing.grpc.pb.h"
#include "util/status_macros.h"
#include "util/unix_time.h"

namespace rnode::node::p2p {

using Link = internal::Link;
using internal::kDeclinedPrefix;
using internal::kEnvelopeBytes;

namespace {

// Longest packet type name accepted from the wire.
constexpr size_t kMaxTypeIdBytes = 64;

bool ValidTypeId(const std::string& type) {
  if (type.empty() || type.size() > kMaxTypeIdBytes) return false;
  return std::all_of(type.begin(), type.end(),
                     [](char c) { return c > 0x20 && c < 0x7f; });
}

}  // namespace

// The generated service's two methods, answered by `impl` (not owned, which
// outlives it).
class Transport::Impl::RoutingService final
    : public ::routing::TransportLayer::Service {
 public:
  explicit RoutingService(Impl* impl) : impl_(impl) {}

  grpc::Status Send(grpc::ServerContext* ctx, const ::routing::TLRequest* req,
                    ::routing::TLResponse* resp) override {
    return impl_->HandleSend(*ctx, req, resp);
  }

  grpc::Status Stream(grpc::ServerContext* ctx,
                      grpc::ServerReader<::routing::Chunk>* reader,
                      ::routing::TLResponse* resp) override {
    return impl_->HandleStream(ctx, reader, resp);
  }

 private:
  Impl* const impl_;
};

std::unique_ptr<grpc::Service> Transport::Impl::NewRoutingService() {
  return std::make_unique<RoutingService>(this);
}

void Transport::Impl::Post(Event e, bool large_queue) {
  MutexLock lock(&queue_mu);
  if (queue_stopping) return;
  const Bytes sender = e.from.id;
  (large_queue ? large : small).Push(sender, std::move(e));
  queue_cv.SignalAll();
}

void Transport::Impl::DispatchLoop(bool large_queue) {
  for (;;) {
    Event e;
    {
      MutexLock lock(&queue_mu);
      FairQueue<Bytes, Event>& q = large_queue ? large : small;
      while (!queue_stopping && q.empty()) queue_cv.Wait(&queue_mu);
      if (queue_stopping) return;
      e = q.Pop();
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
        handler->OnPacket(e.from, e.type_id, std::move(e.content), large_queue);
        break;
    }
    // e.reservation is released here, after the handler is done.
  }
}

grpc::Status Transport::Impl::CheckProven(const grpc::ServerContext& ctx,
                                          ByteView claimed) {
  absl::StatusOr<Bytes> proven = internal::ProvenPeerId(ctx);
  if (!proven.ok()) return ToGrpc(proven.status());
  if (*proven == Bytes(claimed.begin(), claimed.end())) {
    return grpc::Status::OK;
  }
  ++impersonations;
  P2pMetrics::Inc(m.impersonations);
  return grpc::Status(
      grpc::StatusCode::PERMISSION_DENIED,
      absl::StrCat("the sender is node ", HexEncode(claimed),
                   " but the TLS certificate is node ", HexEncode(*proven)));
}

grpc::Status Transport::Impl::CheckSender(const grpc::ServerContext& ctx,
                                          const ::routing::Header& h,
                                          PeerNode* sender) {
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
  if (grpc::Status s = CheckProven(ctx, p->id); !s.ok()) return s;
  {
    MutexLock lock(&mu);
    if (IsBanned(p->id) || IsHostBanned(HostOfGrpcPeer(ctx.peer()))) {
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "banned");
    }
  }
  *sender = *std::move(p);
  return grpc::Status::OK;
}

absl::StatusOr<ValidatorStatement> Transport::Impl::CheckStatement(
    ByteView proven_id, const std::string& encoded) {
  ++statements_checked;
  P2pMetrics::Inc(m.statements_checked);
  absl::StatusOr<ValidatorStatement> checked =
      [&]() -> absl::StatusOr<ValidatorStatement> {
    ASSIGN_OR_RETURN(ValidatorStatement statement,
                     DecodeValidatorStatement(AsBytes(encoded)));
    RETURN_IF_ERROR(CheckValidatorStatement(
        statement, proven_id, options.network_id, options.shard_id, UnixMs()));
    return statement;
  }();
  if (!checked.ok()) {
    ++statements_refused;
    P2pMetrics::Inc(m.statements_refused);
  }
  return checked;
}

bool Transport::Impl::IsBonded(const crypto::Secp256k1PublicKey& key) const {
  return options.is_bonded_validator && options.is_bonded_validator(key);
}

void Transport::Impl::RecordStatement(
    const std::shared_ptr<Link>& link, const std::string& encoded,
    const absl::StatusOr<ValidatorStatement>& checked) {
  const bool bonded = checked.ok() && IsBonded(checked->validator);
  MutexLock lock(&link->mu);
  link->statement = encoded;
  link->statement_ok = checked.ok();
  link->statement_checked = Clock::now();
  if (!checked.ok()) return;
  link->statement_time_ms = checked->time_ms;
  link->validator = checked->validator;
  link->reserved = bonded;
}

void Transport::Impl::TakeStatement(const std::shared_ptr<Link>& link,
                                    const std::string& encoded) {
  {
    MutexLock lock(&link->mu);
    if (link->statement == encoded) {
      // A peer repeats its statement on every message: verified once; an
      // accepted one is kept while its time is near enough.
      if (link->statement_ok &&
          !CheckValidatorStatementTime(link->statement_time_ms, UnixMs())
               .ok()) {
        link->statement_ok = false;
        link->validator.reset();
        link->reserved = false;
        ++statements_refused;
        P2pMetrics::Inc(m.statements_refused);
      }
      return;
    }
    if (link->statement_checked != Clock::time_point{} &&
        Clock::now() - link->statement_checked <
            internal::kStatementCheckInterval) {
      return;
    }
  }
  RecordStatement(link, encoded, CheckStatement(link->node.id, encoded));
}

void Transport::Impl::Busy(::routing::TLResponse* resp, std::string_view what) {
  ++busy_in;
  P2pMetrics::Inc(m.busy_in);
  resp->mutable_internalservererror()->set_error(
      absl::StrCat("busy: ", std::string(what), "; retry later"));
}

grpc::Status Transport::Impl::HandleSend(const grpc::ServerContext& ctx,
                                         const ::routing::TLRequest* req,
                                         ::routing::TLResponse* resp) {
  if (isolated.load()) return ToGrpc(internal::IsolatedError());
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
  if (grpc::Status s = CheckSender(ctx, p.header(), &sender); !s.ok()) {
    return s;
  }
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
  const std::string& statement = p.validator_statement();
  std::shared_ptr<Link> link = Ensure(sender, false);
  if (link == nullptr && !statement.empty() && options.is_bonded_validator &&
      slotless_checks.TryTake()) {
    // The unreserved slots are full: a proven bonded validator may take a
    // reserved one (its verdict is kept on the link it gets).
    absl::StatusOr<ValidatorStatement> checked =
        CheckStatement(sender.id, statement);
    if (checked.ok() && IsBonded(checked->validator)) {
      link = Ensure(sender, false, /*validator=*/true);
      if (link != nullptr) RecordStatement(link, statement, checked);
    }
  }
  if (link != nullptr) link = Readdress(link, sender);
  if (link == nullptr) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "this node takes no more peers");
  }
  MarkConnected(link);
  {
    MutexLock lock(&link->mu);
    link->last_host = HostOfGrpcPeer(ctx.peer());
  }
  if (!statement.empty()) TakeStatement(link, statement);
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

grpc::Status Transport::Impl::HandleStream(
    grpc::ServerContext* ctx, grpc::ServerReader<::routing::Chunk>* reader,
    ::routing::TLResponse* resp) {
  if (isolated.load()) return ToGrpc(internal::IsolatedError());
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
  if (grpc::Status s = CheckProven(*ctx, sender.id); !s.ok()) return s;
  const std::string host = HostOfGrpcPeer(ctx->peer());
  {
    MutexLock lock(&mu);
    if (IsBanned(sender.id) || IsHostBanned(host)) {
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "banned");
    }
  }
  std::shared_ptr<Link> link = Ensure(sender, false);
  if (link != nullptr) link = Readdress(link, sender);
  if (link == nullptr) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "this node takes no more peers");
  }
  MarkConnected(link);
  {
    MutexLock lock(&link->mu);
    link->last_host = host;
  }
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
      Punish(sender.id, std::string(s.message()), host);
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
    Punish(sender.id, std::string(body.status().message()), host);
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

}  // namespace rnode::node::p2p

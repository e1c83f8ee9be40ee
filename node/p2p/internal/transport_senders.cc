// The transport's outbound side: each link's gRPC client, its small-packet
// sender (handshake, packets, heartbeat, with busy retries) and its stream
// sender (one blob at a time, chunk by chunk).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "node/p2p/grpc_status.h"
#include "node/p2p/internal/tls_credentials.h"
#include "node/p2p/internal/transport_impl.h"
#include "routing.grpc.pb.h"
#include "util/logging.h"

namespace rnode::node::p2p {

using Link = internal::Link;
using internal::kDeclinedPrefix;

namespace {

// A small packet a peer answered busy is sent again this many times, after
// pauses doubling from kBusyPause.
constexpr int kBusyRetries = 3;
constexpr auto kBusyPause = std::chrono::milliseconds(20);
// A stream may take this long per byte beyond the network timeout (the
// public node's 5 microseconds per byte).
constexpr double kStreamSecondsPerByte = 5e-6;

}  // namespace

namespace internal {

struct LinkClient {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<::routing::TransportLayer::Stub> stub;
};

void LinkClientDeleter::operator()(LinkClient* client) const { delete client; }

LinkClientPtr OpenClient(const PeerNode& peer,
                         const TransportOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(static_cast<int>(kEnvelopeBytes));
  args.SetMaxSendMessageSize(static_cast<int>(
      std::max(options.max_unary_bytes, options.chunk_bytes) + kEnvelopeBytes));
  // A restarted peer is dialled again within a second or two, not after
  // gRPC's default back-off of up to two minutes. gRPC reads the "minimum
  // back-off" as the least time one connection attempt (TCP, TLS, HTTP/2
  // settings) gets: that is the network timeout, so a peer far away or
  // slow to answer is still reached (200 ms here once made every attempt
  // to a peer more than about a second away time out).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS,
              static_cast<int>(options.network_timeout.count()));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  // Only the node `peer` names may answer at its address.
  PinChannel(&args, peer.id);
  LinkClientPtr client(new LinkClient);
  client->channel = grpc::CreateCustomChannel(
      peer.ProtocolTarget(), ChannelCredentialsFor(*options.tls), args);
  client->stub = ::routing::TransportLayer::NewStub(client->channel);
  return client;
}

}  // namespace internal

std::string Transport::Impl::Statement() const {
  if (!options.validator_statement) return std::string();
  MutexLock lock(&statement_mu);
  const auto now = Clock::now();
  if (statement.empty() ||
      now - statement_made >= internal::kStatementRefresh) {
    const Bytes fresh = options.validator_statement();
    statement = std::string(AsChars(fresh));
    statement_made = now;
  }
  return statement;
}

void Transport::Impl::Header(::routing::Header* h) const {
  PeerToProto(self, h->mutable_sender());
  h->set_networkid(options.network_id);
}

::routing::Protocol Transport::Impl::Envelope() const {
  ::routing::Protocol p;
  Header(p.mutable_header());
  p.set_validator_statement(Statement());
  return p;
}

::routing::Protocol Transport::Impl::Packet(std::string type_id,
                                            std::string content) const {
  ::routing::Protocol p = Envelope();
  p.mutable_packet()->set_typeid_(std::move(type_id));
  p.mutable_packet()->set_content(std::move(content));
  return p;
}

absl::Status Transport::Impl::Call(
    const std::shared_ptr<Link>& link, const ::routing::Protocol& protocol,
    Answer* answer, std::optional<std::chrono::milliseconds> timeout) {
  Answer ignored;
  Answer& a = answer != nullptr ? *answer : ignored;
  a = Answer::kFailed;
  if (isolated.load()) return internal::IsolatedError();
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() +
                   timeout.value_or(options.network_timeout));
  ::routing::TLRequest req;
  *req.mutable_protocol() = protocol;
  ::routing::TLResponse resp;
  grpc::Status s = link->client->stub->Send(&ctx, req, &resp);
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

void Transport::Impl::ControlLoop(const std::shared_ptr<Link>& link) {
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
        link->cv.WaitUntil(&link->mu, Clock::now() + kBusyPause * (1 << retry));
        if (link->stopping) return;
      }
      s = Call(link, out, &answer);
    }
    Sent(link, out, s, answer);
  }
}

void Transport::Impl::Sent(const std::shared_ptr<Link>& link,
                           const ::routing::Protocol& out,
                           const absl::Status& s, Answer answer) {
  const bool answered = answer != Answer::kFailed;
  if (answer == Answer::kBusy) {
    ++busy_out;
    P2pMetrics::Inc(m.busy_out);
    Log("p2p")->debug("packet to {} refused: {}", link->node.IdHex(),
                      LogText(s.ToString()));
  } else if (answer == Answer::kDeclined) {
    ++declined_out;
    P2pMetrics::Inc(m.declined_out);
    Log("p2p")->debug("packet to {} declined: {}", link->node.IdHex(),
                      LogText(s.ToString()));
  } else if (s.ok()) {
    ++packets_out;
    P2pMetrics::Inc(m.packets_out);
    if (out.has_packet()) {
      P2pMetrics::Inc(m.bytes_out, out.packet().content().size());
    }
  } else if (out.has_packet()) {
    Log("p2p")->debug("send of {} to {} failed: {}", out.packet().typeid_(),
                      link->node.IdHex(), LogText(s.ToString()));
  }
  {
    MutexLock lock(&link->mu);
    if (answered) link->failures = 0;
    link->last_sent = Clock::now();
  }
  if (!answered) SendFailed(link);
}

void Transport::Impl::BulkLoop(const std::shared_ptr<Link>& link) {
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
        link->client->stub->Stream(&ctx, &resp);
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
                        LogText(resp.internalservererror().error()));
      continue;
    }
    Log("p2p")->debug("stream {} to {} failed: {}", item.blob.type_id,
                      link->node.IdHex(), LogText(s.error_message()));
    SendFailed(link);
  }
}

}  // namespace rnode::node::p2p

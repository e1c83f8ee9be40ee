// The transport's public face (node/p2p/transport.h): start and stop,
// the peer table's queries, the send and stream entry points, and the
// outbound stream permits. The rest lives in internal/transport_*.cc.
#include "node/p2p/transport.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "node/p2p/identity/validator_statement.h"
#include "node/p2p/internal/tls_credentials.h"
#include "node/p2p/internal/transport_impl.h"
#include "util/logging.h"
#include "util/mutex.h"
#include "util/status_macros.h"
#include "util/unix_time.h"

namespace rnode::node::p2p {

using Link = internal::Link;
using internal::P2pMetrics;

namespace {

// Calls one peer connection may have open at once on our server: an honest
// peer has two (its small-packet and its stream sender); a flooding peer
// cannot take every server thread through one connection.
constexpr int kMaxStreamsPerConnection = 4;

}  // namespace

// --- Permits ----------------------------------------------------------

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

// --- Transport --------------------------------------------------------

Transport::Transport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Transport::~Transport() { Stop(); }

absl::StatusOr<std::unique_ptr<Transport>> Transport::Start(
    const TransportOptions& options, PacketHandler* handler,
    metrics::Registry* registry) {
  if (options.self.id.size() != kNodeIdBytes) {
    return absl::InvalidArgumentError("the node id must have 20 bytes");
  }
  if (options.tls == nullptr) {
    return absl::InvalidArgumentError("the transport needs a TLS identity");
  }
  if (options.tls->node_id != options.self.id) {
    return absl::InvalidArgumentError(
        "the node id is not the id of the TLS identity's key");
  }
  if (options.chunk_bytes == 0 || options.max_peers == 0) {
    return absl::InvalidArgumentError("chunk size and peer bound must be > 0");
  }
  auto impl = std::make_unique<Impl>(options, handler);
  RETURN_IF_ERROR(impl->m.Register(registry));
  impl->self = options.self;
  grpc::ServerBuilder builder;
  const std::string address =
      HostPort(options.listen_host, options.self.tcp_port);
  builder.AddListeningPort(
      address, internal::ServerCredentialsFor(*options.tls), &impl->port);
  grpc::ResourceQuota quota(absl::StrCat("rnode-p2p-", address));
  quota.SetMaxThreads(options.max_server_threads + 2);
  builder.SetResourceQuota(quota);
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(std::max(options.max_unary_bytes, options.chunk_bytes) +
                       internal::kEnvelopeBytes));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             kMaxStreamsPerConnection);
  // gRPC sets SO_REUSEPORT by default: another process of the same user
  // could then bind this port too and take a share of the connections.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  impl->service = impl->NewRoutingService();
  builder.RegisterService(impl->service.get());
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

namespace {

// The key `link`'s peer has proven, while its statement is fresh.
std::optional<crypto::Secp256k1PublicKey> ProvenValidator(Link& link) {
  MutexLock lock(&link.mu);
  if (!link.validator.has_value() ||
      !CheckValidatorStatementTime(link.statement_time_ms, UnixMs()).ok()) {
    return std::nullopt;
  }
  return link.validator;
}

}  // namespace

std::optional<crypto::Secp256k1PublicKey> Transport::ValidatorOf(
    ByteView peer_id) const {
  std::shared_ptr<Link> link = impl_->Find(peer_id);
  if (link == nullptr) return std::nullopt;
  return ProvenValidator(*link);
}

std::optional<crypto::Secp256k1PublicKey> Transport::BondedValidatorOf(
    ByteView peer_id) {
  std::shared_ptr<Link> link = impl_->Find(peer_id);
  if (link == nullptr) return std::nullopt;
  std::optional<crypto::Secp256k1PublicKey> key = ProvenValidator(*link);
  const bool bonded = key.has_value() && impl_->IsBonded(*key);
  link->reserved = bonded;
  return bonded ? key : std::nullopt;
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
      .impersonations = i.impersonations.load(),
      .hosts_banned = i.hosts_banned.load(),
      .readdressed = i.readdressed.load(),
      .statements_checked = i.statements_checked.load(),
      .statements_refused = i.statements_refused.load(),
      .peers_refused = i.peers_refused.load(),
      .peers_evicted = i.peers_evicted.load(),
      .send_failures = i.send_failures.load(),
      .disconnects = i.disconnects.load(),
  };
}

}  // namespace rnode::node::p2p

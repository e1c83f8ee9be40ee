// Kademlia discovery over gRPC: the flat peer table, the synchronous
// KademliaRPCService server and the Ping / Lookup client calls.
#include "node/p2p/discovery.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/resource_quota.h"
#include "kademlia.grpc.pb.h"
#include "kademlia.pb.h"
#include "node/p2p/grpc_status.h"
#include "node/p2p/internal/tls_credentials.h"
#include "util/host_address.h"

namespace rnode::node::p2p {
namespace {

namespace kad = ::coop::rchain::comm::discovery;

// Largest discovery message sent or accepted. A LookupResponse of
// kLookupPeers nodes (20-byte id, a host of at most kMaxHostBytes, two
// ports) is under 6 KiB; 64 KiB leaves room for fields a newer peer may add
// while a peer cannot make us buffer megabytes.
constexpr int kMaxMessageBytes = 64 * 1024;

// Threads the synchronous server keeps beyond the handlers: its pollers.
constexpr int kPollerThreads = 2;

// How long Stop lets calls in flight finish before cancelling them; a
// discovery call is a table look-up, so this is short.
constexpr auto kShutdownGrace = std::chrono::milliseconds(500);

// True when `a` is nearer `target` than `b`: XOR distance compared byte by
// byte from the first (ids shorter than the others count as padded with
// zeros), ties by id.
bool Nearer(ByteView target, const PeerNode& a, const PeerNode& b) {
  const size_t n = std::max({target.size(), a.id.size(), b.id.size()});
  for (size_t i = 0; i < n; ++i) {
    const uint8_t t = i < target.size() ? target[i] : 0;
    const uint8_t da = t ^ (i < a.id.size() ? a.id[i] : 0);
    const uint8_t db = t ^ (i < b.id.size() ? b.id[i] : 0);
    if (da != db) return da < db;
  }
  return a.id < b.id;
}

bool SameId(ByteView a, ByteView b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

absl::Status OtherNetwork(std::string_view call, const std::string& target,
                          const std::string& theirs, const std::string& ours) {
  return absl::PermissionDeniedError(
      absl::StrCat("discovery ", std::string(call), " to ", target,
                   ": peer is on network '", theirs, "', not '", ours, "'"));
}

// Counts handlers running at once; a slot is refused beyond `max`.
class InFlightSlot {
 public:
  InFlightSlot(std::atomic<int>* count, int max) : count_(count) {
    int current = count_->load(std::memory_order_relaxed);
    do {
      if (current >= max) return;
    } while (!count_->compare_exchange_weak(current, current + 1,
                                            std::memory_order_acq_rel));
    taken_ = true;
  }
  ~InFlightSlot() {
    if (taken_) count_->fetch_sub(1, std::memory_order_acq_rel);
  }
  InFlightSlot(const InFlightSlot&) = delete;
  InFlightSlot& operator=(const InFlightSlot&) = delete;

  bool taken() const { return taken_; }

 private:
  std::atomic<int>* const count_;
  bool taken_ = false;
};

class KademliaService final : public kad::KademliaRPCService::Service {
 public:
  KademliaService(const DiscoveryOptions& options, PeerTable* table)
      : options_(options), table_(table) {}

  grpc::Status SendPing(grpc::ServerContext* ctx, const kad::Ping* request,
                        kad::Pong* reply) override {
    InFlightSlot slot(&in_flight_, options_.max_in_flight);
    if (!slot.taken()) return Busy();
    absl::StatusOr<PeerNode> sender =
        CheckSender(*ctx, request->networkid(), request->sender());
    if (!sender.ok()) return ToGrpc(sender.status());
    Learn(*sender);
    reply->set_networkid(options_.network_id);
    return grpc::Status::OK;
  }

  grpc::Status SendLookup(grpc::ServerContext* ctx, const kad::Lookup* request,
                          kad::LookupResponse* reply) override {
    InFlightSlot slot(&in_flight_, options_.max_in_flight);
    if (!slot.taken()) return Busy();
    absl::StatusOr<PeerNode> sender =
        CheckSender(*ctx, request->networkid(), request->sender());
    if (!sender.ok()) return ToGrpc(sender.status());
    if (request->id().size() != kNodeIdBytes) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("lookup id has ", request->id().size(),
                                       " bytes, not ", kNodeIdBytes));
    }
    Learn(*sender);
    // One more than answered, in case the requester is among them.
    const std::vector<PeerNode> closest =
        table_->Closest(AsBytes(request->id()), kLookupPeers + 1);
    size_t answered = 0;
    for (const PeerNode& peer : closest) {
      if (answered == kLookupPeers) break;
      if (SameId(peer.id, sender->id)) continue;
      PeerToProto(peer, reply->add_nodes());
      ++answered;
    }
    reply->set_networkid(options_.network_id);
    return grpc::Status::OK;
  }

 private:
  static grpc::Status Busy() {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "discovery server busy");
  }

  // The sender of a request: PermissionDenied for another network or a
  // sender the caller's certificate does not prove (with TLS),
  // InvalidArgument for a malformed node.
  absl::StatusOr<PeerNode> CheckSender(const grpc::ServerContext& ctx,
                                       const std::string& network_id,
                                       const kad::Node& sender) const {
    if (network_id != options_.network_id) {
      return absl::PermissionDeniedError(
          absl::StrCat("this node is on network '", options_.network_id,
                       "', not '", network_id, "'"));
    }
    absl::StatusOr<PeerNode> peer = PeerFromProto(sender);
    if (!peer.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("sender: ", std::string(peer.status().message())));
    }
    absl::StatusOr<Bytes> proven = internal::ProvenPeerId(ctx);
    if (!proven.ok()) return proven.status();
    if (*proven != peer->id) {
      return absl::PermissionDeniedError(absl::StrCat(
          "the sender is node ", peer->IdHex(),
          " but the TLS certificate is node ", HexEncode(*proven)));
    }
    return peer;
  }

  void Learn(const PeerNode& sender) {
    if (!options_.allow_private_addresses && IsPrivateHost(sender.host)) {
      return;
    }
    // A full table keeps the peers it has; the sender is answered anyway.
    (void)table_->Upsert(sender);
  }

  const DiscoveryOptions options_;
  PeerTable* const table_;
  std::atomic<int> in_flight_{0};
};

// A stub for `to`'s discovery port as `tls`, pinned to `to.id`.
std::unique_ptr<kad::KademliaRPCService::Stub> NewStub(const PeerNode& to,
                                                       const TlsIdentity& tls) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  internal::PinChannel(&args, to.id);
  return kad::KademliaRPCService::NewStub(grpc::CreateCustomChannel(
      to.DiscoveryTarget(), internal::ChannelCredentialsFor(tls), args));
}

void SetDeadline(grpc::ClientContext* context,
                 std::chrono::milliseconds timeout) {
  context->set_deadline(std::chrono::system_clock::now() + timeout);
}

}  // namespace

// ---------------------------------------------------------------------------
// PeerTable.

PeerTable::PeerTable(Bytes self_id, size_t max_peers)
    : self_id_(std::move(self_id)),
      max_peers_(std::max<size_t>(1, max_peers)),
      max_heard_(std::max<size_t>(1, max_peers / 2)) {}

size_t PeerTable::OldestHeardLocked() const {
  size_t oldest = entries_.size();
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].grade != PeerGrade::kHeard) continue;
    if (oldest == entries_.size() ||
        entries_[i].heard_at < entries_[oldest].heard_at) {
      oldest = i;
    }
  }
  return oldest;
}

bool PeerTable::Upsert(const PeerNode& peer, PeerGrade grade) {
  if (SameId(peer.id, self_id_)) return false;
  MutexLock lock(&mu_);
  for (Entry& known : entries_) {
    if (!SameId(known.peer.id, peer.id)) continue;
    if (grade == PeerGrade::kProven) {
      known.peer = peer;
      known.grade = PeerGrade::kProven;
      known.failures = 0;
    } else if (known.grade == PeerGrade::kHeard) {
      known.peer = peer;
    }
    return true;
  }
  Entry entry{peer, grade, 0, next_heard_at_++};
  const size_t heard = static_cast<size_t>(std::count_if(
      entries_.begin(), entries_.end(),
      [](const Entry& e) { return e.grade == PeerGrade::kHeard; }));
  const bool full = entries_.size() >= max_peers_;
  if (grade == PeerGrade::kHeard ? heard >= max_heard_ : full) {
    const size_t oldest = OldestHeardLocked();
    if (oldest == entries_.size()) return false;
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(oldest));
  } else if (full) {
    return false;
  }
  entries_.push_back(std::move(entry));
  return true;
}

void PeerTable::Failed(ByteView id) {
  MutexLock lock(&mu_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (!SameId(it->peer.id, id)) continue;
    if (it->grade == PeerGrade::kHeard) {
      entries_.erase(it);
    } else if (++it->failures >= kProvenPeerFailures) {
      it->grade = PeerGrade::kHeard;
      it->heard_at = next_heard_at_++;
    }
    return;
  }
}

void PeerTable::Remove(ByteView id) {
  MutexLock lock(&mu_);
  std::erase_if(entries_,
                [id](const Entry& e) { return SameId(e.peer.id, id); });
}

std::optional<PeerNode> PeerTable::Find(ByteView id) const {
  MutexLock lock(&mu_);
  for (const Entry& e : entries_) {
    if (SameId(e.peer.id, id)) return e.peer;
  }
  return std::nullopt;
}

std::optional<PeerGrade> PeerTable::GradeOf(ByteView id) const {
  MutexLock lock(&mu_);
  for (const Entry& e : entries_) {
    if (SameId(e.peer.id, id)) return e.grade;
  }
  return std::nullopt;
}

std::vector<PeerNode> PeerTable::Closest(ByteView id, size_t k) const {
  std::vector<PeerNode> peers;
  {
    MutexLock lock(&mu_);
    for (const Entry& e : entries_) {
      if (e.grade == PeerGrade::kProven) peers.push_back(e.peer);
    }
  }
  const size_t n = std::min(k, peers.size());
  std::partial_sort(
      peers.begin(), peers.begin() + static_cast<std::ptrdiff_t>(n),
      peers.end(),
      [id](const PeerNode& a, const PeerNode& b) { return Nearer(id, a, b); });
  peers.resize(n);
  return peers;
}

std::vector<PeerNode> PeerTable::All() const {
  MutexLock lock(&mu_);
  std::vector<PeerNode> out;
  out.reserve(entries_.size());
  for (const Entry& e : entries_) out.push_back(e.peer);
  return out;
}

size_t PeerTable::size() const {
  MutexLock lock(&mu_);
  return entries_.size();
}

size_t PeerTable::heard() const {
  MutexLock lock(&mu_);
  return static_cast<size_t>(std::count_if(
      entries_.begin(), entries_.end(),
      [](const Entry& e) { return e.grade == PeerGrade::kHeard; }));
}

// ---------------------------------------------------------------------------
// DiscoveryServer.

struct DiscoveryServer::Impl {
  Impl(const DiscoveryOptions& options, PeerTable* table)
      : service(options, table) {}
  // Declared before `server`, which must go first.
  KademliaService service;
  int port = 0;
  Mutex stop_mu;  // held through a Stop, so a second one waits for it
  std::unique_ptr<grpc::Server> server ABSL_GUARDED_BY(stop_mu);
};

DiscoveryServer::DiscoveryServer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

DiscoveryServer::~DiscoveryServer() { Stop(); }

absl::StatusOr<std::unique_ptr<DiscoveryServer>> DiscoveryServer::Start(
    const DiscoveryOptions& options, PeerTable* table) {
  if (options.max_in_flight < 1) {
    return absl::InvalidArgumentError(
        "discovery: max_in_flight must be at least 1");
  }
  if (options.tls == nullptr) {
    return absl::InvalidArgumentError("discovery: needs a TLS identity");
  }
  if (options.tls->node_id != options.self.id) {
    return absl::InvalidArgumentError(
        "discovery: the node id is not the id of the TLS identity's key");
  }
  if (options.self.udp_port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "discovery: port ", options.self.udp_port, " is out of range"));
  }
  auto impl = std::make_unique<Impl>(options, table);
  const std::string address =
      HostPort(options.listen_host, options.self.udp_port);

  grpc::ServerBuilder builder;
  builder.AddListeningPort(
      address, internal::ServerCredentialsFor(*options.tls), &impl->port);
  // Each synchronous handler takes a thread; the quota bounds them (beyond
  // it gRPC itself answers RESOURCE_EXHAUSTED).
  grpc::ResourceQuota quota(absl::StrCat("rnode-discovery-", address));
  quota.SetMaxThreads(options.max_in_flight + kPollerThreads);
  builder.SetResourceQuota(quota);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  // Two nodes on one host must not share a port silently.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(&impl->service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || impl->port == 0) {
    return absl::UnavailableError(
        absl::StrCat("discovery: cannot listen on ", address));
  }
  {
    MutexLock lock(&impl->stop_mu);
    impl->server = std::move(server);
  }
  return std::unique_ptr<DiscoveryServer>(new DiscoveryServer(std::move(impl)));
}

void DiscoveryServer::Stop() {
  MutexLock lock(&impl_->stop_mu);
  if (impl_->server == nullptr) return;
  impl_->server->Shutdown(std::chrono::system_clock::now() + kShutdownGrace);
  impl_->server->Wait();
  impl_->server.reset();
}

int DiscoveryServer::port() const { return impl_->port; }

// ---------------------------------------------------------------------------
// Client calls.

absl::Status Ping(const PeerNode& to, const PeerNode& self,
                  const std::string& network_id,
                  std::chrono::milliseconds timeout, const TlsIdentity& tls) {
  const std::string target = to.DiscoveryTarget();
  kad::Ping request;
  PeerToProto(self, request.mutable_sender());
  request.set_networkid(network_id);
  kad::Pong reply;
  grpc::ClientContext context;
  SetDeadline(&context, timeout);
  const grpc::Status s = NewStub(to, tls)->SendPing(&context, request, &reply);
  if (!s.ok()) return FromGrpc(s, absl::StrCat("discovery ping to ", target));
  if (reply.networkid() != network_id) {
    return OtherNetwork("ping", target, reply.networkid(), network_id);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<PeerNode>> Lookup(const PeerNode& to, ByteView id,
                                             const PeerNode& self,
                                             const std::string& network_id,
                                             std::chrono::milliseconds timeout,
                                             const TlsIdentity& tls) {
  const std::string target = to.DiscoveryTarget();
  kad::Lookup request;
  request.set_id(std::string(AsChars(id)));
  PeerToProto(self, request.mutable_sender());
  request.set_networkid(network_id);
  kad::LookupResponse reply;
  grpc::ClientContext context;
  SetDeadline(&context, timeout);
  const grpc::Status s =
      NewStub(to, tls)->SendLookup(&context, request, &reply);
  if (!s.ok()) return FromGrpc(s, absl::StrCat("discovery lookup to ", target));
  if (reply.networkid() != network_id) {
    return OtherNetwork("lookup", target, reply.networkid(), network_id);
  }
  std::vector<PeerNode> peers;
  for (const kad::Node& node : reply.nodes()) {
    if (peers.size() == kLookupPeers) break;
    absl::StatusOr<PeerNode> peer = PeerFromProto(node);
    if (peer.ok()) peers.push_back(*std::move(peer));
  }
  return peers;
}

}  // namespace rnode::node::p2p

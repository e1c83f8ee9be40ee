#include "integration/badpeer/impostor.h"

#include <atomic>
#include <chrono>
#include <utility>

#include "node/p2p/discovery.h"
#include "node/p2p/identity/tls_identity.h"
#include "node/p2p/transport.h"

namespace rnode::badpeer {

// Counts who connects to the impostor's transport and what they send.
struct Impostor::Impl final : public node::p2p::PacketHandler {
  void OnPacket(const node::p2p::PeerNode&, const std::string&, std::string,
                bool) override {
    ++packets;
  }
  void OnConnected(const node::p2p::PeerNode&) override { ++handshakes; }

  std::atomic<uint64_t> handshakes{0};
  std::atomic<uint64_t> packets{0};
  std::shared_ptr<const node::p2p::TlsIdentity> tls;
  std::unique_ptr<node::p2p::PeerTable> table;
  // Stopped first (destroyed in reverse order): the servers, then the
  // table they read.
  std::unique_ptr<node::p2p::DiscoveryServer> discovery;
  std::unique_ptr<node::p2p::Transport> transport;
};

Impostor::Impostor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Impostor::~Impostor() {
  if (impl_ == nullptr) return;
  if (impl_->transport != nullptr) impl_->transport->Stop();
  if (impl_->discovery != nullptr) impl_->discovery->Stop();
}

absl::StatusOr<std::unique_ptr<Impostor>> Impostor::Start(
    const node::p2p::PeerNode& target, const std::string& network_id,
    const Bytes& victim_id) {
  auto impl = std::make_unique<Impl>();
  absl::StatusOr<node::p2p::TlsIdentity> identity = node::p2p::NewTlsIdentity();
  if (!identity.ok()) return identity.status();
  impl->tls =
      std::make_shared<const node::p2p::TlsIdentity>(*std::move(identity));
  const Bytes& self_id = impl->tls->node_id;

  node::p2p::TransportOptions to;
  to.tls = impl->tls;
  to.self = node::p2p::PeerNode{self_id, "127.0.0.1", 0, 1};
  to.network_id = network_id;
  absl::StatusOr<std::unique_ptr<node::p2p::Transport>> t =
      node::p2p::Transport::Start(to, impl.get(), nullptr);
  if (!t.ok()) return t.status();
  impl->transport = *std::move(t);
  const uint32_t protocol_port = static_cast<uint32_t>(impl->transport->port());

  impl->table = std::make_unique<node::p2p::PeerTable>(self_id, 16);
  node::p2p::DiscoveryOptions d;
  d.self = node::p2p::PeerNode{self_id, "127.0.0.1", protocol_port, 0};
  d.network_id = network_id;
  d.tls = impl->tls;
  absl::StatusOr<std::unique_ptr<node::p2p::DiscoveryServer>> server =
      node::p2p::DiscoveryServer::Start(d, impl->table.get());
  if (!server.ok()) return server.status();
  impl->discovery = *std::move(server);
  const uint32_t discovery_port =
      static_cast<uint32_t>(impl->discovery->port());
  // The lie: the victim's id at the impostor's ports.
  impl->table->Upsert(node::p2p::PeerNode{victim_id, "127.0.0.1", protocol_port,
                                          discovery_port},
                      node::p2p::PeerGrade::kProven);
  const node::p2p::PeerNode self{self_id, "127.0.0.1", protocol_port,
                                 discovery_port};
  if (absl::Status s = node::p2p::Ping(
          target, self, network_id, std::chrono::seconds(10), *impl->tls);
      !s.ok()) {
    return absl::UnavailableError("the target did not answer the ping: " +
                                  s.ToString());
  }
  return std::unique_ptr<Impostor>(new Impostor(std::move(impl)));
}

bool Impostor::LookedUpBy(const Bytes& id) const {
  return impl_->table->Find(id).has_value();
}

uint64_t Impostor::Handshakes() const { return impl_->handshakes.load(); }

uint64_t Impostor::PacketsIn() const {
  const node::p2p::TransportCounters c = impl_->transport->counters();
  return c.packets_in + c.streams_in;
}

std::string Impostor::Address() const {
  return node::p2p::FormatPeerAddress(
      node::p2p::PeerNode{impl_->tls->node_id, "127.0.0.1",
                          static_cast<uint32_t>(impl_->transport->port()),
                          static_cast<uint32_t>(impl_->discovery->port())});
}

}  // namespace rnode::badpeer

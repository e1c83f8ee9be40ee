#include "node/core/peer_discovery.h"

#include <optional>
#include <vector>

namespace rnode::node {

DiscoveryLoop::~DiscoveryLoop() { Stop(); }

void DiscoveryLoop::Start(p2p::Transport* transport, p2p::PeerTable* peers,
                          DiscoveryLoopOptions options) {
  thread_ = std::thread([this, transport, peers, options = std::move(options)] {
    Run(transport, peers, options);
  });
}

void DiscoveryLoop::Stop() {
  stop_.Stop();
  if (thread_.joinable()) thread_.join();
}

void DiscoveryLoop::Run(p2p::Transport* transport, p2p::PeerTable* peers,
                        const DiscoveryLoopOptions& options) {
  const p2p::PeerNode self = transport->self();
  auto next = std::chrono::steady_clock::now();
  while (!stop_.WaitUntil(next)) {
    next = std::chrono::steady_clock::now() + options.interval;
    // Peers that reached us are known to discovery too; then ask each
    // known peer (the bootstrap first) for the peers it knows.
    for (const p2p::PeerNode& p : transport->Known()) peers->Upsert(p);
    for (const p2p::PeerNode& peer : peers->All()) {
      absl::StatusOr<std::vector<p2p::PeerNode>> found =
          p2p::Lookup(peer, self.id, self, options.network_id, options.timeout,
                      *options.tls);
      if (!found.ok()) {
        peers->Failed(peer.id);
        continue;
      }
      // It answered at that address over a handshake pinned to its id:
      // proven, so this node may pass it on in its own lookup answers.
      peers->Upsert(peer, p2p::PeerGrade::kProven);
      for (const p2p::PeerNode& p : *found) {
        if (!peers->Upsert(p)) continue;
        // The table's address, not the answer's: hearsay does not move a
        // proven peer's address, so neither may it send the link there.
        if (std::optional<p2p::PeerNode> known = peers->Find(p.id)) {
          transport->AddPeer(*known);
        }
      }
      if (stop_.stopped()) return;
    }
  }
}

}  // namespace rnode::node

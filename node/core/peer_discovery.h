// The discovery loop (docs/p2p.md "Discovery"): every lookup interval it
// makes the peers that reached this node known to discovery, asks each
// known peer (the bootstrap first) for the peers it knows, and links to
// the new ones.
#ifndef RNODE_NODE_CORE_PEER_DISCOVERY_H_
#define RNODE_NODE_CORE_PEER_DISCOVERY_H_

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "node/p2p/discovery.h"
#include "node/p2p/transport.h"
#include "util/stop_signal.h"

namespace rnode::node {

struct DiscoveryLoopOptions {
  std::chrono::milliseconds interval{0};  // between rounds
  std::chrono::milliseconds timeout{0};   // per lookup
  std::string network_id;
  // This node's identity (required): lookups are mutual TLS pinned to
  // the peer asked.
  std::shared_ptr<const p2p::TlsIdentity> tls;
};

// Thread-safe.
class DiscoveryLoop {
 public:
  ~DiscoveryLoop();  // Stop().
  // Starts the loop over `transport` and `peers` (not owned; outlive
  // Stop()).
  void Start(p2p::Transport* transport, p2p::PeerTable* peers,
             DiscoveryLoopOptions options);
  // Stops and joins the loop (after its current lookup). Idempotent.
  void Stop();

 private:
  void Run(p2p::Transport* transport, p2p::PeerTable* peers,
           const DiscoveryLoopOptions& options);
  StopSignal stop_;
  std::thread thread_;
};

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_PEER_DISCOVERY_H_

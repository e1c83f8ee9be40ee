// The transport's metrics (docs/metrics.md "p2p"), registered once per
// transport.
#ifndef RNODE_NODE_P2P_INTERNAL_TRANSPORT_METRICS_H_
#define RNODE_NODE_P2P_INTERNAL_TRANSPORT_METRICS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "node/metrics/metrics.h"

namespace rnode::node::p2p::internal {

// The transport's metrics; null members when the node has no registry.
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
  metrics::Counter* impersonations = nullptr;
  metrics::Counter* hosts_banned = nullptr;
  metrics::Counter* readdressed = nullptr;
  metrics::Counter* statements_checked = nullptr;
  metrics::Counter* statements_refused = nullptr;
  metrics::Counter* peers_refused = nullptr;
  metrics::Counter* peers_evicted = nullptr;
  metrics::Counter* send_failures = nullptr;
  metrics::Counter* disconnects = nullptr;
  metrics::Counter* bytes_in = nullptr;
  metrics::Counter* bytes_out = nullptr;

  // Adds every metric to `r` (not owned; null: none are kept). The
  // registry's error when a name is taken.
  absl::Status Register(metrics::Registry* r);
  // Adds `n` to `c` when there is one.
  static void Inc(metrics::Counter* c, uint64_t n = 1) {
    if (c != nullptr) c->Inc(n);
  }
};

}  // namespace rnode::node::p2p::internal

#endif  // RNODE_NODE_P2P_INTERNAL_TRANSPORT_METRICS_H_

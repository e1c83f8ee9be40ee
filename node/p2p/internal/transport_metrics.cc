// Registers the transport's metrics (docs/metrics.md "p2p").
#include "node/p2p/internal/transport_metrics.h"

#include <string_view>

#include "absl/status/statusor.h"

namespace rnode::node::p2p::internal {

absl::Status P2pMetrics::Register(metrics::Registry* r) {
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
           counter(&impersonations, "p2p_impersonations_total",
                   "inbound calls refused: the header named a sender other "
                   "than the node the caller's TLS certificate proves"),
           counter(&hosts_banned, "p2p_hosts_banned_total",
                   "hosts (the IP address of a punished peer's calls) "
                   "banned with its id; loopback hosts are exempt"),
           counter(&readdressed, "p2p_links_readdressed_total",
                   "links moved from an address heard of to the one their "
                   "peer advertises on an authenticated call"),
           counter(&statements_checked,
                   "p2p_validator_statements_checked_total",
                   "validator statements from peers whose signature was "
                   "verified (a repeat of a peer's last one is not)"),
           counter(&statements_refused,
                   "p2p_validator_statements_refused_total",
                   "validator statements from peers that did not check "
                   "(malformed, another node or shard, stale, bad signature)"),
           counter(&peers_refused, "p2p_peers_refused_total",
                   "new peers refused because their slots were full (peers "
                   "that are not proven bonded validators share the "
                   "unreserved ones)"),
           counter(&peers_evicted, "p2p_peers_evicted_total",
                   "peers dropped to make room: for a proven bonded "
                   "validator, or silent ones for a peer that is here"),
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

}  // namespace rnode::node::p2p::internal

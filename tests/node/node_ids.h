// Node ids for the P2P tests, recognisable by their first and last bytes,
// and the transport options those tests share.
#ifndef RNODE_TESTS_NODE_NODE_IDS_H_
#define RNODE_TESTS_NODE_NODE_IDS_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "node/p2p/peer.h"
#include "node/p2p/transport.h"
#include "util/bytes.h"

namespace rnode::testing {

// A well-formed node id (kNodeIdBytes long), zero except its first byte
// `first` and its last byte `last`.
inline Bytes NodeIdOf(uint8_t first, uint8_t last = 0) {
  Bytes id(node::p2p::kNodeIdBytes, 0);
  id.front() = first;
  id.back() = last;
  return id;
}

// Transport options for `self` on `network_id` with heartbeats, reconnects
// and timeouts short enough for tests on 127.0.0.1 (plaintext until the
// caller sets tls).
inline node::p2p::TransportOptions FastTransportOptions(
    node::p2p::PeerNode self, const std::string& network_id) {
  using std::chrono::milliseconds;
  node::p2p::TransportOptions o;
  o.self = std::move(self);
  o.network_id = network_id;
  o.heartbeat_interval = milliseconds(150);
  o.reconnect_min = milliseconds(50);
  o.reconnect_max = milliseconds(200);
  o.network_timeout = milliseconds(2000);
  return o;
}

}  // namespace rnode::testing

#endif  // RNODE_TESTS_NODE_NODE_IDS_H_

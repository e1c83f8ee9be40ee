// Node ids for the P2P tests: made-up ones recognisable by their first and
// last bytes, and numbered TLS identities; and the transport options those
// tests share.
#ifndef RNODE_TESTS_NODE_NODE_IDS_H_
#define RNODE_TESTS_NODE_NODE_IDS_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "node/p2p/identity/tls_identity.h"
#include "node/p2p/peer.h"
#include "node/p2p/transport.h"
#include "util/bytes.h"
#include "util/mutex.h"

namespace rnode::testing {

// A well-formed node id (kNodeIdBytes long), zero except its first byte
// `first` and its last byte `last`.
inline Bytes NodeIdOf(uint8_t first, uint8_t last = 0) {
  Bytes id(node::p2p::kNodeIdBytes, 0);
  id.front() = first;
  id.back() = last;
  return id;
}

// The TLS identity number `n` of this test process: made on first use
// (a fresh P-256 key and its certificate) and the same for every later
// call with that `n`, so that tests can name peers by number. Aborts when
// OpenSSL cannot make a key (there is nothing to test then). Thread-safe.
inline std::shared_ptr<const node::p2p::TlsIdentity> TestIdentity(uint8_t n) {
  static Mutex mu;
  static std::array<std::shared_ptr<const node::p2p::TlsIdentity>, 256> made;
  MutexLock lock(&mu);
  if (made[n] == nullptr) {
    absl::StatusOr<node::p2p::TlsIdentity> id = node::p2p::NewTlsIdentity();
    if (!id.ok()) {
      std::fprintf(stderr, "NewTlsIdentity: %s\n",
                   id.status().ToString().c_str());
      std::abort();
    }
    made[n] = std::make_shared<const node::p2p::TlsIdentity>(*std::move(id));
  }
  return made[n];
}

// The node id of TestIdentity(n).
inline Bytes TestNodeId(uint8_t n) { return TestIdentity(n)->node_id; }

// Transport options for the node of `tls` (listening on 127.0.0.1, a free
// protocol port) on `network_id` with heartbeats, reconnects and timeouts
// short enough for tests on 127.0.0.1.
inline node::p2p::TransportOptions FastTransportOptions(
    std::shared_ptr<const node::p2p::TlsIdentity> tls,
    const std::string& network_id) {
  using std::chrono::milliseconds;
  node::p2p::TransportOptions o;
  o.self = node::p2p::PeerNode{tls->node_id, "127.0.0.1", 0, 40404};
  o.tls = std::move(tls);
  o.network_id = network_id;
  o.heartbeat_interval = milliseconds(150);
  o.reconnect_min = milliseconds(50);
  o.reconnect_max = milliseconds(200);
  o.network_timeout = milliseconds(2000);
  return o;
}

}  // namespace rnode::testing

#endif  // RNODE_TESTS_NODE_NODE_IDS_H_

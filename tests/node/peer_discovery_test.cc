// Tests for the discovery loop (node/core/peer_discovery.h) over real
// transports and discovery servers on 127.0.0.1 (mutual TLS).
#include "node/core/peer_discovery.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "node/p2p/discovery.h"
#include "node/p2p/peer.h"
#include "node/p2p/transport.h"
#include "tests/eventually.h"
#include "tests/node/node_ids.h"
#include "util/bytes.h"

namespace rnode::node {
namespace {

using ::rnode::testing::Eventually;
using ::rnode::testing::FastTransportOptions;
using ::rnode::testing::TestIdentity;
using ::rnode::testing::TestNodeId;

constexpr char kNetwork[] = "testnet";
// A port nothing listens on.
constexpr uint32_t kDeadPort = 1;

class Ignore : public p2p::PacketHandler {
 public:
  void OnPacket(const p2p::PeerNode&, const std::string&, std::string,
                bool) override {}
};

std::optional<p2p::PeerNode> FindIn(const std::vector<p2p::PeerNode>& peers,
                                    const Bytes& id) {
  auto it = std::find_if(peers.begin(), peers.end(),
                         [&](const p2p::PeerNode& p) { return p.id == id; });
  if (it == peers.end()) return std::nullopt;
  return *it;
}

// A discovery server of test identity `n` with its own table; `self`
// advertises `tcp_port` as the node's protocol port.
struct DiscoveryPeer {
  DiscoveryPeer(uint8_t n, uint32_t tcp_port) : table(TestNodeId(n), 64) {
    p2p::DiscoveryOptions o;
    o.self = p2p::PeerNode{TestNodeId(n), "127.0.0.1", tcp_port, 0};
    o.network_id = kNetwork;
    o.tls = TestIdentity(n);
    absl::StatusOr<std::unique_ptr<p2p::DiscoveryServer>> started =
        p2p::DiscoveryServer::Start(o, &table);
    EXPECT_TRUE(started.ok()) << started.status();
    if (!started.ok()) return;
    server = *std::move(started);
    self = o.self;
    self.udp_port = static_cast<uint32_t>(server->port());
  }

  p2p::PeerTable table;
  std::unique_ptr<p2p::DiscoveryServer> server;
  p2p::PeerNode self;
};

// An honest node of test identity `n`: its transport, and its discovery
// server advertising the transport's port.
struct HonestNode {
  explicit HonestNode(uint8_t n, p2p::PacketHandler* handler) {
    absl::StatusOr<std::unique_ptr<p2p::Transport>> started =
        p2p::Transport::Start(FastTransportOptions(TestIdentity(n), kNetwork),
                              handler, nullptr);
    EXPECT_TRUE(started.ok()) << started.status();
    if (!started.ok()) return;
    transport = *std::move(started);
    discovery = std::make_unique<DiscoveryPeer>(
        n, static_cast<uint32_t>(transport->port()));
  }
  bool ok() const {
    return transport != nullptr && discovery != nullptr &&
           discovery->server != nullptr;
  }

  std::unique_ptr<p2p::Transport> transport;
  std::unique_ptr<DiscoveryPeer> discovery;
};

// A loop of test identity 1: a round every 50 ms.
DiscoveryLoopOptions LoopOptions() {
  DiscoveryLoopOptions options;
  options.interval = std::chrono::milliseconds(50);
  options.timeout = std::chrono::seconds(5);
  options.network_id = kNetwork;
  options.tls = TestIdentity(1);
  return options;
}

// A lookup answer is hearsay: when it names a peer the table holds as
// proven at another address, the loop links to the proven address
// (regression: it linked to the answer's, so any peer it asked could send
// the link for an honest validator to a port of the asker's choosing).
TEST(DiscoveryLoopTest, AnAnswerDoesNotSteerTheLinkOfAProvenPeer) {
  Ignore handler;
  HonestNode b(2, &handler);
  ASSERT_TRUE(b.ok());
  // L: a liar whose answers name B at a dead port.
  DiscoveryPeer liar(3, kDeadPort);
  ASSERT_NE(liar.server, nullptr);
  const p2p::PeerNode lie{TestNodeId(2), "127.0.0.1", kDeadPort, kDeadPort};
  ASSERT_TRUE(liar.table.Upsert(lie, p2p::PeerGrade::kProven));

  // X, under test, has reached both: B at B's real address.
  absl::StatusOr<std::unique_ptr<p2p::Transport>> x = p2p::Transport::Start(
      FastTransportOptions(TestIdentity(1), kNetwork), &handler, nullptr);
  ASSERT_TRUE(x.ok()) << x.status();
  p2p::PeerTable table(TestNodeId(1), 64);
  ASSERT_TRUE(table.Upsert(b.discovery->self, p2p::PeerGrade::kProven));
  ASSERT_TRUE(table.Upsert(liar.self, p2p::PeerGrade::kProven));

  DiscoveryLoop loop;
  loop.Start(x->get(), &table, LoopOptions());
  // The liar's answer makes X link to B, at B's own address.
  EXPECT_TRUE(Eventually(
      [&] { return FindIn((*x)->Connected(), TestNodeId(2)).has_value(); }));
  loop.Stop();

  const std::optional<p2p::PeerNode> linked =
      FindIn((*x)->Known(), TestNodeId(2));
  ASSERT_TRUE(linked.has_value());
  EXPECT_EQ(linked->tcp_port, b.transport->port());
  EXPECT_EQ(table.Find(TestNodeId(2)), b.discovery->self);
}

TEST(DiscoveryLoopTest, ANodeIsLinkedToThePeersItsBootstrapProved) {
  Ignore handler;
  HonestNode b(2, &handler);
  ASSERT_TRUE(b.ok());
  // S, the bootstrap, has reached B.
  DiscoveryPeer s(3, kDeadPort);
  ASSERT_NE(s.server, nullptr);
  ASSERT_TRUE(s.table.Upsert(b.discovery->self, p2p::PeerGrade::kProven));

  absl::StatusOr<std::unique_ptr<p2p::Transport>> x = p2p::Transport::Start(
      FastTransportOptions(TestIdentity(1), kNetwork), &handler, nullptr);
  ASSERT_TRUE(x.ok()) << x.status();
  p2p::PeerTable table(TestNodeId(1), 64);
  ASSERT_TRUE(table.Upsert(s.self));  // from the configuration: heard of

  DiscoveryLoop loop;
  loop.Start(x->get(), &table, LoopOptions());
  EXPECT_TRUE(Eventually(
      [&] { return FindIn((*x)->Connected(), TestNodeId(2)).has_value(); }));
  // S answered over a handshake pinned to its id: proven now.
  EXPECT_TRUE(Eventually(
      [&] { return table.GradeOf(TestNodeId(3)) == p2p::PeerGrade::kProven; }));
  loop.Stop();
}

}  // namespace
}  // namespace rnode::node

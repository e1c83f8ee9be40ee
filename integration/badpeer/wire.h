// A misbehaving peer on the wire (docs/reliability.md "bad-peer"): calls
// to a node's protocol port (`routing.TransportLayer`) that break the
// protocol (garbage frames, oversized messages and streams, streams that
// break their own header) or flood it with valid small packets. Each
// attack returns what the node answered; judging it is the caller's
// (p2p_misbehaving_peer_test, rnode-badpeer under scripts/chaos).
//
// Every made-up sender has a TLS identity of its own (a fresh key and
// certificate), as the node's protocol port requires mutual TLS, and
// advertises port 1, on which nothing listens, so whatever the node sends
// back to it fails at once. A sender's calls present its certificate; the
// node is not pinned (an attacker does not care whom it reaches).
#ifndef RNODE_INTEGRATION_BADPEER_WIRE_H_
#define RNODE_INTEGRATION_BADPEER_WIRE_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "node/p2p/identity/tls_identity.h"
#include "routing.grpc.pb.h"

namespace rnode::badpeer {

// Deadline of one call to the protocol port.
inline constexpr std::chrono::seconds kCallDeadline{30};

std::string RandomBytes(std::mt19937_64& rng, size_t n);

// A made-up peer: its TLS identity and a header naming it on a network.
struct Sender {
  std::shared_ptr<const node::p2p::TlsIdentity> identity;
  ::routing::Header header;
};

// A fresh made-up sender on `network_id`: a new key, 127.0.0.1, port 1.
// Aborts if OpenSSL cannot make a key (nothing to test then).
Sender MakeSender(std::string_view network_id);

// A channel of its own (its own TCP connection), so that parallel senders
// are parallel on the wire too, presenting `identity`'s certificate and
// accepting any server's (an attacker pins nobody). No message size limits
// on our side.
std::shared_ptr<grpc::Channel> NewChannel(
    const std::string& target, const node::p2p::TlsIdentity& identity);

// One Send of `p`, waited for up to kCallDeadline.
grpc::Status SendProtocol(::routing::TransportLayer::Stub& stub,
                          const ::routing::Protocol& p,
                          ::routing::TLResponse* resp);

// Tally of the answers to a peer's Sends.
struct SendTally {
  uint64_t acked = 0;
  // Refused by the transport: InternalServerError("busy: ...").
  uint64_t busy = 0;
  // Refused by gRPC before the transport saw them: RESOURCE_EXHAUSTED
  // ("Server Threadpool Exhausted": every server thread is taken).
  uint64_t shed = 0;
  uint64_t other_errors = 0;       // InternalServerError not saying "busy"
  std::map<int, uint64_t> failed;  // any other gRPC status code -> calls
  std::map<int, std::string> first_message;  // gRPC status code -> message

  void Add(const grpc::Status& status, const ::routing::TLResponse& resp);
  void Merge(const SendTally& other);
  uint64_t failures() const;
  uint64_t total() const;
};

// "3 x code 3, 1 x code 8" ("none" when empty).
std::string Codes(const std::map<int, uint64_t>& codes);
// One line per tally, with the first message of each failing code.
std::string Describe(const SendTally& t);

// `frames` raw Sends, half random bytes (1 to 4096) and half well-formed
// TLRequests that break a rule (no protocol, no header, a bad sender id,
// host or port, no message, a bad packet type, another network).
struct GarbageResult {
  int frames = 0;
  int accepted = 0;  // answered OK: each is a defect of the node
  std::map<int, uint64_t> codes;
};
GarbageResult SendGarbage(const std::string& target,
                          std::string_view network_id, int frames,
                          std::mt19937_64& rng);

// A Send of `unary_bytes`, a stream announcing `huge_stream_bytes`, a
// stream with more data than announced and one whose compression does not
// decode; after each of the last two, a heartbeat from the same sender
// (which a node bans after bad data: PERMISSION_DENIED).
struct OversizedResult {
  grpc::Status unary;
  grpc::Status huge_stream;
  struct BrokenStream {
    std::string what;
    grpc::Status stream;
    grpc::Status next_send;
  };
  std::vector<BrokenStream> broken;
};
OversizedResult SendOversized(const std::string& target,
                              std::string_view network_id, size_t unary_bytes,
                              int32_t huge_stream_bytes, std::mt19937_64& rng);

// `count` packets of `type_id` from `sender`, each a serialized
// {hash: random 32 bytes} (BlockRequest, HasBlockRequest and
// BlockHashMessage share that layout), over `threads` connections with
// `window` calls in flight each.
struct FloodOptions {
  int threads = 4;
  int window = 64;
};
SendTally Flood(const std::string& target, const Sender& sender,
                const std::string& type_id, int count, uint64_t seed,
                FloodOptions options = {});

// Heartbeats from `sender`, one after the other until `stop`: what an
// honest peer meets while someone else floods the node.
SendTally Bystander(const std::string& target, const Sender& sender,
                    const std::atomic<bool>& stop);

// Identity attacks: `attacker` calls the node with headers naming
// `victim` (a heartbeat, then a Disconnect). A node that checks senders
// against their certificates refuses both (PERMISSION_DENIED).
struct ImpersonationResult {
  grpc::Status heartbeat;
  grpc::Status disconnect;
};
ImpersonationResult Impersonate(const std::string& target,
                                const Sender& attacker, const Sender& victim);

// A heartbeat from `sender` over a channel of its own.
grpc::Status Heartbeat(const std::string& target, const Sender& sender);

// A stream over `connection`'s channel (its certificate) whose header names
// `named` and whose data overruns the length it announces: invalid data,
// for which a node bans the stream's proven sender. With `named` another
// node than `connection`, the header impersonates it.
grpc::Status OverrunStream(const std::string& target, const Sender& connection,
                           const Sender& named);

// Sybil pressure: `identities` fresh senders (a key and a connection each)
// send the node a heartbeat; `joined` is told how many it admitted (OK)
// and refused for full slots (RESOURCE_EXHAUSTED), then the admitted ones
// heartbeat again every `interval` until `stop`, to stay live peers.
struct SybilResult {
  int identities = 0;
  int admitted = 0;
  int refused = 0;                // RESOURCE_EXHAUSTED
  std::map<int, uint64_t> codes;  // any other gRPC status code -> calls
  uint64_t keepalive_failures = 0;
};
SybilResult Sybils(const std::string& target, std::string_view network_id,
                   int identities, std::chrono::milliseconds interval,
                   const std::atomic<bool>& stop,
                   const std::function<void(const SybilResult&)>& joined);

}  // namespace rnode::badpeer

#endif  // RNODE_INTEGRATION_BADPEER_WIRE_H_

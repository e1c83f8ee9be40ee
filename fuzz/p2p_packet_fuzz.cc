// libFuzzer target over what a peer sends on the protocol port, decoded as
// the transport and the Casper network decode it, without a server, a
// transport or a thread. The first input byte picks the form of the rest:
//  - even: a unary routing.TLRequest (TransportLayer.Send): its header's
//    network id and sender (p2p::PeerFromProto) are checked and a packet is
//    handed to CasperNetwork::OnPacket as a small packet;
//  - odd: a stream (TransportLayer.Stream): routing.Chunk messages, each
//    prefixed by its length (2 bytes, little-endian), reassembled by
//    p2p::StreamAssembler and handed to OnPacket as a streamed packet.
// The network has no transport attached (nothing is sent, no timer runs)
// and a DAG holding only its genesis block. Asserted:
//  - a sender that decodes survives PeerToProto / PeerFromProto, and its
//    rnode:// address (FormatPeerAddress) parses back to it when its host
//    has no '?' (a '?' in a wire host cuts the address: a known gap, not
//    asserted);
//  - a stream that assembles has the announced length; after a refused
//    chunk every later call fails; its content, made into a blob again
//    (compressed, small chunks), reassembles to the same bytes;
//  - OnPacket: a block is delivered exactly when a streamed BlockMessage
//    decodes (block::DecodeBlock), as that block, and counted; a small
//    BlockMessage is always malformed; no deploy is delivered there (the
//    transport offers DeployData to TakeNow); counters never go down; the
//    blocks asked for stay within NetworkOptions::max_wanted and never
//    include a stored block.
//  - TakeNow (which the transport calls for every small packet first):
//    only DeployData is taken there, OK exactly when it parses (and then
//    delivered once), else declined and counted malformed.
// Any broken property traps.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "CasperMessage.pb.h"
#include "absl/status/status.h"
#include "casper/block/block.h"
#include "casper/block/block_codec.h"
#include "casper/dag/dag_store.h"
#include "node/core/network.h"
#include "node/p2p/chunker.h"
#include "node/p2p/peer.h"
#include "routing.pb.h"
#include "rspace/storage/kv_store.h"
#include "util/bytes.h"
#include "util/logging.h"

namespace {

using rnode::ByteView;
using rnode::casper::block::Block;
using rnode::node::CasperNetwork;
using rnode::node::NetworkCounters;
using rnode::node::p2p::PeerNode;

constexpr char kNetworkId[] = "fuzznet";
// Bounds that keep one input to milliseconds: the content a stream may
// announce, the chunks read from one input, and the blocks the network
// asks for (small, so that giving up the oldest request is exercised).
constexpr size_t kMaxStreamBytes = size_t{1} << 20;
constexpr size_t kMaxChunks = 64;
constexpr size_t kMaxWanted = 8;
// Re-chunking of an assembled stream: compress anything above this and
// cut it into chunks of this size, so both paths run on small inputs.
constexpr size_t kReCompressAboveBytes = 64;
constexpr size_t kReChunkBytes = 256;
constexpr size_t kDagColumns = 4;

struct World {
  rnode::rspace::InMemoryStore store{kDagColumns};
  std::unique_ptr<rnode::casper::dag::DagStore> dag;
  Block genesis;
};

// The DAG with the genesis block: OnPacket only reads it, so one serves
// every run.
World& TheWorld() {
  static World* w = [] {
    auto* world = new World();
    auto dag = rnode::casper::dag::DagStore::Open(
        &world->store, rnode::casper::dag::DagColumns{});
    if (!dag.ok()) std::abort();
    world->dag = *std::move(dag);
    world->genesis.shard_id = "root";
    world->genesis.sig_algorithm.clear();
    world->genesis.hash =
        rnode::casper::block::ComputeBlockHash(world->genesis);
    if (!world->dag->Insert(world->genesis).ok()) std::abort();
    return world;
  }();
  return *w;
}

// What OnPacket delivered through the callbacks.
struct Delivered {
  int blocks = 0;
  std::optional<Block> block;
  int deploys = 0;
};

bool NotLess(const NetworkCounters& after, const NetworkCounters& before) {
  return after.blocks_received >= before.blocks_received &&
         after.blocks_served >= before.blocks_served &&
         after.requests_sent >= before.requests_sent &&
         after.retries >= before.retries &&
         after.wanted_given_up >= before.wanted_given_up &&
         after.serve_busy >= before.serve_busy &&
         after.malformed >= before.malformed &&
         after.genesis_mismatch >= before.genesis_mismatch;
}

void CheckPeer(const PeerNode& peer) {
  ::routing::Node wire;
  rnode::node::p2p::PeerToProto(peer, &wire);
  auto again = rnode::node::p2p::PeerFromProto(wire);
  if (!again.ok() || !(*again == peer)) __builtin_trap();
  if (peer.host.find('?') != std::string::npos) return;
  auto parsed = rnode::node::p2p::ParsePeerAddress(
      rnode::node::p2p::FormatPeerAddress(peer));
  if (!parsed.ok() || !(*parsed == peer)) __builtin_trap();
}

// Hands one packet to a fresh network and checks what came out of it.
void Dispatch(const PeerNode& from, const std::string& type_id,
              const std::string& content, bool streamed) {
  World& world = TheWorld();
  Delivered out;
  rnode::node::NetworkCallbacks callbacks;
  callbacks.block = [&out](Block b) {
    ++out.blocks;
    out.block = std::move(b);
  };
  callbacks.deploy = [&out](const ::casper::DeployDataProto&) {
    ++out.deploys;
    return absl::OkStatus();
  };
  rnode::node::NetworkOptions options;
  options.max_wanted = kMaxWanted;
  CasperNetwork network(world.dag.get(), world.genesis, std::move(callbacks),
                        options);
  const NetworkCounters before = network.counters();
  // The transport offers every small packet to TakeNow first: only deploys
  // are taken there, with the callback's verdict, or declined as
  // undecodable (counted malformed); the rest go on to OnPacket.
  if (!streamed) {
    const bool is_deploy = type_id == rnode::node::packet::kDeployData;
    std::optional<absl::Status> now = network.TakeNow(from, type_id, content);
    if (now.has_value() != is_deploy) __builtin_trap();
    if (is_deploy) {
      ::casper::DeployDataProto d;
      const bool decodes = d.ParseFromString(content);
      if (now->ok() != decodes) __builtin_trap();
      if (out.deploys != (decodes ? 1 : 0)) __builtin_trap();
      if (network.counters().malformed !=
          before.malformed + (decodes ? 0 : 1)) {
        __builtin_trap();
      }
      out.deploys = 0;
    }
  }
  const NetworkCounters mid = network.counters();
  network.OnPacket(from, type_id, content, streamed);
  const NetworkCounters after = network.counters();
  if (!NotLess(after, mid)) __builtin_trap();

  if (!NotLess(after, before)) __builtin_trap();
  if (network.wanted() > kMaxWanted) __builtin_trap();
  const bool is_block = type_id == rnode::node::packet::kBlockMessage;
  if (is_block && streamed) {
    auto decoded = rnode::casper::block::DecodeBlock(ByteView(
        reinterpret_cast<const uint8_t*>(content.data()), content.size()));
    const uint64_t received = after.blocks_received - before.blocks_received;
    if (received != (decoded.ok() ? 1u : 0u)) __builtin_trap();
    if (out.blocks != (decoded.ok() ? 1 : 0)) __builtin_trap();
    if (decoded.ok() && !(*out.block == *decoded)) __builtin_trap();
    if (!decoded.ok() && after.malformed == before.malformed) __builtin_trap();
  } else if (out.blocks != 0 ||
             after.blocks_received != before.blocks_received) {
    __builtin_trap();
  }
  if (is_block && !streamed && after.malformed == before.malformed) {
    __builtin_trap();
  }
  if (out.deploys != 0) {
    ::casper::DeployDataProto d;
    if (type_id != rnode::node::packet::kDeployData || streamed ||
        out.deploys != 1 || !d.ParseFromString(content)) {
      __builtin_trap();
    }
  }
  // A stored block is never asked for, however it is announced.
  if (!streamed && (type_id == rnode::node::packet::kBlockHashMessage ||
                    type_id == rnode::node::packet::kHasBlock)) {
    ::casper::BlockHashMessageProto m;  // Same field 1 as HasBlockProto.
    if (m.ParseFromString(content) &&
        m.hash() ==
            std::string(world.genesis.hash.begin(), world.genesis.hash.end()) &&
        network.wanted() != 0) {
      __builtin_trap();
    }
  }
}

void RunUnary(const uint8_t* data, size_t size) {
  ::routing::TLRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return;
  if (!request.has_protocol() || !request.protocol().has_header()) return;
  const ::routing::Protocol& p = request.protocol();
  if (p.header().networkid() != kNetworkId) return;
  auto sender = rnode::node::p2p::PeerFromProto(p.header().sender());
  if (!sender.ok()) return;
  CheckPeer(*sender);
  if (!p.has_packet()) return;
  Dispatch(*sender, p.packet().typeid_(), p.packet().content(), false);
}

// A reassembled stream: what its header announced and its content.
struct Stream {
  PeerNode sender;
  std::string type_id;
  uint32_t content_length = 0;
  std::string content;
};

// Feeds `chunks` to a fresh assembler; nullopt when the stream is refused.
std::optional<Stream> Assemble(const std::vector<::routing::Chunk>& chunks) {
  rnode::node::p2p::StreamAssembler assembler(kNetworkId, kMaxStreamBytes);
  for (const ::routing::Chunk& c : chunks) {
    if (!assembler.Add(c).ok()) {
      // A refused stream stays refused.
      if (assembler.Add(c).code() != absl::StatusCode::kFailedPrecondition) {
        __builtin_trap();
      }
      if (std::move(assembler).Finish().status().code() !=
          absl::StatusCode::kFailedPrecondition) {
        __builtin_trap();
      }
      return std::nullopt;
    }
  }
  if (!assembler.sender().has_value()) {
    if (std::move(assembler).Finish().ok()) __builtin_trap();
    return std::nullopt;
  }
  Stream s;
  s.sender = *assembler.sender();
  s.type_id = assembler.type_id();
  s.content_length = assembler.content_length();
  auto body = std::move(assembler).Finish();
  if (!body.ok()) return std::nullopt;
  s.content = *std::move(body);
  return s;
}

// The content made into a blob and chunked again reassembles to itself.
void CheckReChunk(const PeerNode& sender, const std::string& type_id,
                  const std::string& content) {
  auto blob =
      rnode::node::p2p::MakeBlob(type_id, content, kReCompressAboveBytes);
  if (!blob.ok()) __builtin_trap();
  std::vector<::routing::Chunk> chunks(1);
  rnode::node::p2p::FillHeaderChunk(*blob, sender, kNetworkId, &chunks[0]);
  const size_t n = rnode::node::p2p::DataChunkCount(*blob, kReChunkBytes);
  for (size_t i = 0; i < n; ++i) {
    chunks.emplace_back();
    rnode::node::p2p::FillDataChunk(*blob, i, kReChunkBytes, &chunks.back());
  }
  std::optional<Stream> again = Assemble(chunks);
  if (!again.has_value() || again->content != content ||
      again->type_id != type_id || !(again->sender == sender)) {
    __builtin_trap();
  }
}

void RunStream(const uint8_t* data, size_t size) {
  std::vector<::routing::Chunk> chunks;
  while (size >= 2 && chunks.size() < kMaxChunks) {
    const size_t len = data[0] | (size_t{data[1]} << 8);
    data += 2;
    size -= 2;
    if (len > size) return;
    ::routing::Chunk chunk;
    if (!chunk.ParseFromArray(data, static_cast<int>(len))) return;
    chunks.push_back(std::move(chunk));
    data += len;
    size -= len;
  }
  std::optional<Stream> stream = Assemble(chunks);
  if (!stream.has_value()) return;
  if (stream->content.size() != stream->content_length) __builtin_trap();
  CheckPeer(stream->sender);
  CheckReChunk(stream->sender, stream->type_id, stream->content);
  Dispatch(stream->sender, stream->type_id, stream->content, true);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // Refused packets are logged; the fuzzer would spend its time printing.
  (void)rnode::SetLogLevel("off");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    RunUnary(data + 1, size - 1);
  } else {
    RunStream(data + 1, size - 1);
  }
  return 0;
}

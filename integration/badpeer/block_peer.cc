#include "integration/badpeer/block_peer.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <utility>

#include "CasperMessage.pb.h"
#include "absl/strings/str_cat.h"
#include "casper/block/block_codec.h"
#include "integration/badpeer/wire.h"
#include "node/p2p/chunker.h"
#include "node/p2p/identity/validator_statement.h"
#include "node/p2p/transport.h"
#include "util/mutex.h"
#include "util/unix_time.h"

namespace rnode::badpeer {
namespace {

using casper::block::Block;
using Clock = std::chrono::steady_clock;

// The protocol's packet names (docs/p2p.md "Packets").
constexpr char kBlockRequest[] = "BlockRequest";
constexpr char kBlockMessage[] = "BlockMessage";
constexpr char kDeployData[] = "DeployData";

Bytes ExtraOf(std::string_view tag) { return Bytes(tag.begin(), tag.end()); }

}  // namespace

Block WithBadSignature(Block block, std::string_view tag) {
  block.extra = ExtraOf(tag);
  block.hash = casper::block::ComputeBlockHash(block);
  return block;
}

absl::StatusOr<Block> OrphanBlock(std::mt19937_64& rng, int i,
                                  const std::string& shard_id) {
  Block b;
  b.header.version = casper::block::kBlockVersion;
  b.header.timestamp = 1'700'000'000'000 + i;
  Hash32 parent{};
  const std::string random = RandomBytes(rng, parent.size());
  std::copy(random.begin(), random.end(), parent.begin());
  b.header.parents = {parent};
  b.shard_id = shard_id;
  b.seq_num = 1;
  if (absl::Status s = casper::block::SignBlock(b, FreshKey(rng)); !s.ok()) {
    return s;
  }
  return b;
}

crypto::Secp256k1PrivateKey FreshKey(std::mt19937_64& rng) {
  for (;;) {  // a random scalar is a key but for about 2^-128 of draws
    Bytes raw(32);
    for (uint8_t& b : raw) b = static_cast<uint8_t>(rng());
    absl::StatusOr<crypto::Secp256k1PrivateKey> k =
        crypto::ParseSecp256k1PrivateKey(raw);
    if (k.ok()) return *k;
  }
}

absl::StatusOr<Block> SignedBy(Block block, std::string_view tag,
                               const crypto::Secp256k1PrivateKey& key) {
  block.extra = ExtraOf(tag);
  if (absl::Status s = casper::block::SignBlock(block, key); !s.ok()) return s;
  return block;
}

// Receives the blocks the target streams back and, posing as a holder, the
// deploys it offers; everything else is dropped.
struct BlockPeer::Impl final : public node::p2p::PacketHandler {
  std::optional<absl::Status> TakeNow(const node::p2p::PeerNode&,
                                      const std::string& type_id,
                                      const std::string&) override {
    if (type_id != kDeployData) return std::nullopt;
    if (!hold_deploys) {
      return absl::FailedPreconditionError("this peer holds no deploys");
    }
    ++deploys_offered;
    return absl::OkStatus();
  }

  void OnPacket(const node::p2p::PeerNode& from, const std::string& type_id,
                std::string content, bool streamed) override {
    if (type_id != kBlockMessage || !streamed) return;
    absl::StatusOr<Block> block = casper::block::DecodeBlock(ByteView(
        reinterpret_cast<const uint8_t*>(content.data()), content.size()));
    if (!block.ok()) return;
    MutexLock lock(&mu);
    // Bounded: only blocks asked for are kept.
    if (asked.contains(block->hash)) {
      arrived.insert_or_assign(block->hash, *std::move(block));
      cv.SignalAll();
    }
  }

  node::p2p::PeerNode target;
  bool hold_deploys = false;
  std::atomic<uint64_t> deploys_offered{0};
  Mutex mu;
  CondVar cv;
  std::map<Hash32, bool> asked ABSL_GUARDED_BY(mu);
  std::map<Hash32, Block> arrived ABSL_GUARDED_BY(mu);
  // Last member: stopped (its dispatchers joined) before the rest goes.
  std::unique_ptr<node::p2p::Transport> transport;
};

BlockPeer::BlockPeer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

BlockPeer::~BlockPeer() {
  if (impl_ != nullptr && impl_->transport != nullptr) impl_->transport->Stop();
}

absl::StatusOr<std::unique_ptr<BlockPeer>> BlockPeer::Connect(
    const node::p2p::PeerNode& target, const std::string& network_id,
    std::chrono::milliseconds patience, const PeerPose& pose) {
  auto impl = std::make_unique<Impl>();
  impl->target = target;
  impl->hold_deploys = pose.hold_deploys;
  // A peer of its own: a fresh TLS identity, as any node has.
  absl::StatusOr<node::p2p::TlsIdentity> identity = node::p2p::NewTlsIdentity();
  if (!identity.ok()) return identity.status();
  node::p2p::TransportOptions options;
  options.tls =
      std::make_shared<const node::p2p::TlsIdentity>(*std::move(identity));
  options.self.id = options.tls->node_id;
  options.self.host = "127.0.0.1";
  options.self.udp_port = 1;  // no discovery: nothing listens there
  options.network_id = network_id;
  options.shard_id = pose.shard_id;
  if (pose.statement_key.has_value()) {
    options.validator_statement = [key = *pose.statement_key,
                                   id = options.self.id, network_id,
                                   shard = pose.shard_id]() -> Bytes {
      absl::StatusOr<node::p2p::ValidatorStatement> s =
          node::p2p::SignValidatorStatement(key, id, network_id, shard,
                                            UnixMs());
      return s.ok() ? node::p2p::EncodeValidatorStatement(*s) : Bytes{};
    };
  }
  absl::StatusOr<std::unique_ptr<node::p2p::Transport>> t =
      node::p2p::Transport::Start(options, impl.get(), nullptr);
  if (!t.ok()) return t.status();
  impl->transport = *std::move(t);
  if (!impl->transport->AddPeer(target, /*persistent=*/true)) {
    return absl::InvalidArgumentError("the target cannot be added as a peer");
  }
  const auto until = Clock::now() + patience;
  while (Clock::now() < until) {
    for (const node::p2p::PeerNode& p : impl->transport->Connected()) {
      if (p.id == target.id) {
        return std::unique_ptr<BlockPeer>(new BlockPeer(std::move(impl)));
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return absl::UnavailableError(
      absl::StrCat("no handshake with ", node::p2p::FormatPeerAddress(target),
                   " within ", patience.count(), " ms"));
}

absl::StatusOr<Block> BlockPeer::Fetch(const Hash32& hash,
                                       std::chrono::milliseconds patience) {
  Impl& m = *impl_;
  {
    MutexLock lock(&m.mu);
    m.asked[hash] = true;
  }
  ::casper::BlockRequestProto req;
  req.set_hash(std::string(hash.begin(), hash.end()));
  if (absl::Status s = m.transport->Send(m.target.id, kBlockRequest,
                                         req.SerializeAsString());
      !s.ok()) {
    return s;
  }
  const auto until = Clock::now() + patience;
  MutexLock lock(&m.mu);
  while (!m.arrived.contains(hash)) {
    if (m.cv.WaitUntil(&m.mu, until) && !m.arrived.contains(hash)) {
      return absl::NotFoundError(absl::StrCat("block ", HexEncode(hash),
                                              " did not arrive within ",
                                              patience.count(), " ms"));
    }
  }
  Block b = std::move(m.arrived.at(hash));
  m.arrived.erase(hash);
  m.asked.erase(hash);
  return b;
}

absl::Status BlockPeer::Send(const Block& block) {
  Impl& m = *impl_;
  const Bytes encoded = casper::block::EncodeBlock(block);
  absl::StatusOr<node::p2p::Blob> blob = node::p2p::MakeBlob(
      kBlockMessage, std::string(encoded.begin(), encoded.end()));
  if (!blob.ok()) return blob.status();
  absl::StatusOr<node::p2p::Transport::Permit> permit =
      m.transport->ReserveStream(m.target.id, blob->wire->size());
  if (!permit.ok()) return permit.status();
  return m.transport->Stream(m.target.id, *std::move(permit), *blob);
}

absl::Status BlockPeer::Offer(const std::string& encoded_deploy,
                              std::chrono::milliseconds timeout) {
  return impl_->transport->SendNow(impl_->target.id, kDeployData,
                                   encoded_deploy, timeout);
}

uint64_t BlockPeer::DeploysOffered() const {
  return impl_->deploys_offered.load();
}

bool BlockPeer::Connected() const {
  for (const node::p2p::PeerNode& p : impl_->transport->Connected()) {
    if (p.id == impl_->target.id) return true;
  }
  return false;
}

}  // namespace rnode::badpeer

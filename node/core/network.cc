#include "node/core/network.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "CasperMessage.pb.h"
#include "casper/block/block_codec.h"
#include "crypto/secp256k1.h"
#include "node/core/chain_sync.h"
#include "node/core/state_sync.h"
#include "util/logging.h"

namespace rnode::node {
namespace {

using casper::block::Block;
using Clock = std::chrono::steady_clock;

std::optional<Hash32> HashOf(const std::string& bytes) {
  if (bytes.size() != 32) return std::nullopt;
  Hash32 h;
  std::copy(bytes.begin(), bytes.end(), h.begin());
  return h;
}

// The block hash of a packet that carries one in field `hash`; nullopt
// when it does not decode or is not 32 bytes.
template <typename Proto>
std::optional<Hash32> HashIn(const std::string& content) {
  Proto msg;
  if (!msg.ParseFromString(content)) return std::nullopt;
  return HashOf(msg.hash());
}

std::string HashBytes(const Hash32& h) {
  return std::string(h.begin(), h.end());
}

}  // namespace

CasperNetwork::CasperNetwork(casper::dag::DagStore* dag, Block genesis,
                             NetworkCallbacks callbacks,
                             const NetworkOptions& options)
    : dag_(dag),
      genesis_(std::move(genesis)),
      callbacks_(std::move(callbacks)),
      options_(options),
      blobs_(options.encoded_cache_blocks) {}

CasperNetwork::~CasperNetwork() { Stop(); }

void CasperNetwork::Attach(p2p::Transport* transport) {
  MutexLock lock(&mu_);
  transport_ = transport;
  if (!timer_.joinable()) timer_ = std::thread([this] { TimerLoop(); });
}

void CasperNetwork::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    transport_ = nullptr;
    cv_.SignalAll();
  }
  if (timer_.joinable()) timer_.join();
}

NetworkCounters CasperNetwork::counters() const {
  MutexLock lock(&mu_);
  return counters_;
}

size_t CasperNetwork::wanted() const {
  MutexLock lock(&mu_);
  return wanted_.size();
}

std::chrono::milliseconds CasperNetwork::oldest_wanted_age() const {
  MutexLock lock(&mu_);
  // Every deploy admission asks: the arrival index names the oldest.
  const std::map<uint64_t, Hash32>& order =
      options_.behind_from_bonded_only ? vouched_order_ : wanted_order_;
  if (order.empty()) return std::chrono::milliseconds(0);
  const Wanted& oldest = wanted_.at(order.begin()->second);
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() -
                                                               oldest.first);
}

p2p::Transport* CasperNetwork::CurrentTransport() const {
  MutexLock lock(&mu_);
  return transport_;
}

void CasperNetwork::ReleaseLocked(const Bytes& peer) {
  if (peer.empty()) return;
  auto o = outstanding_.find(peer);
  if (o == outstanding_.end()) return;
  // Entries at zero go, so peers long gone leave nothing behind.
  if (o->second <= 1) {
    outstanding_.erase(o);
  } else {
    --o->second;
  }
}

std::shared_ptr<const p2p::Blob> CasperNetwork::BlobOf(Bytes encoded) {
  absl::StatusOr<p2p::Blob> blob = p2p::MakeBlob(
      packet::kBlockMessage, std::string(encoded.begin(), encoded.end()));
  if (!blob.ok()) return nullptr;
  return std::make_shared<const p2p::Blob>(*std::move(blob));
}

// --- Engine side -------------------------------------------------------

void CasperNetwork::Broadcast(const Block& block) {
  // Encoded once here; every peer's request streams the same buffer.
  if (std::shared_ptr<const p2p::Blob> blob =
          BlobOf(casper::block::EncodeBlock(block))) {
    blobs_.Put(block.hash, std::move(blob));
  }
  ::casper::BlockHashMessageProto msg;
  msg.set_hash(HashBytes(block.hash));
  msg.set_blockcreator(std::string(block.sender.begin(), block.sender.end()));
  const std::string content = msg.SerializeAsString();
  p2p::Transport* t = CurrentTransport();
  if (t != nullptr) t->SendToAll(packet::kBlockHashMessage, content);
}

void CasperNetwork::Request(const Hash32& hash) {
  MutexLock lock(&mu_);
  if (auto it = wanted_.find(hash); it != wanted_.end()) {
    it->second.requested = true;
    VouchLocked(hash, it->second);
    return;
  }
  Wanted& w = AddWantedLocked(hash);
  w.requested = true;
  VouchLocked(hash, w);
  AskLocked(hash, w);
}

void CasperNetwork::Cancel(const Hash32& hash) {
  MutexLock lock(&mu_);
  auto it = wanted_.find(hash);
  if (it != wanted_.end() && !it->second.received) EraseWantedLocked(it);
}

void CasperNetwork::VouchLocked(const Hash32& hash, Wanted& w) {
  if (w.vouched || w.stale) return;
  w.vouched = true;
  vouched_order_.emplace(w.seq, hash);
}

CasperNetwork::Wanted& CasperNetwork::AddWantedLocked(const Hash32& hash) {
  if (wanted_.size() >= options_.max_wanted && !wanted_order_.empty()) {
    // Give up the oldest request (a later announcement asks again): the
    // arrival index finds it without a scan, so a peer announcing blocks
    // nobody has costs each packet O(log n).
    EraseWantedLocked(wanted_.find(wanted_order_.begin()->second));
    ++counters_.wanted_given_up;
  }
  Wanted& w = wanted_[hash];
  w.first = Clock::now();
  w.seq = next_seq_++;
  wanted_order_.emplace(w.seq, hash);
  return w;
}

std::map<Hash32, CasperNetwork::Wanted>::iterator
CasperNetwork::EraseWantedLocked(std::map<Hash32, Wanted>::iterator it) {
  ReleaseLocked(it->second.asked);
  wanted_order_.erase(it->second.seq);
  vouched_order_.erase(it->second.seq);
  return wanted_.erase(it);
}

void CasperNetwork::AskLocked(const Hash32& hash, Wanted& w,
                              bool may_broadcast) {
  if (transport_ == nullptr) return;
  ReleaseLocked(w.asked);
  w.asked.clear();
  w.asked_at = Clock::now();
  ++w.attempts;
  // The next holder with room for another request.
  for (size_t i = 0; i < w.holders.size(); ++i) {
    const Bytes& peer = w.holders[(w.next_holder + i) % w.holders.size()];
    auto o = outstanding_.find(peer);
    if (o != outstanding_.end() &&
        o->second >= options_.max_requests_per_peer) {
      continue;
    }
    ::casper::BlockRequestProto req;
    req.set_hash(HashBytes(hash));
    if (!transport_->Send(peer, packet::kBlockRequest, req.SerializeAsString())
             .ok()) {
      continue;
    }
    ++outstanding_[peer];
    w.asked = peer;
    w.next_holder = (w.next_holder + i + 1) % w.holders.size();
    ++counters_.requests_sent;
    return;
  }
  // No holder known (or none with room): ask who has it.
  if (!may_broadcast) return;
  ::casper::HasBlockRequestProto req;
  req.set_hash(HashBytes(hash));
  transport_->SendToAll(packet::kHasBlockRequest, req.SerializeAsString());
  ++counters_.who_has_sent;
}

void CasperNetwork::Delivered(const Hash32& hash) {
  MutexLock lock(&mu_);
  auto it = wanted_.find(hash);
  if (it != wanted_.end()) EraseWantedLocked(it);
}

void CasperNetwork::NotTaken(const Hash32& hash) {
  MutexLock lock(&mu_);
  auto it = wanted_.find(hash);
  Wanted& w = it != wanted_.end() ? it->second : AddWantedLocked(hash);
  // As if asked now: the timer asks again once the cool-down is over.
  w.received = false;
  ReleaseLocked(w.asked);
  w.asked.clear();
  w.asked_at = Clock::now();
  w.attempts = std::max(w.attempts, 1);
}

size_t CasperNetwork::ReplicateDeploy(const std::string& encoded_deploy,
                                      std::chrono::milliseconds first_timeout,
                                      std::chrono::milliseconds extra_timeout) {
  p2p::Transport* t = CurrentTransport();
  if (t == nullptr) return 0;
  size_t held = 0;
  std::set<crypto::Secp256k1PublicKey> holders;
  for (const p2p::PeerNode& peer : t->Connected()) {
    std::optional<crypto::Secp256k1PublicKey> validator;
    if (options_.only_bonded_holders) {
      validator = t->BondedValidatorOf(peer.id);
      if (!validator.has_value() || holders.contains(*validator)) continue;
    }
    const auto timeout = held == 0 ? first_timeout : extra_timeout;
    if (t->SendNow(peer.id, packet::kDeployData, encoded_deploy, timeout)
            .ok()) {
      ++held;
      if (validator.has_value()) holders.insert(*validator);
    }
  }
  return held;
}

bool CasperNetwork::HasPeers() const {
  p2p::Transport* t = CurrentTransport();
  return t != nullptr && !t->Connected().empty();
}

void CasperNetwork::AskTips() {
  p2p::Transport* t = CurrentTransport();
  if (t != nullptr) t->SendToAll(packet::kForkChoiceTipRequest, "");
}

void CasperNetwork::TimerLoop() {
  MutexLock lock(&mu_);
  while (!stopping_) {
    cv_.WaitUntil(&mu_, Clock::now() + options_.tick);
    if (stopping_) break;
    ++counters_.timer_rounds;
    const auto now = Clock::now();
    for (auto it = wanted_.begin(); it != wanted_.end();) {
      if (dag_->Contains(it->first)) {
        it = EraseWantedLocked(it);
        continue;
      }
      Wanted& w = it->second;
      if (w.received) {  // in the node's queue
        ++it;
        continue;
      }
      // The cool-down grows with the attempts, up to max_retry_delay.
      const auto delay = std::min<std::chrono::milliseconds>(
          options_.max_retry_delay,
          options_.request_timeout * (1 << std::min(w.attempts - 1, 4)));
      if (now - w.asked_at >= delay) {
        if (!w.served && !w.requested && w.attempts >= options_.max_attempts) {
          // Nobody served it in all those asks: a block that does not
          // exist, or whose holders are gone. A later announcement or
          // request asks again.
          ++counters_.wanted_expired;
          peer_log_.Info("gave up block {} after {} asks: nobody served it",
                         HexEncode(it->first), w.attempts);
          it = EraseWantedLocked(it);
          continue;
        }
        if (!w.served && !w.stale && w.attempts >= options_.max_attempts) {
          // The node needs it, and nobody serves it: a block that does not
          // exist (a bonded validator named a hash it never made) or whose
          // holders are gone. Still asked for, until the engine gives up
          // the blocks waiting for it; no longer a reason to be behind.
          ++counters_.wanted_stale;
          peer_log_.Info(
              "block {} not served after {} asks; no longer "
              "counted as behind",
              HexEncode(it->first), w.attempts);
          w.stale = true;
          w.vouched = false;
          vouched_order_.erase(w.seq);
        }
        ++counters_.retries;
        AskLocked(it->first, w);
      }
      ++it;
    }
  }
}

// --- Packets -------------------------------------------------------------

void CasperNetwork::Malformed(const p2p::PeerNode& from,
                              std::string_view what) {
  p2p::Transport* t = nullptr;
  {
    MutexLock lock(&mu_);
    ++counters_.malformed;
    t = transport_;
  }
  if (t != nullptr) t->Punish(from.id, what);
}

std::optional<absl::Status> CasperNetwork::TakeNow(const p2p::PeerNode& from,
                                                   const std::string& type_id,
                                                   const std::string& content) {
  if (type_id != packet::kDeployData) return std::nullopt;
  ::casper::DeployDataProto d;
  if (!d.ParseFromString(content)) {
    Malformed(from, "DeployData");
    return absl::InvalidArgumentError("an undecodable DeployData");
  }
  if (!callbacks_.deploy) {
    return absl::FailedPreconditionError("this node holds no deploys");
  }
  if (options_.only_bonded_holders) {
    // Only a bonded validator admits deploys and asks others to hold them
    // (ReplicateDeploy asks proven bonded validators only): anyone else's
    // offer is a way to fill this node's backup with deploys that it
    // would run, and charge, in its own blocks.
    p2p::Transport* t = CurrentTransport();
    if (t == nullptr || !t->BondedValidatorOf(from.id).has_value()) {
      {
        MutexLock lock(&mu_);
        ++counters_.deploys_from_unbonded;
      }
      return absl::PermissionDeniedError(
          "this node holds deploys only for peers proven to run a bonded "
          "validator");
    }
  }
  return callbacks_.deploy(d);
}

void CasperNetwork::OnHashAnnounced(const p2p::PeerNode& from,
                                    const Hash32& hash) {
  if (dag_->Contains(hash)) return;
  // Asked before taking mu_: the transport has locks of its own.
  bool vouched = false;
  if (options_.behind_from_bonded_only) {
    p2p::Transport* t = CurrentTransport();
    vouched = t != nullptr && t->BondedValidatorOf(from.id).has_value();
  }
  MutexLock lock(&mu_);
  ++counters_.hashes_heard;
  // Announcements are bounded like requests: a peer announcing blocks
  // nobody has must not grow the list without end.
  auto found = wanted_.find(hash);
  const bool fresh = found == wanted_.end();
  Wanted& w = fresh ? AddWantedLocked(hash) : found->second;
  if (vouched) VouchLocked(hash, w);
  if (std::find(w.holders.begin(), w.holders.end(), from.id) ==
      w.holders.end()) {
    w.holders.push_back(from.id);
  }
  if (w.received) return;  // in the node's queue
  // Ask now when nobody is being asked (new, or asked everyone). Only a
  // new hash may ask everyone who has it: the answers to that question
  // come back here, and if each asked everyone again while the holders
  // were busy, every answer would breed more questions.
  if (fresh || w.asked.empty()) {
    w.next_holder = w.holders.size() - 1;
    AskLocked(hash, w, /*may_broadcast=*/fresh);
  }
}

void CasperNetwork::SendHasBlock(const p2p::PeerNode& to, const Hash32& hash) {
  ::casper::HasBlockProto msg;
  msg.set_hash(HashBytes(hash));
  p2p::Transport* t = CurrentTransport();
  if (t != nullptr) {
    (void)t->Send(to.id, packet::kHasBlock, msg.SerializeAsString());
  }
}

void CasperNetwork::ServeBlock(const p2p::PeerNode& to, const Hash32& hash) {
  p2p::Transport* t = CurrentTransport();
  if (t == nullptr || !dag_->Contains(hash)) return;  // silence if unknown
  // The permit before the blob is built: a cached blob knows its size, a
  // stored block bounds it by its encoding's.
  std::shared_ptr<const p2p::Blob> blob = blobs_.Get(hash).value_or(nullptr);
  std::optional<Bytes> encoded;
  size_t need = 0;
  if (blob != nullptr) {
    need = blob->wire->size();
  } else {
    absl::StatusOr<std::optional<Bytes>> stored = dag_->GetBlockBytes(hash);
    if (!stored.ok() || !stored->has_value()) return;
    encoded = *std::move(*stored);
    need = p2p::MaxWireBytes(encoded->size());
  }
  absl::StatusOr<p2p::Transport::Permit> permit = t->ReserveStream(to.id, need);
  if (!permit.ok()) {
    MutexLock lock(&mu_);
    ++counters_.serve_busy;
    return;  // the requester retries after its timeout
  }
  if (blob == nullptr) {
    blob = BlobOf(*std::move(encoded));
    if (blob == nullptr) return;
    blobs_.Put(hash, blob);
  }
  if (t->Stream(to.id, *std::move(permit), *blob).ok()) {
    MutexLock lock(&mu_);
    ++counters_.blocks_served;
  }
}

void CasperNetwork::OnConnected(const p2p::PeerNode& peer) {
  p2p::Transport* t = CurrentTransport();
  if (t == nullptr) return;
  // Which genesis the peer is on, and what its tips are (a restarted or
  // paused node catches up from them).
  ::casper::ApprovedBlockRequestProto req;
  req.set_identifier("rnode");
  (void)t->Send(peer.id, packet::kApprovedBlockRequest,
                req.SerializeAsString());
  (void)t->Send(peer.id, packet::kForkChoiceTipRequest, "");
  if (sync_ != nullptr) sync_->OnConnected(peer);
}

void CasperNetwork::OnBlockPacket(const p2p::PeerNode& from,
                                  const std::string& content) {
  absl::StatusOr<Block> block = casper::block::DecodeBlock(
      ByteView(reinterpret_cast<const uint8_t*>(content.data()),
               content.size()),
      options_.max_block_bytes);
  if (!block.ok()) {
    return Malformed(from, absl::StrCat("undecodable block: ",
                                        std::string(block.status().message())));
  }
  {
    MutexLock lock(&mu_);
    ++counters_.blocks_received;
    if (dag_->Contains(block->hash)) {
      // Stored already (a range answer overlapping what announcements
      // brought, or a late answer): nothing for the engine to do.
      ++counters_.duplicates_dropped;
      auto it = wanted_.find(block->hash);
      if (it != wanted_.end() && !it->second.received) EraseWantedLocked(it);
      return;
    }
    auto it = wanted_.find(block->hash);
    if (it != wanted_.end()) {
      if (it->second.received) {  // a late answer to an earlier request
        ++counters_.duplicates_dropped;
        return;
      }
      if (it->second.asked == from.id) {
        ReleaseLocked(from.id);
        it->second.asked.clear();
      }
      it->second.received = static_cast<bool>(callbacks_.block);
      it->second.served = true;
    }
  }
  // Diverted (a joining node): taken, so no longer asked for, whatever
  // becomes of it there (a later announcement asks again).
  if (callbacks_.divert && callbacks_.divert(from, *block)) {
    Delivered(block->hash);
    return;
  }
  if (callbacks_.block) callbacks_.block(*std::move(block));
}

void CasperNetwork::OnPacket(const p2p::PeerNode& from,
                             const std::string& type_id, std::string content,
                             bool streamed) {
  if (type_id == packet::kBlockMessage) {
    if (!streamed) return Malformed(from, "a block must be streamed");
    return OnBlockPacket(from, content);
  }
  if (type_id == packet::kApprovedBlock) {
    ::casper::ApprovedBlockProto msg;
    if (!msg.ParseFromString(content)) return Malformed(from, "ApprovedBlock");
    const std::string& theirs = msg.candidate().block().blockhash();
    if (theirs != HashBytes(genesis_.hash)) {
      {
        MutexLock lock(&mu_);
        ++counters_.genesis_mismatch;
      }
      peer_log_.Error(
          "peer {} is on another shard: its genesis is {}, ours {}; "
          "disconnecting it",
          LogText(p2p::FormatPeerAddress(from)),
          HexEncode(ByteView(reinterpret_cast<const uint8_t*>(theirs.data()),
                             theirs.size())),
          HexEncode(genesis_.hash));
      return Malformed(from, "another genesis");
    }
    return;
  }
  // State sync: requests unary, answers on either channel.
  if (type_id == packet::kTrieNodes && trie_.answer) {
    return trie_.answer(from, content);
  }
  if (type_id == packet::kTrieNodesRequest && trie_.serve && !streamed) {
    if (p2p::Transport* t = CurrentTransport()) trie_.serve(*t, from, content);
    return;
  }
  if (streamed) return Malformed(from, "unexpected streamed packet");
  if (sync_ != nullptr && ChainSync::Handles(type_id)) {
    return sync_->OnPacket(from, type_id, content);
  }
  // The four packets that carry one block hash.
  std::optional<Hash32> hash;
  bool hash_packet = true;
  if (type_id == packet::kBlockHashMessage) {
    hash = HashIn<::casper::BlockHashMessageProto>(content);
  } else if (type_id == packet::kHasBlock) {
    hash = HashIn<::casper::HasBlockProto>(content);
  } else if (type_id == packet::kBlockRequest) {
    hash = HashIn<::casper::BlockRequestProto>(content);
  } else if (type_id == packet::kHasBlockRequest) {
    hash = HashIn<::casper::HasBlockRequestProto>(content);
  } else {
    hash_packet = false;
  }
  if (hash_packet) {
    if (!hash.has_value()) return Malformed(from, type_id);
    if (type_id == packet::kBlockRequest) return ServeBlock(from, *hash);
    if (type_id == packet::kHasBlockRequest) {
      if (dag_->Contains(*hash)) SendHasBlock(from, *hash);
      return;
    }
    return OnHashAnnounced(from, *hash);  // an announcement or a HasBlock
  }
  if (type_id == packet::kForkChoiceTipRequest) {
    // One HasBlock per latest message (and tip); the peer asks for what
    // it lacks and walks back to what it has.
    std::vector<Hash32> hashes = dag_->Tips();
    for (const auto& [validator, h] : dag_->LatestMessages()) {
      if (std::find(hashes.begin(), hashes.end(), h) == hashes.end()) {
        hashes.push_back(h);
      }
    }
    for (const Hash32& h : hashes) SendHasBlock(from, h);
    return;
  }
  if (type_id == packet::kApprovedBlockRequest) {
    ::casper::ApprovedBlockRequestProto req;
    if (!req.ParseFromString(content)) {
      return Malformed(from, "ApprovedBlockRequest");
    }
    ::casper::ApprovedBlockProto msg;
    casper::block::BlockToProto(genesis_,
                                msg.mutable_candidate()->mutable_block());
    msg.mutable_candidate()->set_requiredsigs(0);
    absl::StatusOr<p2p::Blob> blob =
        p2p::MakeBlob(packet::kApprovedBlock, msg.SerializeAsString());
    p2p::Transport* t = CurrentTransport();
    if (!blob.ok() || t == nullptr) return;
    absl::StatusOr<p2p::Transport::Permit> permit =
        t->ReserveStream(from.id, blob->wire->size());
    if (permit.ok()) (void)t->Stream(from.id, *std::move(permit), *blob);
    return;
  }
  if (type_id == packet::kNoApprovedBlockAvailable) return;
  // Packets of the public protocol we do not serve (genesis ceremony,
  // state sync) are ignored, not punished.
  Log("p2p")->debug("ignored packet {} from {}", type_id, from.IdHex());
}

}  // namespace rnode::node

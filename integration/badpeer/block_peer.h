// A misbehaving peer at the block level (docs/reliability.md "bad-peer"):
// a real transport (p2p::Transport, a fresh node id) that joins a node as
// a peer, fetches real blocks from it and streams it blocks that must not
// be taken: a block whose signature is not its sender's, a block by a key
// with no stake, and an equivocation (a second block with a bonded
// validator's sequence number, signed with that validator's key).
//
// The forged blocks differ from the real one only where the attack needs
// (the `extra` bytes, which the hash covers and execution never reads; the
// sender and signature), so every other check passes and the node's
// verdict is the one the attack is about.
#ifndef RNODE_INTEGRATION_BADPEER_BLOCK_PEER_H_
#define RNODE_INTEGRATION_BADPEER_BLOCK_PEER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "crypto/secp256k1.h"
#include "node/p2p/peer.h"
#include "util/bytes.h"

namespace rnode::badpeer {

// `block` with its extra bytes set to `tag`, rehashed, and the old
// signature kept: the signature no longer holds.
casper::block::Block WithBadSignature(casper::block::Block block,
                                      std::string_view tag);
// `block` with its extra bytes set to `tag`, signed by `key` (sender,
// hash, signature): a block of `key`'s, on the real block's parents and
// justifications. An unbonded `key` makes a block from an unbonded
// sender; the real sender's key makes an equivocation.
absl::StatusOr<casper::block::Block> SignedBy(
    casper::block::Block block, std::string_view tag,
    const crypto::Secp256k1PrivateKey& key);

// A random secp256k1 key drawn from `rng` (a fresh identity: no funds,
// no stake).
crypto::Secp256k1PrivateKey FreshKey(std::mt19937_64& rng);

// Block `i` of an orphan flood: version 1, shard `shard_id`, one random
// parent nobody has, signed by a fresh random key (no stake anywhere). A
// node must refuse it without keeping it or asking for its parent.
absl::StatusOr<casper::block::Block> OrphanBlock(std::mt19937_64& rng, int i,
                                                 const std::string& shard_id);

// How a BlockPeer presents itself beyond a fresh node id.
struct PeerPose {
  // Set: every message carries a validator statement by this key (for
  // the peer's node id, on `shard_id`), as a validator's do. A key
  // without stake makes a peer that proves a validator key that is not
  // bonded.
  std::optional<crypto::Secp256k1PrivateKey> statement_key;
  std::string shard_id = "root";
  // Takes every DeployData it is offered, answering that it holds it (a
  // fake second holder of the deploys; it keeps nothing).
  bool hold_deploys = false;
};

class BlockPeer {
 public:
  // Starts a transport on 127.0.0.1 (an ephemeral port) on `network_id`
  // and connects it to `target`; Unavailable when no handshake completes
  // within `patience`.
  static absl::StatusOr<std::unique_ptr<BlockPeer>> Connect(
      const node::p2p::PeerNode& target, const std::string& network_id,
      std::chrono::milliseconds patience, const PeerPose& pose = {});
  ~BlockPeer();

  // Asks the target for the block `hash` (BlockRequest) and waits for it.
  // NotFound when it does not arrive within `patience` (the target answers
  // nothing for blocks it does not have).
  absl::StatusOr<casper::block::Block> Fetch(
      const Hash32& hash, std::chrono::milliseconds patience);
  // Streams `block` to the target as a BlockMessage. OK once it is queued
  // for sending; the target's verdict shows in its metrics and log.
  absl::Status Send(const casper::block::Block& block);
  // Offers the target a deploy (encoded DeployDataProto) to hold, as a
  // validator replicating it does; waits up to `timeout` for the answer.
  // OK when the target holds it; FailedPrecondition with its reason when it
  // declines (p2p::Transport::SendNow).
  absl::Status Offer(const std::string& encoded_deploy,
                     std::chrono::milliseconds timeout);
  // Whether the target still counts this peer as connected (a node that
  // punishes a peer drops it).
  bool Connected() const;
  // DeployData packets the target offered this peer (PeerPose::
  // hold_deploys; otherwise they are declined and not counted).
  uint64_t DeploysOffered() const;

  struct Impl;

 private:
  explicit BlockPeer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rnode::badpeer

#endif  // RNODE_INTEGRATION_BADPEER_BLOCK_PEER_H_

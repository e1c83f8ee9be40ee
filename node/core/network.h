// The Casper protocol over the peer-to-peer transport (docs/p2p.md
// "Casper packets"): announcements, block requests with retries, streamed
// blocks, has-block and fork-choice-tip queries, the approved (genesis)
// block, and deploy gossip.
//
// Blocks travel as announcements: a node that makes a block sends its hash
// (`BlockHashMessage`) to every peer; a peer that lacks it asks the
// announcer (`BlockRequest`) and gets the block streamed back
// (`BlockMessage`). Missing parents are asked for the same way; a request
// unanswered after a timeout goes to the next peer known to hold the block,
// or as `HasBlockRequest` to all, with a growing cool-down.
//
// Thread-safe: the engine calls Broadcast/Request on the consensus thread,
// the transport calls OnPacket on its dispatchers, the API gossips
// deploys, and a timer thread retries requests.
#ifndef RNODE_NODE_CORE_NETWORK_H_
#define RNODE_NODE_CORE_NETWORK_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "casper/block/block.h"
#include "casper/dag/dag_store.h"
#include "casper/engine/engine.h"
#include "node/p2p/transport.h"
#include "util/bounded_cache.h"
#include "util/bytes.h"
#include "util/limits.h"
#include "util/logging.h"
#include "util/mutex.h"

namespace casper {
class DeployDataProto;
}  // namespace casper

namespace rnode::node {

class ChainSync;

// The packet type names (Packet.typeId), the public ones and our deploy
// gossip.
namespace packet {
inline constexpr char kBlockHashMessage[] = "BlockHashMessage";
inline constexpr char kBlockRequest[] = "BlockRequest";
inline constexpr char kBlockMessage[] = "BlockMessage";
inline constexpr char kHasBlockRequest[] = "HasBlockRequest";
inline constexpr char kHasBlock[] = "HasBlock";
inline constexpr char kForkChoiceTipRequest[] = "ForkChoiceTipRequest";
inline constexpr char kApprovedBlockRequest[] = "ApprovedBlockRequest";
inline constexpr char kApprovedBlock[] = "ApprovedBlock";
inline constexpr char kNoApprovedBlockAvailable[] = "NoApprovedBlockAvailable";
// Ours: a deploy a validator admitted, for the others to hold as backup.
inline constexpr char kDeployData[] = "DeployData";
}  // namespace packet

struct NetworkOptions {
  // A block request unanswered this long goes to another peer.
  std::chrono::milliseconds request_timeout{2000};
  // The longest cool-down between retries of one request.
  std::chrono::milliseconds max_retry_delay{10000};
  // Blocks asked for and not yet received; beyond it the oldest is given
  // up (counted; a later announcement asks again).
  size_t max_wanted = 8192;
  // Block requests outstanding at one peer.
  size_t max_requests_per_peer = 64;
  // Encoded blocks kept for serving requests.
  size_t encoded_cache_blocks = 256;
  // A peer's block encoded in more bytes is refused undecoded (the shard's
  // casper.max-block-bytes).
  size_t max_block_bytes = limits::kMaxBlockBytes;
  // How often the timer thread looks at the requests.
  std::chrono::milliseconds tick{250};
  // True: only peers the transport proves to run a bonded validator
  // (p2p::Transport::BondedValidatorOf) are asked to hold a replicated
  // deploy, each validator counted once (ReplicateDeploy), and only such
  // peers' offers are held (TakeNow). False: every connected peer is asked
  // and counted, and heard (tests of the packet machinery; the node always
  // sets it).
  bool only_bonded_holders = false;
  // Asks (to a holder, or who-has to everyone) after which a block that
  // peers announced and no peer served is given up (counted in
  // wanted_expired; a later announcement asks again). With the default
  // timings, 8 asks span about a minute. Blocks the node itself asked for
  // (Request: a block it holds waits for them) and blocks served once
  // (NotTaken: the node could not store them) are asked for until they
  // arrive, are stored or are cancelled (the engine drops the blocks that
  // waited for them after its time to live); after max_attempts unserved
  // asks they no longer make the node behind (counted in wanted_stale).
  int max_attempts = 8;
  // True: a wanted block makes this node behind (oldest_wanted_age) only
  // when the node itself asked for it (Request) or a peer proven to run a
  // bonded validator announced it or said it has it; any other peer's
  // announcements are fetched but cannot stall deploy admission. False:
  // every wanted block counts (tests of the packet machinery; the node
  // sets it).
  bool behind_from_bonded_only = false;
};

// What the network hands to the node.
struct NetworkCallbacks {
  // A decoded block from a peer, for the engine. May block while the
  // consensus thread is behind (back-pressure on the stream dispatcher).
  std::function<void(casper::block::Block)> block;
  // Asked first, when set: a joining node's StateJoin takes the blocks
  // (true; the block counts as delivered) until it is done; then they go
  // to `block`.
  std::function<bool(const p2p::PeerNode& from, casper::block::Block& block)>
      divert;
  // A deploy a peer admitted (already decoded, not yet verified), to hold
  // in case that peer does not include it. OK when it is held here (or
  // already in this node's pool or a block); an error saying why not (an
  // observer, a validator without stake, a full backup, an invalid deploy).
  // The verdict is the peer's answer: it counts only holders. Called on
  // the transport's server threads, concurrently.
  std::function<absl::Status(const ::casper::DeployDataProto&)> deploy;
};

struct NetworkCounters {
  uint64_t blocks_received = 0;
  uint64_t blocks_served = 0;
  uint64_t requests_sent = 0;
  uint64_t retries = 0;
  // Copies of a block already received and not yet handed on, or already
  // stored, dropped on arrival (a slow consensus thread must not be fed
  // the same block twice).
  uint64_t duplicates_dropped = 0;
  uint64_t wanted_given_up = 0;
  // Blocks given up after NetworkOptions::max_attempts asks unserved.
  uint64_t wanted_expired = 0;
  // Blocks the node asked for that max_attempts asks did not bring: still
  // asked for, no longer counted as behind.
  uint64_t wanted_stale = 0;
  uint64_t serve_busy = 0;
  uint64_t malformed = 0;
  uint64_t genesis_mismatch = 0;
  // "Who has it?" questions sent to every peer (HasBlockRequest).
  uint64_t who_has_sent = 0;
  // Announcements and HasBlock answers handled (for a block not stored).
  uint64_t hashes_heard = 0;
  // Deploys offered by peers not proven to run a bonded validator,
  // declined (NetworkOptions::only_bonded_holders).
  uint64_t deploys_from_unbonded = 0;
  // Rounds of the retry timer (one per tick).
  uint64_t timer_rounds = 0;
};

class CasperNetwork final : public casper::engine::Transport,
                            public p2p::PacketHandler {
 public:
  // `dag` (not owned) outlives the network; `genesis` is this node's
  // approved block. Call Attach() before packets can flow.
  CasperNetwork(casper::dag::DagStore* dag, casper::block::Block genesis,
                NetworkCallbacks callbacks, const NetworkOptions& options = {});
  ~CasperNetwork() override;  // Stop()

  // Catching up by height (not owned; may be null; must outlive the
  // network): its packets (ChainSync::Handles) and new peers go to it.
  // Before Attach.
  void SetSync(ChainSync* sync) { sync_ = sync; }
  // Where the state sync's packets go (node/core/state_sync.h): a peer's
  // TrieNodesRequest (unary) to `serve`, a TrieNodes answer (either
  // channel) to `answer`. Unset, they are ignored (a streamed one is
  // punished as unexpected). Set before Attach.
  struct TrieHandlers {
    // With the transport the network sends on (the answer goes there).
    std::function<void(p2p::Transport&, const p2p::PeerNode&,
                       const std::string&)>
        serve;
    std::function<void(const p2p::PeerNode&, const std::string&)> answer;
  };
  void SetTrieHandlers(TrieHandlers handlers) {
    trie_ = std::move(handlers);
  }
  // The transport to send on (not owned; must outlive the network until
  // Stop). Starts the retry timer.
  void Attach(p2p::Transport* transport);
  // Stops the timer; later sends are dropped. Idempotent.
  void Stop();

  // --- casper::engine::Transport (consensus thread) -------------------
  void Broadcast(const casper::block::Block& block) override;
  void Request(const Hash32& hash) override;
  // Given up unless it is already in the node's queue.
  void Cancel(const Hash32& hash) override;

  // A block reached the engine (stored, refused or buffered): it is no
  // longer asked for.
  void Delivered(const Hash32& hash);
  // A block reached the engine, which could not take it (its store failed,
  // e.g. a full disk): it is asked for again after the retry cool-down,
  // from whoever has it, until it is stored (the blocks that wait for it
  // ask no more, as they are told it is on its way).
  void NotTaken(const Hash32& hash);
  // Sends `deploy` (encoded DeployDataProto) to every connected peer that
  // has proven to run a bonded validator (NetworkOptions::
  // only_bonded_holders), one at a time on the caller's thread
  // (p2p::Transport::SendNow), each waited for up to `first_timeout` until
  // one has taken it and up to `extra_timeout` after (a copy exists by
  // then). Returns how many
  // distinct validators hold it (NetworkCallbacks::deploy said OK there):
  // 0 when none is connected or none held it in time. A peer that is not a
  // proven bonded validator is not asked (its word that it holds a copy is
  // worth nothing: anyone can make a node id); an honest observer or a
  // validator without stake would decline it anyway.
  size_t ReplicateDeploy(const std::string& encoded_deploy,
                         std::chrono::milliseconds first_timeout,
                         std::chrono::milliseconds extra_timeout);
  // Whether any peer is connected.
  bool HasPeers() const;
  // Asks every connected peer for its tips (after a pause or a restart).
  void AskTips();

  // --- p2p::PacketHandler (transport dispatchers) ---------------------
  void OnPacket(const p2p::PeerNode& from, const std::string& type_id,
                std::string content, bool streamed) override;
  void OnConnected(const p2p::PeerNode& peer) override;
  // Deploys (packet::kDeployData) are held or declined on the server
  // thread, so the sender hears whether this node holds them (the
  // transport offers every small packet here first, so OnPacket never sees
  // one; a streamed one is malformed there like any streamed non-block).
  std::optional<absl::Status> TakeNow(const p2p::PeerNode& from,
                                      const std::string& type_id,
                                      const std::string& content) override;

  NetworkCounters counters() const;
  size_t wanted() const;
  // How long the oldest block asked for has been missing (zero if none);
  // with NetworkOptions::behind_from_bonded_only, the oldest of those the
  // node or a proven bonded validator vouched for.
  std::chrono::milliseconds oldest_wanted_age() const;

 private:
  // A block this node asks for.
  struct Wanted {
    std::vector<Bytes> holders;  // peers that said they have it
    size_t next_holder = 0;
    Bytes asked;  // the peer asked last (empty: asked everyone)
    std::chrono::steady_clock::time_point asked_at{};
    std::chrono::steady_clock::time_point first{};
    int attempts = 0;
    uint64_t seq = 0;  // arrival order (key of wanted_order_)
    // Received and handed to the node, which has not yet said Delivered or
    // NotTaken: it is in the node's queue, so it is not asked for again
    // however long the queue takes (regression: a validator behind by a
    // long queue re-asked every queued block after the request timeout and
    // queued the copies too, which kept it behind).
    bool received = false;
    // Served once (and handed on), or asked for by the node (Request):
    // never given up for want of a server.
    bool served = false;
    bool requested = false;
    // Asked for by the node or announced by a proven bonded validator
    // (NetworkOptions::behind_from_bonded_only): in vouched_order_.
    bool vouched = false;
    // Asked for by the node and not served in max_attempts asks: out of
    // vouched_order_ for good.
    bool stale = false;
  };

  void OnHashAnnounced(const p2p::PeerNode& from, const Hash32& hash);
  // A streamed BlockMessage: decoded and handed to the node, unless it is
  // stored already or a copy waits in the node's queue.
  void OnBlockPacket(const p2p::PeerNode& from, const std::string& content);
  void ServeBlock(const p2p::PeerNode& to, const Hash32& hash);
  void SendHasBlock(const p2p::PeerNode& to, const Hash32& hash);
  // Asks for `hash` (under mu_): the next holder with room; if none has
  // room (or none is known), everyone is asked who has it when
  // `may_broadcast`, else the timer asks again after the cool-down.
  void AskLocked(const Hash32& hash, Wanted& w, bool may_broadcast = true)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A new entry for `hash` (not yet wanted); gives up the oldest request
  // first when options_.max_wanted are wanted.
  Wanted& AddWantedLocked(const Hash32& hash)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks `w` (the entry of `hash`) vouched for.
  void VouchLocked(const Hash32& hash, Wanted& w)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes an entry with its index and its peer's outstanding count.
  std::map<Hash32, Wanted>::iterator EraseWantedLocked(
      std::map<Hash32, Wanted>::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TimerLoop();
  // The transport to send on (null before Attach and after Stop).
  p2p::Transport* CurrentTransport() const;
  // One request fewer outstanding at `peer` (none when empty).
  void ReleaseLocked(const Bytes& peer) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A block's encoding as a blob to stream (null if it cannot be one).
  static std::shared_ptr<const p2p::Blob> BlobOf(Bytes encoded);
  void Malformed(const p2p::PeerNode& from, std::string_view what);

  casper::dag::DagStore* const dag_;
  const casper::block::Block genesis_;
  const NetworkCallbacks callbacks_;
  const NetworkOptions options_;
  BoundedCache<Hash32, std::shared_ptr<const p2p::Blob>, Hash32Hasher> blobs_;
  ChainSync* sync_ = nullptr;
  TrieHandlers trie_;

  mutable Mutex mu_;
  CondVar cv_;
  p2p::Transport* transport_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::map<Hash32, Wanted> wanted_ ABSL_GUARDED_BY(mu_);
  // wanted_ by arrival, oldest first.
  std::map<uint64_t, Hash32> wanted_order_ ABSL_GUARDED_BY(mu_);
  // The vouched entries of wanted_, by arrival.
  std::map<uint64_t, Hash32> vouched_order_ ABSL_GUARDED_BY(mu_);
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  // Block requests outstanding per peer (peers at zero have no entry).
  std::map<Bytes, size_t> outstanding_ ABSL_GUARDED_BY(mu_);
  NetworkCounters counters_ ABSL_GUARDED_BY(mu_);
  std::thread timer_;
  // Lines a peer's messages cause.
  RateLimitedLog peer_log_{"p2p", kPeerLogLinesPerSecond};
};

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_NETWORK_H_

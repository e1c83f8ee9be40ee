// The Casper engine of one validator (docs/validation.md "Engine"): takes
// blocks from peers through validation into the DAG, holds blocks whose
// dependencies are missing in a bounded buffer and asks peers for them,
// proposes, and moves finality forward after every block it adds.
//
// The transport is an interface: tests deliver in process, the node's
// peer-to-peer layer implements it over gRPC.
//
// Not thread-safe: the node calls it from one consensus thread.
#ifndef RNODE_CASPER_ENGINE_ENGINE_H_
#define RNODE_CASPER_ENGINE_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "casper/consensus/finality.h"
#include "casper/dag/dag_store.h"
#include "casper/pool/deploy_pool.h"
#include "casper/prestate/pre_state.h"
#include "casper/proposer/block_creator.h"
#include "casper/validation/validator.h"

namespace rnode::casper::engine {

// What the engine sends to its peers.
class Transport {
 public:
  virtual ~Transport() = default;
  // A block this node made or admitted, for every peer.
  virtual void Broadcast(const block::Block& block) = 0;
  // Asks the peers for the block with this hash (a waiting block needs
  // it), until it arrives or is cancelled.
  virtual void Request(const Hash32& hash) = 0;
  // No waiting block needs `hash` any more (those that did were dropped):
  // it need not be asked for. No-op by default.
  virtual void Cancel(const Hash32& hash) {}
};

// What the engine tells the node's API and metrics. Called on the engine's
// thread after the DAG holds the fact; must not call back into the engine.
class EngineListener {
 public:
  virtual ~EngineListener() = default;
  // This node made `block` and is about to validate and store it.
  virtual void OnBlockCreated(const block::Block& block) {}
  // Validation of `block` (this node's or a peer's) ended with `verdict`
  // after `seconds` (replay included).
  virtual void OnBlockValidated(const block::Block& block,
                                const validation::Verdict& verdict,
                                double seconds) {}
  // A valid block was stored (this node's or a peer's).
  virtual void OnBlockAdded(const block::Block& block) {}
  // Finality moved to `last_finalized`; `blocks` are the blocks it
  // finalized (it and its ancestors not final before), ascending by block
  // number then hash, and `deploys` the signatures of their user deploys
  // whose copy there is the one the finalized state holds (not a copy a
  // merge rejected), in that order. Each block is reported once.
  virtual void OnFinalized(const Hash32& last_finalized,
                           std::span<const Hash32> blocks,
                           std::span<const Bytes> deploys) {}
};

// The buffer of blocks waiting for dependencies (docs/validation.md
// "Engine"). A block is buffered only when its sender is bonded in a state
// this node knows (the last finalized block's or a latest message's) or a
// waiting block names it; the rest are refused (Received::kRefused), so a
// key with no stake cannot make this node hold blocks or ask for hashes.
// Beyond the budgets a block is refused with ResourceExhausted (and
// counted; the network asks for it again later), never dropped silently.
struct EngineOptions {
  // Blocks waiting.
  size_t max_buffered = 1024;
  // Their encoded bytes, in all and per sender (the block's signer).
  size_t max_buffered_bytes = size_t{256} << 20;
  size_t max_buffered_bytes_per_sender = size_t{64} << 20;
  // A block waiting this long is dropped, with the blocks that wait for it,
  // and what only they needed is no longer asked for (Transport::Cancel).
  // A catching-up node fetches a thousand blocks in seconds; a block whose
  // dependencies nobody serves must not hold memory, or keep the node
  // asking, for good.
  int64_t buffer_ttl_ms = 300'000;
  // A block numbered more than this above the highest stored block waits
  // for nothing: it is refused (Received::kAhead) unless a waiting block
  // needs it. Following a chain down from a far tip by its parents would
  // hold the whole gap here, and a gap larger than max_buffered wedged the
  // node (issue 48); a node that far behind fetches by height instead
  // (node/core/chain_sync.h), whose requests stay below this.
  int64_t max_ahead = 128;
  consensus::FinalizerOptions finalizer;
  // Not owned; may be null.
  EngineListener* listener = nullptr;
};

// What happened to a received block.
struct Received {
  enum class Kind : uint8_t {
    kAdded,     // valid, stored (and so were buffered blocks it freed)
    kInvalid,   // invalid (stored as evidence when slashable)
    kBuffered,  // waiting for `verdict.missing`, which were requested
    kKnown,     // already stored or buffered
    // Its dependencies are missing and its sender is bonded in no state
    // this node knows, and no waiting block needs it: not buffered, nothing
    // requested (`verdict.detail` says why). A block that a waiting block
    // needs later is fetched again then.
    kRefused,
    // Its dependencies are missing and its number is more than
    // EngineOptions::max_ahead above the highest stored block: not
    // buffered, nothing requested; the node catches up by height first.
    kAhead,
    // It reaches below this node's floor (validation::Verdict::kStale;
    // `verdict.detail` says how): dropped, nothing requested.
    kStale,
  };
  Kind kind = Kind::kAdded;
  validation::Verdict verdict;
};

struct EngineCounters {
  uint64_t added = 0;
  uint64_t invalid = 0;
  uint64_t buffered = 0;
  uint64_t buffer_full = 0;
  uint64_t refused = 0;
  // Blocks refused as too far ahead (Received::kAhead).
  uint64_t ahead = 0;
  // Blocks dropped as reaching below the floor (Received::kStale).
  uint64_t stale = 0;
  // Buffered blocks dropped after EngineOptions::buffer_ttl_ms (or with a
  // block they waited for).
  uint64_t expired = 0;
  uint64_t finalized = 0;
};

class Engine {
 public:
  // None owned; all must outlive the engine. `key` signs this node's blocks.
  // `pre_states` (may be null) is given each admitted block's merge index.
  Engine(dag::DagStore* dag, pool::DeployPool* pool,
         validation::BlockValidator* validator, proposer::BlockCreator* creator,
         Transport* transport, const crypto::Secp256k1PrivateKey& key,
         EngineOptions options = {},
         prestate::PreStateBuilder* pre_states = nullptr)
      : dag_(dag),
        pool_(pool),
        validator_(validator),
        creator_(creator),
        transport_(transport),
        pre_states_(pre_states),
        key_(key),
        options_(options) {}

  // A block from a peer (or asked for). Internal errors (the store failed)
  // are returned, and then the block may or may not be stored: the caller
  // asks for it again later. The block's own faults are in the result.
  absl::StatusOr<Received> OnBlock(const block::Block& block, int64_t now_ms);

  // Makes a block (nullopt when there is nothing to include and
  // `allow_empty` is false), validates it as a peer would, stores and
  // broadcasts it.
  absl::StatusOr<std::optional<Hash32>> Propose(int64_t now_ms,
                                                bool allow_empty = false);

  // A stored block for a peer's request.
  absl::StatusOr<std::optional<block::Block>> GetBlock(const Hash32& hash) {
    return dag_->GetBlock(hash);
  }

  // Drops the blocks that waited longer than the time to live (also done
  // on every OnBlock); the node calls it on its housekeeping ticks.
  void ExpireBuffered(int64_t now_ms);

  size_t buffered() const { return buffer_.size(); }
  size_t buffered_bytes() const { return buffered_bytes_; }
  const EngineCounters& counters() const { return counters_; }

 private:
  // Validates and stores one block; buffers it on missing dependencies.
  absl::StatusOr<Received> Admit(const block::Block& block, int64_t now_ms);
  // Retries the buffered blocks that wait for a block stored since (ready_)
  // until none can move. On an error the block that failed stays buffered
  // and its trigger stays in ready_.
  absl::Status DrainBuffer(int64_t now_ms);
  // After a block was stored: drains the buffer and moves finality. Should
  // either fail (the store), the next block or proposal does it again
  // (`unsettled_`), as nothing else would retry the buffered blocks.
  absl::Status Settle(int64_t now_ms);
  // Moves the last finalized block forward if the DAG allows, and drops
  // the newly finalized blocks' deploys from the pool.
  absl::Status Finalize();

  dag::DagStore* dag_;
  pool::DeployPool* pool_;
  validation::BlockValidator* validator_;
  proposer::BlockCreator* creator_;
  Transport* transport_;
  prestate::PreStateBuilder* pre_states_;
  const crypto::Secp256k1PrivateKey key_;
  const EngineOptions options_;
  // A block waiting for the blocks its verdict named missing.
  struct Waiting {
    block::Block block;
    std::vector<Hash32> missing;
    int64_t since_ms = 0;  // buffered at
    size_t bytes = 0;      // encoded size
  };
  // Why a block with missing dependencies may not wait (nullopt: it may).
  std::optional<std::string> WhyNotBuffered(const block::Block& block,
                                            size_t bytes);
  // Whether `key` is bonded in the last finalized block's or a latest
  // message's state.
  bool BondedSomewhere(const crypto::Secp256k1PublicKey& key) const;
  // Adds to / removes from the buffer with its indexes and byte counts.
  void Buffer(Waiting waiting);
  Waiting Unbuffer(std::map<Hash32, Waiting>::iterator it);
  // Drops `hash` and, transitively, the blocks that wait for it; cancels
  // what no remaining block waits for.
  void DropBuffered(const Hash32& hash);

  // The waiting blocks by hash, with three indexes: by a hash they miss,
  // by age, and their bytes by sender.
  std::map<Hash32, Waiting> buffer_;
  std::multimap<Hash32, Hash32> waiters_;
  std::set<std::pair<int64_t, Hash32>> by_age_;
  std::map<crypto::Secp256k1PublicKey, size_t> sender_bytes_;
  size_t buffered_bytes_ = 0;
  // Blocks stored whose waiters DrainBuffer has not looked at yet.
  std::vector<Hash32> ready_;
  bool unsettled_ = false;
  EngineCounters counters_;
};

}  // namespace rnode::casper::engine

#endif  // RNODE_CASPER_ENGINE_ENGINE_H_

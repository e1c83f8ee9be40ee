// The block store and the DAG (docs/formats/dag.md): blocks by hash, their
// metadata, the deploy index, the last finalized block and the DAG's
// indexes (heights, children, finalized set, tips, invalid blocks, latest
// messages), in the node's key-value store (one RocksDB instance, a column
// family per concern).
//
// Memory holds a window of the DAG: the metadata and views of the blocks
// numbered from (last finalized block's number - kept_below_finalized) up,
// plus the tips, invalid blocks and latest messages. Older blocks are read
// from the store when asked for, so the node's memory does not grow with the
// chain (a shard makes tens of blocks a second). Every query answers the
// same for a block in the window or below it.
//
// Every Insert is one atomic, durable store write: after a crash the store
// reopens to the blocks whose Insert returned, and the DAG is always closed
// under parents and justifications above its floor (none for a DAG grown
// from its genesis; see Anchor).
//
// Thread-safe. Writers (Insert, SetLastFinalized) are serialised; the
// in-memory views are read under a short lock, never while the store is
// written.
#ifndef RNODE_CASPER_DAG_DAG_STORE_H_
#define RNODE_CASPER_DAG_DAG_STORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "rspace/storage/kv_store.h"
#include "util/bounded_cache.h"
#include "util/bytes.h"
#include "util/mutex.h"

namespace rnode::casper::dag {

// What the DAG keeps of a block (its metadata record).
struct BlockMeta {
  Hash32 hash{};
  std::vector<Hash32> parents;  // Main parent first.
  std::vector<block::Justification> justifications;
  crypto::Secp256k1PublicKey sender{};
  int32_t seq_num = 0;
  int64_t block_number = 0;
  int64_t timestamp = 0;
  Hash32 pre_state{};
  Hash32 post_state{};
  std::vector<block::Bond> bonds;
  uint32_t deploy_count = 0;
  // Judged invalid by validation (kept as slashing evidence; never a
  // parent, never a latest message).
  bool invalid = false;
  friend bool operator==(const BlockMeta&, const BlockMeta&) = default;
};

BlockMeta MetaOf(const block::Block& block, bool invalid);

// What a block records of its merge (Body::merge_base and ::rejected): what
// a walk through the DAG's states reads of a block of several parents
// (casper/prestate/ancestry.h).
struct MergeRecord {
  std::optional<Hash32> merge_base;
  std::vector<block::RejectedDeploy> rejected;
};
Bytes EncodeBlockMeta(const BlockMeta& meta);
// DataLoss for bytes that are not a metadata record.
absl::StatusOr<BlockMeta> DecodeBlockMeta(ByteView bytes);

// The store's columns, as ColumnIds of the key-value store it is opened on.
struct DagColumns {
  rspace::ColumnId blocks = 0;
  rspace::ColumnId meta = 1;
  rspace::ColumnId deploys = 2;
  rspace::ColumnId state = 3;
};
// The column family names, in DagColumns order from `first`.
std::vector<std::string> DagColumnNames();
DagColumns DagColumnsFrom(rspace::ColumnId first);

struct DagStoreOptions {
  // How many block numbers below the last finalized block's stay in memory.
  // Above the deploy lifespan (50), so that building and validating a block
  // reads no metadata from the store.
  int64_t kept_below_finalized = 128;
};

class DagStore {
 public:
  // Opens the DAG kept in `store` (not owned; must outlive the DagStore):
  // loads the window's metadata and the tips, invalid blocks and latest
  // messages from the indexes. A store written before the indexes existed
  // has them built once, from every metadata record. DataLoss if a record
  // does not decode, an index names a block not stored, or a block of the
  // window names a parent that is not stored.
  static absl::StatusOr<std::unique_ptr<DagStore>> Open(
      rspace::KeyValueStore* store, DagColumns columns,
      DagStoreOptions options = {});

  // Stores `block` (its canonical bytes, its metadata and its deploys in
  // the deploy index) in one atomic write. Returns false and changes
  // nothing if a block with its hash is already stored (the first copy
  // wins). FailedPrecondition naming the hash if a parent or a
  // justification's block is not stored (the caller buffers the block
  // until it is), unless the block is numbered at or below the DAG's
  // floor (history); InvalidArgument for an unsealed block (zero hash).
  absl::StatusOr<bool> Insert(const block::Block& block, bool invalid = false);

  // Queries of blocks below the window read the store; a read error
  // answers as if the block were not stored (false, null, empty).
  bool Contains(const Hash32& hash) const;
  // The stored block; nullopt when not stored. DataLoss if its bytes do
  // not decode.
  absl::StatusOr<std::optional<block::Block>> GetBlock(const Hash32& hash);
  // The stored encoding of the block (block::EncodeBlock's bytes), for
  // serving peers without decoding and encoding it again.
  absl::StatusOr<std::optional<Bytes>> GetBlockBytes(const Hash32& hash);
  // Its metadata. NotFound when the block is not stored; the store's
  // error (DataLoss for a record that does not decode) when it could not
  // be read. Never null on OK.
  absl::StatusOr<std::shared_ptr<const BlockMeta>> Meta(
      const Hash32& hash) const;

  // Hashes of the stored blocks that list `hash` as a parent, ascending.
  std::vector<Hash32> Children(const Hash32& hash) const;
  // Hashes of the stored blocks of number `number`, ascending.
  std::vector<Hash32> AtHeight(int64_t number) const;
  // The stored blocks whose hash, in lower-case hex, starts with `hex` (1
  // to 64 lower-case hex digits; InvalidArgument otherwise), ascending, at
  // most `max`. A seek in the store's metadata: the cost does not grow with
  // the chain.
  absl::StatusOr<std::vector<Hash32>> HashesWithPrefix(std::string_view hex,
                                                       size_t max) const;
  // The largest block number stored; -1 for an empty DAG.
  int64_t MaxHeight() const;
  // Each validator's latest valid block (highest sequence number; on a tie,
  // an equivocation, the smaller hash), by key.
  std::map<crypto::Secp256k1PublicKey, Hash32> LatestMessages() const;
  // Valid blocks without valid children, ascending.
  std::vector<Hash32> Tips() const;
  // Blocks stored marked invalid, ascending.
  std::vector<Hash32> InvalidBlocks() const;
  // Blocks that include the deploy with signature `sig`, ascending.
  absl::StatusOr<std::vector<Hash32>> BlocksWithDeploy(ByteView sig);
  // The merge record of the stored block `hash`: from memory for the
  // blocks of several parents inserted or read lately (at most
  // kMergeRecordsKept), else decoded from the store. NotFound when not
  // stored.
  static constexpr size_t kMergeRecordsKept = 4096;
  absl::StatusOr<std::shared_ptr<const MergeRecord>> MergeRecordOf(
      const Hash32& hash);
  // Valid blocks whose merge rejected the deploy `sig` (their record
  // names it), ascending. Blocks stored before this index existed are not
  // counted.
  absl::StatusOr<std::vector<Hash32>> BlocksRejectingDeploy(ByteView sig);

  // True when `ancestor` is `hash` or reachable from it through parents.
  bool IsAncestor(const Hash32& ancestor, const Hash32& hash) const;

  // --- Joining from a last finalized state (docs/p2p.md "Joining") -------
  // A DAG that starts at its genesis has no floor. One that a joining node
  // anchored at a peer's last finalized block has one: blocks numbered at
  // or below it are history, stored without their parents and
  // justifications (this node never held what lies under them).
  std::optional<int64_t> floor() const;

  // Stores `blocks` (sealed, any order, none stored yet) and makes `anchor`,
  // one of them, the last finalized block with `floor` as the DAG's floor,
  // in one atomic write. Each block numbered above the floor must find its
  // parents and justified blocks among `blocks` or stored; those at or
  // below it need not. The anchor and its ancestors among `blocks` are
  // finalized. The caller vouches for the blocks (docs/p2p.md "Joining":
  // finality by the bonds, the chain to the genesis): nothing here
  // validates them. FailedPrecondition, changing nothing, unless the DAG
  // holds its genesis alone (a node that has followed the shard has
  // nothing to anchor), or when a block above the floor misses a
  // dependency; InvalidArgument for an unsealed block, an anchor not among
  // `blocks` or at or below the floor.
  absl::Status Anchor(std::span<const block::Block> blocks,
                      const Hash32& anchor, int64_t floor);

  // The anchor of an anchored DAG until the joining node verified it (its
  // finality by the blocks above it; node/core/state_join.h), across
  // restarts; nullopt once verified, and for a DAG that was not anchored.
  std::optional<Hash32> UnverifiedAnchor() const;
  // Records that the anchor is verified. The store's errors.
  absl::Status SetAnchorVerified();

  // Records `hash` (a stored block) as the last finalized block; it and
  // every ancestor count as finalized from then on. FailedPrecondition if
  // it is not stored or does not descend from the current last finalized
  // block (finality never moves sideways or back). Durable on return.
  absl::Status SetLastFinalized(const Hash32& hash);
  std::optional<Hash32> LastFinalized() const;
  // The blocks that finalizing `hash` (a stored block) makes finalized: it
  // and its ancestors not finalized yet, by block number, then hash.
  // DataLoss if one of them cannot be read.
  absl::StatusOr<std::vector<Hash32>> FinalizedBy(const Hash32& hash) const;
  bool IsFinalized(const Hash32& hash) const;

  // --- Retention of old blocks (docs/node.md "Retention") ----------------
  struct PruneStats {
    int64_t floor = -1;  // the DAG's floor after the call
    uint64_t blocks_deleted = 0;
    // Numbered below the floor and kept: still referenced.
    uint64_t blocks_kept = 0;
    // The deleted blocks' encodings and metadata records.
    uint64_t bytes_deleted = 0;
  };
  // Raises the DAG's floor to `floor` (never lowers it) and deletes the
  // blocks numbered below it that nothing kept references: each one's body
  // (its event logs with it), metadata, height, children, finalized, tip
  // and invalid records, and its entries in the deploy and rejection
  // indexes. Kept below the floor: the genesis, every latest message and
  // the blocks it justifies, and the parents and justified blocks of every
  // block numbered above the floor, so that the DAG above its floor stays
  // closed under dependencies and a latest message's sender can still be
  // validated. The blocks numbered `floor` stay, as history (as under an
  // anchored DAG's floor, see Anchor).
  //
  // Deletes in writes of at most `step` blocks, each made under the writer
  // lock: blocks go on being inserted between them, and a block inserted
  // during the call keeps what it depends on. Returns early (OK, counting
  // what it did) once `*stop` is true; a later call with any floor
  // finishes the sweep, as it does after a crash. InvalidArgument for a
  // floor above the last finalized block's number minus
  // kept_below_finalized (the window stays whole); FailedPrecondition
  // without a last finalized block; the store's errors.
  absl::StatusOr<PruneStats> PruneBelow(int64_t floor,
                                        const std::atomic<bool>* stop = nullptr,
                                        size_t step = 256);

  // Calls `fn` with the metadata of every stored block numbered from `from`
  // up, by number then hash (a block deleted meanwhile is skipped): one
  // scan of the height index, then a store read each, made without the
  // views' lock (a caller reads thousands; retention). Stops at `fn`'s
  // error; the store's errors, DataLoss for a record that does not decode.
  absl::Status ForEachMetaFrom(
      int64_t from,
      const std::function<absl::Status(const BlockMeta&)>& fn) const;

  // The number of blocks stored.
  size_t size() const;
  // The number of blocks whose metadata is held in memory (the window).
  size_t window_size() const;

 private:
  DagStore(rspace::KeyValueStore* store, DagColumns columns,
           DagStoreOptions options);
  // Open's two ways: from the indexes, or building them from every
  // metadata record (a store written before they existed).
  absl::Status LoadWindow() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // LoadWindow's step: an anchored DAG's floor and unverified anchor.
  absl::Status LoadAnchor() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status BuildIndexes() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Puts into `batch` the index records of `meta`, a block not indexed yet
  // whose parents are, as the views are now.
  void StageIndex(const BlockMeta& meta, rspace::WriteBatch& batch) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Keeps the merge record of `block` (inserted) in memory.
  void KeepMergeRecord(const block::Block& block);
  // Puts into `batch` the deploy index and rejection index entries of
  // `block` (deploy_index.cc).
  absl::Status StageDeployIndex(const block::Block& block, bool invalid,
                                rspace::WriteBatch& batch) const;
  // The same for several blocks at once (none in the index yet).
  absl::Status StageDeployIndexes(std::span<const block::Block> blocks,
                                  bool invalid,
                                  rspace::WriteBatch& batch) const;
  // Undoes StageDeployIndexes for `blocks` (removed from their deploys'
  // and rejections' entries; an entry left empty is deleted).
  absl::Status StageDeployUnindex(std::span<const block::Block> blocks,
                                  rspace::WriteBatch& batch) const;
  // PruneBelow's: what below `floor` stays (see PruneBelow), and one write
  // of at most `step` blocks from the height index key `from` on (moved
  // past what it scanned; empty when the sweep is done).
  absl::StatusOr<absl::flat_hash_set<Hash32, Hash32Hasher>> PruneKeeps(
      int64_t floor) const;
  // The stored blocks numbered from `from` to `to` (both included), by
  // number then hash: one scan of the height index.
  absl::StatusOr<std::vector<std::pair<int64_t, Hash32>>> Numbered(
      int64_t from, int64_t to) const;
  absl::Status PruneStep(int64_t floor,
                         const absl::flat_hash_set<Hash32, Hash32Hasher>& keep,
                         size_t step, Bytes& from, PruneStats& stats);
  // Anchor's checks of its input, under the lock.
  absl::Status CheckAnchorable(std::span<const block::Block> blocks,
                               const Hash32& anchor, int64_t floor) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adds `meta` to the in-memory views, as StageIndex's records say (to
  // the window's only if it is numbered in it).
  void Apply(std::shared_ptr<const BlockMeta> meta)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether `meta` is history: at or below an anchored DAG's floor.
  bool IsHistory(const BlockMeta& meta) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return floor_.has_value() && meta.block_number <= *floor_;
  }
  // Whether `meta` displaces its sender's latest message.
  bool BecomesLatest(const BlockMeta& meta) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // FinalizedBy under the lock.
  absl::StatusOr<std::vector<Hash32>> NewlyFinalized(const Hash32& hash) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops from memory the blocks numbered below `horizon`.
  void EvictBelow(int64_t horizon) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The metadata of `hash`, from memory (the window, the latest messages)
  // or else the store; null when not stored.
  absl::StatusOr<std::shared_ptr<const BlockMeta>> FindMeta(
      const Hash32& hash) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::shared_ptr<const BlockMeta>> ReadMeta(
      const Hash32& hash) const;
  // Whether `hash` is stored (in memory, or else a metadata record).
  absl::StatusOr<bool> StoredLocked(const Hash32& hash) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether `hash` is finalized (in memory for the window, else the index).
  absl::StatusOr<bool> FinalizedLocked(const Hash32& hash) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether the store's index marks `hash` finalized.
  absl::StatusOr<bool> StoredFinalized(const Hash32& hash) const;
  absl::StatusOr<std::optional<Hash32>> ReadLastFinalized() const;
  bool IsAncestorLocked(const Hash32& ancestor, const Hash32& hash) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether a walk down the parents from `start` meets `target` (it stops
  // below the target's number).
  bool WalkFinds(const BlockMeta& target,
                 std::shared_ptr<const BlockMeta> start) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The hashes ending the keys of the index `prefix` (keys prefix + hash),
  // ascending.
  absl::StatusOr<std::vector<Hash32>> IndexedHashes(ByteView prefix) const;

  rspace::KeyValueStore* const store_;
  const DagColumns columns_;
  const DagStoreOptions options_;
  // Serialises writers (Insert, SetLastFinalized) so that a read-modify-write
  // of the deploy index, and the index records staged from the views, see
  // the previous writer's result.
  Mutex write_mu_;
  // Guards the views; store reads for blocks below the window are made
  // under it too (they are few), writes never are.
  mutable Mutex mu_;
  // The window: blocks numbered from horizon_ up.
  int64_t horizon_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<Hash32, std::shared_ptr<const BlockMeta>, Hash32Hasher>
      metas_ ABSL_GUARDED_BY(mu_);
  // Children of the window's blocks (all of them are in the window).
  absl::flat_hash_map<Hash32, std::vector<Hash32>, Hash32Hasher> children_
      ABSL_GUARDED_BY(mu_);
  std::map<int64_t, std::vector<Hash32>> heights_ ABSL_GUARDED_BY(mu_);
  // The window's finalized blocks.
  absl::flat_hash_set<Hash32, Hash32Hasher> finalized_ ABSL_GUARDED_BY(mu_);
  // Of the whole DAG, and few: each sender's latest message, the blocks
  // stored invalid, the tips (blocks no valid block has built on yet).
  std::map<crypto::Secp256k1PublicKey, std::shared_ptr<const BlockMeta>> latest_
      ABSL_GUARDED_BY(mu_);
  std::set<Hash32> invalid_ ABSL_GUARDED_BY(mu_);
  // Valid blocks without valid children.
  std::set<Hash32> tips_ ABSL_GUARDED_BY(mu_);
  std::optional<Hash32> last_finalized_ ABSL_GUARDED_BY(mu_);
  std::optional<int64_t> floor_ ABSL_GUARDED_BY(mu_);
  std::optional<Hash32> unverified_anchor_ ABSL_GUARDED_BY(mu_);
  uint64_t count_ ABSL_GUARDED_BY(mu_) = 0;
  // While PruneBelow runs: the dependencies of the blocks inserted since
  // it chose what to keep, which it keeps too.
  bool pruning_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_set<Hash32, Hash32Hasher> pinned_ ABSL_GUARDED_BY(mu_);
  // Merge records of blocks of several parents (thread-safe on its own).
  BoundedCache<Hash32, std::shared_ptr<const MergeRecord>, Hash32Hasher>
      merge_records_{kMergeRecordsKept};
};

// Where the main-parent chains of `blocks` (stored, at least one) meet: the
// highest block on every one of them. Found by walking the highest of the
// chains down one block at a time until all are at the same block.
// FailedPrecondition if two of them never meet (different roots); DataLoss
// if a main parent cannot be read.
absl::StatusOr<std::shared_ptr<const BlockMeta>> MainChainMeet(
    const DagStore& dag, std::vector<std::shared_ptr<const BlockMeta>> blocks);

// MainChainMeet, walking no lower than block number `lowest`: null when the
// chains meet below it (or never meet). The cost is bounded by the blocks
// of the chains numbered from `lowest` up; no block numbered below
// `lowest` is read.
absl::StatusOr<std::shared_ptr<const BlockMeta>> MainChainMeetAtOrAbove(
    const DagStore& dag, std::vector<std::shared_ptr<const BlockMeta>> blocks,
    int64_t lowest);

// How far below a block of several parents their main-parent chains may
// meet: at a block numbered at least the block's number - kMaxMergeDepth
// (docs/validation.md "Parents"). It bounds every merge's scope, so that a
// node that keeps (retention) or fetches (joining) the blocks of that many
// numbers below its last finalized block holds every block a merge to come
// can read. Far above a partition healed in minutes at the shard's rate of
// block numbers, and a block left out for it only delays its deploys: they
// stay pooled until the finalized state holds them.
inline constexpr int64_t kMaxMergeDepth = 512;

// The merge base of a block of `parents` (their records, at least one; the
// first is the main parent): the highest block on the main parent's main-parent
// chain, the main parent included, that is an ancestor-or-self of every
// parent. Never lower than MainChainMeet of the parents, which is on that
// chain and common to all, and often higher: a parent whose own main
// chain reaches the main parent's chain low down may still descend from a
// block high on it, and the blocks between are then not merged again
// (docs/merge.md "Base and scope"). Cost: the parents' ancestors down to
// the meet. Errors: MainChainMeet's; DataLoss if an ancestor is not
// readable.
absl::StatusOr<std::shared_ptr<const BlockMeta>> MergeBaseOf(
    const DagStore& dag, std::vector<std::shared_ptr<const BlockMeta>> parents);

// The work a validator goes on finalizing after a restart: the valid blocks
// above the last finalized block's number (all blocks when nothing is
// finalized) that are not finalized and carry user deploys or a slash,
// ascending by number, then hash. Blocks without deploys are read from the
// store (their metadata does not say whether they slash); DataLoss if one
// does not decode.
absl::StatusOr<std::vector<Hash32>> UnfinalizedWork(DagStore& dag);

// The last finalized block's number; -1 when nothing is finalized. The
// DAG's error when its metadata cannot be read.
absl::StatusOr<int64_t> LastFinalizedNumber(const DagStore& dag);

// Whether `validator`'s latest block has every other validator's latest
// block as an ancestor, so that a new block of it would justify nothing
// new; another's latest block numbered below the last finalized one and
// not finalized does not count (off the chain for good, and under it
// retention may have deleted the blocks a walk would read). False when it
// has no latest block, or when its latest block does not
// descend from the last finalized block (it is at or below the finalized
// frontier, or off it): then it is behind, and it is said without walking
// down to the others' finalized latest blocks, which may be the genesis,
// under the whole chain (found by a soak: a validator whose latest block
// fell below the last finalized one walked the chain for every peer block).
// Read on the thread that moves finality: one that moved it meanwhile may
// make the answer stale.
bool LatestJustifiesOthers(const DagStore& dag,
                           const crypto::Secp256k1PublicKey& validator);

}  // namespace rnode::casper::dag

#endif  // RNODE_CASPER_DAG_DAG_STORE_H_

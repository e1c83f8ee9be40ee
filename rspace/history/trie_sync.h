// Moving a whole state trie between stores by node hash: the serving side
// (ExportTrieNodes) answers requests for nodes, the fetching side
// (TrieImporter) decides what to ask for, checks every answer against the
// hash its parent named, and stores what passes. Together they carry the
// post-state of a block to a node that has none of it (issue 45's state
// sync; docs/formats/rspace.md "Trie").
//
// A trie node's hash covers its items (child hashes, leaf value hashes),
// not the leaf values stored inline with it, so each value is checked
// against its item's hash as well. The root's hash comes from elsewhere (a
// block the caller verified); every other hash the importer asks for was
// named by a node it already checked, so an answer that passes is the node
// the root commits to, whoever sent it.
//
// Resuming: the importer writes each node with its out-of-line values in
// one batch, and asks for a node only once its parent is stored, so every
// node it stored is reachable from the root through stored nodes. Start
// walks those and asks only for the children that are missing: a node
// stored before a crash is not fetched again.
#ifndef RNODE_RSPACE_HISTORY_TRIE_SYNC_H_
#define RNODE_RSPACE_HISTORY_TRIE_SYNC_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "rspace/history/history.h"
#include "rspace/storage/kv_store.h"
#include "util/bytes.h"

namespace rnode::rspace {

// One node as it travels: its hash, its stored form (EncodeStoredTrieNode:
// the items, with the values stored inline) and the values of its leaves
// that are stored out of line, in item order.
struct TrieSyncItem {
  Hash32 hash{};
  Bytes node;
  std::vector<Bytes> values;
  // Bytes on the wire (roughly): hash, node and values.
  size_t size() const;
};

struct TrieExport {
  std::vector<TrieSyncItem> items;  // In request order.
  std::vector<Hash32> missing;      // Requested and not stored here.
};

// The nodes `hashes` of the store, in request order, until the next would
// take the answer past `max_bytes` (the first is always answered); the
// hashes after that are neither answered nor listed missing (the requester
// asks again). Errors: the store's; DataLoss if a stored node does not
// decode or names an out-of-line value that is not stored.
absl::StatusOr<TrieExport> ExportTrieNodes(KeyValueStore& store,
                                           const HistoryColumns& columns,
                                           std::span<const Hash32> hashes,
                                           size_t max_bytes);

// Trie nodes known to head a complete subtree in a store (every node and
// value under them stored and checked): an import of another root that
// shares them walks past them instead of reading them again. Its owner
// bounds it (TrieImporter::MarkComplete).
using CompleteNodes = absl::flat_hash_set<Hash32, Hash32Hasher>;

// Fetches the tries at one or more roots into a store. Not thread-safe:
// one owner (the sync's thread) calls it.
class TrieImporter {
 public:
  // The most nodes an import remembers having walked or stored (so that
  // the tries of several roots, which share most of their nodes, are
  // walked once): about 70 MiB. Past it, a shared subtree may be walked
  // again (slower, not wrong).
  static constexpr size_t kMaxSeen = size_t{1} << 21;

  // Begins, or resumes, the import of the tries at `roots` (their hashes
  // checked by the caller; at least one): walks the nodes of them already
  // stored and queues every child that is not. `store` is not owned and
  // must outlive the importer; so must `complete` (may be null), whose
  // subtrees are not walked. Errors: the store's; DataLoss if a stored
  // node of a trie does not decode or a trie is deeper than a key;
  // InvalidArgument without a root.
  static absl::StatusOr<std::unique_ptr<TrieImporter>> Start(
      KeyValueStore* store, HistoryColumns columns,
      std::span<const Hash32> roots, const CompleteNodes* complete = nullptr);
  // One root.
  static absl::StatusOr<std::unique_ptr<TrieImporter>> Start(
      KeyValueStore* store, HistoryColumns columns, const Hash32& root,
      const CompleteNodes* complete = nullptr) {
    return Start(store, columns, std::span<const Hash32>(&root, 1), complete);
  }

  // Once done(): adds to `complete` every node of the tries this import
  // found stored or stored itself (those it remembers: kMaxSeen), while
  // `complete` holds fewer than `max` (what is left out is only walked again by
  // a later import).
  void MarkComplete(CompleteNodes& complete, size_t max) const;

  // Up to `n` queued hashes, now in flight: the caller asks a peer for
  // them and hands the answer to Accept, or gives them back.
  std::vector<Hash32> Next(size_t n);

  // Gives back hashes from Next that were not answered (a timeout, a peer
  // gone, an answer cut short): they are queued again. Hashes not in
  // flight are ignored.
  void GiveBack(std::span<const Hash32> hashes);

  struct Rejected {
    Hash32 hash{};
    std::string reason;
    // False: the node was not in flight (an answer after its request was
    // given back, or never asked for); it may be right, and is not stored.
    bool asked = true;
  };
  struct Accepted {
    size_t nodes = 0;  // Stored by this call.
    std::vector<Rejected> rejected;
  };

  // Checks each of `items`: in flight; decodes; its items hash to it; each
  // inline value and each of `values` (one per out-of-line leaf, in order)
  // hashes to its leaf's value hash; no deeper than a key. Those that pass
  // are stored in one batch, and their children not stored are queued; a
  // rejected item's hash is queued again (another peer may answer it), and
  // the reasons say why (the caller punishes the sender). Errors: the
  // store's, and then nothing of the call was stored (the hashes are queued
  // again).
  absl::StatusOr<Accepted> Accept(std::span<const TrieSyncItem> items);

  // Whether every node of the tries is stored (nothing queued or in
  // flight).
  bool done() const { return queue_.empty() && in_flight_.empty(); }

  // The first root (a request names it: a server holds the tries of it).
  const Hash32& root() const { return roots_.front(); }
  const std::vector<Hash32>& roots() const { return roots_; }
  size_t queued() const { return queue_.size(); }
  size_t in_flight() const { return in_flight_.size(); }
  // Nodes found stored by Start (before any fetch), and stored since.
  uint64_t found_stored() const { return found_stored_; }
  uint64_t fetched_nodes() const { return fetched_nodes_; }
  uint64_t fetched_bytes() const { return fetched_bytes_; }

 private:
  struct Pending {
    Hash32 hash{};
    uint8_t depth = 0;  // Key bytes above the node.
  };
  TrieImporter(KeyValueStore* store, HistoryColumns columns,
               std::vector<Hash32> roots, const CompleteNodes* complete)
      : store_(store),
        columns_(columns),
        roots_(std::move(roots)),
        complete_(complete) {}
  // Walks the stored nodes under `from`, queueing the missing ones (not
  // those walked already: their missing descendants are queued).
  absl::Status Rescan(const Pending& from);
  // Remembers a node walked or stored (up to kMaxSeen).
  void Saw(const Hash32& h);
  // Queues `p` unless it is queued or in flight.
  void Queue(const Pending& p);
  // Why `item` is not the node it claims to be (empty: it is), and what
  // to store for it.
  std::string Check(const TrieSyncItem& item, uint8_t depth,
                    TrieNode& node) const;

  KeyValueStore* const store_;
  const HistoryColumns columns_;
  const std::vector<Hash32> roots_;
  const CompleteNodes* const complete_;
  // The tries' nodes found stored or stored, outside `complete_`: not
  // walked again, and what MarkComplete adds.
  absl::flat_hash_set<Hash32, Hash32Hasher> seen_;
  // Depth first (a stack): what is queued stays within a few nodes' items
  // per level, whatever the trie's size.
  std::vector<Pending> queue_;
  struct PendingHash {
    size_t operator()(const Pending& p) const { return Hash32Hasher()(p.hash); }
  };
  struct PendingEq {
    bool operator()(const Pending& a, const Pending& b) const {
      return a.hash == b.hash;
    }
  };
  absl::flat_hash_set<Hash32, Hash32Hasher> queued_;  // queue_'s hashes
  absl::flat_hash_set<Pending, PendingHash, PendingEq> in_flight_;
  uint64_t found_stored_ = 0;
  uint64_t fetched_nodes_ = 0;
  uint64_t fetched_bytes_ = 0;
};

// Records `root` in the roots table of `store` (checkpoint number 0: it was
// imported, not built here), after checking that every node and value it
// reaches is stored and matches its hash; Space::Reset then takes it.
// DataLoss naming the first missing or altered piece (nothing recorded);
// the store's errors.
absl::Status AdoptTrieRoot(KeyValueStore& store, const HistoryColumns& columns,
                           const Hash32& root);

// Records `root` in the roots table without the walk: for a TrieImporter
// that is done, whose every node it stored was checked on Accept and
// every node it found was already in the store. The store's errors.
absl::Status RecordTrieRoot(KeyValueStore& store, const HistoryColumns& columns,
                            const Hash32& root);

}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_HISTORY_TRIE_SYNC_H_

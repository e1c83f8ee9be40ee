// Deleting the state no kept root reaches (issue 45's history retention;
// docs/rspace.md "Collecting old states"). Every block's checkpoint writes
// the nodes of the paths it changed; the nodes they replaced stay stored,
// reachable only from older roots. TrieCollector marks what a set of kept
// roots reaches (trie nodes and out-of-line values) and sweeps the rest,
// with the root records of the states not kept, while commits go on.
//
// Commits during a collection: a commit may write a node with the hash of
// one the sweep found unreachable (content addressing: a channel back to
// an old value). TrieWriteGuard closes that race: the history reports to
// it every key a commit is about to write (History::CommitChanges, before
// the write), and each sweep step drops those keys from what it deletes,
// under the guard's lock. Either the step deleted the key before the
// commit reported it (the commit then writes it again), or the commit
// reported it first (the step keeps it). What a commit reuses unchanged
// comes from its base root, which the caller keeps (a block's pre-state is
// built on retained states), so it is marked.
//
// Not collected: a store while a TrieImporter writes to it (a joining
// node collects only once joined).
#ifndef RNODE_RSPACE_HISTORY_TRIE_GC_H_
#define RNODE_RSPACE_HISTORY_TRIE_GC_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "rspace/history/trie.h"
#include "rspace/storage/kv_store.h"
#include "util/bytes.h"
#include "util/mutex.h"

namespace rnode::rspace {

struct HistoryColumns;

// The keys commits write while a collection sweeps. Thread-safe.
class TrieWriteGuard {
 public:
  // Most keys remembered during one sweep; past it the sweep stops
  // deleting (a sweep that long is cut short, not wrong).
  static constexpr size_t kMaxWritten = size_t{1} << 20;

  explicit TrieWriteGuard(const HistoryColumns& columns);

  // A commit, from before its batch is written to the end of its scope
  // (the history has then written the batch and named the root,
  // History::RecentRoots): its keys in the history's columns are
  // remembered while a sweep runs, and Begin waits for it. So a commit either
  // finished before Begin (its root is named when the collector reads the kept
  // roots) or is remembered. Found in a soak: a commit that reported its batch
  // just before Begin and named its root just after the kept roots were read
  // lost its new nodes.
  class ABSL_SCOPED_LOCKABLE Commit {
   public:
    Commit(TrieWriteGuard* guard, const WriteBatch& batch)
        ABSL_EXCLUSIVE_LOCK_FUNCTION(guard->commit_mu_);
    ~Commit() ABSL_UNLOCK_FUNCTION();
    Commit(const Commit&) = delete;
    Commit& operator=(const Commit&) = delete;

   private:
    TrieWriteGuard* const guard_;
  };

  // Sweep side: Begin before reading the kept roots and marking (it waits
  // for a Commit in flight); each step deletes under Delete; End when
  // done.
  void Begin();
  void End();
  // Writes `batch` of deletes (keys in the history's columns) without the
  // keys a commit wrote since Begin; returns how many it deleted.
  // FailedPrecondition (nothing written) when more keys were written than
  // remembered; the store's errors.
  absl::StatusOr<size_t> Delete(KeyValueStore& store, WriteBatch batch);

 private:
  // Commit's: remembers the keys of `batch` while a sweep runs.
  void Writing(const WriteBatch& batch);

  const ColumnId nodes_;
  const ColumnId values_;
  const ColumnId roots_;
  std::atomic<bool> active_{false};
  // Held by a Commit; taken by Begin. Before mu_.
  Mutex commit_mu_;
  Mutex mu_;
  bool overflow_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_set<Bytes> written_ ABSL_GUARDED_BY(mu_);
};

struct TrieGcOptions {
  // Keys examined per sweep step (one delete batch, under the guard's lock
  // only while it is filtered and written).
  size_t sweep_batch = 4096;
  // Most nodes and values marked: a state larger than this is not
  // collected (ResourceExhausted, nothing deleted). About 40 bytes each.
  size_t max_marked = size_t{1} << 23;
};

struct TrieGcStats {
  uint64_t kept_roots = 0;
  uint64_t marked_nodes = 0;
  uint64_t marked_values = 0;
  // Keys and values of what the kept roots reach: the live state's size in
  // the store (before the store's own overhead and compression).
  uint64_t marked_bytes = 0;
  uint64_t nodes_deleted = 0;
  uint64_t values_deleted = 0;
  uint64_t roots_deleted = 0;
  // Keys and values of what the sweep found dead (a key a commit wrote
  // again meanwhile, kept, is counted too).
  uint64_t bytes_deleted = 0;
  double mark_seconds = 0;
  double sweep_seconds = 0;
};

// Thread-compatible: one collection at a time.
class TrieCollector {
 public:
  // `store` and `guard` (not owned) outlive this; `guard` is the one the
  // history writing to `store` reports to.
  TrieCollector(KeyValueStore* store, const HistoryColumns& columns,
                TrieWriteGuard* guard, TrieGcOptions options = {});

  // Keeps the tries of `kept` (and the empty root) and deletes every other
  // node, out-of-line value and root record. Each kept root must be whole
  // in the store (DataLoss naming the first missing node, and nothing
  // deleted). `stop` (may be null) ends the sweep early between steps.
  // Errors: the store's; ResourceExhausted past options.max_marked.
  absl::StatusOr<TrieGcStats> Collect(std::span<const Hash32> kept,
                                      const std::atomic<bool>* stop = nullptr);
  // As Collect, with the kept roots asked of `kept` once the guard
  // remembers commits: a root committed after the call is kept whether or
  // not `kept` names it. `kept`'s error ends the collection, nothing
  // deleted.
  using KeptRootsFn = std::function<absl::StatusOr<std::vector<Hash32>>()>;
  absl::StatusOr<TrieGcStats> Collect(const KeptRootsFn& kept,
                                      const std::atomic<bool>* stop = nullptr);

 private:
  KeyValueStore* const store_;
  const ColumnId nodes_;
  const ColumnId values_;
  const ColumnId roots_;
  TrieWriteGuard* const guard_;
  const TrieGcOptions options_;
};

}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_HISTORY_TRIE_GC_H_

// History retention (issue 45; docs/node.md "Retention"): the node keeps
// the blocks and states of its last `storage.retain-blocks` finalized block
// numbers and of every block above them, and deletes older blocks and the
// trie nodes, values and root records of older states in the background
// (rspace::TrieCollector). Each step of the sweep holds commits for one
// bounded delete batch; the mark reads while blocks go on being made.
//
// What is kept: the pre- and post-states of every stored block numbered at
// least the last finalized block's number minus `keep_numbers`, of every
// tip and latest message (whatever its number), of the genesis, the
// space's current root and the roots of its latest commits
// (History::RecentRoots: a state committed but not yet named by a stored
// block), of those the history holds. `keep_numbers` is at least
// kMinKeepNumbers: every merge a new block can make reads states within the
// merge depth (512 numbers) of its parents, and a joining peer asks for the
// window below the last finalized block.
//
// Old blocks go first (DagStore::PruneBelow): bodies with their event logs,
// metadata and index records of the blocks numbered below the last
// finalized block's number minus `keep_numbers`, but for those a kept
// block depends on and the latest messages.
//
// Thread-safe: its own thread collects; the API reads counters().
#ifndef RNODE_NODE_CORE_RETENTION_H_
#define RNODE_NODE_CORE_RETENTION_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "casper/dag/dag_store.h"
#include "rspace/history/history.h"
#include "rspace/history/trie_gc.h"
#include "rspace/storage/kv_store.h"
#include "util/mutex.h"
#include "util/stop_signal.h"

namespace rnode::node {

// Twice the merge depth.
inline constexpr int64_t kMinKeepNumbers = 2 * casper::dag::kMaxMergeDepth;

struct RetentionOptions {
  // Finalized block numbers whose states are kept (at least
  // kMinKeepNumbers).
  int64_t keep_numbers = 16384;
  // A collection runs once the last finalized block moved this many
  // numbers since the last one (0: keep_numbers / 8, at least 64), and at
  // most once per `min_interval`.
  int64_t min_advance = 0;
  std::chrono::milliseconds min_interval{30'000};
  std::chrono::milliseconds tick{1'000};
  // Whether old blocks go too (DagStore::PruneBelow, to the last finalized
  // block's number minus keep_numbers) before the states are collected.
  bool prune_blocks = true;
  rspace::TrieGcOptions gc;
};

struct RetentionCounters {
  uint64_t collections = 0;
  uint64_t failures = 0;
  uint64_t nodes_deleted = 0;
  uint64_t values_deleted = 0;
  uint64_t roots_deleted = 0;
  uint64_t bytes_deleted = 0;
  uint64_t blocks_deleted = 0;
  uint64_t block_bytes_deleted = 0;
  int64_t floor = -1;  // the DAG's floor now (-1: none)
  // The last collection's.
  uint64_t last_blocks_deleted = 0;
  double prune_seconds = 0;
  int64_t kept_from = -1;  // the lowest block number kept
  uint64_t kept_roots = 0;
  uint64_t marked_nodes = 0;
  uint64_t marked_values = 0;
  uint64_t marked_bytes = 0;  // the live state (TrieGcStats::marked_bytes)
  double mark_seconds = 0;
  double sweep_seconds = 0;
  std::string last_error;
};

// The state roots retention keeps when the last finalized block is
// numbered `lfb_number` (see the file comment); `from` gets the lowest
// number kept. The DAG's read errors.
absl::StatusOr<std::vector<Hash32>> KeptRoots(const casper::dag::DagStore& dag,
                                              rspace::History& history,
                                              int64_t lfb_number,
                                              int64_t keep_numbers,
                                              int64_t* from = nullptr);

class StateRetention {
 public:
  struct Deps {
    casper::dag::DagStore* dag = nullptr;
    rspace::History* history = nullptr;
    // The store the history writes (through the node's pipelined store).
    rspace::KeyValueStore* store = nullptr;
    rspace::HistoryColumns columns;
    // The guard the history reports its commits to.
    rspace::TrieWriteGuard* guard = nullptr;
    // Whether the node may collect now (it has joined and is ready).
    std::function<bool()> ready;
  };
  // The deps (not owned) outlive this.
  StateRetention(Deps deps, RetentionOptions options);
  ~StateRetention();  // Stop()
  StateRetention(const StateRetention&) = delete;
  StateRetention& operator=(const StateRetention&) = delete;

  void Start();
  // Ends a collection under way between sweep steps, and the thread.
  void Stop();

  // One collection now, on the caller's thread (the loop's step; tests).
  // FailedPrecondition without a last finalized block.
  absl::StatusOr<rspace::TrieGcStats> CollectOnce();

  RetentionCounters counters() const;

 private:
  void Loop();

  const Deps d_;
  const RetentionOptions options_;
  rspace::TrieCollector collector_;
  std::atomic<bool> stopping_{false};
  StopSignal stop_;
  std::thread thread_;
  // Loop's: where the last collection ran.
  int64_t last_lfb_ = -1;
  std::chrono::steady_clock::time_point last_at_{};

  mutable Mutex mu_;
  RetentionCounters counters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_RETENTION_H_

// The caller-owned resources of merges: worker pool, helper thread and
// scratch space, sized by the caller (docs/merge.md §11).
#ifndef RNODE_CASPER_MERGE_MERGE_CONTEXT_H_
#define RNODE_CASPER_MERGE_MERGE_CONTEXT_H_

#include <cstddef>
#include <functional>
#include <memory>

#include "util/worker_pool.h"

namespace rnode::casper::merge {

namespace internal {
struct MergeScratch;
class SerialExecutor;
}  // namespace internal

// Most threads a context runs per-channel work on: beyond a few threads the
// per-channel work of even a 10,000-chain merge is shorter than the handoff.
inline constexpr size_t kMaxMergeThreads = 64;

// Items per task when per-channel work is spread over threads: large enough
// that task overhead stays small against a leaf read or a blob hash.
inline constexpr size_t kDefaultMergeParallelGrain = 256;

// Fewest base-read records (removed items, produced-on channels, changed
// channels) for which the base read runs on the helper thread: below it the
// handoff costs more than the overlap saves.
inline constexpr size_t kDefaultMergeBackgroundMin = 256;

// Keys per chunk of a base read shared by the helper and the caller: large
// enough that the trie's top levels, walked again per chunk, stay a small
// part of it; small enough that the two threads finish close together.
inline constexpr size_t kDefaultMergeBaseReadChunk = 2048;

struct MergeContextOptions {
  // Threads for independent work, the caller's included; 0 counts as 1,
  // more than kMaxMergeThreads as kMaxMergeThreads. With 1 the context
  // starts no thread and a merge runs entirely on its caller. With more, it
  // owns a WorkerPool of that size (new states are canonicalised, encoded
  // and hashed on it) and one helper thread (the base read overlaps the
  // branch and conflict steps on it, and the decoded base states are freed
  // on it). The result of a merge never depends on it.
  size_t threads = 1;
  // The node's pool (not owned; must outlive the context): per-channel
  // work runs on it instead of a pool of the context's own, and `threads`
  // is taken from it. Null: the context owns a pool of `threads`.
  WorkerPool* pool = nullptr;
  // Items per pool task; tests set 1 to exercise the parallel path on
  // small merges. 0 counts as 1.
  size_t parallel_grain = kDefaultMergeParallelGrain;
  // Fewest base-read records read on the helper thread; tests set 0.
  size_t background_min = kDefaultMergeBackgroundMin;
  // Channels per chunk of a background base read: the helper reads chunks
  // from the front of the plan, the caller (once it needs the base) from
  // the back. Tests set 1 to share even small reads. 0 counts as 1.
  size_t base_read_chunk = kDefaultMergeBaseReadChunk;
  // Free the decoded base states on the helper thread (when there is one),
  // possibly after Merge has returned.
  bool free_in_background = true;
  // Scratch vectors keep at most this many bytes of capacity each between
  // merges.
  size_t max_kept_scratch_bytes = size_t{16} << 20;
};

// One per merging thread: not thread-safe (one Merge at a time). Owns the
// helper thread, and the pool unless given the node's; the destructor runs
// the helper's queued work (the freeing of the last merge's base states)
// and joins the threads it owns.
class MergeContext {
 public:
  explicit MergeContext(MergeContextOptions options = {});
  ~MergeContext();
  MergeContext(const MergeContext&) = delete;
  MergeContext& operator=(const MergeContext&) = delete;

  // The options, with threads and parallel_grain clamped.
  const MergeContextOptions& options() const { return options_; }

  // Null when options().threads == 1.
  WorkerPool* pool() { return pool_; }

  // Null when options().threads == 1. Runs one task at a time, in order.
  internal::SerialExecutor* helper() { return helper_.get(); }

  // Scratch space of the caller's thread and of the helper thread.
  internal::MergeScratch& scratch() { return *scratch_; }
  internal::MergeScratch& helper_scratch() { return *helper_scratch_; }

  // Runs `release` (which frees memory a merge no longer needs) on the
  // helper when free_in_background and a helper exist, else now.
  void Release(std::function<void()> release);

  // Trims both scratch spaces to max_kept_scratch_bytes. REQUIRES: no task
  // of this context's helper uses helper_scratch() (the merge that ran one
  // has waited for it).
  void TrimScratch();

 private:
  MergeContextOptions options_;
  // Declared before the threads: destroyed after them.
  std::unique_ptr<internal::MergeScratch> scratch_;
  std::unique_ptr<internal::MergeScratch> helper_scratch_;
  std::unique_ptr<WorkerPool> owned_pool_;
  WorkerPool* pool_ = nullptr;
  std::unique_ptr<internal::SerialExecutor> helper_;
};

}  // namespace rnode::casper::merge

#endif  // RNODE_CASPER_MERGE_MERGE_CONTEXT_H_

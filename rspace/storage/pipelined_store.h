// A KeyValueStore decorator that writes one accepted batch in the
// background while readers already see it (docs/merge.md §8, "Plan for
// that write").
#ifndef RNODE_RSPACE_STORAGE_PIPELINED_STORE_H_
#define RNODE_RSPACE_STORAGE_PIPELINED_STORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <span>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rspace/storage/kv_store.h"
#include "util/bytes.h"
#include "util/mutex.h"

namespace rnode::rspace {

// Counters of a PipelinedStore since it was opened.
struct PipelinedStoreStats {
  uint64_t async_writes = 0;   // Batches accepted by WriteAsync.
  uint64_t background_ns = 0;  // Time the worker spent writing them.
  uint64_t wait_ns = 0;        // Time callers waited for a flight to land
                               // (in Write, WriteOwned, WriteAsync, Sync).
  uint64_t failed_writes = 0;  // Background writes and retries that failed.
  uint64_t flight_waits = 0;   // Callers that waited for a flight to land.
  uint64_t reader_waits = 0;   // Writes after a flight landed that first
                               // waited for any read still holding it.
};

// Forwards to `base` (not owned; must outlive this), except that WriteAsync
// returns as soon as the batch is readable, and a worker thread writes it to
// `base`. At most one such batch (the flight) exists at a time:
//
// - Reads (Get, MultiGet, ScanFrom, ForEach) see the flight over `base`: a
//   key the flight puts or deletes reads as the flight says.
// - Every write (Write, WriteOwned, WriteAsync) and Sync first waits for the
//   flight to land, so writes reach `base` in the order they were accepted;
//   a write that builds on the flight's data is never durable without it.
// - A flight whose background write failed stays readable; the next write
//   or Sync retries it once and, if that fails too, returns the error
//   without applying anything new (a full disk reports NoSpaceError until
//   space returns, then the retry lands it).
// - The destructor waits for the flight, retries a failed one once and
//   joins the worker; a flight that still fails is lost with the process's
//   memory, as a write that never returned would be.
//
// Reads are atomic per batch as the base's are: a MultiGet or scan never
// mixes a flight with a later batch (a write that follows a landed flight
// first waits for the reads still holding it). Get may return the value of
// a flight that landed while it ran, which a concurrent Get may do anyway.
//
// Thread-safe. Writers are serialized among themselves; readers never wait
// for a writer. A ScanFrom or ForEach callback must not write to this
// store.
class PipelinedStore final : public KeyValueStore {
 public:
  explicit PipelinedStore(KeyValueStore* base);
  ~PipelinedStore() override;
  PipelinedStore(const PipelinedStore&) = delete;
  PipelinedStore& operator=(const PipelinedStore&) = delete;

  size_t ColumnCount() const override { return base_->ColumnCount(); }
  absl::StatusOr<std::optional<Bytes>> Get(ColumnId column,
                                           ByteView key) override;
  absl::StatusOr<std::vector<std::optional<Bytes>>> MultiGet(
      ColumnId column, std::span<const ByteView> keys) override;
  absl::Status Write(const WriteBatch& batch) override;
  absl::Status WriteOwned(WriteBatch&& batch) override;
  // Waits for the previous flight (retrying it if it failed; its error is
  // returned and `batch` is not taken), checks the batch's columns
  // (InvalidArgument, nothing taken), then makes `batch` the flight and
  // returns: readers see it from now on. An empty batch is not a flight.
  absl::Status WriteAsync(WriteBatch&& batch) override;
  // Returns once the flight (if any) is in `base`, or the error of a retry
  // made now.
  absl::Status Sync() override;
  absl::Status ForEach(
      ColumnId column,
      const std::function<absl::Status(ByteView key, ByteView value)>& fn)
      override;
  absl::Status ScanFrom(
      ColumnId column, ByteView from,
      const std::function<bool(ByteView key, ByteView value)>& fn) override;

  PipelinedStoreStats stats() const;

 private:
  // An accepted batch, immutable once published: its ops in (column, key)
  // order with one op per key (the batch's last), so lookups are binary
  // searches and the ops are written in the order the base prefers.
  struct Flight {
    WriteBatch batch;
    // The op for `key` in `column`, or null if the flight leaves it alone.
    const WriteBatch::Op* Find(ColumnId column, ByteView key) const;
    // Index of the first op at or after (column, key).
    size_t LowerBound(ColumnId column, ByteView key) const;
    // Whether the flight has an op in `column`.
    bool Touches(ColumnId column) const;
  };

  // The flight readers should consult, or null.
  std::shared_ptr<const Flight> Current() const;
  // Waits until the worker is done with the flight; if it failed, retries it
  // here. OK when no flight is left; then no reader holds a landed flight
  // either (Grace), so the caller may write the base.
  absl::Status Drain() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Waits for the multi-key reads that hold a flight which has landed since
  // the last Grace.
  void Grace() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void Run();

  KeyValueStore* const base_;
  // Held by every writer for its whole call: writes are applied in order.
  Mutex write_mu_;
  mutable Mutex mu_;
  CondVar cv_;
  // The accepted batch not yet in `base`; null when there is none.
  std::shared_ptr<const Flight> flight_ ABSL_GUARDED_BY(mu_);
  // Set when the flight is published, cleared by the worker's attempt
  // (a flight left after that attempt failed; Drain retries it).
  bool pending_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  // A flight landed since the last Grace.
  bool grace_due_ ABSL_GUARDED_BY(mu_) = false;
  // Held shared by a MultiGet or scan that merges a flight, for its whole
  // read; Grace takes it exclusively.
  std::shared_mutex readers_mu_;
  PipelinedStoreStats stats_ ABSL_GUARDED_BY(mu_);
  // Mirrors flight_ != null for readers' fast path (no lock when false).
  std::atomic<bool> has_flight_{false};
  std::thread worker_;
};

}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_STORAGE_PIPELINED_STORE_H_

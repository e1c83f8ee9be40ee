// A KeyValueStore wrapper that fails or "crashes" on chosen writes, for tests.
#ifndef RNODE_RSPACE_STORAGE_FAULT_STORE_H_
#define RNODE_RSPACE_STORAGE_FAULT_STORE_H_

#include <cstdint>
#include <functional>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "rspace/storage/kv_store.h"
#include "util/mutex.h"

namespace rnode::rspace {

// Forwards to `base` (not owned; must outlive this) until a configured fault
// fires. Thread-safe.
class FaultInjectingStore final : public KeyValueStore {
 public:
  explicit FaultInjectingStore(KeyValueStore* base) : base_(base) {}

  // After `n` more successful writes, every Write returns Unavailable and
  // applies nothing.
  void FailWritesAfter(uint64_t n);
  // After `n` more successful reads, every Get returns Unavailable.
  void FailReadsAfter(uint64_t n);
  // Before the write with index `n` (0-based, counted from now) is applied,
  // calls `hook` (a test crash point: it may _exit the process).
  void SetCrashPoint(uint64_t n, std::function<void()> hook);
  // Clears every fault.
  void Heal();

  uint64_t writes() const;
  uint64_t reads() const;

  size_t ColumnCount() const override { return base_->ColumnCount(); }
  absl::StatusOr<std::optional<Bytes>> Get(ColumnId column,
                                           ByteView key) override;
  absl::Status Write(const WriteBatch& batch) override;
  // Same faults and counting as Write; forwards by base->WriteOwned.
  absl::Status WriteOwned(WriteBatch&& batch) override;
  absl::Status ForEach(
      ColumnId column,
      const std::function<absl::Status(ByteView key, ByteView value)>& fn)
      override;
  absl::Status ScanFrom(
      ColumnId column, ByteView from,
      const std::function<bool(ByteView key, ByteView value)>& fn) override;

 private:
  // Runs the crash hook due at this write and returns the injected fault,
  // if any; then `apply` forwards the write, and a success is counted.
  absl::Status WriteThrough(const std::function<absl::Status()>& apply);

  KeyValueStore* const base_;
  mutable Mutex mu_;
  uint64_t writes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t reads_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<uint64_t> fail_writes_at_ ABSL_GUARDED_BY(mu_);
  std::optional<uint64_t> fail_reads_at_ ABSL_GUARDED_BY(mu_);
  std::optional<uint64_t> crash_at_ ABSL_GUARDED_BY(mu_);
  std::function<void()> crash_hook_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_STORAGE_FAULT_STORE_H_

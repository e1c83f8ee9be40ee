// Whether the data dir's disk takes writes (docs/reliability.md "Disk
// full"): after a write failed for want of space the node refuses deploys
// and makes and takes no blocks until a probe write succeeds. Each change
// is logged once.
//
// Before that happens, a free-space floor (storage.min-free-bytes): while
// the data dir's file system has less free space than the floor, deploys
// are refused as disk_full (nothing new is taken to store), while blocks
// are still made and taken (the shard's work goes on in the space left).
#ifndef RNODE_NODE_CORE_DISK_GUARD_H_
#define RNODE_NODE_CORE_DISK_GUARD_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rspace/storage/kv_store.h"
#include "util/mutex.h"

namespace rnode::node {

// The bytes an unprivileged writer may still use on the file system of
// `path` (statvfs: available blocks times fragment size). The OS's error.
absl::StatusOr<uint64_t> FreeBytesAt(const std::string& path);

struct DiskFloor {
  std::string path;       // The data dir.
  uint64_t min_free = 0;  // 0: no floor.
  // Reads the free bytes of `path`; null: FreeBytesAt (tests inject).
  std::function<absl::StatusOr<uint64_t>(const std::string&)> free_bytes =
      nullptr;
};

// Thread-safe.
class DiskGuard {
 public:
  // How long a reading of the free space is used before it is read again.
  static constexpr std::chrono::milliseconds kFreshFor{250};

  // Probes `store` (not owned) with a delete of a key never written in
  // `probe_column`.
  DiskGuard(rspace::KeyValueStore* store, size_t probe_column,
            DiskFloor floor = {});

  // A write failed for want of space (`s`): said once per change, at
  // error level.
  void Full(const absl::Status& s);
  // A write succeeded: said once per change, at warning level.
  void Ok();
  // False while the disk is full: after Full, until a probe write
  // succeeds.
  bool Writable();

  // The free bytes of the data dir's file system, read at most every
  // kFreshFor; nullopt when it cannot be read (said once per change).
  std::optional<uint64_t> FreeBytes();
  // The free bytes when they are below the floor; nullopt otherwise
  // (without a floor, or when they cannot be read: the floor never refuses
  // on a guess). The change is logged once each way.
  std::optional<uint64_t> BelowFloor();
  uint64_t min_free() const { return floor_.min_free; }

 private:
  rspace::KeyValueStore* const store_;
  const size_t probe_column_;
  DiskFloor floor_;  // Set once, in the constructor.
  std::atomic<bool> full_{false};
  Mutex mu_;
  std::chrono::steady_clock::time_point read_at_ ABSL_GUARDED_BY(mu_){};
  std::optional<uint64_t> free_ ABSL_GUARDED_BY(mu_);
  bool unreadable_ ABSL_GUARDED_BY(mu_) = false;
  bool below_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_DISK_GUARD_H_

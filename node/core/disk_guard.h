// Whether the data dir's disk takes writes (docs/reliability.md "Disk
// full"): after a write failed for want of space the node refuses deploys
// and makes and takes no blocks until a probe write succeeds. Each change
// is logged once.
#ifndef RNODE_NODE_CORE_DISK_GUARD_H_
#define RNODE_NODE_CORE_DISK_GUARD_H_

#include <atomic>
#include <cstddef>

#include "absl/status/status.h"
#include "rspace/storage/kv_store.h"

namespace rnode::node {

// Thread-safe.
class DiskGuard {
 public:
  // Probes `store` (not owned) with a delete of a key never written in
  // `probe_column`.
  DiskGuard(rspace::KeyValueStore* store, size_t probe_column)
      : store_(store), probe_column_(probe_column) {}

  // A write failed for want of space (`s`): said once per change, at
  // error level.
  void Full(const absl::Status& s);
  // A write succeeded: said once per change, at warning level.
  void Ok();
  // False while the disk is full: after Full, until a probe write
  // succeeds.
  bool Writable();

 private:
  rspace::KeyValueStore* const store_;
  const size_t probe_column_;
  std::atomic<bool> full_{false};
};

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_DISK_GUARD_H_

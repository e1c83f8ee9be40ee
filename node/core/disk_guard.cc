#include "node/core/disk_guard.h"

#include "util/bytes.h"
#include "util/logging.h"

namespace rnode::node {

void DiskGuard::Full(const absl::Status& s) {
  if (!full_.exchange(true)) {
    Log("node")->error(
        "the data dir's disk is full: deploys are refused and no blocks are "
        "made or taken until space returns ({})",
        s.ToString());
  }
}

void DiskGuard::Ok() {
  if (full_.exchange(false)) {
    Log("node")->warn("the data dir's disk takes writes again");
  }
}

bool DiskGuard::Writable() {
  if (!full_.load()) return true;
  // A write of nothing (a delete of a key never written) tells whether the
  // store takes writes again (after landing a merge's write that failed).
  rspace::WriteBatch probe;
  probe.Delete(probe_column_, AsBytes("disk-probe"));
  if (!store_->Write(probe).ok()) return false;
  Ok();
  return true;
}

}  // namespace rnode::node

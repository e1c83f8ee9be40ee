#include "node/core/disk_guard.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "util/bytes.h"
#include "util/logging.h"

namespace rnode::node {

absl::StatusOr<uint64_t> FreeBytesAt(const std::string& path) {
  struct statvfs s {};
  if (statvfs(path.c_str(), &s) != 0) {
    const int err = errno;
    return absl::ErrnoToStatus(
        err, absl::StrCat("free space of ", path, ": ", std::strerror(err)));
  }
  return static_cast<uint64_t>(s.f_bavail) * static_cast<uint64_t>(s.f_frsize);
}

DiskGuard::DiskGuard(rspace::KeyValueStore* store, size_t probe_column,
                     DiskFloor floor)
    : store_(store), probe_column_(probe_column), floor_(std::move(floor)) {
  if (!floor_.free_bytes) floor_.free_bytes = FreeBytesAt;
}

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

std::optional<uint64_t> DiskGuard::FreeBytes() {
  const auto now = std::chrono::steady_clock::now();
  MutexLock lock(&mu_);
  if (read_at_ != std::chrono::steady_clock::time_point{} &&
      now - read_at_ < kFreshFor) {
    return free_;
  }
  read_at_ = now;
  absl::StatusOr<uint64_t> got = floor_.free_bytes(floor_.path);
  if (got.ok()) {
    free_ = *got;
    unreadable_ = false;
  } else {
    free_.reset();
    if (!unreadable_) {
      Log("node")->warn("the data dir's free space cannot be read: {}",
                        got.status().ToString());
    }
    unreadable_ = true;
  }
  return free_;
}

std::optional<uint64_t> DiskGuard::BelowFloor() {
  if (floor_.min_free == 0) return std::nullopt;
  const std::optional<uint64_t> free = FreeBytes();
  const bool below = free.has_value() && *free < floor_.min_free;
  MutexLock lock(&mu_);
  if (below != below_) {
    below_ = below;
    if (below) {
      Log("node")->error(
          "the data dir's disk has {} bytes free, below the floor of {} "
          "(storage.min-free-bytes): deploys are refused until space "
          "returns",
          *free, floor_.min_free);
    } else {
      Log("node")->warn(
          "the data dir's disk is above its free-space floor "
          "again: deploys are taken");
    }
  }
  return below ? free : std::nullopt;
}

}  // namespace rnode::node

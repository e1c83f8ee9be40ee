// Deploys that left this node's pool with no block to hold them (their
// window closed, or a block made here left them out), kept durably and
// bounded, so that a client asking after one learns what became of it,
// also after a restart (docs/node.md "Deploy statuses").
#ifndef RNODE_CASPER_POOL_LEFT_DEPLOYS_H_
#define RNODE_CASPER_POOL_LEFT_DEPLOYS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rspace/storage/kv_store.h"
#include "util/bytes.h"
#include "util/mutex.h"

namespace rnode::casper::pool {

// Why a deploy left the pool unincluded.
enum class DeployLeft : uint8_t {
  kExpired = 1,  // Its validity window closed.
  kLeftOut = 2,  // A block made here left it out: its deployer could not
                 // pay its precharge, or a block holding it alone is over
                 // the size limit.
};

struct LeftDeploysOptions {
  // At most this many records; the oldest go first. About 200 bytes each
  // on disk, so the default is about 13 MB.
  size_t max_records = 65'536;
  // Records older than this go at the next Put. A week: far past any
  // client's wait for a deploy (a window is 50 blocks).
  int64_t max_age_ms = int64_t{7} * 24 * 3600 * 1000;
};

// One record per signature in its own column:
//   'S' sig          -> why (1 byte) | left at, ms (8 bytes, big-endian)
//   'T' at (8 BE) sig -> empty: the records by age, for the bounds.
// Thread-safe; Put calls are serialised by a mutex, Get reads the store.
class LeftDeploys {
 public:
  // Opens the records in `column` of `store` (not owned; must outlive
  // this), counting them. DataLoss for a record that does not decode.
  static absl::StatusOr<std::unique_ptr<LeftDeploys>> Open(
      rspace::KeyValueStore* store, rspace::ColumnId column,
      LeftDeploysOptions options = {});

  // Records that each of `sigs` left at `now_ms` for `why` (a signature
  // already recorded takes the new record), in one write, then drops the
  // oldest records beyond the bounds. An empty or over-long signature
  // (above 1 KiB) is InvalidArgument and nothing is written.
  absl::Status Put(std::span<const Bytes> sigs, DeployLeft why, int64_t now_ms);

  // Why `sig` left, if a record is kept.
  absl::StatusOr<std::optional<DeployLeft>> Get(ByteView sig) const;

  size_t size() const;

 private:
  LeftDeploys(rspace::KeyValueStore* store, rspace::ColumnId column,
              LeftDeploysOptions options)
      : store_(store), column_(column), options_(options) {}

  // Drops the oldest records while there are more than max_records or the
  // oldest is older than now_ms - max_age_ms.
  absl::Status Trim(int64_t now_ms) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  rspace::KeyValueStore* const store_;
  const rspace::ColumnId column_;
  const LeftDeploysOptions options_;
  mutable Mutex mu_;
  size_t size_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace rnode::casper::pool

#endif  // RNODE_CASPER_POOL_LEFT_DEPLOYS_H_

#include "node/core/rejoin.h"

#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "util/file_io.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace rnode::node {
namespace {

// Deletes every record of `column`, in writes of at most kForgetBatchKeys
// keys; the number deleted. Each pass scans on from the last key deleted,
// so the tombstones are not walked again.
absl::StatusOr<uint64_t> EmptyColumn(rspace::KeyValueStore* store,
                                     rspace::ColumnId column) {
  uint64_t deleted = 0;
  Bytes from;
  for (;;) {
    std::vector<Bytes> keys;
    RETURN_IF_ERROR(store->ScanFrom(column, from, [&](ByteView key, ByteView) {
      keys.emplace_back(key.begin(), key.end());
      return keys.size() < kForgetBatchKeys;
    }));
    if (keys.empty()) return deleted;
    rspace::WriteBatch batch;
    for (const Bytes& key : keys) batch.Delete(column, key);
    RETURN_IF_ERROR(store->Write(batch));
    deleted += keys.size();
    // The next key after the last deleted: the same bytes and a zero.
    from = std::move(keys.back());
    from.push_back(0);
  }
}

}  // namespace

absl::Status MarkForRejoin(const std::string& data_dir, std::string_view why) {
  return WriteFileAtomically(data_dir + kRejoinMarkerFile,
                             std::string(why) + "\n", 0644);
}

bool MarkedForRejoin(const std::string& data_dir) {
  std::error_code ec;
  return std::filesystem::exists(data_dir + kRejoinMarkerFile, ec);
}

absl::StatusOr<std::optional<uint64_t>> ForgetChainIfMarked(
    rspace::KeyValueStore* store, const casper::dag::DagColumns& columns,
    const std::string& data_dir) {
  if (!MarkedForRejoin(data_dir)) return std::optional<uint64_t>();
  uint64_t deleted = 0;
  for (const rspace::ColumnId column :
       {columns.blocks, columns.meta, columns.deploys, columns.state}) {
    ASSIGN_OR_RETURN(const uint64_t n, EmptyColumn(store, column));
    deleted += n;
  }
  RETURN_IF_ERROR(store->Sync());
  // Once the deletes are durable. Should the removal itself be lost (a
  // power cut before the directory reaches the disk), the next open
  // forgets again: a new join, nothing worse.
  std::error_code ec;
  std::filesystem::remove(data_dir + kRejoinMarkerFile, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat(data_dir, kRejoinMarkerFile,
                                            ": cannot remove: ", ec.message()));
  }
  Log("node")->info(
      "forgot the chain ({} records) to join the shard again from its last "
      "finalized state",
      deleted);
  return std::optional<uint64_t>(deleted);
}

}  // namespace rnode::node

// A key-value store for tests that forwards to another and calls a hook
// before each scan: a test's way in between the steps of a reader that
// scans (a collection's sweep, a prune).
#ifndef RNODE_TESTS_SCAN_HOOK_STORE_H_
#define RNODE_TESTS_SCAN_HOOK_STORE_H_

#include <functional>
#include <optional>

#include "rspace/storage/kv_store.h"
#include "util/bytes.h"

namespace rnode::testing {

// Forwards to `base` (not owned; outlives this); calls `on_scan` (when
// set) with the column and the first key before each ScanFrom.
class ScanHookStore final : public rspace::KeyValueStore {
 public:
  explicit ScanHookStore(rspace::KeyValueStore* base) : base_(base) {}
  std::function<void(rspace::ColumnId column, ByteView from)> on_scan;

  size_t ColumnCount() const override { return base_->ColumnCount(); }
  absl::StatusOr<std::optional<Bytes>> Get(rspace::ColumnId column,
                                           ByteView key) override {
    return base_->Get(column, key);
  }
  absl::Status Write(const rspace::WriteBatch& batch) override {
    return base_->Write(batch);
  }
  absl::Status ForEach(
      rspace::ColumnId column,
      const std::function<absl::Status(ByteView key, ByteView value)>& fn)
      override {
    return base_->ForEach(column, fn);
  }
  absl::Status ScanFrom(
      rspace::ColumnId column, ByteView from,
      const std::function<bool(ByteView key, ByteView value)>& fn) override {
    if (on_scan) on_scan(column, from);
    return base_->ScanFrom(column, from, fn);
  }

 private:
  rspace::KeyValueStore* const base_;
};

}  // namespace rnode::testing

#endif  // RNODE_TESTS_SCAN_HOOK_STORE_H_

// WriteBatch and the in-memory KeyValueStore.
#include "rspace/storage/kv_store.h"

#include <string>
#include <utility>

namespace rnode::rspace {

void WriteBatch::Put(ColumnId column, ByteView key, ByteView value) {
  Put(column, Bytes(key.begin(), key.end()), Bytes(value.begin(), value.end()));
}

void WriteBatch::Put(ColumnId column, Bytes key, Bytes value) {
  bytes_ += key.size() + value.size();
  ops_.push_back(Op{column, std::move(key), std::move(value)});
}

void WriteBatch::Delete(ColumnId column, ByteView key) {
  bytes_ += key.size();
  ops_.push_back(Op{column, Bytes(key.begin(), key.end()), std::nullopt});
}

InMemoryStore::InMemoryStore(size_t column_count)
    : column_count_(column_count), columns_(column_count) {}

absl::StatusOr<std::optional<Bytes>> InMemoryStore::Get(ColumnId column,
                                                        ByteView key) {
  if (column >= column_count_) {
    return absl::InvalidArgumentError("unknown column " +
                                      std::to_string(column));
  }
  internal::MutexLock lock(&mu_);
  const auto& map = columns_[column];
  auto it = map.find(Bytes(key.begin(), key.end()));
  if (it == map.end()) return std::optional<Bytes>();
  return std::optional<Bytes>(it->second);
}

absl::Status InMemoryStore::Write(const WriteBatch& batch) {
  for (const auto& op : batch.ops()) {
    if (op.column >= column_count_) {
      return absl::InvalidArgumentError("unknown column " +
                                        std::to_string(op.column));
    }
  }
  internal::MutexLock lock(&mu_);
  for (const auto& op : batch.ops()) {
    if (op.value.has_value()) {
      columns_[op.column][op.key] = *op.value;
    } else {
      columns_[op.column].erase(op.key);
    }
  }
  return absl::OkStatus();
}

absl::Status InMemoryStore::ForEach(
    ColumnId column,
    const std::function<absl::Status(ByteView key, ByteView value)>& fn) {
  if (column >= column_count_) {
    return absl::InvalidArgumentError("unknown column " +
                                      std::to_string(column));
  }
  std::map<Bytes, Bytes> copy;
  {
    internal::MutexLock lock(&mu_);
    copy = columns_[column];
  }
  for (const auto& [k, v] : copy) {
    absl::Status s = fn(k, v);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

size_t InMemoryStore::KeyCount(ColumnId column) const {
  internal::MutexLock lock(&mu_);
  if (column >= column_count_) return 0;
  return columns_[column].size();
}

}  // namespace rnode::rspace

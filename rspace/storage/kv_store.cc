// WriteBatch and the in-memory KeyValueStore.
#include "rspace/storage/kv_store.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "util/status_macros.h"

namespace rnode::rspace {

absl::StatusOr<std::vector<std::optional<Bytes>>> KeyValueStore::MultiGet(
    ColumnId column, std::span<const ByteView> keys) {
  std::vector<std::optional<Bytes>> out(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSIGN_OR_RETURN(out[i], Get(column, keys[i]));
  }
  return out;
}

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
  MutexLock lock(&mu_);
  const auto& map = columns_[column];
  auto it = map.find(key);
  if (it == map.end()) return std::optional<Bytes>();
  return std::optional<Bytes>(it->second);
}

absl::Status InMemoryStore::CheckColumns(const WriteBatch& batch) const {
  for (const auto& op : batch.ops()) {
    if (op.column >= column_count_) {
      return absl::InvalidArgumentError("unknown column " +
                                        std::to_string(op.column));
    }
  }
  return absl::OkStatus();
}

absl::Status InMemoryStore::Write(const WriteBatch& batch) {
  RETURN_IF_ERROR(CheckColumns(batch));
  MutexLock lock(&mu_);
  for (const auto& op : batch.ops()) {
    if (op.value.has_value()) {
      columns_[op.column].insert_or_assign(op.key, *op.value);
    } else {
      columns_[op.column].erase(ByteView(op.key));
    }
  }
  return absl::OkStatus();
}

absl::Status InMemoryStore::WriteOwned(WriteBatch&& batch) {
  RETURN_IF_ERROR(CheckColumns(batch));
  MutexLock lock(&mu_);
  for (auto& op : batch.mutable_ops()) {
    Column& map = columns_[op.column];
    if (op.value.has_value()) {
      map.insert_or_assign(std::move(op.key), std::move(*op.value));
    } else {
      map.erase(ByteView(op.key));
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
  std::vector<std::pair<Bytes, Bytes>> copy;
  {
    MutexLock lock(&mu_);
    copy.assign(columns_[column].begin(), columns_[column].end());
  }
  std::sort(copy.begin(), copy.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [k, v] : copy) {
    absl::Status s = fn(k, v);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

size_t InMemoryStore::KeyCount(ColumnId column) const {
  MutexLock lock(&mu_);
  if (column >= column_count_) return 0;
  return columns_[column].size();
}

}  // namespace rnode::rspace

// WriteBatch and the in-memory KeyValueStore.
#include "rspace/storage/kv_store.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/cord.h"
#include "util/status_macros.h"

namespace rnode::rspace {
namespace {

constexpr absl::string_view kNoSpacePayload = "rnode.dev/storage/no-space";
constexpr absl::string_view kPrunedPayload = "rnode.dev/storage/pruned";

// `s` marked with `payload`, which HasTag recognises.
absl::Status Tagged(absl::Status s, absl::string_view payload) {
  s.SetPayload(payload, absl::Cord("1"));
  return s;
}

bool HasTag(const absl::Status& s, absl::StatusCode code,
            absl::string_view payload) {
  return s.code() == code && s.GetPayload(payload).has_value();
}

}  // namespace

absl::Status NoSpaceError(absl::string_view message) {
  return Tagged(absl::ResourceExhaustedError(message), kNoSpacePayload);
}

bool IsNoSpace(const absl::Status& status) {
  return HasTag(status, absl::StatusCode::kResourceExhausted, kNoSpacePayload);
}

absl::Status PrunedError(absl::string_view message) {
  return Tagged(absl::NotFoundError(message), kPrunedPayload);
}

bool IsPruned(const absl::Status& status) {
  return HasTag(status, absl::StatusCode::kNotFound, kPrunedPayload);
}

absl::StatusOr<std::vector<std::optional<Bytes>>> KeyValueStore::MultiGet(
    ColumnId column, std::span<const ByteView> keys) {
  std::vector<std::optional<Bytes>> out(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSIGN_OR_RETURN(out[i], Get(column, keys[i]));
  }
  return out;
}

absl::Status KeyValueStore::ScanFrom(
    ColumnId column, ByteView from,
    const std::function<bool(ByteView key, ByteView value)>& fn) {
  // ForEach stops at the first non-OK status; `done` tells that one apart.
  bool done = false;
  absl::Status s = ForEach(column, [&](ByteView key, ByteView value) {
    if (std::lexicographical_compare(key.begin(), key.end(), from.begin(),
                                     from.end())) {
      return absl::OkStatus();
    }
    done = !fn(key, value);
    return done ? absl::CancelledError("scan done") : absl::OkStatus();
  });
  return done ? absl::OkStatus() : s;
}

absl::Status CheckColumns(const WriteBatch& batch, size_t column_count) {
  for (const auto& op : batch.ops()) {
    if (op.column >= column_count) {
      return absl::InvalidArgumentError("unknown column " +
                                        std::to_string(op.column));
    }
  }
  return absl::OkStatus();
}

absl::Status KeyValueStore::ForEachByScan(
    ColumnId column,
    const std::function<absl::Status(ByteView key, ByteView value)>& fn) {
  absl::Status stopped;
  absl::Status scanned =
      ScanFrom(column, ByteView(), [&](ByteView k, ByteView v) {
        stopped = fn(k, v);
        return stopped.ok();
      });
  return scanned.ok() ? stopped : scanned;
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

void WriteBatch::Append(WriteBatch&& other) {
  bytes_ += other.bytes_;
  sync_ = sync_ || other.sync_;
  if (ops_.empty()) {
    ops_ = std::move(other.ops_);
  } else {
    ops_.insert(ops_.end(), std::make_move_iterator(other.ops_.begin()),
                std::make_move_iterator(other.ops_.end()));
  }
  other.ops_.clear();
  other.bytes_ = 0;
}

InMemoryStore::InMemoryStore(size_t column_count)
    : column_count_(column_count),
      shards_per_column_(std::clamp<size_t>(
          kMaxStoreBatchLocks / std::max<size_t>(column_count, 1), 1,
          kMaxStoreShardsPerColumn)),
      shards_(
          new Shard[std::max<size_t>(column_count, 1) * shards_per_column_]) {}

size_t InMemoryStore::ShardOf(ColumnId column, ByteView key) const {
  // The top bits: the maps' own probing uses the low ones.
  const size_t h = KeyHash()(key) >> (sizeof(size_t) * 8 - 8);
  return column * shards_per_column_ + h % shards_per_column_;
}

absl::StatusOr<std::optional<Bytes>> InMemoryStore::Get(ColumnId column,
                                                        ByteView key) {
  if (column >= column_count_) {
    return absl::InvalidArgumentError("unknown column " +
                                      std::to_string(column));
  }
  Shard& s = shards_[ShardOf(column, key)];
  MutexLock lock(&s.mu);
  auto it = s.map.find(key);
  if (it == s.map.end()) return std::optional<Bytes>();
  return std::optional<Bytes>(it->second);
}

// Every shard a key names is locked (LockShards) while the values are
// copied: one snapshot, as a Write is one change.
absl::StatusOr<std::vector<std::optional<Bytes>>> InMemoryStore::MultiGet(
    ColumnId column,
    std::span<const ByteView> keys) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (column >= column_count_) {
    return absl::InvalidArgumentError("unknown column " +
                                      std::to_string(column));
  }
  std::vector<size_t> at;
  at.reserve(keys.size());
  for (ByteView key : keys) at.push_back(ShardOf(column, key));
  std::vector<std::optional<Bytes>> out(keys.size());
  std::vector<Shard*> locked = LockShards(at);
  for (size_t i = 0; i < keys.size(); ++i) {
    const Column& map = shards_[at[i]].map;
    auto it = map.find(keys[i]);
    if (it != map.end()) out[i] = it->second;
  }
  UnlockShards(locked);
  return out;
}

// Dynamic lock sets are outside the static analysis; the order (ascending
// shard index) is the only order in which more than one shard is locked.
std::vector<size_t> InMemoryStore::ShardsOf(const WriteBatch& batch) const {
  std::vector<size_t> at;
  at.reserve(batch.ops().size());
  for (const auto& op : batch.ops()) at.push_back(ShardOf(op.column, op.key));
  return at;
}

std::vector<InMemoryStore::Shard*> InMemoryStore::LockShards(
    std::vector<size_t> index) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  std::sort(index.begin(), index.end());
  index.erase(std::unique(index.begin(), index.end()), index.end());
  std::vector<Shard*> shards;
  shards.reserve(index.size());
  for (size_t i : index) {
    shards.push_back(&shards_[i]);
    shards_[i].mu.Lock();
  }
  return shards;
}

std::vector<InMemoryStore::Shard*> InMemoryStore::LockColumn(
    ColumnId column) const ABSL_NO_THREAD_SAFETY_ANALYSIS {
  std::vector<Shard*> shards;
  shards.reserve(shards_per_column_);
  for (size_t i = 0; i < shards_per_column_; ++i) {
    shards.push_back(&shards_[column * shards_per_column_ + i]);
    shards.back()->mu.Lock();
  }
  return shards;
}

void InMemoryStore::UnlockShards(const std::vector<Shard*>& shards)
    ABSL_NO_THREAD_SAFETY_ANALYSIS {
  for (auto it = shards.rbegin(); it != shards.rend(); ++it) {
    (*it)->mu.Unlock();
  }
}

// Every shard an op names is locked (LockShards) while the ops apply.
absl::Status InMemoryStore::Write(const WriteBatch& batch)
    ABSL_NO_THREAD_SAFETY_ANALYSIS {
  RETURN_IF_ERROR(CheckColumns(batch, column_count_));
  const std::vector<size_t> at = ShardsOf(batch);
  std::vector<Shard*> locked = LockShards(at);
  for (size_t i = 0; i < batch.ops().size(); ++i) {
    const auto& op = batch.ops()[i];
    Column& map = shards_[at[i]].map;
    if (op.value.has_value()) {
      map.insert_or_assign(op.key, *op.value);
    } else {
      map.erase(ByteView(op.key));
    }
  }
  UnlockShards(locked);
  return absl::OkStatus();
}

absl::Status InMemoryStore::WriteOwned(WriteBatch&& batch)
    ABSL_NO_THREAD_SAFETY_ANALYSIS {
  RETURN_IF_ERROR(CheckColumns(batch, column_count_));
  const std::vector<size_t> at = ShardsOf(batch);
  std::vector<Shard*> locked = LockShards(at);
  for (size_t i = 0; i < batch.ops().size(); ++i) {
    auto& op = batch.mutable_ops()[i];
    Column& map = shards_[at[i]].map;
    if (op.value.has_value()) {
      map.insert_or_assign(std::move(op.key), std::move(*op.value));
    } else {
      map.erase(ByteView(op.key));
    }
  }
  UnlockShards(locked);
  return absl::OkStatus();
}

absl::Status InMemoryStore::ForEach(
    ColumnId column,
    const std::function<absl::Status(ByteView key, ByteView value)>& fn)
    ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (column >= column_count_) {
    return absl::InvalidArgumentError("unknown column " +
                                      std::to_string(column));
  }
  std::vector<std::pair<Bytes, Bytes>> copy;
  {
    // All the column's shards at once: a snapshot no Write is half in.
    std::vector<Shard*> locked = LockColumn(column);
    for (Shard* s : locked)
      copy.insert(copy.end(), s->map.begin(), s->map.end());
    UnlockShards(locked);
  }
  std::sort(copy.begin(), copy.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [k, v] : copy) {
    absl::Status s = fn(k, v);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

size_t InMemoryStore::KeyCount(ColumnId column) const
    ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (column >= column_count_) return 0;
  std::vector<Shard*> locked = LockColumn(column);
  size_t n = 0;
  for (const Shard* s : locked) n += s->map.size();
  UnlockShards(locked);
  return n;
}

}  // namespace rnode::rspace

// PipelinedStore: one batch written in the background, readable at once.
#include "rspace/storage/pipelined_store.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <numeric>
#include <shared_mutex>
#include <string>
#include <utility>

#include "util/status_macros.h"

namespace rnode::rspace {
namespace {

// memcmp order of two keys (a shorter prefix first).
int CompareKeys(ByteView a, ByteView b) {
  const size_t n = std::min(a.size(), b.size());
  const int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
  if (c != 0) return c;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

// (column, key) order of an op against a position.
int CompareOp(const WriteBatch::Op& op, ColumnId column, ByteView key) {
  if (op.column != column) return op.column < column ? -1 : 1;
  return CompareKeys(op.key, key);
}

uint64_t NanosSince(std::chrono::steady_clock::time_point t0) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now() - t0)
          .count());
}

}  // namespace

const WriteBatch::Op* PipelinedStore::Flight::Find(ColumnId column,
                                                   ByteView key) const {
  const size_t i = LowerBound(column, key);
  const std::vector<WriteBatch::Op>& ops = batch.ops();
  if (i < ops.size() && CompareOp(ops[i], column, key) == 0) return &ops[i];
  return nullptr;
}

size_t PipelinedStore::Flight::LowerBound(ColumnId column, ByteView key) const {
  const std::vector<WriteBatch::Op>& ops = batch.ops();
  auto it = std::lower_bound(ops.begin(), ops.end(), 0,
                             [&](const WriteBatch::Op& op, int) {
                               return CompareOp(op, column, key) < 0;
                             });
  return static_cast<size_t>(it - ops.begin());
}

bool PipelinedStore::Flight::Touches(ColumnId column) const {
  const size_t i = LowerBound(column, ByteView());
  return i < batch.ops().size() && batch.ops()[i].column == column;
}

PipelinedStore::PipelinedStore(KeyValueStore* base)
    : base_(base), worker_([this] { Run(); }) {}

PipelinedStore::~PipelinedStore() {
  {
    MutexLock writer(&write_mu_);
    // A flight that fails again here is lost; there is no caller to tell.
    Drain().IgnoreError();
  }
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  worker_.join();
}

std::shared_ptr<const PipelinedStore::Flight> PipelinedStore::Current() const {
  if (!has_flight_.load(std::memory_order_acquire)) return nullptr;
  MutexLock lock(&mu_);
  return flight_;
}

void PipelinedStore::Run() {
  for (;;) {
    std::shared_ptr<const Flight> flight;
    {
      MutexLock lock(&mu_);
      while (!pending_ && !stop_) cv_.Wait(&mu_);
      if (!pending_) return;
      flight = flight_;
    }
    const auto t0 = std::chrono::steady_clock::now();
    absl::Status s = base_->Write(flight->batch);
    const uint64_t ns = NanosSince(t0);
    {
      MutexLock lock(&mu_);
      pending_ = false;
      stats_.background_ns += ns;
      if (s.ok()) {
        flight_.reset();
        has_flight_.store(false, std::memory_order_release);
        grace_due_ = true;
      } else {
        ++stats_.failed_writes;
      }
    }
    cv_.SignalAll();
  }
}

absl::Status PipelinedStore::Drain() {
  const auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<const Flight> flight;
  {
    MutexLock lock(&mu_);
    if (pending_) {
      ++stats_.flight_waits;
      while (pending_) cv_.Wait(&mu_);
      stats_.wait_ns += NanosSince(t0);
    }
    flight = flight_;
  }
  if (flight != nullptr) {
    // The worker's attempt failed and it is idle: retry here, in the
    // caller's thread, keeping the flight readable meanwhile.
    absl::Status s = base_->Write(flight->batch);
    MutexLock lock(&mu_);
    if (!s.ok()) {
      ++stats_.failed_writes;
      return s;
    }
    flight_.reset();
    has_flight_.store(false, std::memory_order_release);
    grace_due_ = true;
  }
  Grace();
  return absl::OkStatus();
}

void PipelinedStore::Grace() {
  {
    MutexLock lock(&mu_);
    if (!grace_due_) return;
    grace_due_ = false;
    ++stats_.reader_waits;
  }
  std::unique_lock<std::shared_mutex> wait_for_readers(readers_mu_);
}

absl::StatusOr<std::optional<Bytes>> PipelinedStore::Get(ColumnId column,
                                                         ByteView key) {
  if (std::shared_ptr<const Flight> flight = Current()) {
    if (const WriteBatch::Op* op = flight->Find(column, key)) {
      return op->value;
    }
  }
  return base_->Get(column, key);
}

absl::StatusOr<std::vector<std::optional<Bytes>>> PipelinedStore::MultiGet(
    ColumnId column, std::span<const ByteView> keys) {
  if (!has_flight_.load(std::memory_order_acquire)) {
    return base_->MultiGet(column, keys);
  }
  std::shared_lock<std::shared_mutex> reading(readers_mu_);
  std::shared_ptr<const Flight> flight = Current();
  if (flight == nullptr || !flight->Touches(column)) {
    reading.unlock();
    return base_->MultiGet(column, keys);
  }
  std::vector<std::optional<Bytes>> out(keys.size());
  std::vector<ByteView> missing;
  std::vector<size_t> missing_at;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (const WriteBatch::Op* op = flight->Find(column, keys[i])) {
      out[i] = op->value;
    } else {
      missing.push_back(keys[i]);
      missing_at.push_back(i);
    }
  }
  if (!missing.empty()) {
    ASSIGN_OR_RETURN(std::vector<std::optional<Bytes>> read,
                     base_->MultiGet(column, missing));
    for (size_t j = 0; j < read.size(); ++j) {
      out[missing_at[j]] = std::move(read[j]);
    }
  }
  return out;
}

absl::Status PipelinedStore::Write(const WriteBatch& batch) {
  MutexLock writer(&write_mu_);
  RETURN_IF_ERROR(Drain());
  return base_->Write(batch);
}

absl::Status PipelinedStore::WriteOwned(WriteBatch&& batch) {
  MutexLock writer(&write_mu_);
  RETURN_IF_ERROR(Drain());
  return base_->WriteOwned(std::move(batch));
}

absl::Status PipelinedStore::WriteAsync(WriteBatch&& batch) {
  MutexLock writer(&write_mu_);
  RETURN_IF_ERROR(Drain());
  if (batch.empty()) return absl::OkStatus();
  // An op the base would refuse must be refused now: in the background it
  // would fail every retry and stop every later write.
  RETURN_IF_ERROR(CheckColumns(batch, base_->ColumnCount()));
  // (column, key) order, the later op first among equal keys; then the
  // first of each run is the op that wins, and the rest of the run is
  // skipped.
  std::vector<WriteBatch::Op>& ops = batch.mutable_ops();
  std::vector<uint32_t> order(ops.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    const int c = CompareOp(ops[x], ops[y].column, ops[y].key);
    return c != 0 ? c < 0 : x > y;
  });
  auto flight = std::make_shared<Flight>();
  flight->batch.set_sync(batch.sync());
  const std::vector<WriteBatch::Op>& kept = flight->batch.ops();
  for (uint32_t x : order) {
    WriteBatch::Op& op = ops[x];
    if (!kept.empty() && CompareOp(kept.back(), op.column, op.key) == 0) {
      continue;
    }
    if (op.value.has_value()) {
      flight->batch.Put(op.column, std::move(op.key), std::move(*op.value));
    } else {
      flight->batch.Delete(op.column, op.key);
    }
  }
  {
    MutexLock lock(&mu_);
    flight_ = std::move(flight);
    pending_ = true;
    ++stats_.async_writes;
    has_flight_.store(true, std::memory_order_release);
  }
  cv_.SignalAll();
  return absl::OkStatus();
}

absl::Status PipelinedStore::Sync() {
  MutexLock writer(&write_mu_);
  return Drain();
}

absl::Status PipelinedStore::ForEach(
    ColumnId column,
    const std::function<absl::Status(ByteView key, ByteView value)>& fn) {
  return ForEachByScan(column, fn);
}

absl::Status PipelinedStore::ScanFrom(
    ColumnId column, ByteView from,
    const std::function<bool(ByteView key, ByteView value)>& fn) {
  if (!has_flight_.load(std::memory_order_acquire)) {
    return base_->ScanFrom(column, from, fn);
  }
  std::shared_lock<std::shared_mutex> reading(readers_mu_);
  std::shared_ptr<const Flight> flight = Current();
  if (flight == nullptr || !flight->Touches(column)) {
    reading.unlock();  // Nothing to merge; fn may take its time.
    return base_->ScanFrom(column, from, fn);
  }
  // Merge the flight's ops of `column` (from `from` on) into the base's
  // scan: a flight put replaces or adds its key, a flight delete hides it.
  const std::vector<WriteBatch::Op>& ops = flight->batch.ops();
  size_t i = flight->LowerBound(column, from);
  auto in_column = [&] { return i < ops.size() && ops[i].column == column; };
  bool stopped = false;
  RETURN_IF_ERROR(base_->ScanFrom(column, from, [&](ByteView k, ByteView v) {
    while (in_column() && CompareKeys(ops[i].key, k) < 0) {
      const WriteBatch::Op& op = ops[i++];
      if (op.value.has_value() && !fn(op.key, *op.value)) {
        stopped = true;
        return false;
      }
    }
    if (in_column() && CompareKeys(ops[i].key, k) == 0) {
      const WriteBatch::Op& op = ops[i++];
      if (!op.value.has_value()) return true;
      stopped = !fn(op.key, *op.value);
      return !stopped;
    }
    stopped = !fn(k, v);
    return !stopped;
  }));
  for (; !stopped && in_column(); ++i) {
    if (ops[i].value.has_value()) stopped = !fn(ops[i].key, *ops[i].value);
  }
  return absl::OkStatus();
}

PipelinedStoreStats PipelinedStore::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace rnode::rspace

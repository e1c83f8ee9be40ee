// Fault-injecting KeyValueStore wrapper.
#include "rspace/storage/fault_store.h"

#include <utility>

namespace rnode::rspace {

void FaultInjectingStore::FailWritesAfter(uint64_t n) {
  MutexLock lock(&mu_);
  fail_writes_at_ = writes_ + n;
}

void FaultInjectingStore::FailReadsAfter(uint64_t n) {
  MutexLock lock(&mu_);
  fail_reads_at_ = reads_ + n;
}

void FaultInjectingStore::SetCrashPoint(uint64_t n,
                                        std::function<void()> hook) {
  MutexLock lock(&mu_);
  crash_at_ = writes_ + n;
  crash_hook_ = std::move(hook);
}

void FaultInjectingStore::Heal() {
  MutexLock lock(&mu_);
  fail_writes_at_.reset();
  fail_reads_at_.reset();
  crash_at_.reset();
  crash_hook_ = nullptr;
}

uint64_t FaultInjectingStore::writes() const {
  MutexLock lock(&mu_);
  return writes_;
}

uint64_t FaultInjectingStore::reads() const {
  MutexLock lock(&mu_);
  return reads_;
}

absl::StatusOr<std::optional<Bytes>> FaultInjectingStore::Get(ColumnId column,
                                                              ByteView key) {
  {
    MutexLock lock(&mu_);
    if (fail_reads_at_.has_value() && reads_ >= *fail_reads_at_) {
      return absl::UnavailableError("injected read fault");
    }
    ++reads_;
  }
  return base_->Get(column, key);
}

absl::Status FaultInjectingStore::Write(const WriteBatch& batch) {
  return WriteThrough([&] { return base_->Write(batch); });
}

absl::Status FaultInjectingStore::WriteOwned(WriteBatch&& batch) {
  return WriteThrough([&] { return base_->WriteOwned(std::move(batch)); });
}

absl::Status FaultInjectingStore::WriteThrough(
    const std::function<absl::Status()>& apply) {
  std::function<void()> hook;
  {
    MutexLock lock(&mu_);
    if (crash_at_.has_value() && writes_ == *crash_at_) hook = crash_hook_;
  }
  if (hook) hook();
  {
    MutexLock lock(&mu_);
    if (fail_writes_at_.has_value() && writes_ >= *fail_writes_at_) {
      return absl::UnavailableError("injected write fault");
    }
  }
  absl::Status status = apply();
  if (status.ok()) {
    MutexLock lock(&mu_);
    ++writes_;
  }
  return status;
}

absl::Status FaultInjectingStore::ForEach(
    ColumnId column,
    const std::function<absl::Status(ByteView key, ByteView value)>& fn) {
  return base_->ForEach(column, fn);
}

absl::Status FaultInjectingStore::ScanFrom(
    ColumnId column, ByteView from,
    const std::function<bool(ByteView key, ByteView value)>& fn) {
  return base_->ScanFrom(column, from, fn);
}

}  // namespace rnode::rspace

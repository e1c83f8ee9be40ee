// LeftDeploys: the durable record of deploys that left the pool unincluded.
#include "casper/pool/left_deploys.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace rnode::casper::pool {
namespace {

constexpr uint8_t kSigPrefix = 'S';
constexpr uint8_t kAgePrefix = 'T';
constexpr size_t kMaxSigBytes = 1024;

void AppendBe64(Bytes& out, int64_t v) {
  const auto u = static_cast<uint64_t>(v);
  for (int shift = 56; shift >= 0; shift -= 8) {
    out.push_back(static_cast<uint8_t>(u >> shift));
  }
}

int64_t ReadBe64(ByteView in) {
  uint64_t u = 0;
  for (size_t i = 0; i < 8; ++i) u = (u << 8) | in[i];
  return static_cast<int64_t>(u);
}

Bytes SigKey(ByteView sig) {
  Bytes key{kSigPrefix};
  key.insert(key.end(), sig.begin(), sig.end());
  return key;
}

Bytes AgeKey(int64_t at_ms, ByteView sig) {
  Bytes key{kAgePrefix};
  AppendBe64(key, at_ms);
  key.insert(key.end(), sig.begin(), sig.end());
  return key;
}

struct Record {
  DeployLeft why;
  int64_t at_ms;
};

absl::StatusOr<Record> DecodeRecord(ByteView value) {
  if (value.size() != 9 ||
      (value[0] != static_cast<uint8_t>(DeployLeft::kExpired) &&
       value[0] != static_cast<uint8_t>(DeployLeft::kLeftOut))) {
    return absl::DataLossError("left-deploy record is malformed");
  }
  return Record{static_cast<DeployLeft>(value[0]), ReadBe64(value.subspan(1))};
}

}  // namespace

absl::StatusOr<std::unique_ptr<LeftDeploys>> LeftDeploys::Open(
    rspace::KeyValueStore* store, rspace::ColumnId column,
    LeftDeploysOptions options) {
  std::unique_ptr<LeftDeploys> left(new LeftDeploys(store, column, options));
  size_t count = 0;
  absl::Status bad;
  const Bytes from{kSigPrefix};
  RETURN_IF_ERROR(store->ScanFrom(column, from, [&](ByteView key, ByteView v) {
    if (key.empty() || key[0] != kSigPrefix) return false;
    if (absl::StatusOr<Record> r = DecodeRecord(v); !r.ok()) {
      bad = r.status();
      return false;
    }
    ++count;
    return true;
  }));
  RETURN_IF_ERROR(bad);
  MutexLock lock(&left->mu_);
  left->size_ = count;
  return left;
}

absl::Status LeftDeploys::Put(std::span<const Bytes> sigs, DeployLeft why,
                              int64_t now_ms) {
  for (const Bytes& sig : sigs) {
    if (sig.empty() || sig.size() > kMaxSigBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("a deploy signature of ", sig.size(), " bytes"));
    }
  }
  // A signature twice in `sigs` is recorded once.
  std::vector<Bytes> unique(sigs.begin(), sigs.end());
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  if (unique.empty()) return absl::OkStatus();
  MutexLock lock(&mu_);
  std::vector<Bytes> keys;
  keys.reserve(unique.size());
  for (const Bytes& sig : unique) keys.push_back(SigKey(sig));
  const std::vector<ByteView> views(keys.begin(), keys.end());
  ASSIGN_OR_RETURN(std::vector<std::optional<Bytes>> old,
                   store_->MultiGet(column_, views));
  rspace::WriteBatch batch;
  Bytes value{static_cast<uint8_t>(why)};
  AppendBe64(value, now_ms);
  size_t added = 0;
  for (size_t i = 0; i < unique.size(); ++i) {
    if (old[i].has_value()) {
      ASSIGN_OR_RETURN(const Record r, DecodeRecord(*old[i]));
      batch.Delete(column_, AgeKey(r.at_ms, unique[i]));
    } else {
      ++added;
    }
    batch.Put(column_, keys[i], value);
    batch.Put(column_, AgeKey(now_ms, unique[i]), Bytes{});
  }
  RETURN_IF_ERROR(store_->Write(batch));
  size_ += added;
  return Trim(now_ms);
}

absl::Status LeftDeploys::Trim(int64_t now_ms) {
  // One pass over the age index from its oldest entry and one write,
  // however many records go.
  const int64_t oldest_kept = now_ms - options_.max_age_ms;
  size_t remaining = size_;
  rspace::WriteBatch batch;
  const Bytes from{kAgePrefix};
  RETURN_IF_ERROR(store_->ScanFrom(column_, from, [&](ByteView key, ByteView) {
    if (remaining == 0 || key.size() <= 9 || key[0] != kAgePrefix) {
      return false;
    }
    if (remaining <= options_.max_records &&
        ReadBe64(key.subspan(1, 8)) >= oldest_kept) {
      return false;
    }
    batch.Delete(column_, key);
    batch.Delete(column_, SigKey(key.subspan(9)));
    --remaining;
    return true;
  }));
  if (remaining == size_) return absl::OkStatus();
  RETURN_IF_ERROR(store_->Write(batch));
  size_ = remaining;
  return absl::OkStatus();
}

absl::StatusOr<std::optional<DeployLeft>> LeftDeploys::Get(ByteView sig) const {
  ASSIGN_OR_RETURN(std::optional<Bytes> value,
                   store_->Get(column_, SigKey(sig)));
  if (!value.has_value()) return std::nullopt;
  ASSIGN_OR_RETURN(const Record r, DecodeRecord(*value));
  return r.why;
}

size_t LeftDeploys::size() const {
  MutexLock lock(&mu_);
  return size_;
}

}  // namespace rnode::casper::pool

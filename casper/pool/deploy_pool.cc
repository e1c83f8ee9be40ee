// Deploy pool.
#include "casper/pool/deploy_pool.h"

#include <algorithm>
#include <string>
#include <utility>

#include "CasperMessage.pb.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace rnode::casper::pool {
namespace {

// Marks a refusal for the deployer's share (IsDeployerShareFull).
constexpr char kDeployerSharePayload[] = "rnode/deployer-share";

// The stored record: the full DeployDataProto (signature included).
Bytes EncodeRecord(const SignedDeploy& deploy) {
  const std::string s = deploy.ToProto().SerializeAsString();
  return Bytes(s.begin(), s.end());
}

}  // namespace

bool InWindow(const DeployData& d, int64_t number, int64_t now_ms,
              int64_t lifespan_blocks) {
  return WindowAt(d, number, now_ms, lifespan_blocks) == DeployWindow::kOpen;
}

DeployPool::DeployPool(rspace::KeyValueStore* store, rspace::ColumnId column,
                       DeployPoolOptions options)
    : store_(store),
      column_(column),
      options_(std::move(options)),
      shares_(options_.max_deploys_per_deployer,
              options_.max_term_bytes_per_deployer) {}

absl::StatusOr<std::unique_ptr<DeployPool>> DeployPool::Open(
    rspace::KeyValueStore* store, rspace::ColumnId column,
    DeployPoolOptions options) {
  std::unique_ptr<DeployPool> pool(
      new DeployPool(store, column, std::move(options)));
  MutexLock lock(&pool->mu_);
  RETURN_IF_ERROR(
      store->ForEach(column, [&](ByteView key, ByteView value) -> absl::Status {
        ::casper::DeployDataProto proto;
        if (!proto.ParseFromArray(value.data(),
                                  static_cast<int>(value.size()))) {
          return absl::DataLossError("pooled deploy " + HexEncode(key) +
                                     " does not decode");
        }
        auto deploy = SignedDeploy::FromProto(proto);
        if (!deploy.ok() ||
            !std::equal(key.begin(), key.end(), deploy->sig().begin(),
                        deploy->sig().end())) {
          return absl::DataLossError(
              "pooled deploy " + HexEncode(key) + " does not verify: " +
              std::string(deploy.ok() ? "stored under another signature"
                                      : deploy.status().message()));
        }
        pool->mu_.AssertHeld();  // taken above, around the ForEach
        pool->CountLocked(*deploy);
        Bytes sig = deploy->sig();
        pool->deploys_.emplace(std::move(sig), *std::move(deploy));
        return absl::OkStatus();
      }));
  return pool;
}

bool IsDeployerShareFull(const absl::Status& status) {
  return status.GetPayload(kDeployerSharePayload).has_value();
}

absl::Status DeployPool::Add(const SignedDeploy& deploy,
                             int64_t last_block_number, int64_t now_ms) {
  const DeployData& d = deploy.data();
  if (options_.rules.has_value()) {
    if (std::optional<DeployBreach> breach =
            CheckDeployRules(d, *options_.rules, last_block_number)) {
      return absl::InvalidArgumentError(breach->message);
    }
  }
  const int64_t last = LastBlockNumber(d, options_.lifespan_blocks);
  if (last <= last_block_number) {
    return absl::InvalidArgumentError(
        absl::StrCat("deploy can no longer be included: validAfterBlockNumber ",
                     d.valid_after_block_number, " allows blocks up to ", last,
                     " (lifespan ", options_.lifespan_blocks,
                     " blocks) and the chain is at block ", last_block_number));
  }
  if (d.expiration_timestamp != 0 && d.expiration_timestamp < now_ms) {
    return absl::InvalidArgumentError(
        absl::StrCat("deploy expired: expirationTimestamp ",
                     d.expiration_timestamp, " is before now (", now_ms, ")"));
  }
  MutexLock lock(&mu_);
  if (deploys_.contains(deploy.sig())) {
    return absl::AlreadyExistsError("deploy " + HexEncode(deploy.sig()) +
                                    " is already in the pool");
  }
  if (deploys_.size() >= options_.max_deploys ||
      term_bytes_ + d.term.size() > options_.max_term_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "deploy pool is full (", deploys_.size(), " deploys, ", term_bytes_,
        " bytes of terms; limits ", options_.max_deploys, " and ",
        options_.max_term_bytes, "): try again later"));
  }
  if (!shares_.Fits(deploy.deployer(), d.term.size())) {
    const DeployerShares::Share has = shares_.Of(deploy.deployer());
    absl::Status full = absl::ResourceExhaustedError(absl::StrCat(
        "this deployer has ", has.deploys, " deploys (", has.term_bytes,
        " bytes of terms) waiting, its share of the pool (",
        options_.max_deploys_per_deployer, " and ",
        options_.max_term_bytes_per_deployer,
        "): try again once some are included"));
    full.SetPayload(kDeployerSharePayload, absl::Cord("full"));
    return full;
  }
  // The lock is held across the synced write so that the bounds above
  // hold for concurrent adds; an acknowledged deploy is on disk.
  rspace::WriteBatch batch;
  batch.Put(column_, deploy.sig(), EncodeRecord(deploy));
  batch.set_sync(true);
  RETURN_IF_ERROR(store_->WriteOwned(std::move(batch)));
  CountLocked(deploy);
  deploys_.emplace(deploy.sig(), deploy);
  return absl::OkStatus();
}

void DeployPool::CountLocked(const SignedDeploy& d) {
  term_bytes_ += d.data().term.size();
  shares_.Add(d.deployer(), d.data().term.size());
}

void DeployPool::UncountLocked(const SignedDeploy& d) {
  term_bytes_ -= d.data().term.size();
  shares_.Remove(d.deployer(), d.data().term.size());
}

std::vector<SignedDeploy> DeployPool::Select(int64_t number, int64_t now_ms,
                                             size_t max,
                                             const Accept& accept) const {
  std::vector<const SignedDeploy*> eligible;
  MutexLock lock(&mu_);
  for (const auto& [sig, deploy] : deploys_) {
    if (InWindow(deploy.data(), number, now_ms, options_.lifespan_blocks)) {
      eligible.push_back(&deploy);
    }
  }
  auto order = [](const SignedDeploy* a, const SignedDeploy* b) {
    if (a->data().phlo_price != b->data().phlo_price) {
      return a->data().phlo_price > b->data().phlo_price;
    }
    if (a->data().valid_after_block_number !=
        b->data().valid_after_block_number) {
      return a->data().valid_after_block_number <
             b->data().valid_after_block_number;
    }
    if (a->data().timestamp != b->data().timestamp) {
      return a->data().timestamp < b->data().timestamp;
    }
    return a->sig() < b->sig();
  };
  std::vector<SignedDeploy> out;
  if (!accept) {
    const size_t n = std::min(max, eligible.size());
    std::partial_sort(eligible.begin(), eligible.begin() + n, eligible.end(),
                      order);
    eligible.resize(n);
  } else {
    std::sort(eligible.begin(), eligible.end(), order);
  }
  for (const SignedDeploy* d : eligible) {
    if (out.size() >= max) break;
    if (!accept || accept(*d)) out.push_back(*d);
  }
  return out;
}

absl::Status DeployPool::RemoveLocked(std::span<const Bytes> sigs) {
  rspace::WriteBatch batch;
  for (const Bytes& sig : sigs) {
    if (deploys_.contains(sig)) batch.Delete(column_, sig);
  }
  if (batch.empty()) return absl::OkStatus();
  RETURN_IF_ERROR(store_->WriteOwned(std::move(batch)));
  for (const Bytes& sig : sigs) {
    auto it = deploys_.find(sig);
    if (it == deploys_.end()) continue;
    UncountLocked(it->second);
    deploys_.erase(it);
  }
  return absl::OkStatus();
}

absl::Status DeployPool::Remove(std::span<const Bytes> sigs) {
  MutexLock lock(&mu_);
  return RemoveLocked(sigs);
}

absl::StatusOr<std::vector<Bytes>> DeployPool::PruneExpired(
    int64_t last_block_number, int64_t now_ms) {
  MutexLock lock(&mu_);
  std::vector<Bytes> dead;
  for (const auto& [sig, deploy] : deploys_) {
    const DeployData& d = deploy.data();
    if (LastBlockNumber(d, options_.lifespan_blocks) <= last_block_number ||
        (d.expiration_timestamp != 0 && d.expiration_timestamp < now_ms)) {
      dead.push_back(sig);
    }
  }
  RETURN_IF_ERROR(RemoveLocked(dead));
  return dead;
}

void DeployPool::ForEach(
    const std::function<void(const SignedDeploy&)>& fn) const {
  MutexLock lock(&mu_);
  for (const auto& [sig, deploy] : deploys_) fn(deploy);
}

bool DeployPool::Contains(ByteView sig) const {
  MutexLock lock(&mu_);
  return deploys_.contains(Bytes(sig.begin(), sig.end()));
}

std::optional<SignedDeploy> DeployPool::Get(ByteView sig) const {
  MutexLock lock(&mu_);
  auto it = deploys_.find(Bytes(sig.begin(), sig.end()));
  if (it == deploys_.end()) return std::nullopt;
  return it->second;
}

size_t DeployPool::size() const {
  MutexLock lock(&mu_);
  return deploys_.size();
}

size_t DeployPool::term_bytes() const {
  MutexLock lock(&mu_);
  return term_bytes_;
}

}  // namespace rnode::casper::pool

// The deploy pool: signed deploys a client handed to this node, waiting for
// a block (docs/formats/dag.md "Deploy pool").
//
// A deploy is acknowledged only once it is in the store with a synced
// write: it survives a crash and a power loss, and Open brings it back.
// The pool is bounded by count and bytes; a full pool refuses with
// ResourceExhausted rather than dropping anything. Deploys leave the pool
// by Remove (once the last finalized block's state holds their effect: a
// copy a merge rejected leaves its deploy waiting, to go in a block again)
// or PruneExpired.
//
// Validity window (the public node's rules): a deploy can go in block
// number n when validAfterBlockNumber < n, n - validAfterBlockNumber <
// lifespan (50 blocks) and, if it has one, its expiration timestamp is not
// before the block's time.
//
// Thread-safe.
#ifndef RNODE_CASPER_POOL_DEPLOY_POOL_H_
#define RNODE_CASPER_POOL_DEPLOY_POOL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/deploy.h"
#include "casper/deploy_rules.h"
#include "casper/pool/deployer_shares.h"
#include "rspace/storage/kv_store.h"
#include "util/bytes.h"
#include "util/mutex.h"

namespace rnode::casper::pool {

inline constexpr int64_t kDeployLifespanBlocks = casper::kDeployLifespanBlocks;

struct DeployPoolOptions {
  // At most this many deploys wait; more are refused.
  size_t max_deploys = 20'000;
  // At most this many bytes of terms wait (a pool of maximal terms must
  // fit in memory).
  size_t max_term_bytes = 256u << 20;
  // One deployer's share: at most this many of its deploys, and bytes of
  // its terms, wait; more of its deploys are refused (the node gives each
  // key a sixteenth of the bounds, as the gossip backup does), so one key
  // cannot take the pool from every other client.
  size_t max_deploys_per_deployer = 1'250;
  size_t max_term_bytes_per_deployer = 16u << 20;
  int64_t lifespan_blocks = kDeployLifespanBlocks;
  // The shard's rules; Add refuses a deploy that breaks one. nullopt: none
  // (tests of the pool's own bounds).
  std::optional<DeployRules> rules;
};

// Whether a refusal of Add is for the deployer's share, not a full pool.
bool IsDeployerShareFull(const absl::Status& status);

// Whether `deploy` may go in block `number` made at `now_ms` (WindowAt is
// kOpen).
bool InWindow(const DeployData& deploy, int64_t number, int64_t now_ms,
              int64_t lifespan_blocks = kDeployLifespanBlocks);

class DeployPool {
 public:
  // Opens the pool kept in `column` of `store` (not owned; must outlive the
  // pool), loading and re-verifying every stored deploy. DataLoss for a
  // record that does not decode or verify.
  static absl::StatusOr<std::unique_ptr<DeployPool>> Open(
      rspace::KeyValueStore* store, rspace::ColumnId column,
      DeployPoolOptions options = {});

  // Adds `deploy` for blocks after `last_block_number` (the node's highest
  // block) and durably stores it before returning OK. Refusals, each with a
  // message a client can act on, and nothing stored:
  //   AlreadyExists      the same deploy (signature) is already waiting;
  //   InvalidArgument    it breaks the shard's rules (options.rules, with
  //                      `last_block_number` as the height), or it can
  //                      never be included: its window closed
  //                      (validAfterBlockNumber too old for the lifespan)
  //                      or its expiration timestamp is before `now_ms`;
  //   ResourceExhausted  the pool is full (count or bytes), or the
  //                      deployer has its share waiting.
  absl::Status Add(const SignedDeploy& deploy, int64_t last_block_number,
                   int64_t now_ms);

  // Up to `max` deploys that may go in block `number` at `now_ms` and that
  // `accept` (when given) takes, ordered by phlo price (highest first),
  // then by age (validAfterBlockNumber, timestamp) and signature: a block
  // with room for fewer than are waiting takes those that pay most, and
  // among equals the oldest. `accept` is asked in that order only until
  // `max` are taken; it runs under the pool's lock and must not call the
  // pool.
  using Accept = std::function<bool(const SignedDeploy&)>;
  std::vector<SignedDeploy> Select(int64_t number, int64_t now_ms, size_t max,
                                   const Accept& accept = nullptr) const;

  // Drops the deploys with these signatures (absent ones are ignored).
  absl::Status Remove(std::span<const Bytes> sigs);
  // Drops every deploy that can no longer go in a block numbered above
  // `last_block_number` or made at or after `now_ms`; returns their
  // signatures.
  absl::StatusOr<std::vector<Bytes>> PruneExpired(int64_t last_block_number,
                                                  int64_t now_ms);

  // Calls `fn` with every waiting deploy, by signature; under the pool's
  // lock, so `fn` must not call the pool.
  void ForEach(const std::function<void(const SignedDeploy&)>& fn) const;

  bool Contains(ByteView sig) const;
  // The waiting deploy `sig`; nullopt when not waiting.
  std::optional<SignedDeploy> Get(ByteView sig) const;
  size_t size() const;
  size_t term_bytes() const;

 private:
  DeployPool(rspace::KeyValueStore* store, rspace::ColumnId column,
             DeployPoolOptions options);
  absl::Status RemoveLocked(std::span<const Bytes> sigs)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  rspace::KeyValueStore* const store_;
  const rspace::ColumnId column_;
  const DeployPoolOptions options_;
  mutable Mutex mu_;
  // Adds `d` to / removes it from the deployer's share.
  void CountLocked(const SignedDeploy& d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UncountLocked(const SignedDeploy& d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::map<Bytes, SignedDeploy> deploys_ ABSL_GUARDED_BY(mu_);  // By sig.
  size_t term_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // What each deployer has waiting.
  DeployerShares shares_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rnode::casper::pool

#endif  // RNODE_CASPER_POOL_DEPLOY_POOL_H_

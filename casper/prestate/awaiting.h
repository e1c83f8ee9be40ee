// Deploys a finalized merge rejected that the finalized state does not
// hold yet: the work that keeps validators proposing until the chain
// settles them (docs/validation.md "Recovery at finality").
//
// A merge whose base is below the last finalized block can reject a copy
// the finalized state held. The deploy then goes back to a pool (its
// includer's), but the next block may still not carry it: when the merge
// of the tips holds another copy again, the creator leaves it out, and
// with nothing else pooled no block is made and the deploy reads PENDING
// for good (the ASan suite's stall, 2026-12-06). While a deploy is
// awaited, every validator counts it as unfinalized work, so blocks
// (empty ones if need be) are made and finalized until the finalized
// state holds a copy or the deploy's window closes.
//
// Not thread-safe; the consensus thread owns it. Bounded: at most
// `capacity` deploys, the oldest noted forgotten first.
#ifndef RNODE_CASPER_PRESTATE_AWAITING_H_
#define RNODE_CASPER_PRESTATE_AWAITING_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/dag/dag_store.h"
#include "casper/deploy.h"
#include "util/bytes.h"

namespace rnode::casper::prestate {

class AwaitedDeploys {
 public:
  static constexpr size_t kDefaultCapacity = 4096;

  explicit AwaitedDeploys(size_t capacity = kDefaultCapacity,
                          int64_t lifespan = kDeployLifespanBlocks)
      : capacity_(capacity), lifespan_(lifespan) {}

  // The deploys the merges of the newly finalized `blocks` rejected that
  // the post-state of `lfb` (the last finalized block) does not hold and
  // whose window is still open at block `next_number` and time `now_ms`:
  // awaited from now on, and returned (for the caller to pool again).
  // Errors: the DAG's.
  absl::StatusOr<std::vector<Bytes>> NoteFinalized(
      dag::DagStore& dag, const Hash32& lfb, std::span<const Hash32> blocks,
      int64_t next_number, int64_t now_ms);

  // What a new last finalized block `lfb` settles: the awaited deploys its
  // post-state holds are returned (their effect is final: they leave the
  // pool) and no longer awaited; those whose window is closed at block
  // `next_number` or time `now_ms` are dropped (they read EXPIRED).
  // Errors: the DAG's (nothing is forgotten then).
  absl::StatusOr<std::vector<Bytes>> Settle(dag::DagStore& dag,
                                            const Hash32& lfb,
                                            int64_t next_number,
                                            int64_t now_ms);

  bool empty() const { return window_.empty(); }
  size_t size() const { return window_.size(); }
  bool Contains(const Bytes& sig) const { return window_.contains(sig); }

 private:
  // The deploy's window, read from a stored copy; nullopt when no valid
  // copy is stored.
  struct Window {
    int64_t last_number = 0;  // LastBlockNumber
    int64_t expires_ms = 0;   // expirationTimestamp; 0 for none
    uint64_t noted = 0;       // Order noted, for the bound.
    bool OpenAt(int64_t number, int64_t now_ms) const {
      return number <= last_number && (expires_ms == 0 || now_ms <= expires_ms);
    }
  };
  absl::StatusOr<std::optional<Window>> WindowOf(dag::DagStore& dag,
                                                 ByteView sig) const;

  size_t capacity_;
  int64_t lifespan_;
  uint64_t noted_ = 0;
  std::map<Bytes, Window> window_;
};

}  // namespace rnode::casper::prestate

#endif  // RNODE_CASPER_PRESTATE_AWAITING_H_

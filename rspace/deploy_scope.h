// A deploy's view of a shared space: its item-level change record (the
// "soft checkpoint" journal, one per deploy), marks into it, per-deploy
// revert and state change, and the channels it touched and wrote, so that
// several deploys of one block can play or replay concurrently on one Space.
// Design: docs/rspace.md "Deploy scopes".
#ifndef RNODE_RSPACE_DEPLOY_SCOPE_H_
#define RNODE_RSPACE_DEPLOY_SCOPE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rspace/state_change.h"
#include "rspace/types.h"
#include "util/bytes.h"
#include "util/mutex.h"

namespace rnode::rspace {

class Space;

// Stripes of a scope's record, chosen by a channel hash byte. A deploy's
// operations normally come from one thread, so the stripe mutexes are
// uncontended; 16 lets the workers of one deploy share a scope (as they
// share an EventLog) without serialising on one mutex.
inline constexpr size_t kScopeStripes = 16;

// Thread safety: every method may be called concurrently with the space's
// operations and with each other, but a mark is only meaningful between
// this deploy's operations: mark(), RevertTo() and ChangesSince() are
// called when none of this scope's operations is in flight. The space is
// not owned and must outlive the scope.
//
// Lock order: entry mutexes (the space's channel locks), then a stripe
// mutex (a leaf).
class DeployScope {
 public:
  explicit DeployScope(Space& space);
  DeployScope(const DeployScope&) = delete;
  DeployScope& operator=(const DeployScope&) = delete;

  // A position in this scope's record: per-stripe record counts and the
  // space's overlay generation when it was taken.
  struct Mark {
    std::array<size_t, kScopeStripes> at{};
    uint64_t generation = 0;
  };
  Mark mark() const;

  // Undoes this deploy's changes recorded after `m`, newest first, and drops
  // those records. Other deploys' items on the same channels are kept (a
  // join stays while any continuation of its group still waits).
  // FailedPrecondition, changing nothing, if the overlay was dropped since
  // `m` (CreateCheckpoint / Reset) or `m` is not from this scope's record.
  // FailedPrecondition naming the channel if an item this deploy added is
  // gone (another deploy consumed it: the independence invariant of
  // docs/rspace.md was broken); channels are reverted one at a time (a join
  // group at a time), so the space is then partly reverted and the caller
  // must Reset it. The store's error if a channel cannot be loaded.
  absl::Status RevertTo(const Mark& m);

  // This deploy's net per-channel change since `m`, ascending by channel,
  // each list in the order the channel keeps it (data and continuations by
  // source, joins ascending). Equal to DiffChannelState(before, after) per
  // channel when the deploy ran alone. FailedPrecondition as for RevertTo.
  absl::StatusOr<StateChanges> ChangesSince(const Mark& m) const;

  // Channels whose state this deploy changed (by a record still held),
  // sorted ascending.
  std::vector<Hash32> WrittenChannels() const;
  // Channels this deploy locked or read (every channel of every produce,
  // consume and scoped GetData, including those that changed nothing),
  // sorted ascending: with WrittenChannels, the scheduler's conflict check.
  // Reverting does not shrink it: what was read was read.
  std::vector<Hash32> TouchedChannels() const;

 private:
  friend class Space;

  // One item-level mutation of one channel.
  struct Record {
    enum class Kind : uint8_t {
      kAddDatum,
      kRemoveDatum,
      kAddContinuation,
      kRemoveContinuation,
      kAddJoin,
      kRemoveJoin,
    };
    Kind kind;
    Hash32 channel;
    std::variant<Datum, WaitingContinuation, JoinGroup> item;
  };

  struct alignas(64) Stripe {
    mutable Mutex mu;
    std::vector<Record> records ABSL_GUARDED_BY(mu);
    absl::flat_hash_set<Hash32, Hash32Hasher> touched ABSL_GUARDED_BY(mu);
  };

  static size_t StripeOf(const Hash32& channel) {
    // Byte 9: outside Hash32Hasher's first 8 bytes (as the trie cache).
    return channel[9] % kScopeStripes;
  }
  // Called by the space under the channel's entry lock.
  void Append(Record r);
  void Touch(const Hash32& channel);

  // The records after `m`, stripe by stripe (per channel in mutation
  // order). FailedPrecondition for a stale or foreign mark.
  absl::StatusOr<std::vector<Record>> RecordsSince(const Mark& m) const;

  Space* space_;
  std::array<Stripe, kScopeStripes> stripes_;
};

}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_DEPLOY_SCOPE_H_

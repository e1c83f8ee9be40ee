// The tuple space: channel-locked produce / consume / install over a hot
// overlay on a history root, with per-deploy scopes (deploy_scope.h),
// checkpoints and replay.
// Design: docs/rspace.md.
#ifndef RNODE_RSPACE_SPACE_H_
#define RNODE_RSPACE_SPACE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rspace/deploy_scope.h"
#include "rspace/event_log.h"
#include "rspace/history/history.h"
#include "rspace/matcher.h"
#include "rspace/state_change.h"
#include "rspace/storage/kv_store.h"
#include "rspace/types.h"
#include "util/mutex.h"

namespace rnode::rspace {

// Number of shards of the overlay's channel map. Each shard's mutex is held
// only to find or create a channel entry, never while matching; 256 makes
// collisions between a few dozen workers rare.
inline constexpr size_t kOverlayShards = 256;

struct SpaceOptions {
  HistoryOptions history;
  // Builds terms read back from history; default Term::Make.
  TermFactory term_factory;
};

// Per-operation context: where the event goes (a per-deploy log, in play or
// replay mode), the matcher to use, and the deploy's scope that records
// what the operation changed and touched (null: untracked, as genesis,
// tools and tests that never revert). None is owned.
struct OpContext {
  EventLog* log = nullptr;
  const Matcher* matcher = nullptr;
  DeployScope* scope = nullptr;
};

// Thread safety: Produce, Consume, Install, the Get* readers and the
// DeployScope calls may run concurrently from any number of threads; no
// space-wide lock is taken on the produce/consume path (docs/rspace.md
// "Locking"). CreateCheckpoint, Reset and Clear REQUIRE that no other call
// on this space is in flight (the caller's deploy/block scheduler guarantees
// it); they are not on the hot path. They invalidate every DeployScope mark
// taken before them.
//
// Operation errors: InvalidArgument for malformed arguments, the matcher's
// error, in replay the status of EventLog::Diverge (the divergence itself is
// kept in the log: EventLog::divergence()),
// DataLoss/the store's error when history cannot be read. After an error the
// deploy is expected to be reverted to a mark of its scope.
class Space {
 public:
  // Opens at the store's last complete root. `store` is not owned and must
  // outlive the space.
  static absl::StatusOr<std::unique_ptr<Space>> Open(KeyValueStore* store,
                                                     SpaceOptions options = {});
  ~Space();

  // Sends `data` on `channel`. Returns the COMMs it fired: none if the
  // datum was stored; one that took it; or, when waiting peeks matched it,
  // one per peek (each peek leaves the datum for the next waiting
  // continuation), then possibly one that took it. In that order, the peeks
  // by consume hash, the same in play and replay. A datum no COMM
  // took is stored, so afterwards no waiting continuation matches it. A
  // persistent datum fires at most one COMM and is not stored after it: the
  // caller sends it again (Rholang's `!!`).
  absl::StatusOr<std::vector<Comm>> Produce(const OpContext& ctx,
                                            const TermPtr& channel,
                                            const TermPtr& data, bool persist);

  // Waits on `channels` (1..kMaxJoinArity, one pattern each). Returns the
  // COMM if data matched every bind, nullopt if the continuation was stored.
  // `peek`: matched data stays in the space.
  absl::StatusOr<std::optional<Comm>> Consume(
      const OpContext& ctx, const std::vector<TermPtr>& channels,
      const std::vector<TermPtr>& patterns, const TermPtr& continuation,
      bool persist, bool peek);

  // Registers a persistent system-process continuation that is never written
  // to history and survives Reset and CreateCheckpoint. FailedPrecondition if
  // stored data already matches it (installs happen at startup).
  absl::Status Install(const Matcher& matcher,
                       const std::vector<TermPtr>& channels,
                       const std::vector<TermPtr>& patterns,
                       const TermPtr& continuation);

  // Writes the overlay's changed channels to history in one atomic batch,
  // drops the overlay and returns the new root. On error the space is
  // unchanged (still at the old root with its overlay).
  absl::StatusOr<Hash32> CreateCheckpoint();

  // Moves to `root` (NotFound if it is not in the roots table) with an empty
  // overlay. No I/O beyond the root lookup; channels load lazily.
  absl::Status Reset(const Hash32& root);
  // Reset(kEmptyRoot).
  absl::Status Clear();
  Hash32 root() const;

  // Bumped whenever the overlay is dropped (CreateCheckpoint, Reset): a
  // DeployScope mark is valid only in the generation it was taken in.
  uint64_t generation() const {
    return generation_.load(std::memory_order_acquire);
  }

  // Readers (hot overlay, falling back to history). Installed continuations
  // and joins come first. GetData with a scope adds the channel to the
  // scope's touched set (a deploy's read).
  absl::StatusOr<std::vector<Datum>> GetData(const Hash32& channel,
                                             DeployScope* scope = nullptr);
  absl::StatusOr<std::vector<WaitingContinuation>> GetContinuations(
      const std::vector<TermPtr>& channels);
  absl::StatusOr<std::vector<JoinGroup>> GetJoins(const Hash32& channel);

  // The installed continuations, each as (a channel it is installed on,
  // its source: the consume hash a COMM with it names), ascending. Lets a
  // reader of event logs tell a COMM with a system process from one with a
  // deploy's continuation. Thread-safe.
  std::vector<std::pair<Hash32, Hash32>> InstalledSources() const;

  // Number of channels in the overlay (loaded or changed).
  size_t OverlaySize() const;

  History& history() { return *history_; }

  struct Entry;
  struct Shard;
  class LockedSet;
  struct Chosen;

 private:
  Space(std::unique_ptr<History> history, SpaceOptions options);

  Entry* GetEntry(const Hash32& channel);
  Shard& ShardFor(const Hash32& channel);
  absl::Status EnsureLoaded(Entry& e);
  // Marks `e` changed and, with a scope, records the item-level change (the
  // item is copied only then: untracked operations pay nothing for it).
  // REQUIRES: e.mu held.
  template <typename Item>
  void Record(const OpContext& ctx, Entry& e, DeployScope::Record::Kind kind,
              const Item& item);
  // Adds every locked channel to the scope's touched set.
  void TouchAll(const OpContext& ctx, const LockedSet& locks);
  void DropOverlay();
  // Moves to `root` and pins its trie node (null if it cannot be loaded:
  // loads then walk from the hash). REQUIRES: quiescent.
  void SetRoot(const Hash32& root);

  friend class DeployScope;
  // DeployScope::RevertTo: applies the inverses of `records` (per channel
  // in mutation order) newest first, data per channel and continuations
  // with a recompute of their joins per join group.
  absl::Status Revert(const std::vector<DeployScope::Record>& records);
  absl::Status RevertData(const Hash32& channel,
                          const std::vector<const DeployScope::Record*>& recs);
  absl::Status RevertGroup(const JoinGroup& group,
                           const std::vector<const DeployScope::Record*>& recs);

  absl::StatusOr<std::optional<std::vector<Chosen>>> TryMatch(
      const OpContext& ctx, const WaitingContinuation& k, LockedSet& locks,
      const Hash32* new_channel, const Datum* new_datum,
      const CommEvent* recorded);
  Comm Fire(const OpContext& ctx, const WaitingContinuation& k, bool installed,
            Entry* owner, LockedSet& locks, std::vector<Chosen>& chosen,
            const Datum* new_datum, const Hash32& comm_hash);

  // Produce's steps (space_comm.cc). Locks `e` and every channel of every
  // join on it, widening (in sorted order) until the set covers them; joins
  // on `e` only grow under its own lock, so this settles. Every entry of
  // the set is loaded.
  absl::StatusOr<std::unique_ptr<LockedSet>> LockWithJoins(Entry* e);
  // Play: fires the waiting continuations (installed ones first) that
  // `datum`, produced on `e`, matches, appending their COMMs to `comms`.
  // True when the datum is not to be stored (taken, or persistent and
  // fired once). REQUIRES: `locks` from LockWithJoins(e).
  absl::StatusOr<bool> FireWaiting(const OpContext& ctx, Entry* e,
                                   LockedSet& locks, const Datum& datum,
                                   std::vector<Comm>* comms);
  // Fires the first continuation waiting on one of `groups` (of the
  // installed ones or the stored ones) that matches `datum`, produced on
  // `ch`; nullopt when none matches.
  absl::StatusOr<std::optional<Comm>> FireFirstWaiting(
      const OpContext& ctx, const std::vector<JoinGroup>& groups,
      bool installed, const Hash32& ch, LockedSet& locks, const Datum& datum);
  // Replay: fires the COMMs recorded for `datum`'s produce on `ch` (peeks
  // first), as FireWaiting does; the log's divergence when one fires a
  // different COMM.
  absl::StatusOr<bool> FireRecorded(const OpContext& ctx, const Hash32& ch,
                                    LockedSet& locks, const Datum& datum,
                                    std::vector<Comm>* comms);

  std::unique_ptr<History> history_;
  SpaceOptions options_;
  // Written only by the quiescent calls (Open, CreateCheckpoint, Reset).
  Hash32 root_;
  // root_'s decoded trie node, held so that concurrent cold loads do not all
  // meet on the root's cache shard.
  std::shared_ptr<const TrieNode> root_node_;
  std::atomic<uint64_t> generation_{1};
  std::unique_ptr<Shard[]> shards_;

  struct Installed {
    std::vector<WaitingContinuation> continuations;  // group[0] == channel
    std::vector<JoinGroup> joins;
  };
  // The install table, read-copy-update: GetEntry reads the current
  // version without a lock (acquire); Install copies it under install_mu_,
  // adds to the copy and publishes it (release). Older versions are kept
  // until the next DropOverlay (quiescent: no reader holds one); installs
  // happen at startup, a few dozen.
  using InstallTable = absl::flat_hash_map<Hash32, Installed, Hash32Hasher>;
  std::atomic<const InstallTable*> installs_;
  Mutex install_mu_;
  std::vector<std::unique_ptr<const InstallTable>> install_versions_
      ABSL_GUARDED_BY(install_mu_);
};

}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_SPACE_H_

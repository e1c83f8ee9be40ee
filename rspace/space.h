// The tuple space: channel-locked produce / consume / install over a hot
// overlay on a history root, with soft checkpoints, checkpoints and replay.
// Design: docs/rspace.md.
#ifndef RNODE_RSPACE_SPACE_H_
#define RNODE_RSPACE_SPACE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rspace/event_log.h"
#include "rspace/history/history.h"
#include "rspace/matcher.h"
#include "rspace/state_change.h"
#include "rspace/storage/kv_store.h"
#include "rspace/types.h"
#include "util/mutex.h"

namespace rnode::rspace {

// Number of shards of the overlay's channel map. Each shard's mutex is held
// only to find or create a channel entry (and to journal its first change),
// never while matching; 256 makes collisions between a few dozen workers
// rare.
inline constexpr size_t kOverlayShards = 256;

struct SpaceOptions {
  HistoryOptions history;
  // Builds terms read back from history; default Term::Make.
  TermFactory term_factory;
};

// Per-operation context: where the event goes (a per-deploy log, in play or
// replay mode) and the matcher to use. Neither is owned.
struct OpContext {
  EventLog* log = nullptr;
  const Matcher* matcher = nullptr;
};

struct SoftCheckpoint {
  uint64_t epoch = 0;
};

// Thread safety: Produce, Consume, Install and the Get* readers may run
// concurrently from any number of threads. CreateCheckpoint, Reset, Clear,
// CreateSoftCheckpoint, RevertToSoftCheckpoint and ChangesSinceSoftCheckpoint
// REQUIRE that no other call on this space is in flight (the caller's
// deploy/block scheduler guarantees it); they are not on the hot path.
//
// Operation errors: InvalidArgument for malformed arguments, the matcher's
// error, in replay the status of EventLog::Diverge (the divergence itself is
// kept in the log: EventLog::divergence()),
// DataLoss/the store's error when history cannot be read. After an error the
// deploy is expected to be reverted to its soft checkpoint.
class Space {
 public:
  // Opens at the store's last complete root. `store` is not owned and must
  // outlive the space.
  static absl::StatusOr<std::unique_ptr<Space>> Open(KeyValueStore* store,
                                                     SpaceOptions options = {});
  ~Space();

  // Sends `data` on `channel`. Returns the COMM if a waiting continuation
  // matched, nullopt if the datum was stored.
  absl::StatusOr<std::optional<Comm>> Produce(const OpContext& ctx,
                                              const TermPtr& channel,
                                              const TermPtr& data,
                                              bool persist);

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

  // Starts a new undo journal; only the latest soft checkpoint can be
  // reverted to (FailedPrecondition otherwise). Reverting restores the
  // overlay; event logs are the caller's and are not touched.
  SoftCheckpoint CreateSoftCheckpoint();
  absl::Status RevertToSoftCheckpoint(const SoftCheckpoint& checkpoint);
  // What changed per channel since the latest soft checkpoint (the deploy's
  // state change for the merger).
  StateChanges ChangesSinceSoftCheckpoint();

  // Readers (hot overlay, falling back to history). Installed continuations
  // and joins come first.
  absl::StatusOr<std::vector<Datum>> GetData(const Hash32& channel);
  absl::StatusOr<std::vector<WaitingContinuation>> GetContinuations(
      const std::vector<TermPtr>& channels);
  absl::StatusOr<std::vector<JoinGroup>> GetJoins(const Hash32& channel);

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
  void Touch(Entry& e);
  void DropOverlay();
  // The shards whose journal is not empty (the soft checkpoint's scope).
  std::vector<size_t> JournalShards();

  absl::StatusOr<std::optional<std::vector<Chosen>>> TryMatch(
      const OpContext& ctx, const WaitingContinuation& k, LockedSet& locks,
      const Hash32* new_channel, const Datum* new_datum,
      const CommEvent* recorded);
  Comm Fire(const OpContext& ctx, const WaitingContinuation& k, bool installed,
            Entry* owner, LockedSet& locks, std::vector<Chosen>& chosen,
            const Hash32* new_channel, const Datum* new_datum,
            const Hash32& comm_hash);

  std::unique_ptr<History> history_;
  SpaceOptions options_;
  Hash32 root_;
  std::atomic<uint64_t> epoch_{1};
  std::unique_ptr<Shard[]> shards_;

  struct Installed {
    std::vector<WaitingContinuation> continuations;  // group[0] == channel
    std::vector<JoinGroup> joins;
  };
  // Indexes of the shards with a non-empty journal, each once: soft
  // checkpoints visit only these instead of all kOverlayShards.
  Mutex journal_mu_;
  std::vector<size_t> journal_shards_ ABSL_GUARDED_BY(journal_mu_);
  mutable Mutex install_mu_;
  std::map<Hash32, Installed> installs_ ABSL_GUARDED_BY(install_mu_);
};

}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_SPACE_H_

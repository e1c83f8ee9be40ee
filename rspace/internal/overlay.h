// The Space's overlay parts shared by its files (space.cc, space_comm.cc,
// space_revert.cc): a channel's entry, the shards, the ordered lock set,
// and the helpers that keep a channel's data, continuations and joins in
// their canonical order.
#ifndef RNODE_RSPACE_INTERNAL_OVERLAY_H_
#define RNODE_RSPACE_INTERNAL_OVERLAY_H_

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "rspace/matcher.h"
#include "rspace/space.h"
#include "rspace/types.h"
#include "util/mutex.h"

namespace rnode::rspace {

// One channel's state in the overlay; entries live until the overlay is
// dropped. Its fields are guarded by `mu`, which an operation holds through
// a LockedSet (entry locks are a dynamic set: code that reaches an entry
// through the set states that its lock is held with mu.AssertHeld(), which
// the clang analysis takes as given) and the quiescent calls take one at a
// time.
struct Space::Entry {
  explicit Entry(const Hash32& h) : hash(h) {}
  Entry(const Hash32& h, std::vector<WaitingContinuation> k,
        std::vector<JoinGroup> joins)
      : hash(h), installed(std::move(k)), installed_joins(std::move(joins)) {}
  const Hash32 hash;
  Mutex mu;
  bool loaded ABSL_GUARDED_BY(mu) = false;
  // Blob hash in history when loaded.
  std::optional<Hash32> base_leaf ABSL_GUARDED_BY(mu);
  ChannelState state ABSL_GUARDED_BY(mu);
  bool dirty ABSL_GUARDED_BY(mu) = false;
  std::vector<WaitingContinuation> installed
      ABSL_GUARDED_BY(mu);  // group[0] == hash
  std::vector<JoinGroup> installed_joins ABSL_GUARDED_BY(mu);
};

struct Space::Shard {
  Mutex mu;
  absl::flat_hash_map<Hash32, std::unique_ptr<Entry>, Hash32Hasher> map
      ABSL_GUARDED_BY(mu);
};

// Locks a set of entries in ascending channel-hash order (the only order in
// which entry locks are ever taken), unlocking in reverse on destruction.
class Space::LockedSet {
 public:
  explicit LockedSet(std::vector<Entry*> entries)
      : entries_(std::move(entries)) {
    std::sort(entries_.begin(), entries_.end(),
              [](const Entry* a, const Entry* b) { return a->hash < b->hash; });
    entries_.erase(std::unique(entries_.begin(), entries_.end()),
                   entries_.end());
    for (Entry* e : entries_) e->mu.Lock();
  }
  ~LockedSet() {
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
      (*it)->mu.Unlock();
    }
  }
  LockedSet(const LockedSet&) = delete;
  LockedSet& operator=(const LockedSet&) = delete;

  Entry* Find(const Hash32& h) const {
    auto it = std::lower_bound(
        entries_.begin(), entries_.end(), h,
        [](const Entry* e, const Hash32& k) { return e->hash < k; });
    return it != entries_.end() && (*it)->hash == h ? *it : nullptr;
  }
  const std::vector<Entry*>& entries() const { return entries_; }

 private:
  std::vector<Entry*> entries_;
};

// The datum chosen for one bind: index into the entry's data, or -1 for the
// datum being produced.
struct Space::Chosen {
  Entry* entry;
  int index;
  MatchResult matched;
};

namespace internal {

std::string Hex(const Hash32& h);

inline bool SameGroup(const JoinGroup& a, const JoinGroup& b) { return a == b; }

// Joins are kept sorted and unique. Returns whether `g` was inserted.
bool AddJoin(std::vector<JoinGroup>& joins, const JoinGroup& g);

// Data and continuations are kept in ascending order of their source event
// hash (equal hashes in insertion order): the candidate order, and the order
// in the stored blob, so neither depends on thread scheduling or on whether
// the channel was reloaded from history.
void InsertDatum(std::vector<Datum>& data, Datum d);
void InsertContinuation(std::vector<WaitingContinuation>& ks,
                        WaitingContinuation k);

// The index range of `items` (kept sorted by source, above) whose source is
// `source`: how replay finds a recorded datum or continuation in O(log n).
template <typename T>
std::pair<size_t, size_t> SourceRange(const std::vector<T>& items,
                                      const Hash32& source) {
  auto lo = std::lower_bound(
      items.begin(), items.end(), source,
      [](const T& x, const Hash32& s) { return x.source < s; });
  auto hi = std::upper_bound(
      lo, items.end(), source,
      [](const Hash32& s, const T& x) { return s < x.source; });
  return {static_cast<size_t>(lo - items.begin()),
          static_cast<size_t>(hi - items.begin())};
}

// The channel and pattern hashes of a consume's or install's binds.
struct BindHashes {
  std::vector<Hash32> channels;
  std::vector<Hash32> patterns;
};

// Checks the binds of `op` ("consume", "install"): one pattern per channel,
// 1..kMaxJoinArity binds, no null term. InvalidArgument / ResourceExhausted
// naming the operation otherwise.
absl::StatusOr<BindHashes> CheckBinds(const char* op,
                                      const std::vector<TermPtr>& channels,
                                      const std::vector<TermPtr>& patterns);

}  // namespace internal
}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_INTERNAL_OVERLAY_H_

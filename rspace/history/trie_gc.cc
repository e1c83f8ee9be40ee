#include "rspace/history/trie_gc.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/cord.h"

#include "rspace/history/history.h"
#include "util/status_macros.h"

namespace rnode::rspace {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The smallest key after `key`.
Bytes Successor(ByteView key) {
  Bytes next(key.begin(), key.end());
  next.push_back(0);
  return next;
}

Hash32 HashOf(ByteView key) {
  Hash32 h{};
  std::copy(key.begin(), key.end(), h.begin());
  return h;
}

}  // namespace

TrieWriteGuard::TrieWriteGuard(const HistoryColumns& columns)
    : nodes_(columns.nodes), values_(columns.values), roots_(columns.roots) {}

void TrieWriteGuard::Writing(const WriteBatch& batch) {
  if (!active_.load()) return;
  MutexLock lock(&mu_);
  for (const WriteBatch::Op& op : batch.ops()) {
    if (op.column != nodes_ && op.column != values_ && op.column != roots_) {
      continue;
    }
    if (written_.size() >= kMaxWritten) {
      overflow_ = true;
      return;
    }
    written_.insert(op.key);
  }
}

TrieWriteGuard::Commit::Commit(TrieWriteGuard* guard, const WriteBatch& batch)
    : guard_(guard) {
  guard_->commit_mu_.Lock();
  guard_->Writing(batch);
}

TrieWriteGuard::Commit::~Commit() { guard_->commit_mu_.Unlock(); }

void TrieWriteGuard::Begin() {
  MutexLock commits(&commit_mu_);
  MutexLock lock(&mu_);
  written_.clear();
  overflow_ = false;
  active_.store(true);
}

void TrieWriteGuard::End() {
  active_.store(false);
  MutexLock lock(&mu_);
  written_.clear();
  overflow_ = false;
}

absl::StatusOr<size_t> TrieWriteGuard::Delete(KeyValueStore& store,
                                              WriteBatch batch) {
  MutexLock lock(&mu_);
  if (overflow_) {
    return absl::FailedPreconditionError(
        "commits wrote more keys during the sweep than it remembers");
  }
  WriteBatch kept;
  for (WriteBatch::Op& op : batch.mutable_ops()) {
    if (!written_.contains(op.key)) kept.Delete(op.column, op.key);
  }
  const size_t count = kept.size();
  if (count == 0) return count;
  RETURN_IF_ERROR(store.WriteOwned(std::move(kept)));
  return count;
}

TrieCollector::TrieCollector(KeyValueStore* store,
                             const HistoryColumns& columns,
                             TrieWriteGuard* guard, TrieGcOptions options)
    : store_(store),
      nodes_(columns.nodes),
      values_(columns.values),
      roots_(columns.roots),
      guard_(guard),
      options_(options) {}

absl::StatusOr<TrieGcStats> TrieCollector::Collect(
    std::span<const Hash32> kept, const std::atomic<bool>* stop) {
  return Collect(
      [&]() -> absl::StatusOr<std::vector<Hash32>> {
        return std::vector<Hash32>(kept.begin(), kept.end());
      },
      stop);
}

absl::StatusOr<TrieGcStats> TrieCollector::Collect(
    const KeptRootsFn& kept_roots, const std::atomic<bool>* stop) {
  TrieGcStats stats;
  guard_->Begin();
  struct EndGuard {
    TrieWriteGuard* g;
    ~EndGuard() { g->End(); }
  } end{guard_};
  ASSIGN_OR_RETURN(const std::vector<Hash32> kept, kept_roots());

  // Mark: every node and out-of-line value a kept root reaches. Marking
  // begins after Begin, so a node a commit writes from here on is either
  // marked (reached) or remembered by the guard.
  const Clock::time_point mark_start = Clock::now();
  absl::flat_hash_set<Hash32, Hash32Hasher> roots(kept.begin(), kept.end());
  roots.insert(kEmptyRoot);
  absl::flat_hash_set<Hash32, Hash32Hasher> nodes;
  absl::flat_hash_set<Hash32, Hash32Hasher> values;
  std::vector<Hash32> stack;
  for (const Hash32& root : kept) {
    if (root == kEmptyRoot) continue;
    stack.push_back(root);
    while (!stack.empty()) {
      const Hash32 h = stack.back();
      stack.pop_back();
      if (!nodes.insert(h).second) continue;
      if (nodes.size() + values.size() > options_.max_marked) {
        return absl::ResourceExhaustedError(
            "the kept states hold more than " +
            std::to_string(options_.max_marked) +
            " trie nodes and values: not collected");
      }
      ASSIGN_OR_RETURN(std::optional<Bytes> bytes, store_->Get(nodes_, h));
      if (!bytes.has_value()) {
        return absl::DataLossError("trie node " + HexEncode(h) +
                                   " of kept root " + HexEncode(root) +
                                   " is missing: nothing collected");
      }
      stats.marked_bytes += h.size() + bytes->size();
      ASSIGN_OR_RETURN(TrieNode node, DecodeTrieNode(*bytes));
      for (const TrieItem& it : node.items) {
        if (it.is_ptr) {
          stack.push_back(it.hash);
        } else if (it.blob == nullptr) {
          values.insert(it.hash);
        }
      }
    }
  }
  // The values' sizes, for marked_bytes (one read each; values are few:
  // only those too large to sit in their leaf).
  for (const Hash32& v : values) {
    ASSIGN_OR_RETURN(std::optional<Bytes> bytes, store_->Get(values_, v));
    if (bytes.has_value()) stats.marked_bytes += v.size() + bytes->size();
  }
  stats.kept_roots = roots.size();
  stats.marked_nodes = nodes.size();
  stats.marked_values = values.size();
  stats.mark_seconds = SecondsSince(mark_start);

  // Sweep, a bounded step at a time: the root records first (a reader
  // asking for a state then hears it is gone before its nodes go), then
  // the nodes and the values.
  const Clock::time_point sweep_start = Clock::now();
  struct Column {
    ColumnId id;
    const absl::flat_hash_set<Hash32, Hash32Hasher>* live;
    uint64_t* deleted;
  };
  for (const Column& c : {Column{roots_, &roots, &stats.roots_deleted},
                          Column{nodes_, &nodes, &stats.nodes_deleted},
                          Column{values_, &values, &stats.values_deleted}}) {
    Bytes from;
    bool more = true;
    while (more) {
      if (stop != nullptr && stop->load()) return stats;
      WriteBatch dead;
      size_t examined = 0;
      uint64_t bytes = 0;
      Bytes last;
      more = false;
      RETURN_IF_ERROR(
          store_->ScanFrom(c.id, from, [&](ByteView key, ByteView value) {
            if (examined == options_.sweep_batch) {
              more = true;
              return false;
            }
            ++examined;
            last.assign(key.begin(), key.end());
            // The roots column also holds "last-root": only hashes are
            // root records.
            if (key.size() == 32 && !c.live->contains(HashOf(key))) {
              dead.Delete(c.id, key);
              bytes += key.size() + value.size();
            }
            return true;
          }));
      if (!dead.empty()) {
        ASSIGN_OR_RETURN(size_t deleted,
                         guard_->Delete(*store_, std::move(dead)));
        *c.deleted += deleted;
        stats.bytes_deleted += bytes;
      }
      if (more) from = Successor(last);
    }
  }
  stats.sweep_seconds = SecondsSince(sweep_start);
  return stats;
}

}  // namespace rnode::rspace

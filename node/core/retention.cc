#include "node/core/retention.h"

#include <algorithm>
#include <set>
#include <utility>

#include "util/logging.h"
#include "util/status_macros.h"

namespace rnode::node {

absl::StatusOr<std::vector<Hash32>> KeptRoots(const casper::dag::DagStore& dag,
                                              rspace::History& history,
                                              int64_t lfb_number,
                                              int64_t keep_numbers,
                                              int64_t* from) {
  std::set<Hash32> roots{history.last_root()};
  for (const Hash32& r : history.RecentRoots()) roots.insert(r);
  auto keep_states = [&](const casper::dag::BlockMeta& meta) {
    roots.insert(meta.pre_state);
    roots.insert(meta.post_state);
    return absl::OkStatus();
  };
  auto keep = [&](const Hash32& block) -> absl::Status {
    absl::StatusOr<std::shared_ptr<const casper::dag::BlockMeta>> meta =
        dag.Meta(block);
    // Not stored (a block below the floor, deleted meanwhile).
    if (absl::IsNotFound(meta.status())) return absl::OkStatus();
    if (!meta.ok()) return meta.status();
    return keep_states(**meta);
  };
  const int64_t lowest = std::max<int64_t>(0, lfb_number - keep_numbers);
  if (from != nullptr) *from = lowest;
  RETURN_IF_ERROR(dag.ForEachMetaFrom(lowest, keep_states));
  for (const Hash32& h : dag.AtHeight(0)) RETURN_IF_ERROR(keep(h));
  for (const Hash32& h : dag.Tips()) RETURN_IF_ERROR(keep(h));
  for (const auto& [validator, h] : dag.LatestMessages()) {
    RETURN_IF_ERROR(keep(h));
  }
  // A state this node does not hold is not kept: one collected already, or
  // one it never had (a node that joined from a state holds the states of
  // the blocks it fetched them for, not those of every block it stores).
  std::vector<Hash32> held;
  for (const Hash32& r : roots) {
    ASSIGN_OR_RETURN(bool has, history.HasRoot(r));
    if (has || r == rspace::kEmptyRoot) held.push_back(r);
  }
  return held;
}

StateRetention::StateRetention(Deps deps, RetentionOptions options)
    : d_(std::move(deps)),
      options_(options),
      collector_(d_.store, d_.columns, d_.guard, options.gc) {}

StateRetention::~StateRetention() { Stop(); }

void StateRetention::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void StateRetention::Stop() {
  stopping_.store(true);
  stop_.Stop();
  if (thread_.joinable()) thread_.join();
}

RetentionCounters StateRetention::counters() const {
  RetentionCounters c;
  {
    MutexLock lock(&mu_);
    c = counters_;
  }
  c.floor = d_.dag->floor().value_or(-1);
  return c;
}

absl::StatusOr<rspace::TrieGcStats> StateRetention::CollectOnce() {
  const std::optional<Hash32> lfb = d_.dag->LastFinalized();
  if (!lfb.has_value()) {
    return absl::FailedPreconditionError("no finalized block yet");
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const casper::dag::BlockMeta> meta,
                   d_.dag->Meta(*lfb));
  // The blocks first: the states of the blocks kept are what stays.
  const auto prune_start = std::chrono::steady_clock::now();
  absl::StatusOr<casper::dag::DagStore::PruneStats> pruned =
      options_.prune_blocks
          ? d_.dag->PruneBelow(meta->block_number - options_.keep_numbers,
                               &stopping_)
          : casper::dag::DagStore::PruneStats{};
  const double prune_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                    prune_start)
          .count();
  if (!pruned.ok()) {
    MutexLock lock(&mu_);
    ++counters_.failures;
    counters_.last_error = pruned.status().ToString();
    return pruned.status();
  }
  int64_t from = 0;
  // The kept roots are read once the collector's guard remembers commits:
  // a block's state committed meanwhile is either named or guarded.
  absl::StatusOr<rspace::TrieGcStats> stats = collector_.Collect(
      [&] {
        return KeptRoots(*d_.dag, *d_.history, meta->block_number,
                         options_.keep_numbers, &from);
      },
      &stopping_);
  MutexLock lock(&mu_);
  if (!stats.ok()) {
    ++counters_.failures;
    counters_.last_error = stats.status().ToString();
    return stats;
  }
  ++counters_.collections;
  counters_.blocks_deleted += pruned->blocks_deleted;
  counters_.block_bytes_deleted += pruned->bytes_deleted;
  counters_.last_blocks_deleted = pruned->blocks_deleted;
  counters_.prune_seconds = prune_seconds;
  counters_.nodes_deleted += stats->nodes_deleted;
  counters_.values_deleted += stats->values_deleted;
  counters_.roots_deleted += stats->roots_deleted;
  counters_.bytes_deleted += stats->bytes_deleted;
  counters_.kept_from = from;
  counters_.kept_roots = stats->kept_roots;
  counters_.marked_nodes = stats->marked_nodes;
  counters_.marked_values = stats->marked_values;
  counters_.marked_bytes = stats->marked_bytes;
  counters_.mark_seconds = stats->mark_seconds;
  counters_.sweep_seconds = stats->sweep_seconds;
  counters_.last_error.clear();
  return stats;
}

void StateRetention::Loop() {
  const int64_t advance =
      options_.min_advance > 0
          ? options_.min_advance
          : std::max<int64_t>(64, options_.keep_numbers / 8);
  while (!stop_.WaitFor(options_.tick)) {
    if (d_.ready && !d_.ready()) continue;
    const std::optional<Hash32> lfb = d_.dag->LastFinalized();
    if (!lfb.has_value()) continue;
    absl::StatusOr<std::shared_ptr<const casper::dag::BlockMeta>> meta =
        d_.dag->Meta(*lfb);
    if (!meta.ok()) continue;
    const int64_t number = (*meta)->block_number;
    const auto now = std::chrono::steady_clock::now();
    // Nothing old to collect yet, or not enough new since the last time.
    if (number <= options_.keep_numbers) continue;
    if (last_lfb_ >= 0 && number - last_lfb_ < advance) continue;
    if (last_lfb_ >= 0 && now - last_at_ < options_.min_interval) continue;
    last_lfb_ = number;
    last_at_ = now;
    absl::StatusOr<rspace::TrieGcStats> stats = CollectOnce();
    if (!stats.ok()) {
      Log("node")->warn("retention: collecting old states failed: {}",
                        stats.status().ToString());
      continue;
    }
    const RetentionCounters c = counters();
    Log("node")->info(
        "retention: kept the blocks and states from #{} ({} roots, {} trie "
        "nodes, {} values, {} bytes); deleted {} blocks in {:.2f} s, {} "
        "nodes, {} values, {} roots ({} bytes) in {:.2f} s (mark {:.2f} s)",
        std::max<int64_t>(0, number - options_.keep_numbers), stats->kept_roots,
        stats->marked_nodes, stats->marked_values, stats->marked_bytes,
        c.last_blocks_deleted, c.prune_seconds, stats->nodes_deleted,
        stats->values_deleted, stats->roots_deleted, stats->bytes_deleted,
        stats->mark_seconds + stats->sweep_seconds, stats->mark_seconds);
  }
}

}  // namespace rnode::node

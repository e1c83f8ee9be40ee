#include "node/core/retention.h"

#include <algorithm>
#include <set>
#include <utility>

#include "util/logging.h"
#include "util/status_macros.h"

namespace rnode::node {

absl::StatusOr<std::vector<Hash32>> KeptRoots(const casper::dag::DagStore& dag,
                                              const rspace::History& history,
                                              int64_t lfb_number,
                                              int64_t keep_numbers,
                                              int64_t* from) {
  std::set<Hash32> roots{history.last_root()};
  auto keep = [&](const Hash32& block) -> absl::Status {
    absl::StatusOr<std::shared_ptr<const casper::dag::BlockMeta>> meta =
        dag.Meta(block);
    // A block pruned meanwhile (not yet: blocks are kept) or not stored.
    if (absl::IsNotFound(meta.status())) return absl::OkStatus();
    if (!meta.ok()) return meta.status();
    roots.insert((*meta)->pre_state);
    roots.insert((*meta)->post_state);
    return absl::OkStatus();
  };
  const int64_t lowest = std::max<int64_t>(0, lfb_number - keep_numbers);
  if (from != nullptr) *from = lowest;
  for (int64_t n = lowest; n <= dag.MaxHeight(); ++n) {
    for (const Hash32& h : dag.AtHeight(n)) RETURN_IF_ERROR(keep(h));
  }
  for (const Hash32& h : dag.AtHeight(0)) RETURN_IF_ERROR(keep(h));
  for (const Hash32& h : dag.Tips()) RETURN_IF_ERROR(keep(h));
  for (const auto& [validator, h] : dag.LatestMessages()) {
    RETURN_IF_ERROR(keep(h));
  }
  return std::vector<Hash32>(roots.begin(), roots.end());
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
  MutexLock lock(&mu_);
  return counters_;
}

absl::StatusOr<rspace::TrieGcStats> StateRetention::CollectOnce() {
  const std::optional<Hash32> lfb = d_.dag->LastFinalized();
  if (!lfb.has_value()) {
    return absl::FailedPreconditionError("no finalized block yet");
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const casper::dag::BlockMeta> meta,
                   d_.dag->Meta(*lfb));
  int64_t from = 0;
  absl::StatusOr<rspace::TrieGcStats> stats;
  {
    ASSIGN_OR_RETURN(std::vector<Hash32> kept,
                     KeptRoots(*d_.dag, *d_.history, meta->block_number,
                               options_.keep_numbers, &from));
    stats = collector_.Collect(kept, &stopping_);
  }
  MutexLock lock(&mu_);
  if (!stats.ok()) {
    ++counters_.failures;
    counters_.last_error = stats.status().ToString();
    return stats;
  }
  ++counters_.collections;
  counters_.nodes_deleted += stats->nodes_deleted;
  counters_.values_deleted += stats->values_deleted;
  counters_.roots_deleted += stats->roots_deleted;
  counters_.bytes_deleted += stats->bytes_deleted;
  counters_.kept_from = from;
  counters_.kept_roots = stats->kept_roots;
  counters_.marked_nodes = stats->marked_nodes;
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
    Log("node")->info(
        "retention: kept the states from #{} ({} roots, {} trie nodes); "
        "deleted {} nodes, {} values, {} roots ({} bytes) in {:.2f} s "
        "(mark {:.2f} s)",
        std::max<int64_t>(0, number - options_.keep_numbers), stats->kept_roots,
        stats->marked_nodes, stats->nodes_deleted, stats->values_deleted,
        stats->roots_deleted, stats->bytes_deleted,
        stats->mark_seconds + stats->sweep_seconds, stats->mark_seconds);
  }
}

}  // namespace rnode::node

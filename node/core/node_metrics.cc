#include "node/core/node_metrics.h"

#include <string>
#include <variant>

#include "rspace/history/trie.h"
#include "rspace/storage/pipelined_store.h"
#include "rspace/storage/rocksdb_store.h"
#include "util/status_macros.h"

namespace rnode::node {
namespace {

std::string Key(ByteView sig) { return std::string(sig.begin(), sig.end()); }

// Finalization of a standalone block takes one proposal; in a shard it
// waits for the others' blocks: 1 ms to 10 min.
constexpr double kFinalitySecondsBuckets[] = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
    2.5,   5,      10,    20,   30,    60,   120, 300,  600};

// Replay per deploy: from a few microseconds up.
constexpr double kPerDeploySecondsBuckets[] = {
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
    0.01,    0.025,    0.05,    0.1,    0.25,    0.5,    1,     2.5,    5};

// The steps of casper::merge::Merge, in MergeMetrics order.
constexpr std::string_view kMergeSteps[] = {
    "index",   "branches",     "conflicts", "rejection",
    "combine", "trie_actions", "apply"};

// A gauge of one field of what `read` returns (RocksDbStore::Memory,
// ::Disk).
template <typename Parts>
struct PartGauge {
  const char* name;
  const char* help;
  uint64_t Parts::*field;
};

// Registers one gauge per entry of `gauges`, each reading its field of
// read() at every scrape.
template <typename Parts, size_t N, typename Read>
absl::Status AddPartGauges(metrics::Registry* r,
                           const PartGauge<Parts> (&gauges)[N], Read read) {
  for (const PartGauge<Parts>& g : gauges) {
    RETURN_IF_ERROR(r->AddCallbackGauge(
        g.name, g.help, [read, field = g.field]() -> absl::StatusOr<double> {
          return static_cast<double>(read().*field);
        }));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<NodeMetrics>> NodeMetrics::Create(
    metrics::Registry* r) {
  std::unique_ptr<NodeMetrics> m(new NodeMetrics);
  ASSIGN_OR_RETURN(m->deploys_received_,
                   r->AddCounter("rnode_deploys_received_total",
                                 "Deploys admitted into the pool"));
  ASSIGN_OR_RETURN(m->deploys_refused_,
                   r->AddCounterFamily(
                       "rnode_deploys_refused_total",
                       "Deploys refused at admission, by reason", {"reason"}));
  ASSIGN_OR_RETURN(
      m->not_buffered_,
      r->AddCounterFamily("casper_peer_blocks_not_buffered_total",
                          "Peer blocks with missing dependencies that did not "
                          "wait for them, by reason: unbonded (the sender is "
                          "bonded in no state this node knows), full (the "
                          "buffer's budgets), expired (waited out the time "
                          "to live), ahead (far above this node's highest "
                          "block: it catches up by height)",
                          {"reason"}));
  ASSIGN_OR_RETURN(m->deploys_expired_,
                   r->AddCounter("rnode_deploys_expired_total",
                                 "Deploys dropped from the pool unincluded "
                                 "because their validity window closed"));
  ASSIGN_OR_RETURN(
      m->deploys_left_out_,
      r->AddCounterFamily("rnode_deploys_left_out_total",
                          "Deploys a block this node made left out and dropped "
                          "from the pool (reported failed): unpaid (the "
                          "deployer could not pay the precharge), too_large (a "
                          "block with it alone is over max-block-bytes)",
                          {"reason"}));
  ASSIGN_OR_RETURN(m->deploys_finalized_,
                   r->AddCounter("rnode_deploys_finalized_total",
                                 "Deploys in newly finalized blocks"));
  ASSIGN_OR_RETURN(
      m->inclusion_seconds_,
      r->AddHistogram("rnode_deploy_inclusion_seconds",
                      "From a deploy's admission to the first stored block "
                      "holding it",
                      metrics::kLatencySecondsBuckets));
  ASSIGN_OR_RETURN(
      m->finalization_seconds_,
      r->AddHistogram("rnode_deploy_finalization_seconds",
                      "From a deploy's admission to the finalization of a "
                      "block holding it",
                      kFinalitySecondsBuckets));
  ASSIGN_OR_RETURN(m->consensus_busy_,
                   r->AddCounter("rnode_consensus_busy_total",
                                 "Requests refused because the consensus "
                                 "thread's queue was full"));
  ASSIGN_OR_RETURN(m->consensus_idle_,
                   r->AddCounter("rnode_consensus_idle_total",
                                 "Times the consensus thread found nothing "
                                 "due and slept (until a task, a peer block, "
                                 "housekeeping or a block coming due)"));
  ASSIGN_OR_RETURN(m->proposed_,
                   r->AddCounterFamily("casper_propose_total",
                                       "Proposals by result (created, empty, "
                                       "error)",
                                       {"result"}));
  ASSIGN_OR_RETURN(m->propose_seconds_,
                   r->AddHistogram("casper_propose_duration_seconds",
                                   "Time to create, validate and store one of "
                                   "this node's blocks",
                                   metrics::kLatencySecondsBuckets));
  ASSIGN_OR_RETURN(m->validated_,
                   r->AddCounterFamily("casper_blocks_validated_total",
                                       "Blocks validated, by verdict (valid, "
                                       "invalid, missing_dependency, internal)",
                                       {"verdict"}));
  ASSIGN_OR_RETURN(m->validation_seconds_,
                   r->AddHistogram("casper_block_validation_seconds",
                                   "Validation of one block, replay included",
                                   metrics::kLatencySecondsBuckets));
  ASSIGN_OR_RETURN(
      m->replay_seconds_per_deploy_,
      r->AddHistogram("casper_block_validation_seconds_per_deploy",
                      "Validation time of a valid block divided by its user "
                      "deploys (blocks with deploys only)",
                      kPerDeploySecondsBuckets));
  ASSIGN_OR_RETURN(m->blocks_added_,
                   r->AddCounter("casper_blocks_added_total",
                                 "Valid blocks stored in the DAG"));
  ASSIGN_OR_RETURN(
      m->blocks_finalized_,
      r->AddCounter("casper_blocks_finalized_total", "Blocks newly finalized"));
  ASSIGN_OR_RETURN(m->deploys_in_blocks_,
                   r->AddCounter("casper_block_deploys_total",
                                 "User deploys in stored blocks"));
  ASSIGN_OR_RETURN(m->produces_,
                   r->AddCounter("rspace_produce_total",
                                 "Produce events in stored blocks' deploys"));
  ASSIGN_OR_RETURN(m->consumes_,
                   r->AddCounter("rspace_consume_total",
                                 "Consume events in stored blocks' deploys"));
  ASSIGN_OR_RETURN(m->comms_,
                   r->AddCounter("rspace_comm_total",
                                 "COMM events in stored blocks' deploys"));
  ASSIGN_OR_RETURN(m->merges_,
                   r->AddCounter("casper_merges_total",
                                 "Merges of multi-parent pre-states"));
  ASSIGN_OR_RETURN(m->merge_rejected_deploys_,
                   r->AddCounter("casper_merge_rejected_deploys_total",
                                 "Deploys the merges rejected"));
  ASSIGN_OR_RETURN(
      metrics::Family<metrics::Histogram> * steps,
      r->AddHistogramFamily("casper_merge_step_seconds",
                            "Time of each step of a merge (docs/merge.md)",
                            {"step"}, metrics::kLatencySecondsBuckets));
  for (std::string_view step : kMergeSteps) {
    std::string_view labels[] = {step};
    ASSIGN_OR_RETURN(metrics::Histogram * h, steps->WithLabels(labels));
    m->merge_steps_.push_back(h);
  }
  return m;
}

absl::Status NodeMetrics::Attach(metrics::Registry* r,
                                 const casper::dag::DagStore* dag,
                                 const casper::pool::DeployPool* pool,
                                 std::function<size_t()> consensus_queue) {
  RETURN_IF_ERROR(
      r->AddCallbackGauge("casper_last_finalized_block_number",
                          "Number of the last finalized block (-1: none)",
                          [dag]() -> absl::StatusOr<double> {
                            std::optional<Hash32> lfb = dag->LastFinalized();
                            if (!lfb.has_value()) return -1.0;
                            ASSIGN_OR_RETURN(const auto meta, dag->Meta(*lfb));
                            return static_cast<double>(meta->block_number);
                          }));
  RETURN_IF_ERROR(r->AddCallbackGauge(
      "casper_latest_block_number", "Highest block number in the DAG",
      [dag]() -> absl::StatusOr<double> {
        return static_cast<double>(dag->MaxHeight());
      }));
  RETURN_IF_ERROR(r->AddCallbackGauge("casper_dag_blocks",
                                      "Blocks stored in the DAG",
                                      [dag]() -> absl::StatusOr<double> {
                                        return static_cast<double>(dag->size());
                                      }));
  RETURN_IF_ERROR(r->AddCallbackGauge(
      "casper_dag_window_blocks",
      "Blocks whose metadata the DAG holds in memory (its window)",
      [dag]() -> absl::StatusOr<double> {
        return static_cast<double>(dag->window_size());
      }));
  RETURN_IF_ERROR(r->AddCallbackGauge(
      "rnode_deploy_pool_size", "Deploys waiting in the pool",
      [pool]() -> absl::StatusOr<double> {
        return static_cast<double>(pool->size());
      }));
  RETURN_IF_ERROR(r->AddCallbackGauge(
      "rnode_deploy_pool_term_bytes", "Bytes of terms waiting in the pool",
      [pool]() -> absl::StatusOr<double> {
        return static_cast<double>(pool->term_bytes());
      }));
  return r->AddCallbackGauge(
      "rnode_consensus_queue_depth",
      "Requests waiting for the consensus thread",
      [fn = std::move(consensus_queue)]() -> absl::StatusOr<double> {
        return static_cast<double>(fn());
      });
}

absl::Status NodeMetrics::AttachStorage(metrics::Registry* r,
                                        const rspace::RocksDbStore* store,
                                        const rspace::PipelinedStore* pipelined,
                                        const rspace::MerkleTrie* trie) {
  struct Stat {
    const char* name;
    const char* help;
    double (*value)(const rspace::PipelinedStoreStats&);
  };
  static constexpr Stat kStats[] = {
      {"rnode_store_pipelined_writes_total",
       "Merge writes accepted to land in the background",
       [](const rspace::PipelinedStoreStats& s) {
         return static_cast<double>(s.async_writes);
       }},
      {"rnode_store_pipelined_write_seconds_total",
       "Time the store's worker spent landing them",
       [](const rspace::PipelinedStoreStats& s) {
         return static_cast<double>(s.background_ns) / 1e9;
       }},
      {"rnode_store_pipelined_wait_seconds_total",
       "Time later writes waited for a background write to land",
       [](const rspace::PipelinedStoreStats& s) {
         return static_cast<double>(s.wait_ns) / 1e9;
       }},
      {"rnode_store_pipelined_failures_total",
       "Background writes and their retries that failed (a full disk)",
       [](const rspace::PipelinedStoreStats& s) {
         return static_cast<double>(s.failed_writes);
       }},
  };
  for (const Stat& stat : kStats) {
    RETURN_IF_ERROR(r->AddCallbackCounter(
        stat.name, stat.help,
        [pipelined, value = stat.value]() -> absl::StatusOr<double> {
          return value(pipelined->stats());
        }));
  }
  static constexpr PartGauge<rspace::RocksDbMemory> kMemory[] = {
      {"rnode_rocksdb_memtable_bytes",
       "Bytes in RocksDB's write buffers (all column families)",
       &rspace::RocksDbMemory::memtables},
      {"rnode_rocksdb_table_readers_bytes",
       "Bytes of RocksDB index and filter blocks held outside the cache",
       &rspace::RocksDbMemory::table_readers},
      {"rnode_rocksdb_block_cache_bytes",
       "Bytes charged to RocksDB's block cache",
       &rspace::RocksDbMemory::block_cache},
      {"rnode_rocksdb_block_cache_capacity_bytes",
       "The bound of RocksDB's block cache",
       &rspace::RocksDbMemory::block_cache_capacity},
  };
  RETURN_IF_ERROR(
      AddPartGauges(r, kMemory, [store] { return store->Memory(); }));
  RETURN_IF_ERROR(r->AddCallbackGauge(
      "rnode_rocksdb_wal_bytes", "Bytes of RocksDB's live write-ahead logs",
      [store]() -> absl::StatusOr<double> {
        return static_cast<double>(store->WalBytes());
      }));
  static constexpr PartGauge<rspace::RocksDbDisk> kDisk[] = {
      {"rnode_rocksdb_table_bytes", "Bytes of RocksDB's table files",
       &rspace::RocksDbDisk::tables},
      {"rnode_rocksdb_live_data_bytes",
       "RocksDB's estimate of the table bytes left after a full compaction",
       &rspace::RocksDbDisk::live_data},
  };
  RETURN_IF_ERROR(AddPartGauges(r, kDisk, [store] { return store->Disk(); }));
  return r->AddCallbackGauge("rnode_trie_cache_bytes",
                             "Bytes of trie nodes in the history's cache",
                             [trie]() -> absl::StatusOr<double> {
                               return static_cast<double>(trie->CachedBytes());
                             });
}

void NodeMetrics::DeployAdmitted(const Bytes& sig) {
  deploys_received_->Inc();
  MutexLock lock(&mu_);
  if (tracked_.size() >= kMaxTrackedDeploys) {
    // Forget the included ones first: they only wait for finality.
    for (auto it = tracked_.begin(); it != tracked_.end();) {
      it = it->second.included ? tracked_.erase(it) : std::next(it);
    }
    if (tracked_.size() >= kMaxTrackedDeploys) tracked_.clear();
  }
  tracked_[Key(sig)] = Tracked{Clock::now(), false};
}

void NodeMetrics::DeployRefused(std::string_view reason) {
  std::string_view labels[] = {reason};
  absl::StatusOr<metrics::Counter*> c = deploys_refused_->WithLabels(labels);
  if (c.ok()) (*c)->Inc();
}

void NodeMetrics::BlocksNotBuffered(std::string_view reason, uint64_t n) {
  if (n == 0) return;
  std::string_view labels[] = {reason};
  absl::StatusOr<metrics::Counter*> c = not_buffered_->WithLabels(labels);
  if (c.ok()) (*c)->Inc(n);
}

void NodeMetrics::DeploysExpired(size_t n) { deploys_expired_->Inc(n); }
void NodeMetrics::DeployLeftOut(std::string_view reason) {
  std::string_view labels[] = {reason};
  absl::StatusOr<metrics::Counter*> c = deploys_left_out_->WithLabels(labels);
  if (c.ok()) (*c)->Inc();
}

void NodeMetrics::ConsensusBusy() { consensus_busy_->Inc(); }

void NodeMetrics::ConsensusIdle() { consensus_idle_->Inc(); }

void NodeMetrics::Proposed(std::string_view result, double seconds) {
  std::string_view labels[] = {result};
  absl::StatusOr<metrics::Counter*> c = proposed_->WithLabels(labels);
  if (c.ok()) (*c)->Inc();
  if (result == "created") propose_seconds_->Observe(seconds);
}

void NodeMetrics::BlockValidated(const casper::block::Block& block,
                                 const casper::validation::Verdict& verdict,
                                 double seconds) {
  std::string_view name = "valid";
  switch (verdict.kind) {
    case casper::validation::Verdict::Kind::kValid:
      name = "valid";
      break;
    case casper::validation::Verdict::Kind::kInvalid:
      name = "invalid";
      break;
    case casper::validation::Verdict::Kind::kMissingDependency:
      name = "missing_dependency";
      break;
    case casper::validation::Verdict::Kind::kInternal:
      name = "internal";
      break;
    case casper::validation::Verdict::Kind::kStale:
      name = "stale";
      break;
  }
  std::string_view labels[] = {name};
  absl::StatusOr<metrics::Counter*> c = validated_->WithLabels(labels);
  if (c.ok()) (*c)->Inc();
  if (!verdict.valid()) return;
  validation_seconds_->Observe(seconds);
  if (!block.body.deploys.empty()) {
    replay_seconds_per_deploy_->Observe(
        seconds / static_cast<double>(block.body.deploys.size()));
  }
}

void NodeMetrics::Merged(const casper::merge::MergeMetrics& merge) {
  merges_->Inc();
  merge_rejected_deploys_->Inc(merge.rejected_deploys);
  const int64_t ns[] = {merge.index_ns,     merge.branches_ns,
                        merge.conflicts_ns, merge.rejection_ns,
                        merge.combine_ns,   merge.trie_actions_ns,
                        merge.apply_ns};
  for (size_t i = 0; i < merge_steps_.size(); ++i) {
    merge_steps_[i]->Observe(static_cast<double>(ns[i]) * 1e-9);
  }
}

void NodeMetrics::BlockAdded(const casper::block::Block& block) {
  blocks_added_->Inc();
  deploys_in_blocks_->Inc(block.body.deploys.size());
  uint64_t produces = 0, consumes = 0, comms = 0;
  for (const auto& d : block.body.deploys) {
    for (const rspace::Event& e : d.events) {
      if (std::holds_alternative<rspace::ProduceEvent>(e)) {
        ++produces;
      } else if (std::holds_alternative<rspace::ConsumeEvent>(e)) {
        ++consumes;
      } else {
        ++comms;
      }
    }
  }
  produces_->Inc(produces);
  consumes_->Inc(consumes);
  comms_->Inc(comms);
  const Clock::time_point now = Clock::now();
  MutexLock lock(&mu_);
  for (const auto& d : block.body.deploys) {
    auto it = tracked_.find(Key(d.sig));
    if (it == tracked_.end() || it->second.included) continue;
    it->second.included = true;
    inclusion_seconds_->Observe(
        std::chrono::duration<double>(now - it->second.admitted).count());
  }
}

void NodeMetrics::Finalized(size_t blocks, std::span<const Bytes> deploys) {
  blocks_finalized_->Inc(blocks);
  deploys_finalized_->Inc(deploys.size());
  const Clock::time_point now = Clock::now();
  MutexLock lock(&mu_);
  for (const Bytes& sig : deploys) {
    auto it = tracked_.find(Key(sig));
    if (it == tracked_.end()) continue;
    finalization_seconds_->Observe(
        std::chrono::duration<double>(now - it->second.admitted).count());
    tracked_.erase(it);
  }
}

}  // namespace rnode::node

// The node's own metrics (names and meanings: docs/metrics.md), updated by
// the node's consensus thread and its deploy admission.
#ifndef RNODE_NODE_CORE_NODE_METRICS_H_
#define RNODE_NODE_CORE_NODE_METRICS_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "casper/dag/dag_store.h"
#include "casper/merge/merger.h"
#include "casper/pool/deploy_pool.h"
#include "casper/validation/validator.h"
#include "node/metrics/metrics.h"
#include "util/bytes.h"
#include "util/mutex.h"

namespace rnode::rspace {
class MerkleTrie;
class PipelinedStore;
class RocksDbStore;
}  // namespace rnode::rspace

namespace rnode::node {

// Admission times remembered for latency histograms; beyond it the oldest
// are forgotten (their latencies are then not observed). Twice the
// default pool size: deploys leave the map when finalized or expired.
inline constexpr size_t kMaxTrackedDeploys = 40'000;

class NodeMetrics {
 public:
  // Registers the node's families in `registry` (not owned; outlives this).
  static absl::StatusOr<std::unique_ptr<NodeMetrics>> Create(
      metrics::Registry* registry);

  // Registers the gauges computed from the node's state. The pointers are
  // not owned and must outlive the registry's renders.
  absl::Status Attach(metrics::Registry* registry,
                      const casper::dag::DagStore* dag,
                      const casper::pool::DeployPool* pool,
                      std::function<size_t()> consensus_queue);

  // Registers the storage's memory gauges (RocksDB's memtables, table
  // readers and block cache; the trie node cache). Not owned; must outlive
  // the registry's renders.
  absl::Status AttachStorage(metrics::Registry* registry,
                             const rspace::RocksDbStore* store,
                             const rspace::PipelinedStore* pipelined,
                             const rspace::MerkleTrie* trie);

  void DeployAdmitted(const Bytes& sig);
  void DeployRefused(std::string_view reason);
  void DeploysExpired(size_t n);
  // A deploy a block this node made left out and dropped from the pool:
  // `reason` "unpaid" or "too_large".
  void DeployLeftOut(std::string_view reason);
  void ConsensusBusy();
  // The consensus thread found nothing due and slept.
  void ConsensusIdle();
  void Proposed(std::string_view result, double seconds);
  void BlockValidated(const casper::block::Block& block,
                      const casper::validation::Verdict& verdict,
                      double seconds);
  void BlockAdded(const casper::block::Block& block);
  // Peer blocks with missing dependencies that did not wait for them:
  // "unbonded" (sender bonded nowhere this node knows), "full" (the
  // buffer's budgets), "expired" (waited out the time to live).
  void BlocksNotBuffered(std::string_view reason, uint64_t n = 1);
  void Finalized(size_t blocks, std::span<const Bytes> deploys);
  // One merge of a multi-parent pre-state (the pre-state builder's
  // observer).
  void Merged(const casper::merge::MergeMetrics& merge);

 private:
  using Clock = std::chrono::steady_clock;
  NodeMetrics() = default;

  metrics::Counter* deploys_received_ = nullptr;
  metrics::Family<metrics::Counter>* deploys_refused_ = nullptr;
  metrics::Counter* deploys_expired_ = nullptr;
  metrics::Family<metrics::Counter>* deploys_left_out_ = nullptr;
  metrics::Counter* deploys_finalized_ = nullptr;
  metrics::Histogram* inclusion_seconds_ = nullptr;
  metrics::Histogram* finalization_seconds_ = nullptr;
  metrics::Counter* consensus_busy_ = nullptr;
  metrics::Counter* consensus_idle_ = nullptr;
  metrics::Family<metrics::Counter>* proposed_ = nullptr;
  metrics::Histogram* propose_seconds_ = nullptr;
  metrics::Family<metrics::Counter>* validated_ = nullptr;
  metrics::Histogram* validation_seconds_ = nullptr;
  metrics::Histogram* replay_seconds_per_deploy_ = nullptr;
  metrics::Counter* blocks_added_ = nullptr;
  metrics::Family<metrics::Counter>* not_buffered_ = nullptr;
  metrics::Counter* blocks_finalized_ = nullptr;
  metrics::Counter* deploys_in_blocks_ = nullptr;
  metrics::Counter* produces_ = nullptr;
  metrics::Counter* consumes_ = nullptr;
  metrics::Counter* comms_ = nullptr;
  metrics::Counter* merges_ = nullptr;
  metrics::Counter* merge_rejected_deploys_ = nullptr;
  // casper_merge_step_seconds by step, in MergeMetrics order.
  std::vector<metrics::Histogram*> merge_steps_;

  struct Tracked {
    Clock::time_point admitted;
    bool included = false;
  };
  Mutex mu_;
  std::unordered_map<std::string, Tracked> tracked_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_NODE_METRICS_H_

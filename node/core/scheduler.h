// The consensus thread's schedule (docs/node.md "Threads"): one thread
// runs everything that plays on the tuple space (client tasks, peer
// blocks, housekeeping, proposals), and this class decides which comes
// next and when a block is due: a batch window after the first waiting
// deploy, no sooner than the minimum interval after this node's last
// block unless a full block waits, at once for a slash, and an empty block
// when finality waits for one.
#ifndef RNODE_NODE_CORE_SCHEDULER_H_
#define RNODE_NODE_CORE_SCHEDULER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "node/core/node_metrics.h"
#include "util/bytes.h"
#include "util/mutex.h"
#include "util/status_macros.h"

namespace rnode::node {

// Most tasks waiting for the consensus thread (propose requests,
// exploratory deploys); more are answered "busy". Each is a client
// request already holding one of the API servers' in-flight permits, so
// the bound only matters when several servers push at once.
inline constexpr size_t kMaxConsensusTasks = 256;

// Blocks from peers waiting for the engine at most.
inline constexpr size_t kMaxBlocksWaiting = 64;

// What the consensus thread does; called on it only.
class ConsensusWork {
 public:
  virtual ~ConsensusWork() = default;
  virtual void OnPeerBlock(const casper::block::Block& block) = 0;
  // Every kHousekeepingInterval.
  virtual void Housekeeping() = 0;
  // Makes a block: of the pool's deploys (a block only if there is
  // something to put in it), or an empty one for finality (`empty`; none
  // when nothing waits for finality any more).
  virtual absl::StatusOr<Hash32> ProposeScheduled(bool empty) = 0;
  // Deploys in the pool (any thread).
  virtual size_t pooled() const = 0;
};

struct SchedulerOptions {
  // casper.propose-batch-window-ms: how long the first waiting deploy
  // waits for others to share its block.
  std::chrono::milliseconds batch_window{0};
  // casper.min-block-interval-ms: spacing of this node's blocks.
  std::chrono::milliseconds min_interval{0};
  // A block's worth of deploys (max-user-deploys-per-block): does not wait
  // for the minimum interval.
  uint64_t full_block = 0;
  // Proposes by itself (autopropose with a validator key).
  bool proposer = false;
};

// Thread-safe. Lock order: the scheduler's mutex is a leaf except for the
// pool's size read under it (ConsensusWork::pooled).
class ConsensusScheduler {
 public:
  // `metrics` (not owned) counts refused tasks and idle waits.
  ConsensusScheduler(SchedulerOptions options, NodeMetrics* metrics);
  ~ConsensusScheduler();  // RequestStop() and Join().
  ConsensusScheduler(const ConsensusScheduler&) = delete;
  ConsensusScheduler& operator=(const ConsensusScheduler&) = delete;

  // Starts the consensus thread on `work` (not owned; outlives Join()).
  // `waiting`: deploys already in the pool, proposed after a batch window.
  void Start(ConsensusWork* work, size_t waiting);
  // The thread leaves after its current item, Post answers Unavailable,
  // and a QueuePeerBlock waiting for room returns. Idempotent.
  void RequestStop();
  // Waits for the thread (after RequestStop), then answers the tasks still
  // queued with false. Idempotent.
  void Join();
  // True from Start until RequestStop.
  bool ready() const;

  // Posts `task` for the consensus thread: it runs with true there, or
  // with false when the node stops first. Unavailable when stopping or
  // when kMaxConsensusTasks wait.
  absl::Status Post(std::function<void(bool)> task);
  // Runs `fn` on the consensus thread and returns its result; Unavailable
  // as Post, or when the node stops before it runs.
  template <typename T>
  absl::StatusOr<T> Call(std::function<absl::StatusOr<T>()> fn);

  // A block from a peer for the consensus thread; waits while
  // kMaxBlocksWaiting wait (back-pressure to the transport's stream
  // dispatcher). Dropped when stopping.
  void QueuePeerBlock(casper::block::Block block);
  size_t queued_blocks() const;
  size_t queued_tasks() const;

  // A client's deploy is being admitted: not yet counted waiting, and left
  // out of the proposer's recount of the pool (regression: one counted
  // twice passed for a full block and broke the block interval).
  // AdmissionEnded(true) counts it waiting.
  void AdmissionStarted();
  void AdmissionEnded(bool admitted);
  // `n` deploys were pooled here by a takeover.
  void DeploysArrived(size_t n);
  // Finality waits for a block of this node: an empty block is due after
  // a batch window (and the minimum interval). No-op if already wanted.
  void WantFinality();
  // A peer's block was invalid: a block is due now (it carries the slash).
  void WantSlash();

 private:
  using Clock = std::chrono::steady_clock;
  enum class Propose { kNone, kDeploys, kEmpty };
  // What the loop does next: a task, a block, housekeeping or a proposal.
  struct Next {
    std::function<void(bool)> task;
    std::optional<casper::block::Block> block;
    bool housekeeping = false;
    Propose propose = Propose::kNone;
  };
  void Loop();
  // Waits for the next item; nullopt when stopping.
  std::optional<Next> WaitForNext();
  // Whether a proposal is due now; else lowers `wake` to when it is.
  Propose ProposalDue(Clock::time_point now, Clock::time_point* wake)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AfterProposal(const absl::StatusOr<Hash32>& made);

  const SchedulerOptions options_;
  NodeMetrics* const metrics_;
  ConsensusWork* work_ = nullptr;  // set by Start
  std::thread thread_;

  mutable Mutex mu_;
  CondVar cv_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::function<void(bool)>> tasks_ ABSL_GUARDED_BY(mu_);
  std::deque<casper::block::Block> blocks_in_ ABSL_GUARDED_BY(mu_);
  // Finality waits for a block of this node, since when.
  bool finality_wanted_ ABSL_GUARDED_BY(mu_) = false;
  Clock::time_point finality_since_ ABSL_GUARDED_BY(mu_){};
  bool slash_wanted_ ABSL_GUARDED_BY(mu_) = false;
  // Deploys admitted since the proposer last looked, and when the first
  // of them came; deploys being admitted (AdmissionStarted).
  uint64_t deploys_waiting_ ABSL_GUARDED_BY(mu_) = 0;
  Clock::time_point first_waiting_ ABSL_GUARDED_BY(mu_){};
  uint64_t deploys_admitting_ ABSL_GUARDED_BY(mu_) = 0;
  // Consensus thread only: when the next housekeeping is due, when this
  // node last made a block (none yet: nothing to space from; the steady
  // clock's epoch is the machine's boot, which may be less than the
  // minimum interval ago), and a pool whose deploys no block could take
  // (future validAfterBlockNumber) to look at again.
  Clock::time_point next_housekeeping_{};
  std::optional<Clock::time_point> last_made_;
  bool retry_later_ = false;
  Clock::time_point retry_at_{};
};

template <typename T>
absl::StatusOr<T> ConsensusScheduler::Call(
    std::function<absl::StatusOr<T>()> fn) {
  auto promise = std::make_shared<std::promise<absl::StatusOr<T>>>();
  std::future<absl::StatusOr<T>> result = promise->get_future();
  RETURN_IF_ERROR(Post([promise, fn = std::move(fn)](bool run) {
    promise->set_value(run ? fn()
                           : absl::UnavailableError("the node is stopping"));
  }));
  return result.get();
}

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_SCHEDULER_H_

#include "node/core/scheduler.h"

#include <algorithm>
#include <utility>

namespace rnode::node {
namespace {

// How often the consensus thread looks at the heartbeat and the deploys
// peers gossiped.
constexpr auto kHousekeepingInterval = std::chrono::seconds(1);

// How often an idle consensus thread looks again at a pool whose deploys
// could not go in a block (future validAfterBlockNumber): they may fit a
// later block only.
constexpr auto kProposeRetry = std::chrono::seconds(1);

}  // namespace

ConsensusScheduler::ConsensusScheduler(SchedulerOptions options,
                                       NodeMetrics* metrics)
    : options_(options), metrics_(metrics) {}

ConsensusScheduler::~ConsensusScheduler() {
  RequestStop();
  Join();
}

void ConsensusScheduler::Start(ConsensusWork* work, size_t waiting) {
  work_ = work;
  {
    MutexLock lock(&mu_);
    running_ = true;
    if (waiting > 0) {
      deploys_waiting_ = waiting;
      first_waiting_ = Clock::now();
    }
  }
  thread_ = std::thread([this] { Loop(); });
}

void ConsensusScheduler::RequestStop() {
  MutexLock lock(&mu_);
  stopping_ = true;
  cv_.SignalAll();
}

void ConsensusScheduler::Join() {
  if (thread_.joinable()) thread_.join();
  // Tasks still queued are answered rather than left waiting.
  std::deque<std::function<void(bool)>> left;
  {
    MutexLock lock(&mu_);
    left.swap(tasks_);
    running_ = false;
  }
  for (auto& t : left) t(false);
}

bool ConsensusScheduler::ready() const {
  MutexLock lock(&mu_);
  return running_ && !stopping_;
}

absl::Status ConsensusScheduler::Post(std::function<void(bool)> task) {
  MutexLock lock(&mu_);
  if (stopping_ || !running_) {
    return absl::UnavailableError("the node is not running");
  }
  if (tasks_.size() >= kMaxConsensusTasks) {
    metrics_->ConsensusBusy();
    return absl::UnavailableError(
        "busy: too many requests wait for the "
        "consensus thread; retry later");
  }
  tasks_.push_back(std::move(task));
  cv_.SignalAll();
  return absl::OkStatus();
}

void ConsensusScheduler::QueuePeerBlock(casper::block::Block block) {
  MutexLock lock(&mu_);
  while (!stopping_ && blocks_in_.size() >= kMaxBlocksWaiting) {
    cv_.Wait(&mu_);
  }
  if (stopping_) return;
  blocks_in_.push_back(std::move(block));
  cv_.SignalAll();
}

size_t ConsensusScheduler::queued_blocks() const {
  MutexLock lock(&mu_);
  return blocks_in_.size();
}

size_t ConsensusScheduler::queued_tasks() const {
  MutexLock lock(&mu_);
  return tasks_.size();
}

void ConsensusScheduler::AdmissionStarted() {
  MutexLock lock(&mu_);
  ++deploys_admitting_;
}

void ConsensusScheduler::AdmissionEnded(bool admitted) {
  MutexLock lock(&mu_);
  --deploys_admitting_;
  if (!admitted) return;
  if (deploys_waiting_ == 0) first_waiting_ = Clock::now();
  ++deploys_waiting_;
  cv_.SignalAll();
}

void ConsensusScheduler::DeploysArrived(size_t n) {
  MutexLock lock(&mu_);
  if (deploys_waiting_ == 0) first_waiting_ = Clock::now();
  deploys_waiting_ += n;
}

void ConsensusScheduler::WantFinality() {
  MutexLock lock(&mu_);
  if (finality_wanted_) return;
  finality_wanted_ = true;
  finality_since_ = Clock::now();
  cv_.SignalAll();
}

void ConsensusScheduler::WantSlash() {
  MutexLock lock(&mu_);
  slash_wanted_ = true;
  cv_.SignalAll();
}

void ConsensusScheduler::Loop() {
  next_housekeeping_ = Clock::now() + kHousekeepingInterval;
  for (;;) {
    std::optional<Next> next = WaitForNext();
    if (!next.has_value()) return;
    if (next->task) {
      next->task(true);
    } else if (next->block.has_value()) {
      work_->OnPeerBlock(*next->block);
    } else if (next->housekeeping) {
      work_->Housekeeping();
    } else if (next->propose != Propose::kNone) {
      AfterProposal(work_->ProposeScheduled(next->propose == Propose::kEmpty));
    }
  }
}

std::optional<ConsensusScheduler::Next> ConsensusScheduler::WaitForNext() {
  Next next;
  MutexLock lock(&mu_);
  for (;;) {
    if (stopping_) return std::nullopt;
    if (!tasks_.empty()) {
      next.task = std::move(tasks_.front());
      tasks_.pop_front();
      return next;
    }
    const auto now = Clock::now();
    if (now >= next_housekeeping_) {
      next.housekeeping = true;
      next_housekeeping_ = now + kHousekeepingInterval;
      return next;
    }
    if (!blocks_in_.empty()) {
      next.block = std::move(blocks_in_.front());
      blocks_in_.pop_front();
      cv_.SignalAll();  // room for the dispatcher
      return next;
    }
    auto wake = next_housekeeping_;
    next.propose = ProposalDue(now, &wake);
    if (next.propose != Propose::kNone) return next;
    metrics_->ConsensusIdle();
    cv_.WaitUntil(&mu_, wake);
  }
}

ConsensusScheduler::Propose ConsensusScheduler::ProposalDue(
    Clock::time_point now, Clock::time_point* wake) {
  if (!options_.proposer) return Propose::kNone;
  // Not sooner than the minimum interval after this node's last block: at
  // tens of blocks a second the block height outruns the deploys'
  // 50-block lifespan, and every block costs each peer a replay. A full
  // block's worth of deploys does not wait for it.
  const auto spaced = last_made_.has_value()
                          ? *last_made_ + options_.min_interval
                          : Clock::time_point::min();
  if (deploys_waiting_ > 0) {
    const auto due =
        deploys_waiting_ >= options_.full_block
            ? first_waiting_ + options_.batch_window
            : std::max(first_waiting_ + options_.batch_window, spaced);
    if (now >= due) {
      deploys_waiting_ = 0;
      return Propose::kDeploys;
    }
    *wake = std::min(*wake, due);
  }
  if (retry_later_) {
    if (now >= retry_at_) {
      retry_later_ = false;
      return Propose::kDeploys;
    }
    *wake = std::min(*wake, retry_at_);
  }
  if (slash_wanted_) {
    slash_wanted_ = false;
    return Propose::kDeploys;  // a block only if it has a slash
  }
  if (finality_wanted_) {
    const auto due = std::max(finality_since_ + options_.batch_window, spaced);
    if (now >= due) {
      finality_wanted_ = false;
      return Propose::kEmpty;
    }
    *wake = std::min(*wake, due);
  }
  return Propose::kNone;
}

void ConsensusScheduler::AfterProposal(const absl::StatusOr<Hash32>& made) {
  if (!made.ok()) {
    if (work_->pooled() > 0) {
      retry_later_ = true;
      retry_at_ = Clock::now() + kProposeRetry;
    }
    return;
  }
  last_made_ = Clock::now();
  // Deploys beyond one block's cap go in the next one.
  MutexLock lock(&mu_);
  // What is left, counted once: deploys admitted while the block was made
  // are counted already, or are being (and a double count could pass for
  // a full block).
  const size_t pooled = work_->pooled();
  const uint64_t left =
      pooled > deploys_admitting_ ? pooled - deploys_admitting_ : 0;
  if (left > 0) {
    if (deploys_waiting_ == 0) first_waiting_ = Clock::now();
    deploys_waiting_ = std::max<uint64_t>(deploys_waiting_, left);
  }
}

}  // namespace rnode::node

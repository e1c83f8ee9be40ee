#include "node/core/scheduler.h"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "node/metrics/metrics.h"
#include "tests/eventually.h"
#include "util/mutex.h"

namespace rnode::node {
namespace {

using ::rnode::testing::Eventually;
using namespace std::chrono_literals;

// Counts what the scheduler asks of it; every proposal makes a block.
class FakeWork final : public ConsensusWork {
 public:
  void OnPeerBlock(const casper::block::Block&) override { ++blocks; }
  void Housekeeping() override { ++housekeeping; }
  absl::StatusOr<Hash32> ProposeScheduled(bool empty) override {
    (empty ? empty_proposals : proposals)++;
    return Hash32{};
  }
  size_t pooled() const override { return 0; }

  std::atomic<int> blocks{0};
  std::atomic<int> housekeeping{0};
  std::atomic<int> proposals{0};
  std::atomic<int> empty_proposals{0};
};

class SchedulerTest : public ::testing::Test {
 protected:
  void Start(SchedulerOptions options) {
    metrics_ = *NodeMetrics::Create(&registry_);
    scheduler_ = std::make_unique<ConsensusScheduler>(options, metrics_.get());
    scheduler_->Start(&work_, 0);
  }
  // Times the consensus thread found nothing due and slept.
  double Idle() {
    const std::string text = registry_.Render();
    const std::string key = "\nrnode_consensus_idle_total ";
    const size_t at = text.find(key);
    return at == std::string::npos
               ? -1
               : std::strtod(text.c_str() + at + key.size(), nullptr);
  }
  // Waits until the thread has looked at everything and slept again.
  bool LookedAndSlept() {
    const double before = Idle();
    return Eventually([&] { return Idle() >= before + 1; });
  }
  void Admit(int n) {
    for (int i = 0; i < n; ++i) {
      scheduler_->AdmissionStarted();
      scheduler_->AdmissionEnded(true);
    }
  }

  // Keeps the consensus thread in a task until Release().
  bool HoldTheThread() {
    const bool posted = scheduler_
                            ->Post([this](bool) {
                              holding_ = true;
                              MutexLock lock(&mu_);
                              while (!released_) cv_.Wait(&mu_);
                            })
                            .ok();
    return posted && Eventually([&] { return holding_.load(); });
  }
  void Release() {
    MutexLock lock(&mu_);
    released_ = true;
    cv_.SignalAll();
  }
  void TearDown() override { Release(); }

  std::atomic<bool> holding_{false};
  Mutex mu_;
  CondVar cv_;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
  metrics::Registry registry_;
  std::unique_ptr<NodeMetrics> metrics_;
  FakeWork work_;
  std::unique_ptr<ConsensusScheduler> scheduler_;
};

TEST_F(SchedulerTest, ADeployWaitsForTheIntervalUnlessAFullBlockWaits) {
  Start({.batch_window = 0ms,
         .min_interval = 1h,
         .full_block = 3,
         .proposer = true});
  Admit(1);  // no block yet: nothing to space from
  ASSERT_TRUE(Eventually([&] { return work_.proposals == 1; }));
  Admit(2);
  ASSERT_TRUE(LookedAndSlept());
  EXPECT_EQ(work_.proposals, 1);  // held for the interval
  Admit(1);                       // three wait: a full block
  ASSERT_TRUE(Eventually([&] { return work_.proposals == 2; }));
}

TEST_F(SchedulerTest, ANodeThatDoesNotProposeNeverProposes) {
  Start({.batch_window = 0ms, .full_block = 1, .proposer = false});
  Admit(5);
  scheduler_->WantSlash();
  scheduler_->WantFinality();
  ASSERT_TRUE(LookedAndSlept());
  EXPECT_EQ(work_.proposals, 0);
  EXPECT_EQ(work_.empty_proposals, 0);
}

TEST_F(SchedulerTest, ASlashIsProposedAtOnceAndFinalityWithAnEmptyBlock) {
  Start({.batch_window = 0ms, .min_interval = 0ms, .proposer = true});
  scheduler_->WantSlash();
  ASSERT_TRUE(Eventually([&] { return work_.proposals == 1; }));
  scheduler_->WantFinality();
  ASSERT_TRUE(Eventually([&] { return work_.empty_proposals == 1; }));
  EXPECT_EQ(work_.proposals, 1);
}

TEST_F(SchedulerTest, QueuedTasksAreAnsweredFalseWhenTheNodeStops) {
  Start({.proposer = false});
  ASSERT_TRUE(HoldTheThread());
  std::atomic<int> second = -1;
  ASSERT_TRUE(scheduler_->Post([&](bool run) { second = run ? 1 : 0; }).ok());
  scheduler_->RequestStop();
  EXPECT_EQ(scheduler_->Post([](bool) {}).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_FALSE(scheduler_->ready());
  Release();
  scheduler_->Join();
  EXPECT_EQ(second, 0);
}

TEST_F(SchedulerTest, TooManyTasksAreRefusedAsBusy) {
  Start({.proposer = false});
  ASSERT_TRUE(HoldTheThread());
  for (size_t i = 0; i < kMaxConsensusTasks; ++i) {
    ASSERT_TRUE(scheduler_->Post([](bool) {}).ok()) << i;
  }
  EXPECT_EQ(scheduler_->Post([](bool) {}).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_NE(registry_.Render().find("\nrnode_consensus_busy_total 1"),
            std::string::npos);
  Release();
}

}  // namespace
}  // namespace rnode::node

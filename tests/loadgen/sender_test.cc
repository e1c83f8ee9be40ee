// DeploySender against an in-process DeployService on 127.0.0.1: a refusal
// saying the deploy's window closed is answered by re-signing it with the
// height the node named (the record keeps its id history's submission
// time), later deploys start from that height, other refusals are final,
// and the retries are bounded.
#include "integration/loadgen/sender.h"

#include <memory>
#include <string>
#include <vector>

#include "DeployServiceV1.grpc.pb.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "util/mutex.h"

namespace rnode::loadgen {
namespace {

// The refusal DeployPool::Add gives a deploy whose window closed.
std::string StaleRefusal(int64_t valid_after, int64_t height) {
  return absl::StrCat(
      "deploy can no longer be included: validAfterBlockNumber ", valid_after,
      " allows blocks up to ", valid_after + 50,
      " (lifespan 50 blocks) and the chain is at block ", height);
}

// Answers status as a ready node of shard "root", and each doDeploy as the
// test's rule says; records the validAfterBlockNumber of every deploy.
class FakeDeployService final : public ::casper::v1::DeployService::Service {
 public:
  // kWindowFromHeight: refuses a deploy whose window ends by the height;
  // kAlwaysStale: refuses every deploy, naming a higher block each time;
  // kStaleAtHeight: refuses every deploy, naming the height; kPoolFull:
  // refuses every deploy as the pool being full.
  enum class Rule {
    kWindowFromHeight,
    kAlwaysStale,
    kStaleAtHeight,
    kPoolFull
  };

  FakeDeployService(Rule rule, int64_t height) : rule_(rule), height_(height) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
    EXPECT_NE(server_, nullptr);
  }
  ~FakeDeployService() override {
    if (server_ != nullptr) server_->Shutdown();
    // What the handlers' threads wrote is freed after their last unlock:
    // TSan saw the destructor free a string a finished gRPC thread had
    // pushed, with no order between them that it could see.
    MutexLock lock(&mu_);
    accepted_.clear();
    valid_afters_.clear();
  }

  std::string target() const { return absl::StrCat("127.0.0.1:", port_); }
  std::vector<int64_t> valid_afters() const {
    MutexLock lock(&mu_);
    return valid_afters_;
  }

  grpc::Status status(grpc::ServerContext*, const google::protobuf::Empty*,
                      ::casper::v1::StatusResponse* reply) override {
    reply->mutable_status()->set_isready(true);
    reply->mutable_status()->set_shardid("root");
    return grpc::Status::OK;
  }

  grpc::Status doDeploy(grpc::ServerContext*,
                        const ::casper::DeployDataProto* deploy,
                        ::casper::v1::DeployResponse* reply) override {
    const int64_t valid_after = deploy->validafterblocknumber();
    MutexLock lock(&mu_);
    valid_afters_.push_back(valid_after);
    const bool stale =
        rule_ == Rule::kAlwaysStale || rule_ == Rule::kStaleAtHeight ||
        (rule_ == Rule::kWindowFromHeight && valid_after + 50 <= height_);
    if (stale) {
      // A chain that moves on: each refusal names a higher block.
      const int64_t height =
          rule_ == Rule::kAlwaysStale
              ? height_ + static_cast<int64_t>(valid_afters_.size())
              : height_;
      reply->mutable_error()->add_messages(StaleRefusal(valid_after, height));
    } else if (rule_ == Rule::kPoolFull) {
      reply->mutable_error()->add_messages("deploy pool is full");
    } else {
      reply->set_result("Success!");
      accepted_.push_back(deploy->sig());
    }
    return grpc::Status::OK;
  }

  // FINALIZED for the first deploy it accepted, PENDING for the others,
  // an error for any other signature.
  grpc::Status deployFinalizationStatus(
      grpc::ServerContext*, const ::casper::DeployFinalizationStatusQuery* q,
      ::casper::v1::DeployFinalizationStatusResponse* reply) override {
    MutexLock lock(&mu_);
    for (size_t i = 0; i < accepted_.size(); ++i) {
      if (accepted_[i] != q->deploysig()) continue;
      reply->mutable_status()->set_state(i == 0
                                             ? ::casper::DEPLOY_STATE_FINALIZED
                                             : ::casper::DEPLOY_STATE_PENDING);
      return grpc::Status::OK;
    }
    reply->mutable_error()->add_messages(
        "Couldn't find block containing deploy");
    return grpc::Status::OK;
  }

 private:
  const Rule rule_;
  const int64_t height_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  mutable Mutex mu_;
  std::vector<int64_t> valid_afters_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> accepted_ ABSL_GUARDED_BY(mu_);  // Signatures.
};

std::unique_ptr<DeploySender> StartSender(const FakeDeployService& node,
                                          DeployTracker* tracker,
                                          Workload workload = {}) {
  SenderOptions options;
  options.workload = std::move(workload);
  options.grpc_targets = {node.target()};
  crypto::Secp256k1PrivateKey key{};
  key[31] = 7;
  options.keys = {key};
  options.threads = 1;
  absl::StatusOr<std::unique_ptr<DeploySender>> sender =
      DeploySender::Start(std::move(options), tracker, RunClock());
  EXPECT_TRUE(sender.ok()) << sender.status();
  return sender.ok() ? *std::move(sender) : nullptr;
}

DeployJob Job(int64_t sequence, int64_t valid_after) {
  DeployJob job;
  job.sequence = sequence;
  job.due_seconds = 1.5 + static_cast<double>(sequence);  // Distinct.
  job.valid_after_block_number = valid_after;
  return job;
}

TEST(StaleWindowHeightTest, ReadsTheHeightOfAClosedWindowRefusal) {
  EXPECT_EQ(StaleWindowHeight(StaleRefusal(2286, 2362)), 2362);
  EXPECT_EQ(StaleWindowHeight(absl::StrCat("refused: ", StaleRefusal(0, 51),
                                           "; another message")),
            51);
  EXPECT_EQ(StaleWindowHeight("deploy pool is full"), std::nullopt);
  EXPECT_EQ(StaleWindowHeight("deploy can no longer be included: soon"),
            std::nullopt);
  EXPECT_EQ(StaleWindowHeight("and the chain is at block 12"), std::nullopt);
}

TEST(DeploySenderTest, ReSignsAfterAClosedWindowAndLaterDeploysStartThere) {
  FakeDeployService node(FakeDeployService::Rule::kWindowFromHeight, 500);
  DeployTracker tracker;
  std::unique_ptr<DeploySender> sender = StartSender(node, &tracker);
  ASSERT_NE(sender, nullptr);
  sender->Dispatch(Job(0, 10));
  sender->WaitIdle();
  sender->Dispatch(Job(1, 20));
  sender->WaitIdle();
  // The first try of deploy 0 named height 500; its second signature and
  // deploy 1's first are valid after it.
  EXPECT_EQ(node.valid_afters(), (std::vector<int64_t>{10, 500, 500}));
  const TrackerTotals totals = tracker.Totals();
  EXPECT_EQ(totals.submitted, 2);
  EXPECT_EQ(totals.acknowledged, 2);
  EXPECT_EQ(totals.failed, 0);
  EXPECT_EQ(sender->resigned(), 1);
  // The record kept the scheduled submission time under its new id.
  const std::vector<PendingDeploy> pending = tracker.PendingDeploys(2);
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[0].submitted_at, 1.5);
}

TEST(DeploySenderTest, ReSigningIsBoundedAndThenTheRefusalStands) {
  FakeDeployService node(FakeDeployService::Rule::kAlwaysStale, 500);
  DeployTracker tracker;
  std::unique_ptr<DeploySender> sender = StartSender(node, &tracker);
  ASSERT_NE(sender, nullptr);
  sender->Dispatch(Job(0, 10));
  sender->WaitIdle();
  EXPECT_EQ(node.valid_afters().size(), static_cast<size_t>(kMaxResigns) + 1);
  EXPECT_EQ(sender->resigned(), kMaxResigns);
  const TrackerTotals totals = tracker.Totals();
  EXPECT_EQ(totals.submitted, 1);
  EXPECT_EQ(totals.failed, 1);
  const std::map<std::string, int64_t> reasons = tracker.FailureReasons();
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_NE(reasons.begin()->first.find("can no longer be included"),
            std::string::npos);
}

TEST(DeploySenderTest, ARefusalNamingNoHigherBlockIsNotRetried) {
  // The second refusal names block 500, which the second signature was
  // already valid after: signing again would send the same deploy.
  FakeDeployService node(FakeDeployService::Rule::kStaleAtHeight, 500);
  DeployTracker tracker;
  std::unique_ptr<DeploySender> sender = StartSender(node, &tracker);
  ASSERT_NE(sender, nullptr);
  sender->Dispatch(Job(0, 10));
  sender->WaitIdle();
  EXPECT_EQ(node.valid_afters(), (std::vector<int64_t>{10, 500}));
  EXPECT_EQ(sender->resigned(), 1);
  EXPECT_EQ(tracker.Totals().failed, 1);
}

TEST(DeploySenderTest, RepeatedTermsOfOneKeyAreDistinctDeploys) {
  // Every counter increment is the same term; 50 of them from one key go
  // out well within a few milliseconds.
  FakeDeployService node(FakeDeployService::Rule::kWindowFromHeight, 0);
  DeployTracker tracker;
  std::unique_ptr<DeploySender> sender = StartSender(
      node, &tracker, Workload{WorkloadKind::kCounter, "run", {}, 1});
  ASSERT_NE(sender, nullptr);
  for (int64_t i = 1; i <= 50; ++i) sender->Dispatch(Job(i, 0));
  sender->WaitIdle();
  EXPECT_EQ(sender->local_failures(), 0) << sender->first_local_failure();
  EXPECT_EQ(tracker.Totals().submitted, 50);
  EXPECT_EQ(tracker.Totals().acknowledged, 50);
}

TEST(DeploySenderTest, QueryStateAsksTheNodeWhatBecameOfADeploy) {
  FakeDeployService node(FakeDeployService::Rule::kWindowFromHeight, 0);
  DeployTracker tracker;
  std::unique_ptr<DeploySender> sender = StartSender(node, &tracker);
  ASSERT_NE(sender, nullptr);
  sender->Dispatch(Job(0, 0));
  sender->WaitIdle();
  sender->Dispatch(Job(1, 0));
  sender->WaitIdle();
  const std::vector<PendingDeploy> sent = tracker.PendingDeploys(2);
  ASSERT_EQ(sent.size(), 2u);  // By submission time: deploy 0 first.
  EXPECT_EQ(*sender->QueryState(sent[0].id, sent[0].target),
            NodeDeployState::kFinalized);
  EXPECT_EQ(*sender->QueryState(sent[1].id, -1), NodeDeployState::kPending);
  EXPECT_EQ(*sender->QueryState("3044", 0), NodeDeployState::kUnknown);
  EXPECT_EQ(sender->QueryState("not hex", 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DeploySenderTest, OtherRefusalsAreNotRetried) {
  FakeDeployService node(FakeDeployService::Rule::kPoolFull, 500);
  DeployTracker tracker;
  std::unique_ptr<DeploySender> sender = StartSender(node, &tracker);
  ASSERT_NE(sender, nullptr);
  sender->Dispatch(Job(0, 600));
  sender->WaitIdle();
  EXPECT_EQ(node.valid_afters(), (std::vector<int64_t>{600}));
  EXPECT_EQ(sender->resigned(), 0);
  EXPECT_EQ(tracker.Totals().failed, 1);
}

}  // namespace
}  // namespace rnode::loadgen

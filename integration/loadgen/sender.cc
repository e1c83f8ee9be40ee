// DeploySender: the sender thread pool, deploy signing and doDeploy calls.
#include "integration/loadgen/sender.h"

#include <utility>

#include "DeployServiceV1.grpc.pb.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "casper/deploy.h"
#include "grpcpp/grpcpp.h"
#include "util/bytes.h"

namespace rnode::loadgen {

class DeploySender::Stubs {
 public:
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<::casper::v1::DeployService::Stub>> stubs;
};

namespace {

int64_t NowUnixMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// gRPC's codes are numbered as absl's.
std::string GrpcFailure(const grpc::Status& status) {
  return absl::StrCat("gRPC ",
                      absl::StatusCodeToString(
                          static_cast<absl::StatusCode>(status.error_code())),
                      ": ", status.error_message());
}

// The node's status over `stub`; Unavailable naming `target` if it does not
// answer by `deadline`.
absl::StatusOr<TargetStatus> QueryStatus(
    const std::string& target, ::casper::v1::DeployService::Stub& stub,
    std::chrono::system_clock::time_point deadline) {
  grpc::ClientContext ctx;
  ctx.set_deadline(deadline);
  ::casper::v1::StatusResponse reply;
  const grpc::Status status =
      stub.status(&ctx, google::protobuf::Empty(), &reply);
  if (!status.ok()) {
    return absl::UnavailableError(
        absl::StrCat("status of ", target, ": ", GrpcFailure(status)));
  }
  if (reply.has_error()) {
    return absl::UnavailableError(
        absl::StrCat("status of ", target, ": ",
                     absl::StrJoin(reply.error().messages(), "; ")));
  }
  TargetStatus out;
  out.target = target;
  out.ready = reply.status().isready();
  out.shard_id = reply.status().shardid();
  out.last_finalized_block_number = reply.status().lastfinalizedblocknumber();
  return out;
}

}  // namespace

std::string DeployTerm(int64_t sequence) {
  const int64_t n = kFirstTermNumber + sequence;
  return absl::StrCat("@", n, "!(", n, ")");
}

absl::StatusOr<std::unique_ptr<DeploySender>> DeploySender::Start(
    SenderOptions options, DeployTracker* tracker, RunClock clock) {
  if (options.grpc_targets.empty()) {
    return absl::InvalidArgumentError("no gRPC targets");
  }
  if (options.keys.empty()) return absl::InvalidArgumentError("no keys");
  if (options.threads < 1 || options.threads > kMaxSenderThreads) {
    return absl::InvalidArgumentError(absl::StrCat(
        options.threads, " sender threads; need 1 to ", kMaxSenderThreads));
  }
  auto stubs = std::make_unique<Stubs>();
  std::vector<TargetStatus> targets;
  const auto deadline =
      std::chrono::system_clock::now() + options.connect_timeout;
  for (const std::string& target : options.grpc_targets) {
    std::shared_ptr<grpc::Channel> channel =
        grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
    if (!channel->WaitForConnected(deadline)) {
      return absl::UnavailableError(
          absl::StrCat("cannot connect to gRPC ", target, " within ",
                       options.connect_timeout.count(), " ms"));
    }
    auto stub = ::casper::v1::DeployService::NewStub(channel);
    absl::StatusOr<TargetStatus> status = QueryStatus(target, *stub, deadline);
    if (!status.ok()) return status.status();
    targets.push_back(*std::move(status));
    stubs->channels.push_back(std::move(channel));
    stubs->stubs.push_back(std::move(stub));
  }
  std::unique_ptr<DeploySender> sender(
      new DeploySender(std::move(options), tracker, clock, std::move(stubs),
                       std::move(targets)));
  for (size_t i = 0; i < sender->options_.threads; ++i) {
    sender->threads_.emplace_back(&DeploySender::Work, sender.get());
  }
  return sender;
}

DeploySender::DeploySender(SenderOptions options, DeployTracker* tracker,
                           RunClock clock, std::unique_ptr<Stubs> stubs,
                           std::vector<TargetStatus> targets)
    : options_(std::move(options)),
      tracker_(tracker),
      clock_(clock),
      stubs_(std::move(stubs)),
      targets_(std::move(targets)) {}

DeploySender::~DeploySender() { Stop(); }

DispatchResult DeploySender::Dispatch(const DeployJob& job) {
  MutexLock lock(&mu_);
  bool waited = false;
  while (!stopping_ && queue_.size() >= idle_) {
    waited = true;
    room_.Wait(&mu_);
  }
  if (stopping_) return DispatchResult::kStopped;
  queue_.push_back(job);
  work_.Signal();
  return waited ? DispatchResult::kWaited : DispatchResult::kImmediate;
}

void DeploySender::WaitIdle() {
  MutexLock lock(&mu_);
  while (!queue_.empty() || busy_ > 0) {
    if (stopping_ && busy_ == 0) return;
    done_.Wait(&mu_);
  }
}

void DeploySender::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    queue_.clear();
    work_.SignalAll();
    room_.SignalAll();
    done_.SignalAll();
  }
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

int64_t DeploySender::local_failures() const {
  MutexLock lock(&mu_);
  return local_failures_;
}

absl::Status DeploySender::first_local_failure() const {
  MutexLock lock(&mu_);
  return first_local_failure_;
}

void DeploySender::Work() {
  while (true) {
    DeployJob job;
    {
      MutexLock lock(&mu_);
      ++idle_;
      room_.Signal();
      while (queue_.empty() && !stopping_) work_.Wait(&mu_);
      --idle_;
      if (stopping_) return;
      job = queue_.front();
      queue_.pop_front();
      ++busy_;
    }
    Send(job);
    {
      MutexLock lock(&mu_);
      --busy_;
      if (busy_ == 0 && queue_.empty()) done_.SignalAll();
    }
  }
}

void DeploySender::LocalFailure(absl::Status status) {
  MutexLock lock(&mu_);
  ++local_failures_;
  if (first_local_failure_.ok()) first_local_failure_ = std::move(status);
}

void DeploySender::Send(const DeployJob& job) {
  const size_t index = static_cast<size_t>(job.sequence);
  casper::DeployData data;
  data.term = WorkloadTerm(options_.workload, job.sequence);
  data.timestamp = NowUnixMillis();
  data.phlo_price = options_.phlo_price;
  data.phlo_limit = options_.phlo_limit;
  data.valid_after_block_number = job.valid_after_block_number;
  data.shard_id = options_.shard_id;
  absl::StatusOr<casper::SignedDeploy> deploy = casper::SignedDeploy::Sign(
      data, options_.keys[index % options_.keys.size()]);
  if (!deploy.ok()) {
    LocalFailure(deploy.status());
    return;
  }
  const std::string id = HexEncode(deploy->sig());
  if (absl::Status s =
          tracker_->Submitted(id, job.phase_index, job.due_seconds,
                              static_cast<int>(index % stubs_->stubs.size()));
      !s.ok()) {
    LocalFailure(std::move(s));
    return;
  }
  ::casper::v1::DeployService::Stub& stub =
      *stubs_->stubs[index % stubs_->stubs.size()];
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + options_.deploy_deadline);
  ::casper::v1::DeployResponse reply;
  const grpc::Status status = stub.doDeploy(&ctx, deploy->ToProto(), &reply);
  if (!status.ok()) {
    tracker_->Failed(id, GrpcFailure(status));
  } else if (reply.has_error()) {
    tracker_->Failed(
        id, absl::StrCat("refused: ",
                         absl::StrJoin(reply.error().messages(), "; ")));
  } else {
    tracker_->Acknowledged(id, clock_.Now());
  }
}

}  // namespace rnode::loadgen

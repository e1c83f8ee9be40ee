// DeploySender: the sender thread pool, deploy signing and doDeploy calls.
#include "integration/loadgen/sender.h"

#include <algorithm>
#include <charconv>
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

// The index of the key that signs `job`.
size_t KeyIndex(const SenderOptions& options, const DeployJob& job) {
  return static_cast<size_t>(job.sequence) % options.keys.size();
}

// `job` signed with `valid_after` and `timestamp`, by its key.
absl::StatusOr<casper::SignedDeploy> SignJob(const SenderOptions& options,
                                             const DeployJob& job,
                                             int64_t valid_after,
                                             int64_t timestamp) {
  casper::DeployData data;
  data.term = WorkloadTerm(options.workload, job.sequence);
  data.timestamp = timestamp;
  data.phlo_price = options.phlo_price;
  data.phlo_limit = options.phlo_limit;
  data.valid_after_block_number = valid_after;
  data.shard_id = options.shard_id;
  return casper::SignedDeploy::Sign(data, options.keys[KeyIndex(options, job)]);
}

}  // namespace

std::optional<int64_t> StaleWindowHeight(std::string_view refusal) {
  constexpr std::string_view kStale = "deploy can no longer be included:";
  constexpr std::string_view kHeight = "and the chain is at block ";
  if (refusal.find(kStale) == std::string_view::npos) return std::nullopt;
  const size_t at = refusal.find(kHeight);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view digits = refusal.substr(at + kHeight.size());
  digits = digits.substr(0, digits.find_first_not_of("0123456789"));
  int64_t height = 0;
  const auto [end, error] =
      std::from_chars(digits.data(), digits.data() + digits.size(), height);
  if (digits.empty() || error != std::errc() ||
      end != digits.data() + digits.size()) {
    return std::nullopt;
  }
  return height;
}

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
      targets_(std::move(targets)),
      last_timestamp_(options_.keys.size(), 0) {}

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

absl::StatusOr<NodeDeployState> DeploySender::QueryState(std::string_view id,
                                                         int target) const {
  absl::StatusOr<Bytes> sig = HexDecode(id);
  if (!sig.ok()) return absl::InvalidArgumentError("deploy id is not hex");
  const size_t node =
      target < 0 ? 0 : static_cast<size_t>(target) % stubs_->stubs.size();
  ::casper::DeployFinalizationStatusQuery query;
  query.set_deploysig(sig->data(), sig->size());
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + options_.deploy_deadline);
  ::casper::v1::DeployFinalizationStatusResponse reply;
  const grpc::Status status =
      stubs_->stubs[node]->deployFinalizationStatus(&ctx, query, &reply);
  if (!status.ok()) return absl::UnavailableError(GrpcFailure(status));
  if (reply.has_error()) return NodeDeployState::kUnknown;
  switch (reply.status().state()) {
    case ::casper::DEPLOY_STATE_FINALIZED:
      return NodeDeployState::kFinalized;
    case ::casper::DEPLOY_STATE_FAILED:
      return NodeDeployState::kFailed;
    case ::casper::DEPLOY_STATE_EXPIRED:
      return NodeDeployState::kExpired;
    case ::casper::DEPLOY_STATE_PENDING:
      return NodeDeployState::kPending;
    default:
      return NodeDeployState::kUnknown;
  }
}

int64_t DeploySender::NextTimestamp(size_t key) {
  MutexLock lock(&mu_);
  int64_t& last = last_timestamp_[key];
  last = std::max(NowUnixMillis(), last + 1);
  return last;
}

int64_t DeploySender::resigned() const {
  MutexLock lock(&mu_);
  return resigned_;
}

void DeploySender::Send(const DeployJob& job) {
  const size_t target =
      static_cast<size_t>(job.sequence) % stubs_->stubs.size();
  int64_t valid_after = job.valid_after_block_number;
  {
    MutexLock lock(&mu_);
    valid_after = std::max(valid_after, valid_after_floor_);
  }
  std::string id;  // The tracked id; empty until the first signature.
  for (int attempt = 0;; ++attempt) {
    absl::StatusOr<casper::SignedDeploy> deploy = SignJob(
        options_, job, valid_after, NextTimestamp(KeyIndex(options_, job)));
    std::string signed_id = deploy.ok() ? HexEncode(deploy->sig()) : "";
    absl::Status tracked =
        !deploy.ok() ? deploy.status()
        : id.empty()
            ? tracker_->Submitted(signed_id, job.phase_index, job.due_seconds,
                                  static_cast<int>(target))
            : tracker_->Resigned(id, signed_id);
    if (!tracked.ok()) {
      // Not sent at all, or a re-signing that failed: the deploy stays
      // refused under its last id.
      if (id.empty()) {
        LocalFailure(std::move(tracked));
      } else {
        tracker_->Failed(id, std::string(tracked.message()));
      }
      return;
    }
    id = std::move(signed_id);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     options_.deploy_deadline);
    ::casper::v1::DeployResponse reply;
    const grpc::Status status =
        stubs_->stubs[target]->doDeploy(&ctx, deploy->ToProto(), &reply);
    if (!status.ok()) {
      tracker_->Failed(id, GrpcFailure(status));
      return;
    }
    if (!reply.has_error()) {
      tracker_->Acknowledged(id, clock_.Now());
      return;
    }
    const std::string refusal = absl::StrJoin(reply.error().messages(), "; ");
    const std::optional<int64_t> height = StaleWindowHeight(refusal);
    // Only a higher block makes a different deploy worth sending.
    if (!height.has_value() || *height <= valid_after ||
        attempt >= kMaxResigns) {
      tracker_->Failed(id, absl::StrCat("refused: ", refusal));
      return;
    }
    MutexLock lock(&mu_);
    valid_after_floor_ = std::max(valid_after_floor_, *height);
    valid_after = std::max(valid_after, valid_after_floor_);
    ++resigned_;
  }
}

}  // namespace rnode::loadgen

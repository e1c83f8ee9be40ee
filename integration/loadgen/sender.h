// Signs and sends deploys over the nodes' external gRPC API from a bounded
// pool of threads, recording each in a DeployTracker.
#ifndef RNODE_INTEGRATION_LOADGEN_SENDER_H_
#define RNODE_INTEGRATION_LOADGEN_SENDER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "crypto/secp256k1.h"
#include "integration/loadgen/run_clock.h"
#include "integration/loadgen/tracker.h"
#include "integration/loadgen/workload.h"
#include "util/mutex.h"

namespace rnode::loadgen {

// Sender threads by default. Each holds one blocking doDeploy call; a local
// node answers in about a millisecond, so 32 sustain thousands of deploys a
// second and absorb the public test's burst of 32 at once.
inline constexpr size_t kDefaultSenderThreads = 32;
// Most sender threads: each is a thread with its stack and a call in
// flight; past 1,024 the machine, not the node, is what gets measured.
inline constexpr size_t kMaxSenderThreads = 1024;

// Deadline of one doDeploy call. Admission is quick; a node that takes
// longer is overloaded, and the deploy counts as failed (the reason says
// DEADLINE_EXCEEDED) rather than tie up a sender.
inline constexpr std::chrono::milliseconds kDefaultDeployDeadline{10000};

// How long Start waits for each node's gRPC port and status call.
inline constexpr std::chrono::milliseconds kDefaultGrpcConnectTimeout{5000};

// Times one deploy is re-signed and sent again after a refusal saying its
// validAfterBlockNumber window has closed (the loadgen's view of the height
// lagged the node's). A deploy refused so is not acknowledged, so sending it
// again under a new signature cannot make a duplicate; a node that keeps
// refusing is reported as refusing.
inline constexpr int kMaxResigns = 2;

// The chain height a node's refusal "deploy can no longer be included: ...
// and the chain is at block N" names (casper::DeployPool::Add); nullopt for
// any other text.
std::optional<int64_t> StaleWindowHeight(std::string_view refusal);

// The first N of the deploy terms "@N!(N)" (the public methodology's).
inline constexpr int64_t kFirstTermNumber = 100000;

// The term of deploy `sequence` (0-based over the run):
// "@N!(N)" with N = kFirstTermNumber + sequence.
std::string DeployTerm(int64_t sequence);

struct SenderOptions {
  std::vector<std::string> grpc_targets;          // host:port; round-robin.
  std::vector<crypto::Secp256k1PrivateKey> keys;  // Round-robin signers.
  std::string shard_id = "root";
  int64_t phlo_limit = 100000;
  int64_t phlo_price = 1;
  size_t threads = kDefaultSenderThreads;
  std::chrono::milliseconds deploy_deadline = kDefaultDeployDeadline;
  std::chrono::milliseconds connect_timeout = kDefaultGrpcConnectTimeout;
  // The deploys' terms (WorkloadTerm); noop by default.
  Workload workload{WorkloadKind::kNoop, "run", {}, 1};
};

// One deploy to send. Target and key are chosen by `sequence` modulo their
// counts.
struct DeployJob {
  int64_t sequence = 0;
  int phase_index = 0;
  // The scheduled send time, RunClock seconds: recorded as the submission
  // time, so a deploy sent late still has its delay in its latencies.
  double due_seconds = 0;
  int64_t valid_after_block_number = 0;
};

// What a node answers of a deploy (deployFinalizationStatus); kUnknown
// when it answers with an error (it knows no such deploy).
enum class NodeDeployState {
  kPending,
  kFinalized,
  kFailed,
  kExpired,
  kUnknown
};

// What a node's status call said when the sender started.
struct TargetStatus {
  std::string target;
  bool ready = false;
  std::string shard_id;
  int64_t last_finalized_block_number = -1;
};

enum class DispatchResult {
  kImmediate,  // A sender thread was idle.
  kWaited,     // All were busy; the caller waited for one.
  kStopped,    // The sender is stopping; the job was dropped.
};

// Thread-safe: Dispatch, WaitIdle and the accessors may be called from any
// thread; Stop from one thread at a time. The tracker must outlive it.
class DeploySender {
 public:
  // Connects to every target and calls its status (Unavailable naming the
  // target if it does not answer within options.connect_timeout), then
  // starts options.threads sender threads. InvalidArgument for no targets,
  // no keys or a thread count outside [1, kMaxSenderThreads].
  static absl::StatusOr<std::unique_ptr<DeploySender>> Start(
      SenderOptions options, DeployTracker* tracker, RunClock clock);

  // Stops (see Stop).
  ~DeploySender();
  DeploySender(const DeploySender&) = delete;
  DeploySender& operator=(const DeploySender&) = delete;

  // Hands `job` to an idle sender thread, waiting while none is idle (the
  // queue never holds more jobs than idle threads, so a job is never parked
  // behind a slow call). The thread signs the deploy, records it with
  // Submitted, calls doDeploy and records Acknowledged or Failed.
  DispatchResult Dispatch(const DeployJob& job);

  // Waits until every dispatched job is done.
  void WaitIdle();

  // Drops jobs not yet started, lets calls in flight finish (each within
  // the deploy deadline) and joins the threads. Idempotent.
  void Stop();

  // Deploys that could not be sent at all (signing or tracking failed);
  // they are not in the tracker. The first such error, OK if none.
  int64_t local_failures() const;
  absl::Status first_local_failure() const;

  // Asks node `target` (an index of the targets; a negative one means the
  // first) what became of the deploy `id` (the lower-case hex of its
  // signature), within the deploy deadline. InvalidArgument for an id that
  // is not hex; Unavailable when the call fails.
  absl::StatusOr<NodeDeployState> QueryState(std::string_view id,
                                             int target) const;

  // Deploys re-signed after a stale-window refusal (kMaxResigns).
  int64_t resigned() const;

  const std::vector<TargetStatus>& targets() const { return targets_; }

 private:
  class Stubs;  // The gRPC channels and stubs, kept out of this header.

  DeploySender(SenderOptions options, DeployTracker* tracker, RunClock clock,
               std::unique_ptr<Stubs> stubs, std::vector<TargetStatus> targets);
  void Work();
  void Send(const DeployJob& job);
  void LocalFailure(absl::Status status);
  // A timestamp for a deploy of key `key`: now, in milliseconds, or one
  // more than the key's last if that is not earlier. Deterministic
  // signatures make two deploys of one key with the same data the same
  // deploy, and a workload's terms repeat (every counter increment is the
  // same term): two sent in one millisecond would be one.
  int64_t NextTimestamp(size_t key);

  const SenderOptions options_;
  DeployTracker* const tracker_;
  const RunClock clock_;
  const std::unique_ptr<Stubs> stubs_;
  const std::vector<TargetStatus> targets_;
  std::vector<std::thread> threads_;

  mutable Mutex mu_;
  CondVar work_;  // A job was queued, or stopping.
  CondVar room_;  // A thread became idle, or stopping.
  CondVar done_;  // No job queued or running.
  std::deque<DeployJob> queue_ ABSL_GUARDED_BY(mu_);
  size_t idle_ ABSL_GUARDED_BY(mu_) = 0;  // Threads waiting for a job.
  size_t busy_ ABSL_GUARDED_BY(mu_) = 0;  // Threads sending a job.
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t local_failures_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status first_local_failure_ ABSL_GUARDED_BY(mu_);
  int64_t resigned_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<int64_t> last_timestamp_ ABSL_GUARDED_BY(mu_);  // By key.
  // The highest height a stale-window refusal named: later deploys are
  // signed valid after at least it, whatever the job says.
  int64_t valid_after_floor_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace rnode::loadgen

#endif  // RNODE_INTEGRATION_LOADGEN_SENDER_H_

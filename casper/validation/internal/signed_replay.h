// A block's replay overlapped with its deploy signature checks
// (docs/validation.md, CheckDeploySignatures and CheckReplay): each
// deploy's signature is claimed and checked by the first thread that asks
// for the deploy (a lane of parallel replay, or one of the threads serial
// replay's look-ahead runs on: BlockExecutor::Replay); a thread that would
// wait for a signature another thread is checking checks the next
// unchecked one instead. The signatures the replay never asked for are
// checked after it, so every signature is checked before a verdict and the
// result does not depend on timing.
#ifndef RNODE_CASPER_VALIDATION_INTERNAL_SIGNED_REPLAY_H_
#define RNODE_CASPER_VALIDATION_INTERNAL_SIGNED_REPLAY_H_

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "casper/block/block.h"
#include "casper/deploy.h"
#include "casper/execution/block_executor.h"
#include "util/bytes.h"
#include "util/worker_pool.h"

namespace rnode::casper::validation::internal {

struct SignedReplayResult {
  // The first deploy (block index) whose signature does not verify;
  // nullopt when every one does.
  std::optional<size_t> first_unsigned;
  BlockReplayVerdict replay;
};

// One use: construct, then Run once. Run is called on one thread; the
// claims it hands to the replay are thread-safe.
class SignedReplay {
 public:
  // `block` is not owned and must outlive the object.
  explicit SignedReplay(const block::Block& block);
  SignedReplay(const SignedReplay&) = delete;
  SignedReplay& operator=(const SignedReplay&) = delete;

  // Replays the block on `executor` (from its pre-state), slashing
  // `slash_validators` in order, its deploys' signatures checked as the
  // replay asks for them; then checks those it did not ask for on `pool`
  // (may be null: on this thread).
  SignedReplayResult Run(BlockExecutor& executor,
                         std::span<const Bytes> slash_validators,
                         WorkerPool* pool);

 private:
  enum : int { kUnchecked, kChecking, kVerified, kNotSigned };

  // Checks deploy `k` unless another thread has claimed it; true if this
  // call checked it.
  bool Claim(size_t k);
  // The verified deploy `i`, or null when its signature does not verify;
  // while another thread checks it, checks others instead of waiting.
  const SignedDeploy* Take(size_t i);

  const block::Block& block_;
  const size_t n_;
  std::vector<std::optional<SignedDeploy>> verified_;
  std::unique_ptr<std::atomic<int>[]> state_;
  // Where a thread that would wait looks for a deploy to check instead.
  std::atomic<size_t> cursor_{0};
};

}  // namespace rnode::casper::validation::internal

#endif  // RNODE_CASPER_VALIDATION_INTERNAL_SIGNED_REPLAY_H_

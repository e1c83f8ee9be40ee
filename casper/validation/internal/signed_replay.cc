// Deploy signatures checked as the replay asks for them.
#include "casper/validation/internal/signed_replay.h"

#include <thread>
#include <utility>

namespace rnode::casper::validation::internal {

SignedReplay::SignedReplay(const block::Block& block)
    : block_(block),
      n_(block.body.deploys.size()),
      verified_(n_),
      state_(new std::atomic<int>[n_]) {
  for (size_t i = 0; i < n_; ++i) state_[i].store(kUnchecked);
}

bool SignedReplay::Claim(size_t k) {
  int expected = kUnchecked;
  if (!state_[k].compare_exchange_strong(expected, kChecking,
                                         std::memory_order_acq_rel)) {
    return false;
  }
  const block::ProcessedDeploy& d = block_.body.deploys[k];
  auto s = SignedDeploy::Verify(d.data, d.deployer, d.sig,
                                SigAlgorithmName(d.sig_algorithm));
  const bool signed_ok = s.ok();
  if (signed_ok) verified_[k] = *std::move(s);
  state_[k].store(signed_ok ? kVerified : kNotSigned,
                  std::memory_order_release);
  return true;
}

const SignedDeploy* SignedReplay::Take(size_t i) {
  if (!Claim(i)) {
    while (state_[i].load(std::memory_order_acquire) == kChecking) {
      bool helped = false;
      for (size_t k = cursor_.load(); k < n_ && !helped; k = cursor_.load()) {
        if (state_[k].load(std::memory_order_acquire) != kUnchecked) {
          cursor_.compare_exchange_weak(k, k + 1);
          continue;
        }
        helped = Claim(k);
      }
      if (!helped) std::this_thread::yield();
    }
  }
  return state_[i].load(std::memory_order_acquire) == kVerified ? &*verified_[i]
                                                                : nullptr;
}

SignedReplayResult SignedReplay::Run(BlockExecutor& executor,
                                     std::span<const Bytes> slash_validators,
                                     WorkerPool* pool) {
  SignedReplayResult out;
  out.replay = executor.Replay(
      block_, [this](size_t i) { return Take(i); }, slash_validators);
  if (pool != nullptr) {
    pool->ParallelFor(n_, [this](size_t k) { (void)Take(k); });
  } else {
    for (size_t k = 0; k < n_; ++k) (void)Take(k);
  }
  for (size_t i = 0; i < n_; ++i) {
    if (state_[i].load(std::memory_order_acquire) != kVerified) {
      out.first_unsigned = i;
      break;
    }
  }
  return out;
}

}  // namespace rnode::casper::validation::internal

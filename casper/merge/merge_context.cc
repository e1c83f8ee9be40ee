// The caller-owned resources of merges (see merge_context.h).
#include "casper/merge/merge_context.h"

#include <algorithm>
#include <utility>

#include "casper/merge/internal/serial_executor.h"
#include "casper/merge/internal/steps.h"

namespace rnode::casper::merge {

MergeContext::MergeContext(MergeContextOptions options)
    : options_(options),
      scratch_(std::make_unique<internal::MergeScratch>()),
      helper_scratch_(std::make_unique<internal::MergeScratch>()) {
  if (options_.pool != nullptr) {
    options_.threads = static_cast<size_t>(options_.pool->threads());
  }
  options_.threads = std::clamp<size_t>(options_.threads, 1, kMaxMergeThreads);
  options_.parallel_grain = std::max<size_t>(options_.parallel_grain, 1);
  options_.base_read_chunk = std::max<size_t>(options_.base_read_chunk, 1);
  if (options_.threads > 1) {
    if (options_.pool != nullptr) {
      pool_ = options_.pool;
    } else {
      owned_pool_ =
          std::make_unique<WorkerPool>(static_cast<int>(options_.threads));
      pool_ = owned_pool_.get();
    }
    helper_ = std::make_unique<internal::SerialExecutor>();
  }
}

MergeContext::~MergeContext() = default;

void MergeContext::Release(std::function<void()> release) {
  if (helper_ != nullptr && options_.free_in_background) {
    helper_->Post(std::move(release));
  } else {
    release();
  }
}

void MergeContext::TrimScratch() {
  scratch_->Trim(options_.max_kept_scratch_bytes);
  helper_scratch_->Trim(options_.max_kept_scratch_bytes);
}

}  // namespace rnode::casper::merge

// The executors parallel replay runs a block's independent deploys on
// (BlockExecutor::Replay): one lane per deploy running at once, each with
// its own system contracts (whose ledger tracks one deploy at a time) and
// its own runtime, all on the node's space and the node's worker pool.
#ifndef RNODE_CASPER_EXECUTION_EXECUTOR_LANES_H_
#define RNODE_CASPER_EXECUTION_EXECUTOR_LANES_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/contracts/system_contracts.h"
#include "casper/execution/deploy_executor.h"
#include "rholang/interpreter/reducer.h"
#include "rspace/space.h"
#include "util/worker_pool.h"

namespace rnode::casper {

class ExecutorLanes {
 public:
  // `lanes` (>= 1) executors on `space`. The space's system processes must
  // already be installed by a runtime made with contracts of `options`
  // (lanes share those installs). Their runtimes run rounds on `pool`, which
  // also runs the lanes; neither is owned, both must outlive the lanes.
  static absl::StatusOr<std::unique_ptr<ExecutorLanes>> Create(
      rspace::Space* space, const contracts::ContractsOptions& options,
      size_t lanes, WorkerPool* pool);
  ~ExecutorLanes();

  size_t size() const { return lanes_.size(); }
  // Lane `i`'s executor: one deploy at a time.
  DeployExecutor& at(size_t i) { return *lanes_[i].executor; }
  WorkerPool& pool() { return *pool_; }

 private:
  struct Lane {
    std::unique_ptr<contracts::SystemContracts> contracts;
    std::unique_ptr<rholang::interp::Runtime> runtime;
    std::unique_ptr<DeployExecutor> executor;
  };
  explicit ExecutorLanes(WorkerPool* pool) : pool_(pool) {}

  WorkerPool* pool_;
  std::vector<Lane> lanes_;
};

}  // namespace rnode::casper

#endif  // RNODE_CASPER_EXECUTION_EXECUTOR_LANES_H_

// Parallel replay's executors (see executor_lanes.h).
#include "casper/execution/executor_lanes.h"

#include <utility>

#include "util/status_macros.h"

namespace rnode::casper {

ExecutorLanes::~ExecutorLanes() = default;

absl::StatusOr<std::unique_ptr<ExecutorLanes>> ExecutorLanes::Create(
    rspace::Space* space, const contracts::ContractsOptions& options,
    size_t lanes, WorkerPool* pool) {
  if (space == nullptr || pool == nullptr || lanes == 0) {
    return absl::InvalidArgumentError(
        "executor lanes need a space, a pool and at least one lane");
  }
  std::unique_ptr<ExecutorLanes> out(new ExecutorLanes(pool));
  out->lanes_.reserve(lanes);
  for (size_t i = 0; i < lanes; ++i) {
    Lane lane;
    lane.contracts = std::make_unique<contracts::SystemContracts>(options);
    // Replayed programs' output goes nowhere: the proposer's play printed it.
    rholang::interp::RuntimeOptions ro =
        lane.contracts->RuntimeOptionsFor(/*threads=*/1, /*output=*/nullptr);
    ro.pool = pool;
    ro.install_processes = false;
    ASSIGN_OR_RETURN(lane.runtime, rholang::interp::Runtime::Create(space, ro));
    lane.executor = std::make_unique<DeployExecutor>(
        space, lane.contracts.get(), lane.runtime.get());
    out->lanes_.push_back(std::move(lane));
  }
  return out;
}

}  // namespace rnode::casper

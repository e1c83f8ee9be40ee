#include "node/core/engine_events.h"

#include <optional>
#include <set>
#include <vector>

namespace rnode::node {

void LogSink::Write(std::string_view stream, std::string_view line) {
  if (muted_.load(std::memory_order_relaxed)) return;
  uint64_t suppressed = 0;
  if (!limiter_.Allow(&suppressed)) return;
  if (suppressed > 0) {
    Log("deploy")->info("({} lines of deploy output not logged)", suppressed);
  }
  Log("deploy")->info("{}: {}", stream, line);
}

void NodeListener::OnBlockCreated(const casper::block::Block& block) {
  output_->set_muted(true);
  if (hooks_->block_created) hooks_->block_created(block);
}

void NodeListener::OnBlockValidated(const casper::block::Block& block,
                                    const casper::validation::Verdict& verdict,
                                    double seconds) {
  output_->set_muted(false);
  metrics_->BlockValidated(block, verdict, seconds);
}

void NodeListener::OnBlockAdded(const casper::block::Block& block) {
  on_added_(block);
  metrics_->BlockAdded(block);
  if (hooks_->block_added) hooks_->block_added(block);
  if (!hooks_->deploys_again) return;
  // Deploys a merge rejected before: one index read each.
  std::vector<Bytes> again;
  for (const casper::block::ProcessedDeploy& d : block.body.deploys) {
    absl::StatusOr<std::vector<Hash32>> rejecting =
        dag_->BlocksRejectingDeploy(d.sig);
    if (rejecting.ok() && !rejecting->empty()) again.push_back(d.sig);
  }
  if (!again.empty()) hooks_->deploys_again(block, again);
}

void NodeListener::OnFinalized(const Hash32& last,
                               std::span<const Hash32> blocks,
                               std::span<const Bytes> deploys) {
  on_finalized_(blocks);
  metrics_->Finalized(blocks.size(), deploys);
  if (!hooks_->block_finalized) return;
  const std::set<Bytes> kept(deploys.begin(), deploys.end());
  for (const Hash32& h : blocks) {
    absl::StatusOr<std::optional<casper::block::Block>> b = dag_->GetBlock(h);
    if (!b.ok() || !b->has_value()) continue;
    std::vector<Bytes> rejected;
    for (const casper::block::ProcessedDeploy& d : (*b)->body.deploys) {
      if (!kept.contains(d.sig)) rejected.push_back(d.sig);
    }
    hooks_->block_finalized(**b, rejected);
  }
}

}  // namespace rnode::node

// Deploys in a block's ancestry.
#include "casper/prestate/ancestry.h"

#include "util/status_macros.h"

namespace rnode::casper::prestate {

absl::StatusOr<bool> DeployInAncestry(dag::DagStore& dag,
                                      std::span<const Hash32> parents,
                                      ByteView sig, int64_t min_number) {
  auto holders = dag.BlocksWithDeploy(sig);
  if (!holders.ok()) return holders.status();
  for (const Hash32& h : *holders) {
    ASSIGN_OR_RETURN(const auto meta, dag.Meta(h));
    if (meta->block_number < min_number) continue;
    for (const Hash32& p : parents) {
      if (dag.IsAncestor(h, p)) return true;
    }
  }
  return false;
}

}  // namespace rnode::casper::prestate

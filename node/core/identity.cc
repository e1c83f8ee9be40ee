#include "node/core/identity.h"

#include "casper/block/block.h"

namespace rnode::node {

bool SelfBonded(const casper::dag::DagStore& dag, const NodeIdentity& id) {
  // The key is already parsed: per peer block and gossiped deploy, no
  // second parse of it.
  if (!id.is_validator()) return false;
  std::optional<Hash32> lfb = dag.LastFinalized();
  if (!lfb.has_value()) return false;
  absl::StatusOr<std::shared_ptr<const casper::dag::BlockMeta>> meta =
      dag.Meta(*lfb);
  return meta.ok() &&
         casper::block::StakeOf((*meta)->bonds, id.public_key) > 0;
}

}  // namespace rnode::node

#include "node/core/identity.h"

#include "casper/block/block.h"

namespace rnode::node {

bool SelfBonded(const casper::dag::DagStore& dag, const NodeIdentity& id) {
  // The key is already parsed: per peer block and gossiped deploy, no
  // second parse of it.
  if (!id.is_validator()) return false;
  std::optional<Hash32> lfb = dag.LastFinalized();
  return lfb.has_value() &&
         casper::block::StakeOf(dag.Meta(*lfb)->bonds, id.public_key) > 0;
}

}  // namespace rnode::node

#include "node/core/identity.h"

#include "casper/block/block.h"
#include "util/status_macros.h"

namespace rnode::node {

bool SelfBonded(const casper::dag::DagStore& dag, const NodeIdentity& id) {
  // The key is already parsed: per peer block and gossiped deploy, no
  // second parse of it.
  if (!id.is_validator()) return false;
  return BondedAtLastFinalized(dag, id.public_key).value_or(false);
}

absl::StatusOr<bool> BondedAtLastFinalized(
    const casper::dag::DagStore& dag, const crypto::Secp256k1PublicKey& key) {
  std::optional<Hash32> lfb = dag.LastFinalized();
  if (!lfb.has_value()) return false;
  ASSIGN_OR_RETURN(const auto meta, dag.Meta(*lfb));
  return casper::block::StakeOf(meta->bonds, key) > 0;
}

}  // namespace rnode::node

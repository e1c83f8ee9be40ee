// Who this node is as a validator: its key (none on a read-only node) and
// whether that key has stake.
#ifndef RNODE_NODE_CORE_IDENTITY_H_
#define RNODE_NODE_CORE_IDENTITY_H_

#include <optional>

#include "absl/status/statusor.h"

#include "casper/dag/dag_store.h"
#include "crypto/secp256k1.h"

namespace rnode::node {

struct NodeIdentity {
  std::optional<crypto::Secp256k1PrivateKey> key;
  crypto::Secp256k1PublicKey public_key{};  // zero when read-only

  bool is_validator() const { return key.has_value(); }
};

// Whether `key` has stake in the last finalized block's bonds (false when
// nothing is finalized); the DAG's error when that block cannot be read.
// Any thread.
absl::StatusOr<bool> BondedAtLastFinalized(
    const casper::dag::DagStore& dag, const crypto::Secp256k1PublicKey& key);

// Whether `id`'s key has stake in the last finalized block's bonds (false
// on a read-only node, or when that block cannot be read). Any thread.
bool SelfBonded(const casper::dag::DagStore& dag, const NodeIdentity& id);

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_IDENTITY_H_

// Who this node is as a validator: its key (none on a read-only node) and
// whether that key has stake.
#ifndef RNODE_NODE_CORE_IDENTITY_H_
#define RNODE_NODE_CORE_IDENTITY_H_

#include <optional>

#include "casper/dag/dag_store.h"
#include "crypto/secp256k1.h"

namespace rnode::node {

struct NodeIdentity {
  std::optional<crypto::Secp256k1PrivateKey> key;
  crypto::Secp256k1PublicKey public_key{};  // zero when read-only

  bool is_validator() const { return key.has_value(); }
};

// Whether `id`'s key has stake in the last finalized block's bonds (false
// on a read-only node). Any thread.
bool SelfBonded(const casper::dag::DagStore& dag, const NodeIdentity& id);

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_IDENTITY_H_

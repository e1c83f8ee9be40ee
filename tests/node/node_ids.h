// Node ids for the P2P tests: recognisable by their first and last bytes.
#ifndef RNODE_TESTS_NODE_NODE_IDS_H_
#define RNODE_TESTS_NODE_NODE_IDS_H_

#include <cstdint>

#include "node/p2p/peer.h"
#include "util/bytes.h"

namespace rnode::testing {

// A well-formed node id (kNodeIdBytes long), zero except its first byte
// `first` and its last byte `last`.
inline Bytes NodeIdOf(uint8_t first, uint8_t last = 0) {
  Bytes id(node::p2p::kNodeIdBytes, 0);
  id.front() = first;
  id.back() = last;
  return id;
}

}  // namespace rnode::testing

#endif  // RNODE_TESTS_NODE_NODE_IDS_H_

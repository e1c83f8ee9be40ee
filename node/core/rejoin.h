// Joining the shard again (docs/p2p.md "Joining again"): a node with
// retention that fell further behind than its peers keep blocks
// (SyncState::kBeyondHistory) cannot catch up block by block. It marks its
// data dir, the process closes the node and opens it again (RunNode), and
// the open forgets the chain: the DAG's records go, so the node starts as
// a new one and joins from its peers' last finalized state (StateJoin).
// What else the store holds stays: the tuple space's tries (the join finds
// the nodes it shares with them and does not fetch them again), the deploy
// pool and the records of deploys that left it.
//
// The marker makes the forgetting crash-safe: written before anything is
// deleted and removed only once every record is, so a node killed midway
// finishes at its next open.
#ifndef RNODE_NODE_CORE_REJOIN_H_
#define RNODE_NODE_CORE_REJOIN_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "casper/dag/dag_store.h"
#include "rspace/storage/kv_store.h"

namespace rnode::node {

// The marker, under the data dir. Its text says why (for the operator).
inline constexpr const char* kRejoinMarkerFile = "/rejoin";

// Records deleted in one write while forgetting.
inline constexpr size_t kForgetBatchKeys = 4096;

// Writes the marker into `data_dir` (atomically and durably, `why` as its
// text): the next open of the data dir forgets the chain. Internal naming
// the file when it cannot be written.
absl::Status MarkForRejoin(const std::string& data_dir, std::string_view why);

// Whether the marker is in `data_dir`.
bool MarkedForRejoin(const std::string& data_dir);

// If the marker is in `data_dir`: deletes every record of the DAG's
// `columns` of `store` (writes of at most kForgetBatchKeys keys), waits
// until that is durable, then removes the marker. Returns the records
// deleted, or nullopt when there was no marker (nothing is touched). The
// store's errors; the marker stays on any error, so the next open tries
// again.
absl::StatusOr<std::optional<uint64_t>> ForgetChainIfMarked(
    rspace::KeyValueStore* store, const casper::dag::DagColumns& columns,
    const std::string& data_dir);

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_REJOIN_H_

// `rnode run`: the node's main job. Composes the node, its API servers and
// events, serves until SIGTERM or SIGINT, then shuts down cleanly. A node
// that must join its shard again (node/core/rejoin.h) is closed and
// opened again in the same process, its servers on the same ports.
#ifndef RNODE_NODE_CLI_RUN_H_
#define RNODE_NODE_CLI_RUN_H_

#include <ostream>

#include "node/config/config.h"

namespace rnode::node {

// Runs the node until a termination signal (the caller must have blocked
// SIGTERM and SIGINT in every thread, see BlockTerminationSignals). Returns
// the process exit code: 0 after a clean shutdown, 1 for a configuration
// or start-up error (printed on `err`), 2 for an internal error.
int RunNode(const NodeConfig& config, std::ostream& out, std::ostream& err);

// Blocks SIGTERM and SIGINT in the calling thread (and the threads it
// starts later), so that RunNode can wait for them with sigtimedwait.
void BlockTerminationSignals();

}  // namespace rnode::node

#endif  // RNODE_NODE_CLI_RUN_H_

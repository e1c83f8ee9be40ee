// The fault-injection routes of the admin HTTP API (docs/reliability.md):
// POST /api/fault/isolate cuts the node off from its peers,
// /api/fault/disk-full fills its disk, /api/fault/heal lifts both; each
// also needs the node started with --fault-injection.
//
// They exist only in builds configured with the CMake option
// RNODE_FAULT_INJECTION (ON by default: the test and chaos builds); the
// release image is built with it OFF (docker/Dockerfile), and then
// FaultRoute answers nothing (404) and a node started with
// --fault-injection stops with an error.
#ifndef RNODE_NODE_API_FAULT_API_H_
#define RNODE_NODE_API_FAULT_API_H_

#include <optional>
#include <string>
#include <vector>

#include "node/core/node.h"
#include "node/http/http_server.h"

namespace rnode::node {

// Whether this build has the routes.
bool FaultInjectionBuilt();

// The answer to `req` (its path split at '/' into `parts`, without a
// leading "v1") when it is a fault route; nullopt otherwise.
std::optional<http::Response> FaultRoute(Node* node, const http::Request& req,
                                         const std::vector<std::string>& parts);

}  // namespace rnode::node

#endif  // RNODE_NODE_API_FAULT_API_H_

// The fault routes in a build without RNODE_FAULT_INJECTION (the release
// image): none (fault_api.h).
#include "node/api/fault_api.h"

namespace rnode::node {

bool FaultInjectionBuilt() { return false; }

std::optional<http::Response> FaultRoute(Node*, const http::Request&,
                                         const std::vector<std::string>&) {
  return std::nullopt;
}

}  // namespace rnode::node

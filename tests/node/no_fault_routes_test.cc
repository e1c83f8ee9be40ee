// The release image's admin API has no fault routes (issue 43): the variant
// built with RNODE_FAULT_INJECTION=OFF answers none of them, and says so.
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "node/api/fault_api.h"

namespace rnode::node {
namespace {

TEST(NoFaultRoutesTest, AnswersNoFaultRoute) {
  EXPECT_FALSE(FaultInjectionBuilt());
  for (const std::string route : {"isolate", "disk-full", "heal"}) {
    http::Request req;
    req.method = "POST";
    req.path = "/api/fault/" + route;
    // No node is needed: nothing is called on it.
    EXPECT_FALSE(FaultRoute(nullptr, req, {"api", "fault", route}).has_value())
        << route;
  }
}

}  // namespace
}  // namespace rnode::node

// JSON form of a signed deploy, as the `rnode sign-deploy` / `verify-deploy`
// tools read and write it: the DeployDataProto field names, with byte fields
// (deployer, sig) as lower-case hex and integers as JSON numbers.
#ifndef RNODE_NODE_TOOLS_DEPLOY_JSON_H_
#define RNODE_NODE_TOOLS_DEPLOY_JSON_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "casper/deploy.h"

namespace rnode::node {

// One line of JSON.
std::string DeployToJson(const casper::SignedDeploy& deploy);

// Parses and verifies. InvalidArgument naming the field on malformed JSON, a
// missing or mistyped field, or a deploy that does not verify. Unknown
// fields are ignored; `expirationTimestamp` and `language` are optional.
absl::StatusOr<casper::SignedDeploy> DeployFromJson(std::string_view json);

}  // namespace rnode::node

#endif  // RNODE_NODE_TOOLS_DEPLOY_JSON_H_

// What the gRPC and HTTP APIs share: the node's status, deploy-id and
// success texts, and the deploy finalization states.
#ifndef RNODE_NODE_API_API_COMMON_H_
#define RNODE_NODE_API_API_COMMON_H_

#include <string>
#include <string_view>

#include "DeployServiceCommon.pb.h"
#include "node/core/node.h"
#include "util/bytes.h"

namespace rnode::node {

// The API version the status reports ("1", as the public nodes).
inline constexpr std::string_view kApiVersion = "1";
// This node's version text.
std::string NodeVersion();

// The status reply (casper.Status) of `node`.
::casper::Status StatusOf(Node& node);

// "Success!\nDeployId is: <hex>": what doDeploy answers (clients parse it).
std::string DeploySuccessText(ByteView deploy_id);
// "Success! Block <hex> created and added.": what propose answers.
std::string ProposeSuccessText(const Hash32& block);

::casper::DeployFinalizationStateProto StateProto(DeployStatus::State state);
// "Finalized", "Failed", "Pending", "Expired" (the Web API's names).
std::string_view StateName(DeployStatus::State state);

}  // namespace rnode::node

#endif  // RNODE_NODE_API_API_COMMON_H_

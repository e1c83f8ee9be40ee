// The JSON bodies of the Web API (docs/node.md "HTTP"): reading fields the
// way JavaScript clients send them, and the /api/deploy body as the proto
// doDeploy takes. Separate from the handlers so that the fuzz target
// (fuzz/http_deploy_fuzz.cc) reaches exactly what a request does.
#ifndef RNODE_NODE_API_HTTP_JSON_H_
#define RNODE_NODE_API_HTTP_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "CasperMessage.pb.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace rnode::node {

// `text` as a JSON object (every JSON route takes one; json's accessors
// throw on other types); InvalidArgument "the body is not a JSON object"
// for anything else (malformed JSON, invalid UTF-8, another JSON type).
absl::StatusOr<nlohmann::json> ParseJsonObject(std::string_view text);

// An integer field of `obj`, sent as a JSON number or a numeric string (as
// JavaScript clients do for 64-bit values); 0 when absent or null and not
// `required`. InvalidArgument naming the field otherwise.
absl::StatusOr<int64_t> IntField(const nlohmann::json& obj,
                                 std::string_view name, bool required);

// A string field of `obj`; InvalidArgument naming it when absent or not a
// string.
absl::StatusOr<std::string> StringField(const nlohmann::json& obj,
                                        std::string_view name);

// The /api/deploy body, {"data":{term, timestamp, phloPrice, phloLimit,
// validAfterBlockNumber, shardId, expirationTimestamp?}, "deployer": hex,
// "signature": hex, "sigAlgorithm"?: name}, as the proto doDeploy takes
// (not verified: Node::Deploy does that). InvalidArgument naming what is
// wrong.
absl::StatusOr<::casper::DeployDataProto> DeployOfHttpBody(
    std::string_view body);

}  // namespace rnode::node

#endif  // RNODE_NODE_API_HTTP_JSON_H_

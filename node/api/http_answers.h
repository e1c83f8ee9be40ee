// The Web API's answers in their common shapes (docs/node.md "HTTP"): a JSON
// body with a status, an error as {"error": kind, "message": text}, and a
// failed node operation as the status its code means.
#ifndef RNODE_NODE_API_HTTP_ANSWERS_H_
#define RNODE_NODE_API_HTTP_ANSWERS_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "node/http/http_server.h"

namespace rnode::node {

http::Response Json(int status, const nlohmann::json& body);
http::Response Error(int status, std::string_view kind,
                     absl::string_view message);
// The status code and kind of a failed node operation: 507 disk_full (a
// full disk; Retry-After 5), 410 pruned (a state or blocks this node
// deleted: rspace::IsPruned), 400
// `invalid_kind`, 404, 409, 422, 503 busy (Retry-After 1), else 500.
http::Response ErrorOf(const absl::Status& s, std::string_view invalid_kind);

}  // namespace rnode::node

#endif  // RNODE_NODE_API_HTTP_ANSWERS_H_

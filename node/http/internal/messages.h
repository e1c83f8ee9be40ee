// Requests and responses between Beast and the server's own types: the
// handler's Request from Beast's, Beast's response from the handler's, and
// the answers the server gives itself (errors, busy, CORS preflight, a
// refused connection).
#ifndef RNODE_NODE_HTTP_INTERNAL_MESSAGES_H_
#define RNODE_NODE_HTTP_INTERNAL_MESSAGES_H_

#include <string>
#include <string_view>

#include <boost/beast/http.hpp>

#include "node/http/http_server.h"

namespace rnode::node::http::internal {

namespace bhttp = boost::beast::http;
using BeastRequest = bhttp::request<bhttp::string_body>;
using BeastResponse = bhttp::response<bhttp::string_body>;

// {"error":...,"message":...}; invalid UTF-8 in a message (an exception's
// text) is replaced rather than thrown on.
std::string ErrorJson(std::string_view error, std::string_view message);

// `status` with ErrorJson(error, message) as its JSON body.
BeastResponse ErrorResponse(unsigned version, bhttp::status status,
                            std::string_view error, std::string_view message);

// 503 {"error":"busy",...} with Retry-After: 1.
BeastResponse BusyResponse(unsigned version, std::string_view message);

// The handler's view of `beast_request` (its body is moved out): the path,
// the percent-decoded query, the content type.
Request ToRequest(BeastRequest&& beast_request);

// The handler's response as Beast's, or a 500 if it cannot be sent as it is
// (a status outside 100..599, a header that would split the response).
BeastResponse ToBeastResponse(Response&& response, unsigned version);

// The answer to OPTIONS: whatever origin, method and headers are asked for.
BeastResponse PreflightResponse(const BeastRequest& request);

// The raw answer to a connection beyond max_connections, written once
// without waiting (it fits any socket buffer).
std::string ConnectionRefusal(bool any_origin);

}  // namespace rnode::node::http::internal

#endif  // RNODE_NODE_HTTP_INTERNAL_MESSAGES_H_

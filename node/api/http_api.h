// The HTTP APIs (docs/node.md "HTTP API"): the public Web API on the HTTP
// port (/api/*, /status, /version, /metrics, /ws/events) and the admin API
// (POST /api/propose) on the admin port, with the public RUST node's JSON
// shapes and error model {"error":"<kind>","message":"..."}.
#ifndef RNODE_NODE_API_HTTP_API_H_
#define RNODE_NODE_API_HTTP_API_H_

#include <memory>

#include "absl/status/statusor.h"
#include "node/config/config.h"
#include "node/core/node.h"
#include "node/http/event_hub.h"
#include "node/http/http_server.h"
#include "node/metrics/metrics.h"

namespace rnode::node {

// The public Web API's handler. `node` and `metrics` are not owned and
// must outlive the handler's calls.
http::Handler PublicHttpHandler(Node* node, metrics::Registry* metrics);
// The admin API's handler (propose).
http::Handler AdminHttpHandler(Node* node);

// Both HTTP servers of a node.
class HttpApi {
 public:
  // Starts the public server (with `events` for /ws/events; not owned) and
  // the admin server on config.api_host. Unavailable naming the address
  // when a port cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpApi>> Start(
      Node* node, const NodeConfig& config, metrics::Registry* metrics,
      http::EventHub* events);
  void Stop();
  uint16_t public_port() const { return public_->port(); }
  uint16_t admin_port() const { return admin_->port(); }
  const http::HttpServer& public_server() const { return *public_; }

 private:
  std::unique_ptr<http::HttpServer> public_;
  std::unique_ptr<http::HttpServer> admin_;
};

}  // namespace rnode::node

#endif  // RNODE_NODE_API_HTTP_API_H_

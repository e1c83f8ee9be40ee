// HttpServer (node/http/http_server.h): checks the options and owns the
// ServerCore. The Boost parts live in internal/: server_core (acceptor,
// budgets, handler pool, Stop), http_session, websocket_session, messages.
#include "node/http/http_server.h"

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "node/http/internal/server_core.h"

namespace rnode::node::http {

class HttpServer::Impl {
 public:
  Impl(HttpServerOptions options, Handler handler, EventHub* events)
      : core(std::move(options), std::move(handler), events) {}
  internal::ServerCore core;
};

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    HttpServerOptions options, Handler handler, EventHub* events) {
  if (!handler) return absl::InvalidArgumentError("http server: no handler");
  if (options.threads == 0 || options.max_in_flight == 0 ||
      options.max_connections == 0) {
    return absl::InvalidArgumentError(
        "http server: threads, max_in_flight and max_connections must be at "
        "least 1");
  }
  if (options.events_path.empty() || options.events_path[0] != '/') {
    return absl::InvalidArgumentError(
        "http server: events_path must start with '/'");
  }
  auto impl =
      std::make_unique<Impl>(std::move(options), std::move(handler), events);
  if (absl::Status status = impl->core.Listen(); !status.ok()) return status;
  impl->core.Run();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

uint16_t HttpServer::port() const { return impl_->core.port(); }

void HttpServer::Stop() { impl_->core.Stop(); }

HttpServerStats HttpServer::stats() const { return impl_->core.stats(); }

}  // namespace rnode::node::http

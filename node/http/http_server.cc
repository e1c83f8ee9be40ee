// HttpServer (node/http/http_server.h): checks the options and owns the
// ServerCore. The Boost parts live in internal/: server_core (acceptor,
// budgets, handler pool, Stop), http_session, websocket_session, messages.
#include "node/http/http_server.h"

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "node/http/internal/server_core.h"

namespace rnode::node::http {

namespace {

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return absl::ascii_tolower(static_cast<unsigned char>(x)) ==
                  absl::ascii_tolower(static_cast<unsigned char>(y));
         });
}

// `host` without its port: "[::1]:80" is "[::1]", "a:80" is "a".
std::string_view HostName(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    const size_t close = host.find(']');
    return close == std::string_view::npos ? host : host.substr(0, close + 1);
  }
  const size_t colon = host.find(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

}  // namespace

bool OriginAllowed(std::string_view origin, std::string_view host,
                   const std::vector<std::string>& allowed) {
  for (const std::string& a : allowed) {
    if (a == "*" || EqualsNoCase(a, origin)) return true;
  }
  if (host.empty()) return false;
  // The same origin: the page was served by this server under this name.
  for (std::string_view scheme : {"http://", "https://"}) {
    if (origin.size() > scheme.size() &&
        EqualsNoCase(origin.substr(0, scheme.size()), scheme)) {
      return EqualsNoCase(origin.substr(scheme.size()), host);
    }
  }
  return false;
}

bool HostAllowed(std::string_view host,
                 const std::vector<std::string>& allowed) {
  if (allowed.empty() || host.empty()) return true;
  for (const std::string& a : allowed) {
    if (a == "*" || EqualsNoCase(a, host)) return true;
    if (HostName(a) == a && EqualsNoCase(a, HostName(host))) return true;
  }
  return false;
}

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

// One HTTP connection of the server: reads a request within its limits,
// answers it through the handler pool (or itself: limits, OPTIONS, busy),
// hands WebSocket upgrades to a WebSocketSession, and lingers before
// closing.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include "node/http/http_server.h"
#include "node/http/internal/messages.h"
#include "node/http/internal/server_core.h"
#include "node/http/internal/websocket_session.h"

namespace rnode::node::http::internal {
namespace {

// Of a peer-controlled header echoed in an error.
constexpr size_t kMaxEchoedBytes = 256;

// The first read of a request takes what has arrived, up to a page; the
// parser reads the rest.
constexpr size_t kFirstReadBytes = 4096;

// After an answer that closes the connection (413, 400, Connection: close)
// the server stops sending and reads what the client still sends, so that
// closing does not reset the connection before the client has read the
// answer. A client gets this long and this many bytes; then the socket is
// closed regardless.
constexpr std::chrono::seconds kLingerTimeout{2};
constexpr size_t kLingerMaxBytes = 1u << 20;

constexpr std::string_view kContinueResponse = "HTTP/1.1 100 Continue\r\n\r\n";

// One HTTP connection: reads a request, answers it (through the handler
// pool, or itself for limits, OPTIONS and upgrades), then the next. All
// members are used on the connection's strand only.
class HttpSession final : public Session {
 public:
  HttpSession(ServerCore* server, tcp::socket socket, ConnectionSlot slot)
      : Session(socket.get_executor()),
        server_(server),
        stream_(std::move(socket)),
        slot_(std::move(slot)) {}

  ~HttpSession() override {
    ReleaseBody();
    server_->RemoveSession(this);
  }

  // Starts serving on the connection's strand.
  void Start() {
    net::dispatch(executor(), [self = Self<HttpSession>()] {
      if (!self->server_->AddSession(self)) {
        self->CloseSocket();
        return;
      }
      self->WaitForRequest();
    });
  }

 protected:
  void Shutdown() override { CloseSocket(); }

 private:
  // How the connection goes on after a response.
  enum class After { kKeepAlive, kClose };

  // Waits up to idle_timeout for the first bytes of a request.
  void WaitForRequest() {
    head_ = false;
    parser_.emplace();
    parser_->body_limit(server_->options().max_body_bytes);
    parser_->header_limit(static_cast<uint32_t>(kMaxHeaderBytes));
    if (buffer_.size() > 0) {
      ReadHeader();
      return;
    }
    stream_.expires_after(server_->options().idle_timeout);
    stream_.async_read_some(
        buffer_.prepare(kFirstReadBytes),
        [self = Self<HttpSession>()](beast::error_code ec, size_t n) {
          self->buffer_.commit(n);
          if (ec || self->closed_) {
            self->CloseSocket();
            return;
          }
          self->ReadHeader();
        });
  }

  // The whole request must then arrive within read_timeout.
  void ReadHeader() {
    stream_.expires_after(server_->options().read_timeout);
    bhttp::async_read_header(
        stream_, buffer_, *parser_,
        [self = Self<HttpSession>()](beast::error_code ec, size_t) {
          self->OnHeader(ec);
        });
  }

  void OnHeader(beast::error_code ec) {
    if (closed_) return;
    if (ec) {
      OnReadError(ec);
      return;
    }
    if (parser_->is_done()) {
      Handle(parser_->release());
      return;
    }
    const BeastRequest& request = parser_->get();
    // The body's bytes come out of the server's budget before they are
    // read (a chunked body may grow to the limit; one announced above the
    // limit is answered 413 once read past it).
    const size_t max_body = server_->options().max_body_bytes;
    const size_t body = static_cast<size_t>(std::min<uint64_t>(
        parser_->content_length().value_or(max_body), max_body));
    if (!server_->TryAcquireBodyBytes(body)) {
      server_->CountBusy();
      Send(BusyResponse(request.version(),
                        "the node is reading as many request bodies as it "
                        "holds at once, try again later"),
           After::kClose);
      return;
    }
    body_bytes_ = body;
    if (request.version() >= 11 &&
        beast::iequals(request[bhttp::field::expect], "100-continue")) {
      net::async_write(
          stream_,
          net::buffer(kContinueResponse.data(), kContinueResponse.size()),
          [self = Self<HttpSession>()](beast::error_code ec, size_t) {
            if (ec || self->closed_) {
              self->CloseSocket();
              return;
            }
            self->ReadBody();
          });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    bhttp::async_read(
        stream_, buffer_, *parser_,
        [self = Self<HttpSession>()](beast::error_code ec, size_t) {
          if (self->closed_) return;
          if (ec) {
            self->OnReadError(ec);
            return;
          }
          self->Handle(self->parser_->release());
        });
  }

  void OnReadError(beast::error_code ec) {
    const unsigned version = parser_->get().version();
    if (ec == bhttp::error::body_limit) {
      server_->CountBodyTooLarge();
      Send(
          ErrorResponse(
              version, bhttp::status::payload_too_large, "body_too_large",
              "request body exceeds " +
                  std::to_string(server_->options().max_body_bytes) + " bytes"),
          After::kClose);
    } else if (ec == bhttp::error::header_limit) {
      Send(
          ErrorResponse(version, bhttp::status::request_header_fields_too_large,
                        "headers_too_large",
                        "request headers exceed " +
                            std::to_string(kMaxHeaderBytes) + " bytes"),
          After::kClose);
    } else if (ec.category() == bhttp::make_error_code(bhttp::error::bad_target)
                                    .category() &&
               ec != bhttp::error::end_of_stream &&
               ec != bhttp::error::partial_message) {
      Send(ErrorResponse(version == 10 ? 10 : 11, bhttp::status::bad_request,
                         "bad_request", ec.message()),
           After::kClose);
    } else {
      // End of stream, a timeout, a reset: nothing to answer.
      CloseSocket();
    }
  }

  void Handle(BeastRequest request) {
    version_ = request.version();
    keep_alive_ = request.keep_alive();
    head_ = request.method() == bhttp::verb::head;
    const After after = keep_alive_ ? After::kKeepAlive : After::kClose;
    const HttpServerOptions& options = server_->options();
    const beast::string_view host_field = request[bhttp::field::host];
    const beast::string_view origin_field = request[bhttp::field::origin];
    const std::string_view host(host_field.data(), host_field.size());
    const std::string_view origin(origin_field.data(), origin_field.size());
    if (!HostAllowed(host, options.allowed_hosts)) {
      Send(ErrorResponse(
               version_, bhttp::status::misdirected_request, "wrong_host",
               "this server does not answer for host '" +
                   std::string(host.substr(0, kMaxEchoedBytes)) + "'"),
           After::kClose);
      return;
    }
    // Listed (or "*"): the browser may read the answer. The same origin
    // needs no header.
    if (!origin.empty() &&
        OriginAllowed(origin, /*host=*/"", options.allowed_origins)) {
      cors_origin_ = std::string(origin);
    }
    if (request.method() == bhttp::verb::options && !cors_origin_.empty()) {
      Send(PreflightResponse(request), after);
      return;
    }
    if (websocket::is_upgrade(request)) {
      // Browsers let any page open a WebSocket to any address: only the
      // server's own pages and listed origins subscribe.
      if (!origin.empty() &&
          !OriginAllowed(origin, host, options.allowed_origins)) {
        Send(ErrorResponse(version_, bhttp::status::forbidden,
                           "forbidden_origin",
                           "WebSocket from origin '" +
                               std::string(origin.substr(0, kMaxEchoedBytes)) +
                               "' refused"),
             after);
        return;
      }
      const beast::string_view target = request.target();
      const std::string path(target.substr(0, target.find('?')));
      if (server_->events() == nullptr ||
          path != server_->options().events_path) {
        Send(ErrorResponse(version_, bhttp::status::not_found, "not_found",
                           "no WebSocket endpoint at " + path),
             after);
        return;
      }
      Upgrade(std::move(request), after);
      return;
    }
    if (!server_->TryAcquireHandlerSlot()) {
      server_->CountBusy();
      Send(BusyResponse(version_,
                        "the node is handling " +
                            std::to_string(server_->options().max_in_flight) +
                            " requests, try again later"),
           after);
      return;
    }
    // No timeout while the handler runs: nothing is pending on the socket.
    stream_.expires_never();
    server_->RunHandler(ToRequest(std::move(request)), executor(),
                        [self = Self<HttpSession>()](Response response) {
                          self->OnHandlerDone(std::move(response));
                        });
  }

  // Gives back the body's share of the server's budget (once).
  void ReleaseBody() {
    if (body_bytes_ == 0) return;
    server_->ReleaseBodyBytes(body_bytes_);
    body_bytes_ = 0;
  }

  void OnHandlerDone(Response response) {
    if (closed_) return;
    Send(ToBeastResponse(std::move(response), version_),
         keep_alive_ ? After::kKeepAlive : After::kClose);
  }

  // Hands the socket to a WebSocketSession subscribed to the hub, or
  // answers 503 when the hub is at its subscriber bound.
  void Upgrade(BeastRequest request, After after) {
    // The wake runs on publishing threads: it only posts to the strand,
    // where the session pointer is set and read.
    auto target = std::make_shared<std::weak_ptr<WebSocketSession>>();
    auto subscription =
        server_->events()->Subscribe([target, executor = executor()] {
          net::post(executor, [target] {
            if (auto session = target->lock()) session->Pump();
          });
        });
    if (!subscription.ok()) {
      server_->CountBusy();
      Send(BusyResponse(version_, std::string(subscription.status().message())),
           after);
      return;
    }
    closed_ = true;
    auto session = std::make_shared<WebSocketSession>(
        server_, stream_.release_socket(), std::move(slot_),
        *std::move(subscription));
    *target = session;
    session->Run(std::move(request));
  }

  void Send(BeastResponse response, After after) {
    ReleaseBody();  // answered: the request's body is done with
    if (!cors_origin_.empty()) {
      const auto& allowed = server_->options().allowed_origins;
      const bool any =
          std::find(allowed.begin(), allowed.end(), "*") != allowed.end();
      response.set(bhttp::field::access_control_allow_origin,
                   any ? std::string("*") : cors_origin_);
      if (!any) response.set(bhttp::field::vary, "Origin");
      cors_origin_.clear();
    }
    response.keep_alive(after == After::kKeepAlive);
    response.prepare_payload();
    // A HEAD answer has the headers of the GET answer and no body.
    if (head_) response.body().clear();
    response_.emplace(std::move(response));
    stream_.expires_after(server_->options().write_timeout);
    bhttp::async_write(
        stream_, *response_,
        [self = Self<HttpSession>(), after](beast::error_code ec, size_t) {
          self->response_.reset();
          if (ec || self->closed_) {
            self->CloseSocket();
            return;
          }
          switch (after) {
            case After::kKeepAlive:
              self->WaitForRequest();
              return;
            case After::kClose:
              self->Linger();
              return;
          }
        });
  }

  // Sends FIN, then discards what the client still sends until it closes,
  // kLingerTimeout passes or kLingerMaxBytes arrived.
  void Linger() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    buffer_.consume(buffer_.size());
    stream_.expires_after(kLingerTimeout);
    LingerRead();
  }

  void LingerRead() {
    stream_.async_read_some(
        buffer_.prepare(kFirstReadBytes),
        [self = Self<HttpSession>()](beast::error_code ec, size_t n) {
          self->lingered_bytes_ += n;
          if (ec || self->closed_ || self->lingered_bytes_ > kLingerMaxBytes) {
            self->CloseSocket();
            return;
          }
          self->LingerRead();
        });
  }

  void CloseSocket() {
    ReleaseBody();
    if (closed_) return;
    closed_ = true;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
    slot_.Release();
  }

  ServerCore* const server_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  // The response being written (it must live until the write ends).
  std::optional<BeastResponse> response_;
  ConnectionSlot slot_;
  unsigned version_ = 11;
  // The current request's Origin when allowed (the answer names it).
  std::string cors_origin_;
  bool keep_alive_ = false;
  bool head_ = false;
  // The socket is closed or was handed to a WebSocketSession.
  bool closed_ = false;
  size_t lingered_bytes_ = 0;
  // The current request's share of the server's body budget.
  size_t body_bytes_ = 0;
};

}  // namespace

void StartHttpSession(ServerCore* server, tcp::socket socket,
                      ConnectionSlot slot) {
  auto session =
      std::make_shared<HttpSession>(server, std::move(socket), std::move(slot));
  session->Start();
}

}  // namespace rnode::node::http::internal

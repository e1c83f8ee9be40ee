// HttpServer on Boost.Beast: the acceptor, HTTP sessions, WebSocket event
// sessions and the handler pool (the only file of node/http that includes
// Boost: Beast compiles slowly).
#include "node/http/http_server.h"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "util/logging.h"
#include "util/mutex.h"

namespace rnode::node::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace websocket = boost::beast::websocket;
using tcp = net::ip::tcp;
using BeastRequest = bhttp::request<bhttp::string_body>;
using BeastResponse = bhttp::response<bhttp::string_body>;

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

// After a failed accept (e.g. out of file descriptors) the acceptor waits
// this long before trying again instead of spinning; connections close in
// that time.
constexpr std::chrono::milliseconds kAcceptRetryDelay{100};

// How long a browser may cache a CORS preflight answer. Browsers cap it (2 h
// in Chromium); an hour saves nearly every repeated preflight.
constexpr int kPreflightMaxAgeSeconds = 3600;

// Largest message a WebSocket client may send. The server ignores what
// clients send; the bound only stops one from making it buffer much.
constexpr size_t kMaxWebSocketMessageBytes = 64u << 10;

// A close reason travels in a control frame: 125 bytes of payload, two of
// them the code (RFC 6455 5.5).
constexpr size_t kMaxCloseReasonBytes = 123;

// Log lines a client can trigger (handler exceptions, accept errors), per
// second.
constexpr double kLogLinesPerSecond = 5;

constexpr std::string_view kContinueResponse = "HTTP/1.1 100 Continue\r\n\r\n";

// {"error":...,"message":...}; invalid UTF-8 in a message (an exception's
// text) is replaced rather than thrown on.
std::string ErrorJson(std::string_view error, std::string_view message) {
  return nlohmann::json{{"error", error}, {"message", message}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

BeastResponse ErrorResponse(unsigned version, bhttp::status status,
                            std::string_view error, std::string_view message) {
  BeastResponse response(status, version);
  response.set(bhttp::field::content_type, "application/json");
  response.body() = ErrorJson(error, message);
  return response;
}

BeastResponse BusyResponse(unsigned version, std::string_view message) {
  BeastResponse response = ErrorResponse(
      version, bhttp::status::service_unavailable, "busy", message);
  response.set(bhttp::field::retry_after, "1");
  return response;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes a query component ('+' is a space); a malformed escape is
// kept as it is.
std::string DecodeQueryComponent(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() &&
               HexDigit(text[i + 1]) >= 0 && HexDigit(text[i + 2]) >= 0) {
      out +=
          static_cast<char>(HexDigit(text[i + 1]) * 16 + HexDigit(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::map<std::string, std::string> ParseQuery(std::string_view query) {
  std::map<std::string, std::string> out;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view()
                                          : query.substr(amp + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    std::string key = DecodeQueryComponent(item.substr(0, eq));
    std::string value = eq == std::string_view::npos
                            ? std::string()
                            : DecodeQueryComponent(item.substr(eq + 1));
    out[std::move(key)] = std::move(value);
  }
  return out;
}

Request ToRequest(BeastRequest&& beast_request) {
  Request request;
  request.method = std::string(beast_request.method_string());
  request.target = std::string(beast_request.target());
  std::string_view target = request.target;
  const size_t question = target.find('?');
  request.path = std::string(target.substr(0, question));
  if (question != std::string_view::npos) {
    request.query = ParseQuery(target.substr(question + 1));
  }
  request.content_type = std::string(beast_request[bhttp::field::content_type]);
  request.body = std::move(beast_request.body());
  return request;
}

bool IsHeaderTokenSafe(std::string_view text) {
  for (char c : text) {
    if (c == '\r' || c == '\n' || c == '\0') return false;
  }
  return true;
}

// The handler's response as Beast's, or a 500 if it cannot be sent as it is
// (a status outside 100..599, a header that would split the response).
BeastResponse ToBeastResponse(Response&& response, unsigned version) {
  if (response.status < 100 || response.status > 599) {
    return ErrorResponse(
        version, bhttp::status::internal_server_error, "internal",
        "handler returned status " + std::to_string(response.status));
  }
  BeastResponse out;
  out.version(version);
  out.result(static_cast<unsigned>(response.status));
  if (!IsHeaderTokenSafe(response.content_type)) {
    return ErrorResponse(version, bhttp::status::internal_server_error,
                         "internal", "handler returned a bad content type");
  }
  if (!response.content_type.empty()) {
    out.set(bhttp::field::content_type, response.content_type);
  }
  for (const auto& [name, value] : response.headers) {
    if (name.empty() || !IsHeaderTokenSafe(name) || !IsHeaderTokenSafe(value)) {
      return ErrorResponse(version, bhttp::status::internal_server_error,
                           "internal", "handler returned a bad header");
    }
    const bhttp::field field = bhttp::string_to_field(name);
    if (field == bhttp::field::content_length ||
        field == bhttp::field::transfer_encoding ||
        field == bhttp::field::connection) {
      continue;  // The server's own.
    }
    out.insert(name, value);
  }
  out.body() = std::move(response.body);
  return out;
}

// The answer to OPTIONS: whatever origin, method and headers are asked for.
BeastResponse PreflightResponse(const BeastRequest& request) {
  BeastResponse response(bhttp::status::no_content, request.version());
  const beast::string_view method =
      request[bhttp::field::access_control_request_method];
  const beast::string_view headers =
      request[bhttp::field::access_control_request_headers];
  response.set(bhttp::field::access_control_allow_methods,
               method.empty() ? "GET, POST, PUT, DELETE, OPTIONS" : method);
  response.set(bhttp::field::access_control_allow_headers,
               headers.empty() ? "*" : headers);
  response.set(bhttp::field::access_control_max_age,
               std::to_string(kPreflightMaxAgeSeconds));
  return response;
}

// The raw answer to a connection beyond max_connections, written once
// without waiting (it fits any socket buffer).
std::string ConnectionRefusal() {
  const std::string body =
      ErrorJson("busy", "too many connections, try again later");
  return "HTTP/1.1 503 Service Unavailable\r\n"
         "Content-Type: application/json\r\n"
         "Retry-After: 1\r\n"
         "Access-Control-Allow-Origin: *\r\n"
         "Connection: close\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

class ServerCore;

// Holds one of the max_connections slots; gives it back when destroyed.
class ConnectionSlot {
 public:
  ConnectionSlot() = default;
  explicit ConnectionSlot(ServerCore* server) : server_(server) {}
  ConnectionSlot(ConnectionSlot&& other) noexcept
      : server_(std::exchange(other.server_, nullptr)) {}
  ConnectionSlot& operator=(ConnectionSlot&& other) noexcept {
    if (this != &other) {
      Release();
      server_ = std::exchange(other.server_, nullptr);
    }
    return *this;
  }
  ~ConnectionSlot() { Release(); }

  void Release();

 private:
  ServerCore* server_ = nullptr;
};

// A connection the server can shut down. Sessions live in shared_ptrs held
// by their pending operations; the server keeps weak references.
class Session : public std::enable_shared_from_this<Session> {
 public:
  // `strand`: the executor of the connection's socket.
  explicit Session(net::any_io_executor strand) : strand_(std::move(strand)) {}
  virtual ~Session() = default;

  // Closes the session from its strand (Stop). Thread-safe.
  void PostShutdown() {
    net::post(strand_, [self = shared_from_this()] { self->Shutdown(); });
  }

 protected:
  const net::any_io_executor& executor() const { return strand_; }
  // REQUIRES: on the session's strand.
  virtual void Shutdown() = 0;
  template <typename T>
  std::shared_ptr<T> Self() {
    return std::static_pointer_cast<T>(shared_from_this());
  }

 private:
  const net::any_io_executor strand_;
};

// Everything the server shares with its sessions. Lives until Stop has
// destroyed the io_context (and with it every session).
//
// Lock order: stop_mu_, then mu_ or connections_mu_ (never both). Session
// destructors take mu_ and connections_mu_ and never stop_mu_.
class ServerCore {
 public:
  ServerCore(HttpServerOptions options, Handler handler, EventHub* events)
      : options_(std::move(options)),
        handler_(std::move(handler)),
        events_(events),
        connection_refusal_(ConnectionRefusal()) {}
  ~ServerCore() { Stop(); }

  // Resolves and binds. Called once, before Run.
  absl::Status Listen();
  // Starts the threads and accepting.
  void Run();
  void Stop();

  uint16_t port() const { return port_; }
  HttpServerStats stats() const;
  const HttpServerOptions& options() const { return options_; }
  EventHub* events() const { return events_; }
  bool AllowLog() { return log_limiter_.Allow(); }

  // Registers a session for Stop. False once stopping: the caller closes it.
  bool AddSession(const std::shared_ptr<Session>& session) {
    MutexLock lock(&mu_);
    if (stopping_) return false;
    sessions_.emplace(session.get(), session);
    return true;
  }
  void RemoveSession(Session* session) {
    MutexLock lock(&mu_);
    sessions_.erase(session);
  }

  // Takes a slot of the handler budget; false when max_in_flight are taken.
  bool TryAcquireHandlerSlot() {
    size_t current = in_flight_.load(std::memory_order_relaxed);
    do {
      if (current >= options_.max_in_flight) return false;
    } while (!in_flight_.compare_exchange_weak(current, current + 1,
                                               std::memory_order_acq_rel));
    return true;
  }

  // Runs the handler on the pool (the caller holds a handler slot, which is
  // given back when the handler returns), then `done(response)` on
  // `executor`.
  template <typename Done>
  void RunHandler(Request request, net::any_io_executor executor, Done done) {
    net::post(*handlers_, [this, request = std::move(request),
                           executor = std::move(executor),
                           done = std::move(done)]() mutable {
      Response response = CallHandler(request);
      requests_served_.fetch_add(1, std::memory_order_relaxed);
      in_flight_.fetch_sub(1, std::memory_order_acq_rel);
      net::post(executor, [response = std::move(response),
                           done = std::move(done)]() mutable {
        done(std::move(response));
      });
    });
  }

  void ReleaseConnection() {
    std::lock_guard<std::mutex> lock(connections_mu_);
    open_connections_.fetch_sub(1, std::memory_order_relaxed);
    connections_cv_.notify_all();
  }

  void CountBusy() { busy_refusals_.fetch_add(1, std::memory_order_relaxed); }
  void CountBodyTooLarge() {
    body_too_large_.fetch_add(1, std::memory_order_relaxed);
  }
  void CountWebSocket(int delta) {
    open_websockets_.fetch_add(delta, std::memory_order_relaxed);
  }

 private:
  Response CallHandler(const Request& request);
  bool TryAcquireConnection() {
    std::lock_guard<std::mutex> lock(connections_mu_);
    if (open_connections_.load(std::memory_order_relaxed) >=
        options_.max_connections) {
      return false;
    }
    open_connections_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  void Accept();
  void OnAccept(beast::error_code error, tcp::socket socket);
  void Refuse(tcp::socket socket);
  void RunIoThread();

  const HttpServerOptions options_;
  const Handler handler_;
  EventHub* const events_;
  const std::string connection_refusal_;
  const std::shared_ptr<spdlog::logger> log_ = Log("http");
  LogRateLimiter log_limiter_{kLogLinesPerSecond};
  uint16_t port_ = 0;

  std::atomic<uint64_t> requests_served_{0};
  std::atomic<uint64_t> busy_refusals_{0};
  std::atomic<uint64_t> body_too_large_{0};
  std::atomic<uint64_t> connection_refusals_{0};
  std::atomic<int64_t> open_websockets_{0};
  std::atomic<size_t> in_flight_{0};

  // Written under connections_mu_ (so Stop's timed wait sees every change:
  // util's CondVar has no deadline), read anywhere.
  std::mutex connections_mu_;
  std::condition_variable connections_cv_;
  std::atomic<size_t> open_connections_{0};

  Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions_
      ABSL_GUARDED_BY(mu_);

  Mutex stop_mu_;
  bool stopped_ ABSL_GUARDED_BY(stop_mu_) = false;

  // Asio objects, created by Listen and Run and destroyed by Stop (the
  // io_context last: destroying it destroys the sessions its queued
  // handlers hold).
  std::unique_ptr<net::io_context> io_;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work_;
  std::unique_ptr<tcp::acceptor> acceptor_;
  std::unique_ptr<net::steady_timer> accept_retry_;
  std::unique_ptr<net::thread_pool> handlers_;
  std::vector<std::thread> io_threads_;
};

void ConnectionSlot::Release() {
  if (server_ != nullptr) std::exchange(server_, nullptr)->ReleaseConnection();
}

// A WebSocket subscriber of the EventHub: writes its events one at a time,
// reads and drops what the client sends, closes when the hub closes the
// subscription. All members are used on the connection's strand only.
class WebSocketSession final : public Session {
 public:
  WebSocketSession(ServerCore* server, tcp::socket socket, ConnectionSlot slot,
                   std::unique_ptr<EventSubscription> subscription)
      : Session(socket.get_executor()),
        server_(server),
        ws_(std::move(socket)),
        subscription_(std::move(subscription)),
        close_timer_(ws_.get_executor()),
        slot_(std::move(slot)) {}

  ~WebSocketSession() override {
    if (accepted_) server_->CountWebSocket(-1);
    server_->RemoveSession(this);
  }

  void Run(BeastRequest request) {
    if (!server_->AddSession(shared_from_this())) {
      Abort();
      return;
    }
    beast::get_lowest_layer(ws_).expires_never();
    websocket::stream_base::timeout timeout;
    timeout.handshake_timeout = server_->options().read_timeout;
    timeout.idle_timeout = server_->options().idle_timeout;
    timeout.keep_alive_pings = true;
    ws_.set_option(timeout);
    ws_.read_message_max(kMaxWebSocketMessageBytes);
    ws_.text(true);
    // One frame per event, written at once (Beast would split a message
    // into write_buffer_bytes frames, each its own write).
    ws_.auto_fragment(false);
    ws_.async_accept(request,
                     [self = Self<WebSocketSession>()](beast::error_code ec) {
                       self->OnAccept(ec);
                     });
  }

  // Writes what the subscription has, or closes the stream when it is
  // closed.
  void Pump() {
    if (!accepted_ || closing_ || aborted_) return;
    if (writing_ == nullptr) {
      writing_ = subscription_->TryPop();
      if (writing_ != nullptr) {
        ws_.async_write(
            net::buffer(*writing_),
            [self = Self<WebSocketSession>()](beast::error_code ec, size_t) {
              self->OnWrite(ec);
            });
        return;
      }
    }
    // Nothing to write now, or a write is pending: Beast sends a close frame
    // after the pending write.
    absl::Status status = subscription_->status();
    if (!status.ok()) {
      const auto code = absl::IsResourceExhausted(status)
                            ? websocket::close_code::policy_error
                            : websocket::close_code::going_away;
      StartClose(code, std::string(status.message()));
    }
  }

 protected:
  void Shutdown() override {
    if (!accepted_) {
      Abort();
    } else {
      StartClose(websocket::close_code::going_away, "server stopping");
    }
  }

 private:
  void OnAccept(beast::error_code ec) {
    if (ec || aborted_) {
      Abort();
      return;
    }
    accepted_ = true;
    server_->CountWebSocket(1);
    Read();
    Pump();
  }

  void Read() {
    ws_.async_read(read_buffer_,
                   [self = Self<WebSocketSession>()](
                       beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  void OnRead(beast::error_code ec) {
    if (ec) {
      // The peer closed (Beast has answered its close frame) or the
      // connection failed. During our own close the close operation ends
      // the connection (or the close timer does).
      if (!closing_) Abort();
      return;
    }
    read_buffer_.consume(read_buffer_.size());
    Read();
  }

  void OnWrite(beast::error_code ec) {
    writing_ = nullptr;
    if (ec) {
      Abort();
      return;
    }
    Pump();
  }

  void StartClose(websocket::close_code code, std::string_view reason) {
    if (closing_ || aborted_) return;
    closing_ = true;
    close_timer_.expires_after(kWebSocketCloseTimeout);
    close_timer_.async_wait(
        [self = Self<WebSocketSession>()](beast::error_code ec) {
          if (!ec) self->Abort();
        });
    websocket::close_reason close(code);
    close.reason.assign(reason.data(),
                        std::min(reason.size(), kMaxCloseReasonBytes));
    ws_.async_close(close,
                    [self = Self<WebSocketSession>()](beast::error_code) {
                      self->close_timer_.cancel();
                      self->slot_.Release();
                    });
  }

  void Abort() {
    if (aborted_) return;
    aborted_ = true;
    close_timer_.cancel();
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().shutdown(tcp::socket::shutdown_both,
                                                   ignored);
    beast::get_lowest_layer(ws_).close();
    slot_.Release();
  }

  ServerCore* const server_;
  websocket::stream<beast::tcp_stream> ws_;
  beast::flat_buffer read_buffer_;
  const std::unique_ptr<EventSubscription> subscription_;
  // The event being written (the buffer must live until the write ends).
  std::shared_ptr<const std::string> writing_;
  net::steady_timer close_timer_;
  ConnectionSlot slot_;
  bool accepted_ = false;
  bool closing_ = false;
  bool aborted_ = false;
};

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

  ~HttpSession() override { server_->RemoveSession(this); }

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
    if (request.method() == bhttp::verb::options) {
      Send(PreflightResponse(request), after);
      return;
    }
    if (websocket::is_upgrade(request)) {
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
    response.set(bhttp::field::access_control_allow_origin, "*");
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
  bool keep_alive_ = false;
  bool head_ = false;
  // The socket is closed or was handed to a WebSocketSession.
  bool closed_ = false;
  size_t lingered_bytes_ = 0;
};

absl::Status ServerCore::Listen() {
  io_ = std::make_unique<net::io_context>(static_cast<int>(options_.threads));
  beast::error_code ec;
  tcp::resolver resolver(*io_);
  auto endpoints = resolver.resolve(
      options_.host, std::to_string(options_.port),
      tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || endpoints.empty()) {
    return absl::InvalidArgumentError("http server: cannot resolve host '" +
                                      options_.host + "': " + ec.message());
  }
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  const std::string where =
      (endpoint.address().is_v6() ? "[" + endpoint.address().to_string() + "]"
                                  : endpoint.address().to_string()) +
      ":" + std::to_string(endpoint.port());
  auto fail = [&](std::string_view what) {
    return absl::UnavailableError("http server: cannot " + std::string(what) +
                                  " " + where + ": " + ec.message());
  };
  acceptor_ = std::make_unique<tcp::acceptor>(net::make_strand(*io_));
  if (acceptor_->open(endpoint.protocol(), ec); ec) return fail("open");
  // Lets a restarted node bind while old connections are in TIME_WAIT; two
  // listeners on one port still fail on Linux.
  if (acceptor_->set_option(net::socket_base::reuse_address(true), ec); ec) {
    return fail("configure");
  }
  if (acceptor_->bind(endpoint, ec); ec) return fail("bind");
  if (acceptor_->listen(net::socket_base::max_listen_connections, ec); ec) {
    return fail("listen on");
  }
  port_ = acceptor_->local_endpoint(ec).port();
  if (ec) return fail("read the port of");
  accept_retry_ =
      std::make_unique<net::steady_timer>(acceptor_->get_executor());
  return absl::OkStatus();
}

void ServerCore::Run() {
  work_.emplace(io_->get_executor());
  handlers_ = std::make_unique<net::thread_pool>(options_.max_in_flight);
  net::post(acceptor_->get_executor(), [this] { Accept(); });
  io_threads_.reserve(options_.threads);
  for (size_t i = 0; i < options_.threads; ++i) {
    io_threads_.emplace_back([this] { RunIoThread(); });
  }
}

void ServerCore::RunIoThread() {
  for (;;) {
    try {
      io_->run();
      return;
    } catch (const std::exception& e) {
      // A completion handler threw (e.g. out of memory): log and go on, the
      // other connections are unaffected.
      if (AllowLog())
        log_->error("http server: I/O thread caught {}", e.what());
    }
  }
}

void ServerCore::Accept() {
  acceptor_->async_accept(net::make_strand(*io_),
                          [this](beast::error_code ec, tcp::socket socket) {
                            OnAccept(ec, std::move(socket));
                          });
}

void ServerCore::OnAccept(beast::error_code ec, tcp::socket socket) {
  if (ec == net::error::operation_aborted || !acceptor_->is_open()) return;
  if (ec) {
    if (AllowLog()) log_->warn("http server: accept failed: {}", ec.message());
    accept_retry_->expires_after(kAcceptRetryDelay);
    accept_retry_->async_wait([this](beast::error_code wait_ec) {
      if (!wait_ec && acceptor_->is_open()) Accept();
    });
    return;
  }
  // Responses and events are written whole; Nagle's algorithm would only
  // hold their tails back for the client's delayed ACK.
  beast::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  if (!TryAcquireConnection()) {
    Refuse(std::move(socket));
  } else {
    auto session = std::make_shared<HttpSession>(this, std::move(socket),
                                                 ConnectionSlot(this));
    session->Start();
  }
  Accept();
}

void ServerCore::Refuse(tcp::socket socket) {
  connection_refusals_.fetch_add(1, std::memory_order_relaxed);
  beast::error_code ignored;
  socket.non_blocking(true, ignored);
  socket.write_some(net::buffer(connection_refusal_), ignored);
  socket.shutdown(tcp::socket::shutdown_send, ignored);
  socket.close(ignored);
}

Response ServerCore::CallHandler(const Request& request) {
  std::string message;
  try {
    return handler_(request);
  } catch (const std::exception& e) {
    message = e.what();
  } catch (...) {
    message = "unknown exception";
  }
  if (AllowLog()) {
    log_->warn("http server: handler for {} {} threw: {}", request.method,
               request.path, message);
  }
  Response response;
  response.status = 500;
  response.body = ErrorJson("internal", message);
  return response;
}

void ServerCore::Stop() {
  MutexLock stop_lock(&stop_mu_);
  if (stopped_) return;
  stopped_ = true;
  std::vector<std::shared_ptr<Session>> sessions;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    for (auto& [key, session] : sessions_) {
      if (auto locked = session.lock()) sessions.push_back(std::move(locked));
    }
  }
  if (io_ == nullptr || handlers_ == nullptr) return;  // Never ran.
  net::post(acceptor_->get_executor(), [this] {
    beast::error_code ignored;
    acceptor_->close(ignored);
    accept_retry_->cancel();
  });
  for (auto& session : sessions) session->PostShutdown();
  sessions.clear();
  {
    std::unique_lock<std::mutex> lock(connections_mu_);
    connections_cv_.wait_until(
        lock, std::chrono::steady_clock::now() + kStopGracePeriod, [this] {
          return open_connections_.load(std::memory_order_relaxed) == 0;
        });
  }
  work_.reset();
  io_->stop();
  for (std::thread& thread : io_threads_) thread.join();
  io_threads_.clear();
  // Handlers still running finish; their responses are posted to the
  // stopped io_context and dropped with it.
  handlers_->join();
  accept_retry_.reset();
  acceptor_.reset();
  io_.reset();
  handlers_.reset();
}

HttpServerStats ServerCore::stats() const {
  HttpServerStats stats;
  stats.requests_served = requests_served_.load(std::memory_order_relaxed);
  stats.busy_refusals = busy_refusals_.load(std::memory_order_relaxed);
  stats.body_too_large_refusals =
      body_too_large_.load(std::memory_order_relaxed);
  stats.connection_refusals =
      connection_refusals_.load(std::memory_order_relaxed);
  stats.open_connections = open_connections_.load(std::memory_order_relaxed);
  stats.open_websockets = static_cast<uint64_t>(
      std::max<int64_t>(0, open_websockets_.load(std::memory_order_relaxed)));
  stats.in_flight = in_flight_.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace

class HttpServer::Impl {
 public:
  Impl(HttpServerOptions options, Handler handler, EventHub* events)
      : core(std::move(options), std::move(handler), events) {}
  ServerCore core;
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

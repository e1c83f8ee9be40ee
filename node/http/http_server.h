// The node's HTTP/1.1 + WebSocket server (Boost.Beast on Asio, ADR 0010):
// bounded connections, bodies, headers, time and handler concurrency; CORS
// open to any origin; /ws/events streams an EventHub.
#ifndef RNODE_NODE_HTTP_HTTP_SERVER_H_
#define RNODE_NODE_HTTP_HTTP_SERVER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "node/http/event_hub.h"

namespace rnode::node::http {

// Loopback unless the operator opens the API on purpose.
inline constexpr char kDefaultHost[] = "127.0.0.1";

// Threads running the sockets (accept, read, write). They never run a
// handler, so one keeps up with many connections on a small node.
inline constexpr size_t kDefaultIoThreads = 1;

// Open connections (HTTP and WebSocket). Each costs a socket, buffers and,
// for a WebSocket, an event queue; 256 serves a block explorer and wallets
// and stays far below the default 1024 open-file limit.
inline constexpr size_t kDefaultMaxConnections = 256;

// Largest request body. The biggest request is a deploy (its term is at most
// limits::kMaxDeployTermBytes = 1 MiB, hex and JSON make it larger); 16 MiB
// is the public node's bound and keeps a malicious body's cost bounded.
inline constexpr size_t kDefaultMaxBodyBytes = 16u << 20;

// Bytes of request bodies being read or handled at once, across all
// connections: without it 256 connections each sending a 16 MiB body held
// 4 GiB. Four of the largest bodies at once; deploys are a few KiB.
inline constexpr size_t kDefaultMaxBodyBytesTotal = 64u << 20;

// Requests being handled at once, across all connections (the handler
// threads). Handlers call into the node and may block; 64 keeps the node
// responsive to a burst of wallets without letting clients pile up threads.
inline constexpr size_t kDefaultMaxInFlight = 64;

// A keep-alive connection with no request for this long is closed; a minute
// is what browsers and proxies expect of a server.
inline constexpr std::chrono::seconds kDefaultIdleTimeout{60};

// A request must arrive whole (headers and body) within this time of its
// first byte, so a slowloris client cannot hold a connection; 30 s is ample
// for a 16 MiB body on a slow link.
inline constexpr std::chrono::seconds kDefaultReadTimeout{30};

// A response must be written within this time, so a client that stops
// reading cannot hold a connection; as generous as the read timeout.
inline constexpr std::chrono::seconds kDefaultWriteTimeout{30};

// Largest request line plus headers: Beast's default (8 KiB), what common
// servers accept; anything larger is answered 431.
inline constexpr size_t kMaxHeaderBytes = 8u << 10;

// The WebSocket path of the node's event stream (the public node's).
inline constexpr char kDefaultEventsPath[] = "/ws/events";

// A WebSocket being closed (subscriber too slow, server stopping) gets this
// long to take the close frame and answer it before its socket is closed: a
// client that stopped reading must not hold the connection, a live one
// needs a few round trips.
inline constexpr std::chrono::seconds kWebSocketCloseTimeout{5};

// Stop waits at most this long for connections to close politely (the
// WebSocket close handshake) before closing their sockets, so a stuck client
// cannot hold up a node's shutdown.
inline constexpr std::chrono::seconds kStopGracePeriod{1};

struct HttpServerOptions {
  // An IP address or a host name resolved once at Start.
  std::string host = kDefaultHost;
  // 0: an ephemeral port (see HttpServer::port()).
  uint16_t port = 0;
  // I/O threads (at least 1).
  size_t threads = kDefaultIoThreads;
  // More connections than this are answered 503 busy and closed.
  size_t max_connections = kDefaultMaxConnections;
  // A larger body is answered 413 without being read.
  size_t max_body_bytes = kDefaultMaxBodyBytes;
  // The global body budget: a request whose body (its Content-Length, or
  // max_body_bytes when chunked) does not fit in what other requests hold
  // is answered 503 busy before its body is read, and the connection
  // closed. The bytes are held from the header until the answer.
  size_t max_body_bytes_total = kDefaultMaxBodyBytesTotal;
  // Global handler budget (at least 1): also the number of handler threads.
  size_t max_in_flight = kDefaultMaxInFlight;
  // Between requests on a keep-alive connection; also a WebSocket's idle
  // time (it is pinged at half of it and closed if the peer stays silent).
  std::chrono::seconds idle_timeout = kDefaultIdleTimeout;
  // From a request's first byte to its last; also the WebSocket handshake.
  std::chrono::seconds read_timeout = kDefaultReadTimeout;
  // For writing one response.
  std::chrono::seconds write_timeout = kDefaultWriteTimeout;
  // WebSocket upgrades of this path subscribe to the server's EventHub.
  std::string events_path = kDefaultEventsPath;
  // Browser origins (scheme://host[:port], as browsers send them in
  // Origin) whose pages may read the server's answers: a request from one
  // gets Access-Control-Allow-Origin naming it (Vary: Origin) and its
  // OPTIONS preflight is answered; "*" allows every origin. Empty (the
  // default): no CORS header, OPTIONS goes to the handler like any method,
  // so a web page elsewhere cannot read what the server answers.
  std::vector<std::string> allowed_origins;
  // Host header values (host or host:port, without case) the server
  // answers; empty: any. A request naming another host is answered 421
  // {"error":"wrong_host"}: a page whose name was rebound to this address
  // (DNS rebinding) still names its own host. A request without Host
  // (HTTP/1.0) is answered.
  std::vector<std::string> allowed_hosts;
};

// Whether a request from `origin` (its Origin header) to host `host` (its
// Host header) may be answered to the browser under `allowed` (see
// HttpServerOptions::allowed_origins): listed, "*" listed, or the same
// origin (the origin's authority is the Host header).
bool OriginAllowed(std::string_view origin, std::string_view host,
                   const std::vector<std::string>& allowed);
// Whether `host` (a Host header) is one of `allowed`
// (HttpServerOptions::allowed_hosts): empty `allowed` or an empty `host`
// allows; a listed name without a port matches it with any port.
bool HostAllowed(std::string_view host,
                 const std::vector<std::string>& allowed);

struct Request {
  std::string method;
  // The request target as sent: the path with its query.
  std::string target;
  // The target before '?', not percent-decoded.
  std::string path;
  // The query's parameters, percent-decoded ('+' is a space); a key without
  // '=' maps to ""; of repeated keys the last wins.
  std::map<std::string, std::string> query;
  std::string body;
  // The Content-Type header ("" if absent).
  std::string content_type;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Extra headers. Content-Length, Transfer-Encoding and Connection are the
  // server's (given here they are ignored); it adds
  // Access-Control-Allow-Origin too (HttpServerOptions::allowed_origins).
  // A status outside 100..599 or a header with CR or LF makes the answer
  // a 500.
  std::vector<std::pair<std::string, std::string>> headers;
};

// Called on the server's handler threads, up to max_in_flight calls at once
// (so it must be thread-safe); may block. An exception it throws becomes
// 500 {"error":"internal","message":...}. HEAD requests reach it too; the
// server drops the body of their answer.
using Handler = std::function<Response(const Request&)>;

// Counters for the node's metrics (a snapshot; each field is read on its
// own, so fields may be from slightly different moments).
struct HttpServerStats {
  // Handler calls completed (including those that threw).
  uint64_t requests_served = 0;
  // Requests answered 503 because max_in_flight handlers were running, and
  // WebSocket upgrades refused because the EventHub had max subscribers.
  uint64_t busy_refusals = 0;
  // Requests answered 413.
  uint64_t body_too_large_refusals = 0;
  // Connections refused because max_connections were open.
  uint64_t connection_refusals = 0;
  uint64_t open_connections = 0;
  uint64_t open_websockets = 0;
  uint64_t in_flight = 0;
  // Bytes of the body budget requests hold now.
  uint64_t body_bytes = 0;
};

// The server.
//
// Threads: `threads` I/O threads run an io_context; each connection is
// serialised on its own strand. Handlers run on a separate pool of
// max_in_flight threads; a request is handed to it only if a slot of the
// budget is free, else it is answered 503 {"error":"busy"} with
// Retry-After: 1 at once (no queue). One request per connection is read,
// handled and answered at a time (HTTP/1.1 keep-alive, no pipelining in
// parallel): that is the per-connection in-flight bound.
//
// Limits: a body over max_body_bytes is answered 413 {"error":
// "body_too_large"} without being read, a header block over kMaxHeaderBytes
// 431, a malformed request 400; each closes the connection. A request must
// arrive within read_timeout of its first byte, a keep-alive connection
// idle for idle_timeout is closed, a response must be written within
// write_timeout. Connections beyond max_connections get a 503 and are
// closed.
//
// A request whose Origin is allowed (options.allowed_origins) gets
// Access-Control-Allow-Origin naming it, and its OPTIONS preflight is
// answered 204 with the methods and headers asked for. A request whose
// Host is not allowed (options.allowed_hosts) is answered 421. A WebSocket
// upgrade whose Origin is neither allowed nor the server's own is refused
// 403 (browsers let any page open a WebSocket anywhere).
//
// WebSocket: an upgrade of options.events_path subscribes to `events` (404
// when it is null, 503 when the hub is at its subscriber bound) and streams
// its events as text frames, in order. What the client sends is read and
// ignored (control frames are answered). A subscriber the hub drops as too
// slow is closed with code 1008 and the hub's reason ("too slow: N events
// behind"); if the close cannot be written within kWebSocketCloseTimeout
// the socket is closed.
//
// Thread-safe: port(), stats() and Stop() may be called from any thread
// except a handler thread (Stop from a handler would wait for itself).
class HttpServer {
 public:
  // Binds host:port and starts serving. `events` is not owned; it must
  // outlive the server (or be null: no WebSocket endpoint). InvalidArgument
  // for bad options or host; Unavailable naming host:port when it cannot be
  // bound (e.g. "address already in use").
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      HttpServerOptions options, Handler handler, EventHub* events);

  // Stop().
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound port (the chosen one when options.port was 0).
  uint16_t port() const;

  // Stops accepting, closes every connection (WebSockets with code 1001, for
  // at most kStopGracePeriod before their sockets are closed) and joins the
  // threads. Waits for handlers that are running to return; their responses
  // are dropped. Idempotent; concurrent callers all return once stopped.
  void Stop();

  HttpServerStats stats() const;

 private:
  class Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

}  // namespace rnode::node::http

#endif  // RNODE_NODE_HTTP_HTTP_SERVER_H_

// The server's shared core (node/http/http_server.h): the acceptor, the
// connection and handler budgets, the handler pool, the session registry
// Stop closes, and the Session base both kinds of connection derive from.
#ifndef RNODE_NODE_HTTP_INTERNAL_SERVER_CORE_H_
#define RNODE_NODE_HTTP_INTERNAL_SERVER_CORE_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/error.hpp>

#include "absl/status/status.h"
#include "node/http/event_hub.h"
#include "node/http/http_server.h"

namespace rnode::node::http::internal {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

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
// Lock order: state_->stop_mu, then state_->mu or connections_mu_ (never
// both). Session destructors take state_->mu and connections_mu_ and never
// state_->stop_mu.
class ServerCore {
 public:
  // `events` (not owned, may be null) outlives the core.
  ServerCore(HttpServerOptions options, Handler handler, EventHub* events);
  ~ServerCore();  // Stop()

  // Resolves and binds. Called once, before Run.
  absl::Status Listen();
  // Starts the threads and accepting.
  void Run();
  void Stop();

  uint16_t port() const { return port_; }
  HttpServerStats stats() const;
  const HttpServerOptions& options() const { return options_; }
  EventHub* events() const { return events_; }
  // Whether a line a client can trigger may be logged now (rate-limited).
  bool AllowLog();

  // Registers a session for Stop. False once stopping: the caller closes it.
  bool AddSession(const std::shared_ptr<Session>& session);
  void RemoveSession(Session* session);

  // Takes a slot of the handler budget; false when max_in_flight are taken.
  bool TryAcquireHandlerSlot() {
    size_t current = in_flight_.load(std::memory_order_relaxed);
    do {
      if (current >= options_.max_in_flight) return false;
    } while (!in_flight_.compare_exchange_weak(current, current + 1,
                                               std::memory_order_acq_rel));
    return true;
  }

  // Takes `bytes` of the body budget; false when they do not fit.
  bool TryAcquireBodyBytes(size_t bytes) {
    size_t current = body_bytes_.load(std::memory_order_relaxed);
    do {
      if (bytes > options_.max_body_bytes_total ||
          current > options_.max_body_bytes_total - bytes) {
        return false;
      }
    } while (!body_bytes_.compare_exchange_weak(current, current + bytes,
                                                std::memory_order_acq_rel));
    return true;
  }
  void ReleaseBodyBytes(size_t bytes) {
    body_bytes_.fetch_sub(bytes, std::memory_order_acq_rel);
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
  uint16_t port_ = 0;

  std::atomic<uint64_t> requests_served_{0};
  std::atomic<uint64_t> busy_refusals_{0};
  std::atomic<uint64_t> body_too_large_{0};
  std::atomic<uint64_t> connection_refusals_{0};
  std::atomic<int64_t> open_websockets_{0};
  std::atomic<size_t> in_flight_{0};
  std::atomic<size_t> body_bytes_{0};

  // Written under connections_mu_ (so Stop's timed wait sees every change:
  // util's CondVar has no deadline), read anywhere.
  std::mutex connections_mu_;
  std::condition_variable connections_cv_;
  std::atomic<size_t> open_connections_{0};

  // The log, the session registry and the stop flag (server_core.cc).
  // Declared before the Asio objects: destroying those destroys sessions,
  // which unregister here.
  struct State;
  const std::unique_ptr<State> state_;

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

// Serves one accepted connection `socket` holding `slot` as an HTTP session
// (http_session.cc); the session keeps itself alive. `server` outlives it.
void StartHttpSession(ServerCore* server, tcp::socket socket,
                      ConnectionSlot slot);

}  // namespace rnode::node::http::internal

#endif  // RNODE_NODE_HTTP_INTERNAL_SERVER_CORE_H_

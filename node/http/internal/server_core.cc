// The server's shared core (node/http/internal/server_core.h): listening,
// the I/O threads, accepting or refusing connections, calling the handler,
// stopping, and the stats.
#include "node/http/internal/server_core.h"

#include <algorithm>
#include <exception>
#include <string_view>
#include <unordered_map>

#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>

#include "node/http/internal/messages.h"
#include "util/logging.h"
#include "util/mutex.h"

namespace rnode::node::http::internal {
namespace {

// After a failed accept (e.g. out of file descriptors) the acceptor waits
// this long before trying again instead of spinning; connections close in
// that time.
constexpr std::chrono::milliseconds kAcceptRetryDelay{100};

// Log lines a client can trigger (handler exceptions, accept errors), per
// second.
constexpr double kLogLinesPerSecond = 5;

}  // namespace

struct ServerCore::State {
  const std::shared_ptr<spdlog::logger> log = Log("http");
  LogRateLimiter log_limiter{kLogLinesPerSecond};

  Mutex mu;
  bool stopping ABSL_GUARDED_BY(mu) = false;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions
      ABSL_GUARDED_BY(mu);

  Mutex stop_mu;
  bool stopped ABSL_GUARDED_BY(stop_mu) = false;
};

ServerCore::ServerCore(HttpServerOptions options, Handler handler,
                       EventHub* events)
    : options_(std::move(options)),
      handler_(std::move(handler)),
      events_(events),
      connection_refusal_(
          ConnectionRefusal(std::find(options_.allowed_origins.begin(),
                                      options_.allowed_origins.end(),
                                      "*") != options_.allowed_origins.end())),
      state_(std::make_unique<State>()) {}

ServerCore::~ServerCore() { Stop(); }

bool ServerCore::AllowLog() { return state_->log_limiter.Allow(); }

bool ServerCore::AddSession(const std::shared_ptr<Session>& session) {
  MutexLock lock(&state_->mu);
  if (state_->stopping) return false;
  state_->sessions.emplace(session.get(), session);
  return true;
}

void ServerCore::RemoveSession(Session* session) {
  MutexLock lock(&state_->mu);
  state_->sessions.erase(session);
}

void ConnectionSlot::Release() {
  if (server_ != nullptr) std::exchange(server_, nullptr)->ReleaseConnection();
}

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
        state_->log->error("http server: I/O thread caught {}", e.what());
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
    if (AllowLog())
      state_->log->warn("http server: accept failed: {}", ec.message());
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
    StartHttpSession(this, std::move(socket), ConnectionSlot(this));
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
    state_->log->warn("http server: handler for {} {} threw: {}",
                      request.method, request.path, message);
  }
  Response response;
  response.status = 500;
  response.body = ErrorJson("internal", message);
  return response;
}

void ServerCore::Stop() {
  MutexLock stop_lock(&state_->stop_mu);
  if (state_->stopped) return;
  state_->stopped = true;
  std::vector<std::shared_ptr<Session>> sessions;
  {
    MutexLock lock(&state_->mu);
    state_->stopping = true;
    for (auto& [key, session] : state_->sessions) {
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
  stats.body_bytes = body_bytes_.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace rnode::node::http::internal

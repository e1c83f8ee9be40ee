// Tests for the node's HTTP + WebSocket server and its event hub, through
// Beast clients on 127.0.0.1.
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "node/http/event_hub.h"
#include "node/http/http_server.h"
#include "tests/eventually.h"

namespace rnode::node::http {
namespace {

using ::rnode::testing::Eventually;

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace websocket = boost::beast::websocket;
using tcp = net::ip::tcp;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;

// Bound of every wait for something that should happen at once; reached
// only when the server is broken.
constexpr std::chrono::seconds kDeadline{10};

// ---------------------------------------------------------------------------
// Clients.

// A synchronous-looking HTTP client: each call runs Beast's asynchronous
// operations on its own io_context under a kDeadline timeout.
class HttpClient {
 public:
  // Connects to 127.0.0.1:port; a receive buffer of `receive_buffer` bytes
  // if not 0 (set before connecting, so the TCP window stays small).
  explicit HttpClient(uint16_t port, int receive_buffer = 0) {
    beast::error_code ec;
    stream_.socket().open(tcp::v4(), ec);
    if (receive_buffer > 0) {
      stream_.socket().set_option(
          net::socket_base::receive_buffer_size(receive_buffer), ec);
    }
    stream_.expires_after(kDeadline);
    stream_.async_connect(
        tcp::endpoint(net::ip::make_address("127.0.0.1"), port),
        [this](beast::error_code e) { connect_error_ = e; });
    Run();
  }

  beast::error_code connect_error() const { return connect_error_; }

  struct Result {
    beast::error_code error;
    bhttp::response<bhttp::string_body> response;
  };

  // Host is 127.0.0.1 unless the request names one.
  Result Send(bhttp::request<bhttp::string_body> request) {
    if (request.count(bhttp::field::host) == 0) {
      request.set(bhttp::field::host, "127.0.0.1");
    }
    request.prepare_payload();
    Result result;
    stream_.expires_after(kDeadline);
    bhttp::async_write(stream_, request, [&](beast::error_code ec, size_t) {
      result.error = ec;
    });
    Run();
    if (result.error) return result;
    return Read();
  }

  Result Read() {
    Result result;
    stream_.expires_after(kDeadline);
    bhttp::async_read(stream_, buffer_, result.response,
                      [&](beast::error_code ec, size_t) { result.error = ec; });
    Run();
    return result;
  }

  beast::error_code WriteRaw(const std::string& data) {
    beast::error_code error;
    stream_.expires_after(kDeadline);
    net::async_write(stream_, net::buffer(data),
                     [&](beast::error_code ec, size_t) { error = ec; });
    Run();
    return error;
  }

  // Reads and discards until the server closes; the error that ended it
  // (end of file for an orderly close, beast::error::timeout after
  // kDeadline).
  beast::error_code ReadUntilClosed() {
    beast::error_code error;
    std::array<char, 4096> scratch;
    while (!error) {
      stream_.expires_after(kDeadline);
      stream_.async_read_some(
          net::buffer(scratch),
          [&](beast::error_code ec, size_t) { error = ec; });
      Run();
    }
    return error;
  }

  // Reads raw bytes until they end with `suffix` (or the connection ends).
  std::string ReadRawUntil(const std::string& suffix) {
    std::string data;
    beast::error_code error;
    std::array<char, 4096> scratch;
    while (!error && (data.size() < suffix.size() ||
                      data.compare(data.size() - suffix.size(), suffix.size(),
                                   suffix) != 0)) {
      stream_.expires_after(kDeadline);
      stream_.async_read_some(net::buffer(scratch),
                              [&](beast::error_code ec, size_t n) {
                                error = ec;
                                data.append(scratch.data(), n);
                              });
      Run();
    }
    return data;
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

 private:
  void Run() {
    io_.restart();
    io_.run();
  }

  net::io_context io_;
  beast::tcp_stream stream_{io_};
  beast::flat_buffer buffer_;
  beast::error_code connect_error_;
};

bhttp::request<bhttp::string_body> MakeRequest(bhttp::verb method,
                                               std::string target,
                                               std::string body = "") {
  bhttp::request<bhttp::string_body> request(method, target, 11);
  request.body() = std::move(body);
  return request;
}

// A WebSocket client of /ws/events.
class WsClient {
 public:
  // Connects and upgrades; a small receive buffer if `receive_buffer` > 0.
  // Returns the upgrade's error (the response is in handshake_response()).
  // A non-empty `origin` is sent as the Origin header (as a browser does).
  beast::error_code Connect(uint16_t port, int receive_buffer = 0,
                            const std::string& path = kDefaultEventsPath,
                            const std::string& origin = "") {
    if (!origin.empty()) {
      ws_.set_option(websocket::stream_base::decorator(
          [origin](websocket::request_type& r) {
            r.set(bhttp::field::origin, origin);
          }));
    }
    auto& lowest = beast::get_lowest_layer(ws_);
    beast::error_code error;
    lowest.socket().open(tcp::v4(), error);
    if (receive_buffer > 0) {
      lowest.socket().set_option(
          net::socket_base::receive_buffer_size(receive_buffer), error);
    }
    lowest.expires_after(kDeadline);
    lowest.async_connect(
        tcp::endpoint(net::ip::make_address("127.0.0.1"), port),
        [&](beast::error_code ec) { error = ec; });
    Run();
    if (error) return error;
    lowest.expires_after(kDeadline);
    ws_.async_handshake(handshake_response_, "127.0.0.1", path,
                        [&](beast::error_code ec) { error = ec; });
    Run();
    lowest.expires_never();
    return error;
  }

  const websocket::response_type& handshake_response() const {
    return handshake_response_;
  }

  // The next text message; on a close by the server the error is
  // websocket::error::closed and reason() holds its code and text.
  struct Message {
    beast::error_code error;
    std::string text;
  };
  Message Read() {
    Message message;
    beast::flat_buffer buffer;
    bool done = false;
    ws_.async_read(buffer, [&](beast::error_code ec, size_t) {
      message.error = ec;
      done = true;
    });
    const Clock::time_point deadline = Clock::now() + kDeadline;
    io_.restart();
    while (!done && Clock::now() < deadline) io_.run_one_until(deadline);
    if (!done) {
      beast::get_lowest_layer(ws_).close();
      io_.restart();
      while (!done) io_.run_one();
      message.error = beast::error::timeout;
      return message;
    }
    message.text = beast::buffers_to_string(buffer.data());
    return message;
  }

  beast::error_code Write(const std::string& text) {
    beast::error_code error;
    bool done = false;
    ws_.async_write(net::buffer(text), [&](beast::error_code ec, size_t) {
      error = ec;
      done = true;
    });
    const Clock::time_point deadline = Clock::now() + kDeadline;
    io_.restart();
    while (!done && Clock::now() < deadline) io_.run_one_until(deadline);
    if (!done) {
      beast::get_lowest_layer(ws_).close();
      io_.restart();
      while (!done) io_.run_one();
      return beast::error::timeout;
    }
    return error;
  }

  websocket::close_reason reason() const { return ws_.reason(); }

  void CloseSocket() { beast::get_lowest_layer(ws_).close(); }

 private:
  void Run() {
    io_.restart();
    io_.run();
  }

  net::io_context io_;
  websocket::stream<beast::tcp_stream> ws_{io_};
  websocket::response_type handshake_response_;
};

HttpServerOptions LocalOptions() {
  HttpServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.threads = 2;
  return options;
}

Response Ok(std::string body) {
  Response response;
  response.body = std::move(body);
  return response;
}

std::unique_ptr<HttpServer> MustStart(HttpServerOptions options,
                                      Handler handler,
                                      EventHub* events = nullptr) {
  auto server =
      HttpServer::Start(std::move(options), std::move(handler), events);
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

// ---------------------------------------------------------------------------
// EventHub.

struct WakeCounter {
  std::atomic<int> wakes{0};
  std::function<void()> Callback() {
    return [this] { wakes.fetch_add(1); };
  }
};

std::vector<std::string> Drain(EventSubscription& subscription) {
  std::vector<std::string> out;
  while (auto event = subscription.TryPop()) out.push_back(*event);
  return out;
}

TEST(EventHubTest, SubscriberGetsStartedReplayThenLiveInOrder) {
  EventHubOptions options;
  options.replay_events = 2;
  EventHub hub(options);
  hub.Publish("a");
  hub.Publish("b");
  hub.Publish("c");
  auto subscription = hub.Subscribe(nullptr);
  ASSERT_TRUE(subscription.ok()) << subscription.status();
  hub.Publish("d");
  EXPECT_THAT(
      Drain(**subscription),
      ::testing::ElementsAre(std::string(kStartedEvent), "b", "c", "d"));
  EXPECT_TRUE((*subscription)->status().ok());
  EXPECT_EQ(hub.published(), 4u);
}

TEST(EventHubTest, WakeRunsWhenQueueBecomesNonEmptyAndNotAfterClose) {
  EventHub hub;
  WakeCounter counter;
  auto subscription = hub.Subscribe(counter.Callback());
  ASSERT_TRUE(subscription.ok());
  hub.Publish("x");  // Queue already holds "started": no wake.
  EXPECT_EQ(counter.wakes.load(), 0);
  Drain(**subscription);
  hub.Publish("y");
  EXPECT_EQ(counter.wakes.load(), 1);
  (*subscription)->Close();
  hub.Publish("z");
  EXPECT_EQ(counter.wakes.load(), 1);
  EXPECT_TRUE(absl::IsCancelled((*subscription)->status()));
  EXPECT_EQ((*subscription)->TryPop(), nullptr);
  EXPECT_EQ(hub.subscribers(), 0u);
}

TEST(EventHubTest, FullQueueClosesSubscriberWithReason) {
  EventHubOptions options;
  options.replay_events = 0;
  options.subscriber_queue_events = 3;
  EventHub hub(options);
  WakeCounter slow_wakes;
  auto slow = hub.Subscribe(slow_wakes.Callback());
  auto fast = hub.Subscribe(nullptr);
  ASSERT_TRUE(slow.ok() && fast.ok());
  std::vector<std::string> fast_events = Drain(**fast);
  for (int i = 0; i < 5; ++i) {
    hub.Publish(std::to_string(i));
    for (auto& e : Drain(**fast)) fast_events.push_back(e);
  }
  // started + "0" + "1" filled the slow queue; "2" did not fit.
  EXPECT_EQ(hub.dropped_subscribers(), 1u);
  EXPECT_EQ(hub.subscribers(), 1u);
  const absl::Status status = (*slow)->status();
  EXPECT_TRUE(absl::IsResourceExhausted(status)) << status;
  EXPECT_EQ(status.message(), "too slow: 4 events behind");
  EXPECT_EQ((*slow)->TryPop(), nullptr);
  EXPECT_EQ(slow_wakes.wakes.load(), 1);  // The close.
  EXPECT_THAT(fast_events, ::testing::ElementsAre(std::string(kStartedEvent),
                                                  "0", "1", "2", "3", "4"));
}

TEST(EventHubTest, SubscribeBeyondBoundIsResourceExhausted) {
  EventHubOptions options;
  options.max_subscribers = 2;
  EventHub hub(options);
  auto a = hub.Subscribe(nullptr);
  auto b = hub.Subscribe(nullptr);
  ASSERT_TRUE(a.ok() && b.ok());
  auto c = hub.Subscribe(nullptr);
  EXPECT_TRUE(absl::IsResourceExhausted(c.status())) << c.status();
  (*a)->Close();
  EXPECT_TRUE(hub.Subscribe(nullptr).ok());
}

TEST(EventHubTest, DestroyingHubClosesSubscriptions) {
  auto hub = std::make_unique<EventHub>();
  WakeCounter counter;
  auto subscription = hub->Subscribe(counter.Callback());
  ASSERT_TRUE(subscription.ok());
  hub.reset();
  EXPECT_TRUE(absl::IsUnavailable((*subscription)->status()));
  EXPECT_EQ(counter.wakes.load(), 1);
  (*subscription)->Close();  // Still safe.
}

TEST(EventHubTest, ConcurrentPublishersKeepEachPublishersOrder) {
  EventHubOptions options;
  options.subscriber_queue_events = 100000;
  EventHub hub(options);
  auto subscription = hub.Subscribe(nullptr);
  ASSERT_TRUE(subscription.ok());
  constexpr int kPublishers = 4;
  constexpr int kEach = 2000;
  std::vector<std::thread> threads;
  for (int p = 0; p < kPublishers; ++p) {
    threads.emplace_back([&hub, p] {
      for (int i = 0; i < kEach; ++i) {
        hub.Publish(std::to_string(p) + ":" + std::to_string(i));
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<std::string> events = Drain(**subscription);
  ASSERT_EQ(events.size(), 1u + kPublishers * kEach);
  std::vector<int> next(kPublishers, 0);
  for (size_t i = 1; i < events.size(); ++i) {
    const size_t colon = events[i].find(':');
    const int p = std::stoi(events[i].substr(0, colon));
    EXPECT_EQ(std::stoi(events[i].substr(colon + 1)), next[p]++);
  }
}

// ---------------------------------------------------------------------------
// HTTP.

// The handler of most tests: echoes what it saw.
Response Echo(const Request& request) {
  std::string seen = request.method + "|" + request.path + "|";
  for (const auto& [key, value] : request.query) {
    seen += key + "=" + value + ";";
  }
  seen += "|" + request.content_type + "|" + request.body;
  Response response = Ok(seen);
  response.content_type = "text/plain";
  response.headers.emplace_back("X-Target", request.target);
  return response;
}

TEST(HttpServerTest, GetAndPostRoundTripOnOneConnection) {
  auto server = MustStart(LocalOptions(), Echo);
  ASSERT_NE(server, nullptr);
  ASSERT_NE(server->port(), 0);
  HttpClient client(server->port());
  ASSERT_FALSE(client.connect_error()) << client.connect_error().message();

  auto get = client.Send(
      MakeRequest(bhttp::verb::get, "/api/blocks?depth=5&name=a%20b+c&flag"));
  ASSERT_FALSE(get.error) << get.error.message();
  EXPECT_EQ(get.response.result_int(), 200);
  EXPECT_EQ(get.response.body(), "GET|/api/blocks|depth=5;flag=;name=a b c;||");
  EXPECT_EQ(get.response[bhttp::field::content_type], "text/plain");
  EXPECT_EQ(get.response["X-Target"], "/api/blocks?depth=5&name=a%20b+c&flag");
  EXPECT_TRUE(get.response.keep_alive());

  auto post_request = MakeRequest(bhttp::verb::post, "/api/deploy",
                                  R"json({"term":"@0!(1)"})json");
  post_request.set(bhttp::field::content_type, "application/json");
  auto post = client.Send(std::move(post_request));
  ASSERT_FALSE(post.error) << post.error.message();
  EXPECT_EQ(post.response.result_int(), 200);
  EXPECT_EQ(post.response.body(),
            R"json(POST|/api/deploy||application/json|{"term":"@0!(1)"})json");
  EXPECT_EQ(server->stats().requests_served, 2u);
}

TEST(HttpServerTest, HandlerStatusAndHeadersPassThrough) {
  auto server = MustStart(LocalOptions(), [](const Request&) {
    Response response;
    response.status = 404;
    response.body = R"({"error":"not_found"})";
    response.headers.emplace_back("Cache-Control", "no-store");
    return response;
  });
  ASSERT_NE(server, nullptr);
  HttpClient client(server->port());
  auto result = client.Send(MakeRequest(bhttp::verb::get, "/nothing"));
  ASSERT_FALSE(result.error);
  EXPECT_EQ(result.response.result_int(), 404);
  EXPECT_EQ(result.response[bhttp::field::content_type], "application/json");
  EXPECT_EQ(result.response[bhttp::field::cache_control], "no-store");
  EXPECT_EQ(result.response.body(), R"({"error":"not_found"})");
}

TEST(HttpServerTest, HeadAnswerHasLengthButNoBody) {
  auto server = MustStart(LocalOptions(),
                          [](const Request&) { return Ok("twelve bytes"); });
  ASSERT_NE(server, nullptr);
  HttpClient client(server->port());
  ASSERT_FALSE(
      client.WriteRaw("HEAD /x HTTP/1.1\r\nHost: x\r\n\r\n"
                      "GET /x HTTP/1.1\r\nHost: x\r\n\r\n"));
  // Beast's parser cannot know the first answer is to a HEAD: read it raw.
  auto get = client.ReadRawUntil("twelve bytes");
  EXPECT_THAT(get, HasSubstr("Content-Length: 12\r\n\r\nHTTP/1.1 200"));
  EXPECT_THAT(get, ::testing::EndsWith("\r\n\r\ntwelve bytes"));
}

TEST(HttpServerTest, HandlerExceptionBecomes500Json) {
  auto server = MustStart(LocalOptions(), [](const Request& request) {
    if (request.path == "/boom") throw std::runtime_error("boom \"quoted\"");
    return Ok("fine");
  });
  ASSERT_NE(server, nullptr);
  HttpClient client(server->port());
  auto result = client.Send(MakeRequest(bhttp::verb::get, "/boom"));
  ASSERT_FALSE(result.error);
  EXPECT_EQ(result.response.result_int(), 500);
  EXPECT_EQ(result.response[bhttp::field::content_type], "application/json");
  EXPECT_EQ(result.response.body(),
            R"({"error":"internal","message":"boom \"quoted\""})");
  auto next = client.Send(MakeRequest(bhttp::verb::get, "/ok"));
  ASSERT_FALSE(next.error);
  EXPECT_EQ(next.response.body(), "fine");
}

TEST(HttpServerTest, BodyOverLimitIs413AndServerServesNextConnection) {
  HttpServerOptions options = LocalOptions();
  options.max_body_bytes = 1024;
  std::atomic<int> calls{0};
  auto server = MustStart(options, [&](const Request& request) {
    calls.fetch_add(1);
    return Ok(std::to_string(request.body.size()));
  });
  ASSERT_NE(server, nullptr);
  {
    HttpClient client(server->port());
    auto result = client.Send(
        MakeRequest(bhttp::verb::post, "/big", std::string(256 << 10, 'x')));
    ASSERT_FALSE(result.error) << result.error.message();
    EXPECT_EQ(result.response.result_int(), 413);
    EXPECT_THAT(result.response.body(),
                StartsWith(R"({"error":"body_too_large",)"));
    EXPECT_FALSE(result.response.keep_alive());
  }
  {
    HttpClient client(server->port());
    auto result =
        client.Send(MakeRequest(bhttp::verb::post, "/small", "0123456789"));
    ASSERT_FALSE(result.error) << result.error.message();
    EXPECT_EQ(result.response.result_int(), 200);
    EXPECT_EQ(result.response.body(), "10");
  }
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(server->stats().body_too_large_refusals, 1u);
}

// Issue 43: each body was bounded, all of them together were not (256
// connections x 16 MiB). Bodies being read hold the budget from their
// header on; one that does not fit is answered 503 busy unread, and the
// budget comes back once the others are answered.
TEST(HttpServerTest, BodiesTogetherStayWithinTheirBudget) {
  HttpServerOptions options = LocalOptions();
  options.max_body_bytes = 64 << 10;
  options.max_body_bytes_total = 128 << 10;
  std::atomic<int> calls{0};
  auto server = MustStart(options, [&](const Request& request) {
    calls.fetch_add(1);
    return Ok(std::to_string(request.body.size()));
  });
  ASSERT_NE(server, nullptr);
  // Two slow clients: headers announcing the largest body, one byte of it.
  std::vector<std::unique_ptr<HttpClient>> slow;
  for (int i = 0; i < 2; ++i) {
    slow.push_back(std::make_unique<HttpClient>(server->port()));
    ASSERT_FALSE(slow.back()->WriteRaw(
        "POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 65536\r\n\r\nx"));
  }
  ASSERT_TRUE(
      Eventually([&] { return server->stats().body_bytes == (128u << 10); }));
  {  // a third body does not fit while they wait
    HttpClient client(server->port());
    auto result = client.Send(
        MakeRequest(bhttp::verb::post, "/third", std::string(1024, 'y')));
    ASSERT_FALSE(result.error) << result.error.message();
    EXPECT_EQ(result.response.result_int(), 503);
    EXPECT_THAT(result.response.body(), StartsWith(R"({"error":"busy",)"));
    EXPECT_FALSE(result.response.keep_alive());
  }
  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ(server->stats().body_bytes, 128u << 10);
  // One slow client finishes: its answer frees its share.
  ASSERT_FALSE(slow[0]->WriteRaw(std::string((64 << 10) - 1, 'x')));
  auto done = slow[0]->Read();
  ASSERT_FALSE(done.error) << done.error.message();
  EXPECT_EQ(done.response.body(), "65536");
  HttpClient client(server->port());
  auto after = client.Send(
      MakeRequest(bhttp::verb::post, "/third", std::string(1024, 'y')));
  ASSERT_FALSE(after.error) << after.error.message();
  EXPECT_EQ(after.response.result_int(), 200);
  EXPECT_EQ(after.response.body(), "1024");
  slow.clear();  // the other slow client leaves: its share comes back
  EXPECT_TRUE(Eventually([&] { return server->stats().body_bytes == 0; }));
}

TEST(HttpServerTest, ExpectContinueGetsItsBodyRead) {
  auto server = MustStart(LocalOptions(), Echo);
  ASSERT_NE(server, nullptr);
  HttpClient client(server->port());
  ASSERT_FALSE(
      client.WriteRaw("POST /c HTTP/1.1\r\nHost: x\r\n"
                      "Content-Length: 5\r\n"
                      "Expect: 100-continue\r\n\r\n"));
  auto interim = client.Read();
  ASSERT_FALSE(interim.error) << interim.error.message();
  EXPECT_EQ(interim.response.result_int(), 100);
  ASSERT_FALSE(client.WriteRaw("hello"));
  auto result = client.Read();
  ASSERT_FALSE(result.error) << result.error.message();
  EXPECT_EQ(result.response.body(), "POST|/c|||hello");
}

TEST(HttpServerTest, SlowlorisRequestIsClosedAfterReadTimeout) {
  HttpServerOptions options = LocalOptions();
  options.read_timeout = std::chrono::seconds(1);
  auto server = MustStart(options, Echo);
  ASSERT_NE(server, nullptr);
  HttpClient client(server->port());
  ASSERT_FALSE(client.WriteRaw("GET / HTTP/1.1\r\nHost: x\r\n"));
  // The request never ends; the server closes before our kDeadline.
  const beast::error_code error = client.ReadUntilClosed();
  EXPECT_NE(error, beast::error::timeout) << error.message();
}

TEST(HttpServerTest, BudgetExhaustedAnswers503BusyThenRecovers) {
  HttpServerOptions options = LocalOptions();
  options.max_in_flight = 2;
  std::mutex mu;
  std::condition_variable cv;
  int entered = 0;
  bool released = false;
  auto server = MustStart(options, [&](const Request& request) {
    if (request.path == "/block") {
      std::unique_lock<std::mutex> lock(mu);
      ++entered;
      cv.notify_all();
      cv.wait_for(lock, kDeadline, [&] { return released; });
    }
    return Ok("done");
  });
  ASSERT_NE(server, nullptr);

  std::vector<std::future<int>> blocked;
  for (int i = 0; i < 2; ++i) {
    blocked.push_back(std::async(std::launch::async, [&] {
      HttpClient client(server->port());
      auto result = client.Send(MakeRequest(bhttp::verb::get, "/block"));
      return result.error ? -1 : static_cast<int>(result.response.result_int());
    }));
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, kDeadline, [&] { return entered == 2; }));
  }
  EXPECT_EQ(server->stats().in_flight, 2u);

  HttpClient client(server->port());
  auto busy = client.Send(MakeRequest(bhttp::verb::get, "/other"));
  ASSERT_FALSE(busy.error) << busy.error.message();
  EXPECT_EQ(busy.response.result_int(), 503);
  EXPECT_EQ(busy.response[bhttp::field::retry_after], "1");
  EXPECT_THAT(busy.response.body(), StartsWith(R"({"error":"busy",)"));
  EXPECT_EQ(busy.response.count(bhttp::field::access_control_allow_origin),
            0u);  // no origin is allowed by default
  EXPECT_EQ(server->stats().busy_refusals, 1u);

  {
    std::lock_guard<std::mutex> lock(mu);
    released = true;
  }
  cv.notify_all();
  for (auto& f : blocked) {
    ASSERT_EQ(f.wait_for(kDeadline), std::future_status::ready);
    EXPECT_EQ(f.get(), 200);
  }
  // The same connection is served once the budget is free.
  auto after = client.Send(MakeRequest(bhttp::verb::get, "/other"));
  ASSERT_FALSE(after.error);
  EXPECT_EQ(after.response.result_int(), 200);
}

// Issue 43: every answer carried Access-Control-Allow-Origin: *, so any
// web page could read the node's API from a visitor's browser. Only listed
// origins get the header and a preflight; "*" is an explicit choice.
TEST(HttpServerTest, CorsOnlyForListedOriginsAndTheirPreflights) {
  std::atomic<int> calls{0};
  const auto handler = [&](const Request&) {
    calls.fetch_add(1);
    return Ok("{}");
  };
  const auto get_from = [](HttpClient& client, const std::string& origin) {
    auto request = MakeRequest(bhttp::verb::get, "/api/status");
    if (!origin.empty()) request.set(bhttp::field::origin, origin);
    return client.Send(std::move(request));
  };
  const auto preflight_from = [](HttpClient& client,
                                 const std::string& origin) {
    auto preflight = MakeRequest(bhttp::verb::options, "/api/deploy");
    preflight.set(bhttp::field::origin, origin);
    preflight.set(bhttp::field::access_control_request_method, "POST");
    preflight.set(bhttp::field::access_control_request_headers,
                  "content-type, x-custom");
    return client.Send(std::move(preflight));
  };

  // The default: no origin is listed.
  auto closed = MustStart(LocalOptions(), handler);
  ASSERT_NE(closed, nullptr);
  HttpClient c1(closed->port());
  auto get = get_from(c1, "https://wallet.example");
  ASSERT_FALSE(get.error);
  EXPECT_EQ(get.response.count(bhttp::field::access_control_allow_origin), 0u);
  auto pre = preflight_from(c1, "https://wallet.example");
  ASSERT_FALSE(pre.error);
  EXPECT_NE(pre.response.result_int(), 204);  // the handler's answer
  EXPECT_EQ(calls.load(), 2);

  HttpServerOptions listed = LocalOptions();
  listed.allowed_origins = {"https://wallet.example"};
  auto open = MustStart(listed, handler);
  ASSERT_NE(open, nullptr);
  HttpClient c2(open->port());
  get = get_from(c2, "https://wallet.example");
  ASSERT_FALSE(get.error);
  EXPECT_EQ(get.response[bhttp::field::access_control_allow_origin],
            "https://wallet.example");
  EXPECT_EQ(get.response[bhttp::field::vary], "Origin");
  get = get_from(c2, "https://evil.example");
  ASSERT_FALSE(get.error);
  EXPECT_EQ(get.response.count(bhttp::field::access_control_allow_origin), 0u);
  get = get_from(c2, "");  // not a browser's cross-origin call
  ASSERT_FALSE(get.error);
  EXPECT_EQ(get.response.count(bhttp::field::access_control_allow_origin), 0u);
  calls = 0;
  pre = preflight_from(c2, "https://wallet.example");
  ASSERT_FALSE(pre.error);
  EXPECT_EQ(pre.response.result_int(), 204);
  EXPECT_EQ(pre.response[bhttp::field::access_control_allow_origin],
            "https://wallet.example");
  EXPECT_EQ(pre.response[bhttp::field::access_control_allow_methods], "POST");
  EXPECT_EQ(pre.response[bhttp::field::access_control_allow_headers],
            "content-type, x-custom");
  EXPECT_EQ(calls.load(), 0);

  HttpServerOptions any = LocalOptions();
  any.allowed_origins = {"*"};
  auto star = MustStart(any, handler);
  ASSERT_NE(star, nullptr);
  HttpClient c3(star->port());
  get = get_from(c3, "https://anyone.example");
  ASSERT_FALSE(get.error);
  EXPECT_EQ(get.response[bhttp::field::access_control_allow_origin], "*");
}

// Issue 43: a page whose name was rebound to the node's address (DNS
// rebinding) reached a loopback API as its own origin. The server answers
// only the Host names it is given.
TEST(HttpServerTest, ARequestNamingAnotherHostIs421) {
  HttpServerOptions options = LocalOptions();
  options.allowed_hosts = {"localhost", "127.0.0.1", "[::1]"};
  std::atomic<int> calls{0};
  auto server = MustStart(options, [&](const Request& r) {
    calls.fetch_add(1);
    return Echo(r);
  });
  ASSERT_NE(server, nullptr);
  for (const std::string host :
       {"127.0.0.1", "127.0.0.1:8080", "LOCALHOST:1", "[::1]:40403"}) {
    HttpClient client(server->port());
    auto request = MakeRequest(bhttp::verb::get, "/x");
    request.set(bhttp::field::host, host);
    auto result = client.Send(std::move(request));
    ASSERT_FALSE(result.error) << host;
    EXPECT_EQ(result.response.result_int(), 200) << host;
  }
  HttpClient client(server->port());
  auto request = MakeRequest(bhttp::verb::get, "/x");
  request.set(bhttp::field::host, "rebound.evil.example:40403");
  auto result = client.Send(std::move(request));
  ASSERT_FALSE(result.error);
  EXPECT_EQ(result.response.result_int(), 421);
  EXPECT_THAT(result.response.body(), StartsWith(R"({"error":"wrong_host",)"));
  EXPECT_EQ(calls.load(), 4);  // the last was never handled
}

TEST(HttpServerTest, OriginAndHostRules) {
  const std::vector<std::string> none;
  EXPECT_TRUE(OriginAllowed("http://127.0.0.1:80", "127.0.0.1:80", none));
  EXPECT_TRUE(OriginAllowed("HTTPS://Node.Example", "node.example", none));
  EXPECT_FALSE(OriginAllowed("http://evil.example", "127.0.0.1:80", none));
  EXPECT_FALSE(OriginAllowed("http://127.0.0.1:81", "127.0.0.1:80", none));
  EXPECT_FALSE(OriginAllowed("null", "127.0.0.1", none));
  EXPECT_TRUE(OriginAllowed("https://a.example", "", {"https://a.example"}));
  EXPECT_FALSE(
      OriginAllowed("https://a.example.evil", "", {"https://a.example"}));
  EXPECT_TRUE(OriginAllowed("https://b.example", "", {"*"}));
  EXPECT_TRUE(HostAllowed("anything", none));
  EXPECT_TRUE(HostAllowed("", {"localhost"}));
  EXPECT_TRUE(HostAllowed("node.example:443", {"node.example"}));
  EXPECT_TRUE(HostAllowed("node.example:443", {"node.example:443"}));
  EXPECT_FALSE(HostAllowed("node.example:80", {"node.example:443"}));
  EXPECT_FALSE(HostAllowed("node.example.evil", {"node.example"}));
  EXPECT_TRUE(HostAllowed("x", {"*"}));
}

TEST(HttpServerTest, ConnectionsBeyondBoundAreRefused) {
  HttpServerOptions options = LocalOptions();
  options.max_connections = 1;
  auto server = MustStart(options, Echo);
  ASSERT_NE(server, nullptr);
  auto first = std::make_unique<HttpClient>(server->port());
  ASSERT_FALSE(first->Send(MakeRequest(bhttp::verb::get, "/")).error);

  {
    HttpClient second(server->port());
    auto result = second.Send(MakeRequest(bhttp::verb::get, "/"));
    // 503 if the answer was read before the close, else a closed
    // connection; never served.
    if (!result.error) {
      EXPECT_EQ(result.response.result_int(), 503);
      EXPECT_THAT(result.response.body(), StartsWith(R"({"error":"busy",)"));
    }
  }
  EXPECT_TRUE(
      Eventually([&] { return server->stats().connection_refusals == 1; }));

  first->Close();
  first.reset();
  ASSERT_TRUE(
      Eventually([&] { return server->stats().open_connections == 0; }));
  HttpClient third(server->port());
  auto result = third.Send(MakeRequest(bhttp::verb::get, "/"));
  ASSERT_FALSE(result.error) << result.error.message();
  EXPECT_EQ(result.response.result_int(), 200);
}

TEST(HttpServerTest, BindToPortInUseIsUnavailableNamingTheAddress) {
  auto first = MustStart(LocalOptions(), Echo);
  ASSERT_NE(first, nullptr);
  HttpServerOptions options = LocalOptions();
  options.port = first->port();
  auto second = HttpServer::Start(options, Echo, nullptr);
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(absl::IsUnavailable(second.status())) << second.status();
  EXPECT_THAT(second.status().message(),
              HasSubstr("127.0.0.1:" + std::to_string(first->port())));
  EXPECT_THAT(second.status().message(), HasSubstr("in use"));
}

TEST(HttpServerTest, BadOptionsAreInvalidArgument) {
  HttpServerOptions options = LocalOptions();
  options.max_in_flight = 0;
  EXPECT_TRUE(absl::IsInvalidArgument(
      HttpServer::Start(options, Echo, nullptr).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      HttpServer::Start(LocalOptions(), nullptr, nullptr).status()));
  options = LocalOptions();
  options.host = "not an address!";
  EXPECT_TRUE(absl::IsInvalidArgument(
      HttpServer::Start(options, Echo, nullptr).status()));
}

TEST(HttpServerTest, StopWithOpenConnectionsReturnsPromptly) {
  EventHub hub;
  auto server = MustStart(LocalOptions(), Echo, &hub);
  ASSERT_NE(server, nullptr);
  HttpClient idle(server->port());
  ASSERT_FALSE(idle.Send(MakeRequest(bhttp::verb::get, "/")).error);
  HttpClient half(server->port());
  ASSERT_FALSE(half.WriteRaw("GET / HTTP/1.1\r\n"));
  WsClient ws;
  ASSERT_FALSE(ws.Connect(server->port()));
  ASSERT_TRUE(Eventually([&] { return server->stats().open_websockets == 1; }));

  auto stopped = std::async(std::launch::async, [&] { server->Stop(); });
  ASSERT_EQ(stopped.wait_for(kDeadline), std::future_status::ready);
  server->Stop();  // Idempotent.
  EXPECT_NE(idle.ReadUntilClosed(), beast::error::timeout);
  EXPECT_NE(half.ReadUntilClosed(), beast::error::timeout);
  EXPECT_EQ(server->stats().open_connections, 0u);
  EXPECT_EQ(hub.subscribers(), 0u);
}

TEST(HttpServerTest, StopWaitsForRunningHandler) {
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> release_future = release.get_future().share();
  std::atomic<bool> returned{false};
  auto server = MustStart(LocalOptions(), [&](const Request&) {
    entered.set_value();
    release_future.wait_for(kDeadline);
    returned = true;
    return Ok("late");
  });
  ASSERT_NE(server, nullptr);
  auto client_done = std::async(std::launch::async, [&] {
    HttpClient client(server->port());
    return client.Send(MakeRequest(bhttp::verb::get, "/")).error;
  });
  ASSERT_EQ(entered.get_future().wait_for(kDeadline),
            std::future_status::ready);
  auto stopped = std::async(std::launch::async, [&] { server->Stop(); });
  release.set_value();
  ASSERT_EQ(stopped.wait_for(kDeadline), std::future_status::ready);
  EXPECT_TRUE(returned.load());
  ASSERT_EQ(client_done.wait_for(kDeadline), std::future_status::ready);
}

// ---------------------------------------------------------------------------
// WebSocket.

TEST(WebSocketTest, ReceivesStartedThenPublishedEventsInOrder) {
  EventHub hub;
  auto server = MustStart(LocalOptions(), Echo, &hub);
  ASSERT_NE(server, nullptr);
  WsClient ws;
  ASSERT_FALSE(ws.Connect(server->port()));
  auto started = ws.Read();
  ASSERT_FALSE(started.error) << started.error.message();
  EXPECT_EQ(started.text, kStartedEvent);
  EXPECT_EQ(server->stats().open_websockets, 1u);
  constexpr int kEvents = 200;
  for (int i = 0; i < kEvents; ++i) {
    hub.Publish(R"({"event":"block-added","n":)" + std::to_string(i) + "}");
  }
  for (int i = 0; i < kEvents; ++i) {
    auto message = ws.Read();
    ASSERT_FALSE(message.error) << message.error.message();
    EXPECT_EQ(message.text,
              R"({"event":"block-added","n":)" + std::to_string(i) + "}");
  }
}

TEST(WebSocketTest, LaterSubscriberGetsReplayBuffer) {
  EventHub hub;
  hub.Publish("one");
  hub.Publish("two");
  auto server = MustStart(LocalOptions(), Echo, &hub);
  ASSERT_NE(server, nullptr);
  WsClient ws;
  ASSERT_FALSE(ws.Connect(server->port()));
  EXPECT_EQ(ws.Read().text, kStartedEvent);
  EXPECT_EQ(ws.Read().text, "one");
  EXPECT_EQ(ws.Read().text, "two");
  hub.Publish("three");
  EXPECT_EQ(ws.Read().text, "three");
}

TEST(WebSocketTest, SlowSubscriberIsClosedWhileFastOneGetsEverything) {
  EventHubOptions hub_options;
  hub_options.replay_events = 0;
  hub_options.subscriber_queue_events = 4;
  EventHub hub(hub_options);
  auto server = MustStart(LocalOptions(), Echo, &hub);
  ASSERT_NE(server, nullptr);
  WsClient fast;
  WsClient slow;
  ASSERT_FALSE(fast.Connect(server->port()));
  // A small receive window, so the server's writes to it stall soon.
  ASSERT_FALSE(slow.Connect(server->port(), /*receive_buffer=*/4096));
  ASSERT_EQ(fast.Read().text, kStartedEvent);

  // Publish in step with the fast reader until the slow one is dropped.
  const std::string payload(16 << 10, 'e');
  constexpr int kMaxEvents = 4096;
  int published = 0;
  while (hub.dropped_subscribers() == 0 && published < kMaxEvents) {
    const std::string event = std::to_string(published) + payload;
    hub.Publish(event);
    ++published;
    auto message = fast.Read();
    ASSERT_FALSE(message.error) << message.error.message();
    ASSERT_EQ(message.text, event);
  }
  ASSERT_EQ(hub.dropped_subscribers(), 1u) << published << " events";
  for (int i = 0; i < 10; ++i) {
    hub.Publish("after " + std::to_string(i));
    EXPECT_EQ(fast.Read().text, "after " + std::to_string(i));
  }
  EXPECT_EQ(hub.subscribers(), 1u);

  // The slow client gets what was on its way, then a 1008 close.
  int received = 0;
  WsClient::Message message = slow.Read();
  while (!message.error) {
    ++received;
    message = slow.Read();
  }
  EXPECT_EQ(message.error, websocket::error::closed) << message.error.message();
  EXPECT_EQ(slow.reason().code, websocket::close_code::policy_error);
  EXPECT_THAT(
      std::string(slow.reason().reason.data(), slow.reason().reason.size()),
      ::testing::MatchesRegex("too slow: [0-9]+ events behind"));
  EXPECT_LT(received, published + 1);
  EXPECT_TRUE(Eventually([&] { return server->stats().open_websockets == 1; }));
}

TEST(WebSocketTest, SubscriberBoundAnswers503) {
  EventHubOptions hub_options;
  hub_options.max_subscribers = 1;
  EventHub hub(hub_options);
  auto server = MustStart(LocalOptions(), Echo, &hub);
  ASSERT_NE(server, nullptr);
  WsClient first;
  ASSERT_FALSE(first.Connect(server->port()));
  WsClient second;
  EXPECT_EQ(second.Connect(server->port()), websocket::error::upgrade_declined);
  EXPECT_EQ(second.handshake_response().result_int(), 503);
  EXPECT_EQ(server->stats().busy_refusals, 1u);
  EXPECT_EQ(first.Read().text, kStartedEvent);
}

TEST(WebSocketTest, NoHubOrOtherPathIs404) {
  auto server = MustStart(LocalOptions(), Echo, nullptr);
  ASSERT_NE(server, nullptr);
  WsClient ws;
  EXPECT_EQ(ws.Connect(server->port()), websocket::error::upgrade_declined);
  EXPECT_EQ(ws.handshake_response().result_int(), 404);

  EventHub hub;
  auto with_hub = MustStart(LocalOptions(), Echo, &hub);
  ASSERT_NE(with_hub, nullptr);
  WsClient other;
  EXPECT_EQ(other.Connect(with_hub->port(), 0, "/ws/other"),
            websocket::error::upgrade_declined);
  EXPECT_EQ(other.handshake_response().result_int(), 404);
}

// Issue 43: browsers let any page open a WebSocket anywhere, so any page a
// visitor opened could subscribe to a local node's events. A foreign
// Origin is refused; the server's own pages, listed origins and clients
// that send no Origin are served.
TEST(WebSocketTest, AForeignOriginIsRefused) {
  EventHub hub;
  HttpServerOptions options = LocalOptions();
  options.allowed_origins = {"https://wallet.example"};
  auto server = MustStart(options, Echo, &hub);
  ASSERT_NE(server, nullptr);
  WsClient evil;
  EXPECT_EQ(evil.Connect(server->port(), 0, kDefaultEventsPath,
                         "http://evil.example"),
            websocket::error::upgrade_declined);
  EXPECT_EQ(evil.handshake_response().result_int(), 403);
  for (const std::string origin :
       {"", "http://127.0.0.1", "https://wallet.example"}) {
    WsClient ws;
    EXPECT_FALSE(ws.Connect(server->port(), 0, kDefaultEventsPath, origin))
        << origin;
  }
}

TEST(WebSocketTest, ClientMessagesAreIgnoredAndClientCloseEndsSession) {
  EventHub hub;
  auto server = MustStart(LocalOptions(), Echo, &hub);
  ASSERT_NE(server, nullptr);
  {
    WsClient ws;
    ASSERT_FALSE(ws.Connect(server->port()));
    ASSERT_FALSE(ws.Write("hello"));
    ASSERT_FALSE(ws.Write(std::string(1000, 'x')));
    EXPECT_EQ(ws.Read().text, kStartedEvent);
    hub.Publish("event");
    EXPECT_EQ(ws.Read().text, "event");
    ASSERT_TRUE(Eventually([&] { return hub.subscribers() == 1; }));
    ws.CloseSocket();
  }
  EXPECT_TRUE(Eventually([&] {
    return hub.subscribers() == 0 && server->stats().open_websockets == 0 &&
           server->stats().open_connections == 0;
  }));
}

}  // namespace
}  // namespace rnode::node::http

// ParseEvent on messages shaped as the node sends them, and EventsClient
// against an in-process WebSocket server on 127.0.0.1.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/child_process.h"
#include "integration/loadgen/events_client.h"
#include "util/mutex.h"

namespace rnode::loadgen {
namespace {

namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using ::testing::HasSubstr;

// Generous: only a broken client waits this long.
constexpr auto kPatience = std::chrono::seconds(30);

const char kStarted[] = R"({"event":"started","schema-version":1})";

const char kBlockAdded[] =
    R"({"event":"block-added","schema-version":1,"payload":{)"
    R"("block-hash":"aa01","block-number":42,"timestamp":1700000000123,)"
    R"("parent-hashes":["bb02","cc03"],"justification-hashes":[["dd","ee"]],)"
    R"("deploys":[{"id":"3045a1","cost":123,"deployer":"04f1","errored":false},)"
    R"({"id":"3044b2","cost":456,"deployer":"04f2","errored":true}],)"
    R"("creator":"04c0","seq-num":7}})";

const char kBlockAddedEmpty[] =
    R"({"event":"block-added","schema-version":1,"payload":{)"
    R"("block-hash":"aa02","block-number":43,"timestamp":1700000000223,)"
    R"("parent-hashes":["aa01"],"justification-hashes":[],"deploys":[],)"
    R"("creator":"04c1","seq-num":8}})";

const char kBlockFinalised[] =
    R"({"event":"block-finalised","schema-version":1,"payload":{)"
    R"("block-hash":"aa01","block-number":42,"timestamp":1700000000123,)"
    R"("parent-hashes":["bb02","cc03"],"justification-hashes":[],)"
    R"("deploys":[{"id":"3045a1","cost":123,"deployer":"04f1","errored":false}],)"
    R"("creator":"04c0","seq-num":7}})";

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(ParseEventTest, Started) {
  absl::StatusOr<Event> e = ParseEvent(kStarted);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->kind, EventKind::kStarted);
  EXPECT_EQ(e->name, "started");
}

TEST(ParseEventTest, BlockAddedWithTwoDeploys) {
  absl::StatusOr<Event> e = ParseEvent(kBlockAdded);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->kind, EventKind::kBlockAdded);
  const BlockPayload& b = e->block;
  EXPECT_EQ(b.block_hash, "aa01");
  EXPECT_EQ(b.number, 42);
  EXPECT_EQ(b.timestamp, 1700000000123);
  EXPECT_EQ(b.seq_num, 7);
  EXPECT_EQ(b.creator, "04c0");
  EXPECT_EQ(b.parent_hashes, (std::vector<std::string>{"bb02", "cc03"}));
  ASSERT_EQ(b.deploys.size(), 2u);
  EXPECT_EQ(b.deploys[0].id, "3045a1");
  EXPECT_EQ(b.deploys[0].cost, 123);
  EXPECT_EQ(b.deploys[0].deployer, "04f1");
  EXPECT_FALSE(b.deploys[0].errored);
  EXPECT_EQ(b.deploys[1].id, "3044b2");
  EXPECT_TRUE(b.deploys[1].errored);
}

TEST(ParseEventTest, BlockFinalisedAndBlockCreated) {
  absl::StatusOr<Event> e = ParseEvent(kBlockFinalised);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->kind, EventKind::kBlockFinalised);
  EXPECT_EQ(e->block.number, 42);
  ASSERT_EQ(e->block.deploys.size(), 1u);

  absl::StatusOr<Event> created =
      ParseEvent(R"({"event":"block-created","schema-version":1,"payload":)"
                 R"({"block-hash":"ff","block-number":3,"deploys":[]}})");
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->kind, EventKind::kBlockCreated);
  EXPECT_EQ(created->block.number, 3);
  EXPECT_TRUE(created->block.deploys.empty());
}

// A finalized block's copies a merge rejected are marked, its own merge's
// rejections listed; the deploy events name the deploy and the block.
TEST(ParseEventTest, RejectedCopiesAndDeployEvents) {
  absl::StatusOr<Event> e = ParseEvent(
      R"({"event":"block-finalised","schema-version":1,"payload":)"
      R"({"block-hash":"aa","block-number":9,"rejected-deploys":["3045c3"],)"
      R"("deploys":[{"id":"3045a1","rejected":true},{"id":"3045b2"}]}})");
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->block.deploys.size(), 2u);
  EXPECT_TRUE(e->block.deploys[0].rejected);
  EXPECT_FALSE(e->block.deploys[1].rejected);
  EXPECT_EQ(e->block.rejected_deploys, std::vector<std::string>{"3045c3"});

  for (const auto& [name, kind] :
       {std::pair{"deploy-rejected", EventKind::kDeployRejected},
        std::pair{"deploy-reproposed", EventKind::kDeployReproposed}}) {
    absl::StatusOr<Event> d = ParseEvent(
        absl::StrCat(R"({"event":")", name, R"(","schema-version":1,)",
                     R"("payload":{"deploy-id":"3045a1","block-hash":"bb",)",
                     R"("block-number":12}})"));
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->kind, kind);
    EXPECT_EQ(d->deploy_id, "3045a1");
    EXPECT_EQ(d->block.block_hash, "bb");
    EXPECT_EQ(d->block.number, 12);
  }
  EXPECT_FALSE(ParseEvent(R"({"event":"deploy-rejected","schema-version":1,)"
                          R"("payload":{"block-hash":"bb","block-number":1}})")
                   .ok());
  EXPECT_FALSE(
      ParseEvent(R"({"event":"block-added","schema-version":1,"payload":)"
                 R"({"block-hash":"aa","block-number":9,"deploys":[],)"
                 R"("rejected-deploys":"3045c3"}})")
          .ok());
}

TEST(ParseEventTest, UnknownEventNameIsOtherNotAnError) {
  absl::StatusOr<Event> e =
      ParseEvent(R"({"event":"node-started","schema-version":1,)"
                 R"("payload":{"address":"rnode://x"}})");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->kind, EventKind::kOther);
  EXPECT_EQ(e->name, "node-started");
}

struct BadEvent {
  const char* text;
  const char* problem;
};

TEST(ParseEventTest, MalformedMessagesAreInvalidArgument) {
  const BadEvent cases[] = {
      {R"({"event":"block-added",)", "not JSON"},
      {"", "not JSON"},
      {R"([1,2])", "not a JSON object"},
      {R"({"schema-version":1})", "no \"event\""},
      {R"({"event":7,"schema-version":1})", "\"event\" is not a string"},
      {R"({"event":"started"})", "no \"schema-version\""},
      {R"({"event":"started","schema-version":2})", "schema-version 2"},
      {R"({"event":"block-added","schema-version":1})", "no \"payload\""},
      {R"({"event":"block-added","schema-version":1,"payload":[]})",
       "\"payload\" is not an object"},
      {R"({"event":"block-added","schema-version":1,"payload":)"
       R"({"block-number":1,"deploys":[]}})",
       "no \"block-hash\""},
      {R"({"event":"block-added","schema-version":1,"payload":)"
       R"({"block-hash":"a","block-number":"1","deploys":[]}})",
       "\"block-number\" is not an integer"},
      {R"({"event":"block-added","schema-version":1,"payload":)"
       R"({"block-hash":"a","block-number":1}})",
       "no \"deploys\""},
      {R"({"event":"block-added","schema-version":1,"payload":)"
       R"({"block-hash":"a","block-number":1,"deploys":[{"cost":1}]}})",
       "no \"id\""},
      {R"({"event":"block-added","schema-version":1,"payload":)"
       R"({"block-hash":"a","block-number":1,"deploys":[)"
       R"({"id":"x","errored":"no"}]}})",
       "\"errored\" is not a boolean"},
  };
  for (const BadEvent& c : cases) {
    absl::StatusOr<Event> e = ParseEvent(c.text);
    ASSERT_FALSE(e.ok()) << c.text;
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(Message(e.status()), HasSubstr(c.problem)) << c.text;
  }
}

// How the test server ends its one connection.
enum class Ending {
  kWaitForClient,  // Reads until the client goes away.
  kClose,          // Sends a WebSocket close, as a node does to a slow
                   // subscriber.
};

// Accepts one WebSocket client on 127.0.0.1, sends `messages`, then ends as
// told; on a thread of its own, joined by the destructor.
class WsServer {
 public:
  WsServer(std::vector<std::string> messages, Ending ending)
      : acceptor_(io_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0)),
        thread_(&WsServer::Serve, this, std::move(messages), ending) {}
  ~WsServer() { thread_.join(); }

  uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  void Serve(std::vector<std::string> messages, Ending ending) {
    beast::error_code ec;
    tcp::socket socket(io_);
    acceptor_.accept(socket, ec);
    if (ec) return;
    websocket::stream<tcp::socket> ws(std::move(socket));
    ws.accept(ec);
    for (const std::string& m : messages) {
      if (ec) return;
      ws.text(true);
      ws.write(net::buffer(m), ec);
    }
    if (ec) return;
    if (ending == Ending::kClose) {
      ws.close(websocket::close_reason(websocket::close_code::policy_error,
                                       "too slow"),
               ec);
      return;
    }
    beast::flat_buffer buffer;
    while (!ec) ws.read(buffer, ec);
  }

  net::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
};

// What the callbacks saw; waits with a deadline, never sleeps.
class Seen {
 public:
  void Add(const std::string& what) {
    MutexLock lock(&mu_);
    items_.push_back(what);
    changed_.SignalAll();
  }
  // Waits until `n` items were seen; returns them.
  std::vector<std::string> AwaitCount(size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    MutexLock lock(&mu_);
    while (items_.size() < n) {
      if (changed_.WaitUntil(&mu_, deadline)) break;
    }
    return items_;
  }

 private:
  Mutex mu_;
  CondVar changed_;
  std::vector<std::string> items_ ABSL_GUARDED_BY(mu_);
};

EventsClientOptions OptionsFor(uint16_t port) {
  EventsClientOptions o;
  o.port = port;
  return o;
}

TEST(EventsClientTest, DeliversBlockEventsAndCountsThem) {
  WsServer server(
      {kStarted, kBlockAdded, kBlockAddedEmpty, "not json", kBlockFinalised},
      Ending::kWaitForClient);
  Seen seen;
  EventCallbacks callbacks;
  callbacks.on_added = [&seen](const BlockPayload& b, double t) {
    EXPECT_GE(t, 0);
    seen.Add("added " + std::to_string(b.number) + " " +
             std::to_string(b.deploys.size()));
  };
  callbacks.on_finalised = [&seen](const BlockPayload& b, double) {
    seen.Add("finalised " + std::to_string(b.number));
  };
  absl::StatusOr<std::unique_ptr<EventsClient>> client =
      EventsClient::Start(OptionsFor(server.port()), callbacks, RunClock());
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ(
      seen.AwaitCount(3),
      (std::vector<std::string>{"added 42 2", "added 43 0", "finalised 42"}));
  const EventCounts counts = (*client)->Counts();
  EXPECT_EQ(counts.blocks_added, 2);
  EXPECT_EQ(counts.empty_blocks_added, 1);
  EXPECT_EQ(counts.blocks_finalised, 1);
  EXPECT_EQ(counts.parse_errors, 1);
  EXPECT_EQ(counts.latest_block_number, 43);
  EXPECT_TRUE((*client)->status().ok());
  // The reader is blocked on a quiet connection; Stop must still return.
  (*client)->Stop();
  EXPECT_EQ((*client)->status().code(), absl::StatusCode::kCancelled);
}

TEST(EventsClientTest, NodeClosingTheStreamIsUnavailableWithItsReason) {
  WsServer server({kStarted}, Ending::kClose);
  absl::StatusOr<std::unique_ptr<EventsClient>> client =
      EventsClient::Start(OptionsFor(server.port()), {}, RunClock());
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE(
      (*client)->AwaitEnd(std::chrono::steady_clock::now() + kPatience));
  EXPECT_EQ((*client)->status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(Message((*client)->status()), HasSubstr("too slow"));
}

TEST(EventsClientTest, FirstMessageMustBeStarted) {
  WsServer server({kBlockAdded}, Ending::kWaitForClient);
  absl::StatusOr<std::unique_ptr<EventsClient>> client =
      EventsClient::Start(OptionsFor(server.port()), {}, RunClock());
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(EventsClientTest, SilentServerTimesOutAndStopDoesNotHang) {
  WsServer server({}, Ending::kWaitForClient);
  EventsClientOptions options = OptionsFor(server.port());
  options.connect_timeout = std::chrono::milliseconds(200);
  absl::StatusOr<std::unique_ptr<EventsClient>> client =
      EventsClient::Start(options, {}, RunClock());
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(EventsClientTest, NothingListeningIsUnavailable) {
  const auto port = static_cast<uint16_t>(testing::FreePort());
  ASSERT_NE(port, 0);
  absl::StatusOr<std::unique_ptr<EventsClient>> client =
      EventsClient::Start(OptionsFor(port), {}, RunClock());
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace rnode::loadgen

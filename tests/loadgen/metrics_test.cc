// ParseMetrics on a Prometheus exposition, deltas and histogram means, and
// ScrapeMetrics against an in-process HTTP server on 127.0.0.1.
#include <chrono>
#include <cmath>
#include <string>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "gtest/gtest.h"
#include "integration/child_process.h"
#include "integration/loadgen/metrics_scrape.h"

namespace rnode::loadgen {
namespace {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr char kExposition[] =
    "# HELP casper_propose_total Proposals by result\n"
    "# TYPE casper_propose_total counter\n"
    "casper_propose_total{result=\"created\"} 12\n"
    "casper_propose_total{result=\"empty\"} 3\n"
    "\n"
    "process_resident_memory_bytes 1.048576e+08\n"
    "rnode_deploy_inclusion_seconds_bucket{le=\"0.5\"} 4\n"
    "rnode_deploy_inclusion_seconds_bucket{le=\"+Inf\"} 10\n"
    "rnode_deploy_inclusion_seconds_sum 7.5\n"
    "rnode_deploy_inclusion_seconds_count 10\n"
    "odd{text=\"a}b \\\"q\\\"\"} 1\n"
    "with_timestamp 5 1700000000000\r\n"
    "infinite +Inf\n"
    "this is garbage\n"
    "no_value\n"
    "bad_value{x=\"1\"} abc\n"
    "unclosed{x=\"1\" 2\n";

TEST(ParseMetricsTest, KeysSamplesByNameAndLabelsAsWritten) {
  const MetricSamples m = ParseMetrics(kExposition);
  EXPECT_EQ(Value(m, "casper_propose_total{result=\"created\"}"), 12);
  EXPECT_EQ(Value(m, "casper_propose_total{result=\"empty\"}"), 3);
  EXPECT_EQ(Value(m, "casper_propose_total"), std::nullopt);
  EXPECT_EQ(Value(m, "process_resident_memory_bytes"), 104857600);
  EXPECT_EQ(Value(m, "rnode_deploy_inclusion_seconds_bucket{le=\"+Inf\"}"), 10);
  EXPECT_EQ(Value(m, "rnode_deploy_inclusion_seconds_sum"), 7.5);
  EXPECT_EQ(Value(m, "rnode_deploy_inclusion_seconds_count"), 10);
  EXPECT_EQ(Value(m, "odd{text=\"a}b \\\"q\\\"\"}"), 1);
  EXPECT_EQ(Value(m, "with_timestamp"), 5);
  ASSERT_TRUE(Value(m, "infinite").has_value());
  EXPECT_TRUE(std::isinf(*Value(m, "infinite")));
}

TEST(ParseMetricsTest, SkipsCommentsAndCountsGarbage) {
  const MetricSamples m = ParseMetrics(kExposition);
  EXPECT_EQ(m.skipped_lines, 4);  // garbage, no_value, bad_value, unclosed.
  EXPECT_EQ(m.values.size(), 10u);
  EXPECT_EQ(ParseMetrics("").values.size(), 0u);
  EXPECT_EQ(ParseMetrics("# only a comment").skipped_lines, 0);
}

TEST(ParseMetricsTest, LaterDuplicateWins) {
  EXPECT_EQ(Value(ParseMetrics("a 1\na 2\n"), "a"), 2);
}

TEST(MetricDeltaTest, DeltaNeedsBothScrapes) {
  const MetricSamples before = ParseMetrics("x 3\ny 1\n");
  const MetricSamples after = ParseMetrics("x 10\n");
  EXPECT_EQ(Delta(before, after, "x"), 7);
  EXPECT_EQ(Delta(before, after, "y"), std::nullopt);
  EXPECT_EQ(Delta(before, after, "z"), std::nullopt);
}

TEST(MetricDeltaTest, HistogramMeanIsDeltaSumOverDeltaCount) {
  const MetricSamples before = ParseMetrics(kExposition);
  const MetricSamples after = ParseMetrics(
      "rnode_deploy_inclusion_seconds_sum 12.5\n"
      "rnode_deploy_inclusion_seconds_count 20\n");
  EXPECT_EQ(HistogramMean(before, after, "rnode_deploy_inclusion_seconds"),
            0.5);
  // No new observation: no mean.
  EXPECT_EQ(HistogramMean(before, before, "rnode_deploy_inclusion_seconds"),
            std::nullopt);
  EXPECT_EQ(HistogramMean(before, after, "absent_seconds"), std::nullopt);
  const std::optional<HistogramDelta> d =
      DeltaOfHistogram(before, after, "rnode_deploy_inclusion_seconds");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->sum, 5);
  EXPECT_EQ(d->count, 10);
}

TEST(MetricDeltaTest, StepFamilySumsStepsOverOperations) {
  const MetricSamples before = ParseMetrics(
      "m_seconds_sum{step=\"index\"} 1\n"
      "m_seconds_count{step=\"index\"} 10\n"
      "m_seconds_sum{step=\"apply\"} 2\n"
      "m_seconds_count{step=\"apply\"} 10\n"
      "m_seconds_other 100\n");
  const MetricSamples after = ParseMetrics(
      "m_seconds_sum{step=\"index\"} 2\n"
      "m_seconds_count{step=\"index\"} 12\n"
      "m_seconds_sum{step=\"apply\"} 4\n"
      "m_seconds_count{step=\"apply\"} 12\n"
      "m_seconds_other 900\n");
  const std::optional<HistogramDelta> d =
      DeltaOfStepFamily(before, after, "m_seconds");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->sum, 3);
  EXPECT_EQ(d->count, 2);
  EXPECT_EQ(DeltaOfStepFamily(before, after, "absent"), std::nullopt);
}

// Answers one HTTP request on 127.0.0.1 with `status` and `body` (or not at
// all when `answer` is false), on a thread joined by the destructor.
class HttpServer {
 public:
  HttpServer(http::status status, std::string body, bool answer = true)
      : acceptor_(io_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0)),
        thread_(&HttpServer::Serve, this, status, std::move(body), answer) {}
  ~HttpServer() { Join(); }

  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  // Waits for the exchange to end; the request target it received.
  std::string Join() {
    if (thread_.joinable()) thread_.join();
    return target_;
  }

 private:
  void Serve(http::status status, std::string body, bool answer) {
    beast::error_code ec;
    tcp::socket socket(io_);
    acceptor_.accept(socket, ec);
    if (ec) return;
    beast::flat_buffer buffer;
    http::request<http::string_body> request;
    http::read(socket, buffer, request, ec);
    if (ec) return;
    target_ = std::string(request.target());
    if (!answer) {
      // Until the client gives up and closes.
      while (!ec) http::read(socket, buffer, request, ec);
      return;
    }
    http::response<http::string_body> response{status, 11};
    response.set(http::field::content_type, "text/plain; version=0.0.4");
    response.body() = std::move(body);
    response.prepare_payload();
    http::write(socket, response, ec);
    socket.shutdown(tcp::socket::shutdown_both, ec);
  }

  net::io_context io_;
  tcp::acceptor acceptor_;
  std::string target_;  // Written by the server thread; read after Join.
  std::thread thread_;
};

TEST(ScrapeMetricsTest, GetsAndParsesTheMetricsPage) {
  HttpServer server(http::status::ok, kExposition);
  absl::StatusOr<MetricSamples> samples =
      ScrapeMetrics("127.0.0.1", server.port());
  EXPECT_EQ(server.Join(), "/metrics");
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(Value(*samples, "process_resident_memory_bytes"), 104857600);
  EXPECT_EQ(samples->skipped_lines, 4);
}

TEST(ScrapeMetricsTest, NonOkStatusIsUnavailable) {
  HttpServer server(http::status::not_found, "no");
  absl::StatusOr<MetricSamples> samples =
      ScrapeMetrics("127.0.0.1", server.port());
  ASSERT_FALSE(samples.ok());
  EXPECT_EQ(samples.status().code(), absl::StatusCode::kUnavailable);
}

TEST(ScrapeMetricsTest, SilentServerIsDeadlineExceeded) {
  HttpServer server(http::status::ok, "", /*answer=*/false);
  absl::StatusOr<MetricSamples> samples =
      ScrapeMetrics("127.0.0.1", server.port(), std::chrono::milliseconds(200));
  ASSERT_FALSE(samples.ok());
  EXPECT_EQ(samples.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(ScrapeMetricsTest, NothingListeningIsUnavailable) {
  const auto port = static_cast<uint16_t>(testing::FreePort());
  ASSERT_NE(port, 0);
  absl::StatusOr<MetricSamples> samples = ScrapeMetrics("127.0.0.1", port);
  ASSERT_FALSE(samples.ok());
  EXPECT_EQ(samples.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace rnode::loadgen

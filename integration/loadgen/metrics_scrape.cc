// /metrics scraping over Boost.Beast and the Prometheus text parser.
#include "integration/loadgen/metrics_scrape.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>
#include <utility>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "absl/strings/str_cat.h"
#include "util/string_view.h"

namespace rnode::loadgen {
namespace {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

bool IsNameChar(char c, bool first) {
  const bool alpha =
      (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
  return alpha || (!first && c >= '0' && c <= '9');
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// The next space-separated token of `rest`, consumed.
std::string_view NextToken(std::string_view& rest) {
  while (!rest.empty() && IsSpace(rest.front())) rest.remove_prefix(1);
  size_t n = 0;
  while (n < rest.size() && !IsSpace(rest[n])) ++n;
  std::string_view token = rest.substr(0, n);
  rest.remove_prefix(n);
  return token;
}

std::optional<double> ParseValue(std::string_view token) {
  if (token == "+Inf" || token == "Inf") {
    return std::numeric_limits<double>::infinity();
  }
  if (token == "-Inf") return -std::numeric_limits<double>::infinity();
  if (token == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (token.starts_with('+')) token.remove_prefix(1);
  double value = 0;
  const char* end = token.data() + token.size();
  auto [ptr, ec] = std::from_chars(token.data(), end, value);
  if (token.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// The length of the sample key (name and label set) at the start of
// `line`, or 0 if it is not one. Label values are quoted and may hold
// escaped quotes and braces.
size_t KeyLength(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && IsNameChar(line[i], i == 0)) ++i;
  if (i == 0) return 0;
  if (i == line.size() || line[i] != '{') return i;
  bool quoted = false;
  for (++i; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == '}') {
      return i + 1;
    }
  }
  return 0;
}

// Parses one sample line into `out`; false if it is not one.
bool ParseSample(std::string_view line, MetricSamples& out) {
  const size_t key_length = KeyLength(line);
  if (key_length == 0 || key_length == line.size() ||
      !IsSpace(line[key_length])) {
    return false;
  }
  std::string_view rest = line.substr(key_length);
  std::optional<double> value = ParseValue(NextToken(rest));
  if (!value.has_value()) return false;
  std::string_view timestamp = NextToken(rest);
  if (!timestamp.empty()) {
    int64_t ms = 0;
    const char* end = timestamp.data() + timestamp.size();
    auto [ptr, ec] = std::from_chars(timestamp.data(), end, ms);
    if (ec != std::errc() || ptr != end) return false;
  }
  if (!Trim(rest).empty()) return false;
  out.values[std::string(line.substr(0, key_length))] = *value;
  return true;
}

// Whether `key` is `name`, or `name` with a label set.
bool IsSeries(std::string_view key, std::string_view name) {
  return key.starts_with(name) &&
         (key.size() == name.size() || key[name.size()] == '{');
}

// Per label set of `name` (a full sample name such as x_sum): after -
// before, for the keys present in both.
absl::flat_hash_map<std::string, double> SeriesDeltas(
    const MetricSamples& before, const MetricSamples& after,
    std::string_view name) {
  absl::flat_hash_map<std::string, double> out;
  for (const auto& entry : after.values) {
    const std::string& key = entry.first;
    if (!IsSeries(key, name)) continue;
    auto old = before.values.find(key);
    if (old == before.values.end()) continue;
    out[key.substr(name.size())] = entry.second - old->second;
  }
  return out;
}

absl::Status ScrapeError(const std::string& where, beast::error_code ec) {
  const std::string text = absl::StrCat("scrape ", where, ": ", ec.message());
  if (ec == beast::error::timeout) return absl::DeadlineExceededError(text);
  if (ec == http::error::body_limit) {
    return absl::ResourceExhaustedError(
        absl::StrCat(text, " (over ", kMaxMetricsBytes, " bytes)"));
  }
  return absl::UnavailableError(text);
}

}  // namespace

MetricSamples ParseMetrics(std::string_view text) {
  MetricSamples out;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = Trim(text.substr(0, eol));
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    if (line.empty() || line.front() == '#') continue;
    if (!ParseSample(line, out)) ++out.skipped_lines;
  }
  return out;
}

std::optional<double> Value(const MetricSamples& samples,
                            std::string_view key) {
  auto it = samples.values.find(AbslView(key));
  if (it == samples.values.end()) return std::nullopt;
  return it->second;
}

std::optional<double> Delta(const MetricSamples& before,
                            const MetricSamples& after, std::string_view key) {
  std::optional<double> a = Value(before, key);
  std::optional<double> b = Value(after, key);
  if (!a.has_value() || !b.has_value()) return std::nullopt;
  return *b - *a;
}

std::optional<HistogramDelta> DeltaOfHistogram(const MetricSamples& before,
                                               const MetricSamples& after,
                                               std::string_view name) {
  const std::string base(name);
  std::optional<double> sum = Delta(before, after, base + "_sum");
  std::optional<double> count = Delta(before, after, base + "_count");
  if (!sum.has_value() || !count.has_value()) return std::nullopt;
  return HistogramDelta{*sum, *count};
}

std::optional<double> HistogramMean(const MetricSamples& before,
                                    const MetricSamples& after,
                                    std::string_view name) {
  std::optional<HistogramDelta> d = DeltaOfHistogram(before, after, name);
  if (!d.has_value() || d->count == 0) return std::nullopt;
  return d->sum / d->count;
}

std::optional<HistogramDelta> DeltaOfStepFamily(const MetricSamples& before,
                                                const MetricSamples& after,
                                                std::string_view name) {
  const std::string base(name);
  absl::flat_hash_map<std::string, double> sums =
      SeriesDeltas(before, after, base + "_sum");
  absl::flat_hash_map<std::string, double> counts =
      SeriesDeltas(before, after, base + "_count");
  if (sums.empty() || counts.empty()) return std::nullopt;
  HistogramDelta d;
  for (const auto& entry : sums) d.sum += entry.second;
  for (const auto& entry : counts) d.count = std::max(d.count, entry.second);
  return d;
}

absl::StatusOr<MetricSamples> ScrapeMetrics(const std::string& host,
                                            uint16_t port,
                                            std::chrono::milliseconds timeout) {
  const std::string where = absl::StrCat(host, ":", port, "/metrics");
  beast::error_code ec;
  const net::ip::address address = net::ip::make_address(host, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad metrics host ", host, ": ", ec.message()));
  }
  // Asynchronous operations on a private io_context run to completion on
  // this thread: the only way the stream's expiry bounds every step.
  net::io_context io;
  beast::tcp_stream stream(io);
  stream.expires_after(timeout);
  http::request<http::empty_body> request{http::verb::get, "/metrics", 11};
  request.set(http::field::host, absl::StrCat(host, ":", port));
  request.set(http::field::user_agent, "rnode-loadgen");
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxMetricsBytes);
  beast::error_code result;
  auto on_read = [&result](beast::error_code read, size_t) { result = read; };
  auto on_written = [&](beast::error_code written, size_t) {
    if (written) {
      result = written;
      return;
    }
    http::async_read(stream, buffer, parser, on_read);
  };
  auto on_connected = [&](beast::error_code connected) {
    if (connected) {
      result = connected;
      return;
    }
    http::async_write(stream, request, on_written);
  };
  stream.async_connect(tcp::endpoint(address, port), on_connected);
  io.run();
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  if (result) return ScrapeError(where, result);
  const http::response<http::string_body>& response = parser.get();
  if (response.result() != http::status::ok) {
    return absl::UnavailableError(
        absl::StrCat("scrape ", where, ": HTTP ", response.result_int()));
  }
  return ParseMetrics(response.body());
}

}  // namespace rnode::loadgen

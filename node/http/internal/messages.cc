// Requests and responses between Beast and the server's own types
// (node/http/internal/messages.h).
#include "node/http/internal/messages.h"

#include <map>
#include <utility>

#include <boost/beast/core.hpp>

#include "nlohmann/json.hpp"

namespace rnode::node::http::internal {
namespace {

namespace beast = boost::beast;

// How long a browser may cache a CORS preflight answer. Browsers cap it (2 h
// in Chromium); an hour saves nearly every repeated preflight.
constexpr int kPreflightMaxAgeSeconds = 3600;

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

bool IsHeaderTokenSafe(std::string_view text) {
  for (char c : text) {
    if (c == '\r' || c == '\n' || c == '\0') return false;
  }
  return true;
}

}  // namespace

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

std::string ConnectionRefusal(bool any_origin) {
  const std::string body =
      ErrorJson("busy", "too many connections, try again later");
  return std::string(
             "HTTP/1.1 503 Service Unavailable\r\n"
             "Content-Type: application/json\r\n"
             "Retry-After: 1\r\n") +
         (any_origin ? "Access-Control-Allow-Origin: *\r\n" : "") +
         "Connection: close\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace rnode::node::http::internal

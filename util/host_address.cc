#include "util/host_address.h"

#include <arpa/inet.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace rnode {
namespace {

// An address as its 16 IPv6 bytes (IPv4 as IPv4-mapped); nullopt for a
// name.
std::optional<std::array<uint8_t, 16>> ParseIp(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string h(host);
  std::array<uint8_t, 16> ip{};
  uint8_t v4[4];
  if (inet_pton(AF_INET, h.c_str(), v4) == 1) {
    ip[10] = ip[11] = 0xff;
    for (int i = 0; i < 4; ++i) ip[12 + i] = v4[i];
    return ip;
  }
  if (inet_pton(AF_INET6, h.c_str(), ip.data()) == 1) return ip;
  return std::nullopt;
}

// The IPv4 address in an IPv4-mapped one; null otherwise.
const uint8_t* MappedV4(const std::array<uint8_t, 16>& ip) {
  for (int i = 0; i < 10; ++i) {
    if (ip[i] != 0) return nullptr;
  }
  return ip[10] == 0xff && ip[11] == 0xff ? ip.data() + 12 : nullptr;
}

// "::" (0) or "::1" (1) when the first 15 bytes are zero; nullopt
// otherwise.
std::optional<uint8_t> ZeroHeadedIpv6(const std::array<uint8_t, 16>& ip) {
  for (int i = 0; i < 15; ++i) {
    if (ip[i] != 0) return std::nullopt;
  }
  return ip[15];
}

bool IsLocalhostName(std::string_view host) {
  std::string lower(host);
  absl::AsciiStrToLower(&lower);
  return lower == "localhost" || absl::EndsWith(lower, ".localhost");
}

}  // namespace

bool IsLoopbackHost(std::string_view host) {
  const std::optional<std::array<uint8_t, 16>> ip = ParseIp(host);
  if (!ip.has_value()) return IsLocalhostName(host);
  if (const uint8_t* v4 = MappedV4(*ip)) return v4[0] == 127;
  return ZeroHeadedIpv6(*ip) == 1;
}

bool IsPrivateHost(std::string_view host) {
  const std::optional<std::array<uint8_t, 16>> ip = ParseIp(host);
  if (!ip.has_value()) return IsLocalhostName(host);
  if (const uint8_t* a = MappedV4(*ip)) {
    return a[0] == 0 ||                             // 0.0.0.0/8
           a[0] == 10 ||                            // 10/8
           a[0] == 127 ||                           // loopback
           (a[0] == 172 && (a[1] & 0xf0) == 16) ||  // 172.16/12
           (a[0] == 192 && a[1] == 168) ||          // 192.168/16
           (a[0] == 169 && a[1] == 254);            // link-local
  }
  if (const std::optional<uint8_t> last = ZeroHeadedIpv6(*ip)) {
    return *last <= 1;  // "::" and "::1"
  }
  return ((*ip)[0] & 0xfe) == 0xfc ||                      // fc00::/7
         ((*ip)[0] == 0xfe && ((*ip)[1] & 0xc0) == 0x80);  // fe80::/10
}

}  // namespace rnode

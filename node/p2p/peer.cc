// Peers: rnode:// addresses and the wire form of a node.
#include "node/p2p/peer.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace rnode::node::p2p {
namespace {

constexpr std::string_view kScheme = "rnode://";
constexpr std::string_view kProtocolKey = "protocol";
constexpr std::string_view kDiscoveryKey = "discovery";
// Ports are 16-bit; the wire carries them as uint32.
constexpr uint32_t kMaxPort = 65535;

// Printable ASCII without spaces (hosts and other wire names).
bool IsGraphicAscii(std::string_view s) {
  for (char c : s) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

absl::Status CheckHost(std::string_view host) {
  if (host.empty()) return absl::InvalidArgumentError("empty host");
  if (host.size() > kMaxHostBytes) {
    return absl::InvalidArgumentError(absl::StrCat("host of ", host.size(),
                                                   " bytes; at most ",
                                                   kMaxHostBytes, " allowed"));
  }
  if (!IsGraphicAscii(host)) {
    return absl::InvalidArgumentError(
        "host holds characters other than printable ASCII");
  }
  return absl::OkStatus();
}

absl::Status CheckPort(std::string_view name, uint32_t port) {
  if (port == 0 || port > kMaxPort) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(name), " port ", port, " is outside 1..", kMaxPort));
  }
  return absl::OkStatus();
}

// Decimal digits only (no sign, no spaces), in 1..65535.
absl::StatusOr<uint32_t> ParsePort(std::string_view name,
                                   std::string_view text) {
  const std::string name_text(name);
  if (text.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("empty ", name_text, " port"));
  }
  uint32_t port = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return absl::InvalidArgumentError(
          absl::StrCat(name_text, " port is not a decimal number"));
    }
    port = port * 10 + static_cast<uint32_t>(c - '0');
    if (port > kMaxPort) {
      return absl::InvalidArgumentError(
          absl::StrCat(name_text, " port is above ", kMaxPort));
    }
  }
  RETURN_IF_ERROR(CheckPort(name, port));
  return port;
}

template <typename NodeProto>
void ToProto(const PeerNode& peer, NodeProto* out) {
  out->set_id(std::string(AsChars(peer.id)));
  out->set_host(peer.host);
  out->set_tcp_port(peer.tcp_port);
  out->set_udp_port(peer.udp_port);
}

template <typename NodeProto>
absl::StatusOr<PeerNode> FromProto(const NodeProto& node) {
  if (node.id().size() != kNodeIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node id of ", node.id().size(), " bytes; expected ", kNodeIdBytes));
  }
  RETURN_IF_ERROR(CheckHost(node.host()));
  RETURN_IF_ERROR(CheckPort("protocol", node.tcp_port()));
  RETURN_IF_ERROR(CheckPort("discovery", node.udp_port()));
  PeerNode peer;
  peer.id = ToBytes(node.id());
  peer.host = node.host();
  peer.tcp_port = node.tcp_port();
  peer.udp_port = node.udp_port();
  return peer;
}

}  // namespace

std::string PeerNode::IdHex() const { return HexEncode(id); }

std::string HostPort(const std::string& host, uint32_t port) {
  if (absl::StrContains(host, ":") && !host.starts_with('[')) {
    return absl::StrCat("[", host, "]:", port);
  }
  return absl::StrCat(host, ":", port);
}

std::string HostOfGrpcPeer(std::string_view peer) {
  std::string_view rest;
  if (peer.starts_with("ipv4:")) {
    rest = peer.substr(5);
    const size_t colon = rest.rfind(':');
    return colon == std::string_view::npos ? std::string()
                                           : std::string(rest.substr(0, colon));
  }
  if (peer.starts_with("ipv6:[")) {
    rest = peer.substr(6);
    const size_t close = rest.find(']');
    return close == std::string_view::npos ? std::string()
                                           : std::string(rest.substr(0, close));
  }
  return std::string();
}

std::string PeerNode::ProtocolTarget() const {
  return HostPort(host, tcp_port);
}

std::string PeerNode::DiscoveryTarget() const {
  return HostPort(host, udp_port);
}

std::string FormatPeerAddress(const PeerNode& peer) {
  return absl::StrCat(std::string(kScheme), peer.IdHex(), "@", peer.host, "?",
                      std::string(kProtocolKey), "=", peer.tcp_port, "&",
                      std::string(kDiscoveryKey), "=", peer.udp_port);
}

absl::StatusOr<PeerNode> ParsePeerAddress(std::string_view address) {
  if (!address.starts_with(kScheme)) {
    return absl::InvalidArgumentError(
        absl::StrCat("peer address must start with ", std::string(kScheme)));
  }
  std::string_view rest = address.substr(kScheme.size());
  const size_t at = rest.find('@');
  if (at == std::string_view::npos) {
    return absl::InvalidArgumentError("peer address has no '@' after the id");
  }
  const std::string_view id_hex = rest.substr(0, at);
  if (id_hex.size() != 2 * kNodeIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("node id must be ", 2 * kNodeIdBytes,
                     " hex characters, got ", id_hex.size()));
  }
  absl::StatusOr<Bytes> id = HexDecode(id_hex);
  if (!id.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("node id: ", id.status().message()));
  }
  rest = rest.substr(at + 1);
  const size_t question = rest.find('?');
  const std::string_view host = rest.substr(0, question);
  RETURN_IF_ERROR(CheckHost(host));

  PeerNode peer;
  peer.id = *std::move(id);
  peer.host = std::string(host);
  bool have_protocol = false;
  bool have_discovery = false;
  // Every '&'-separated parameter after the '?' counts, empty ones too.
  bool more = question != std::string_view::npos;
  std::string_view query = more ? rest.substr(question + 1) : "";
  while (more) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    more = amp != std::string_view::npos;
    if (more) query = query.substr(amp + 1);
    if (pair.empty()) {
      return absl::InvalidArgumentError(
          "empty query parameter in peer address");
    }
    const size_t eq = pair.find('=');
    const std::string_view key = pair.substr(0, eq);
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    bool* seen = nullptr;
    uint32_t* port = nullptr;
    if (key == kProtocolKey) {
      seen = &have_protocol;
      port = &peer.tcp_port;
    } else if (key == kDiscoveryKey) {
      seen = &have_discovery;
      port = &peer.udp_port;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown query key '", std::string(key), "' in peer address"));
    }
    if (*seen) {
      return absl::InvalidArgumentError(absl::StrCat(
          "query key '", std::string(key), "' given twice in peer address"));
    }
    absl::StatusOr<uint32_t> parsed = ParsePort(key, value);
    if (!parsed.ok()) return parsed.status();
    *seen = true;
    *port = *parsed;
  }
  if (!have_protocol) {
    return absl::InvalidArgumentError("peer address has no protocol port");
  }
  if (!have_discovery) {
    return absl::InvalidArgumentError("peer address has no discovery port");
  }
  return peer;
}

void PeerToProto(const PeerNode& peer, ::routing::Node* out) {
  ToProto(peer, out);
}

void PeerToProto(const PeerNode& peer,
                 ::coop::rchain::comm::discovery::Node* out) {
  ToProto(peer, out);
}

absl::StatusOr<PeerNode> PeerFromProto(const ::routing::Node& node) {
  return FromProto(node);
}

absl::StatusOr<PeerNode> PeerFromProto(
    const ::coop::rchain::comm::discovery::Node& node) {
  return FromProto(node);
}

}  // namespace rnode::node::p2p

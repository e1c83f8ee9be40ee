// Peers: rnode:// addresses, the wire form of a node, and the node's P-256
// key file.
#include "node/p2p/peer.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "crypto/node_id.h"
#include "util/status_macros.h"

namespace rnode::node::p2p {
namespace {

constexpr std::string_view kScheme = "rnode://";
constexpr std::string_view kProtocolKey = "protocol";
constexpr std::string_view kDiscoveryKey = "discovery";
// Ports are 16-bit; the wire carries them as uint32.
constexpr uint32_t kMaxPort = 65535;
// Largest node key file read. A PKCS#8 PEM of a P-256 key is about 240
// bytes; 16 KiB leaves room for comments or a certificate next to it while
// keeping a wrong path (a log, a database) from being read whole.
constexpr uintmax_t kMaxKeyFileBytes = 16 << 10;
// Mode of the key file: the private key is readable by its owner only.
constexpr mode_t kKeyFileMode = 0600;

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

// "host:port", bracketing an IPv6 literal given without brackets.
std::string Target(const std::string& host, uint32_t port) {
  if (host.find(':') != std::string::npos && !host.starts_with('[')) {
    return absl::StrCat("[", host, "]:", port);
  }
  return absl::StrCat(host, ":", port);
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

// --- The node key file ---

struct BioFree {
  void operator()(BIO* p) const { BIO_free(p); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

// Closes a file descriptor on every path.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closes now; false when close reports an error (a lost write).
  bool Close() {
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0;
  }

 private:
  int fd_;
};

// A password callback that refuses: an encrypted key is an error, never a
// prompt on the terminal.
int NoPassword(char*, int, int, void*) { return 0; }

// True when `pem` holds an unencrypted private key OpenSSL can read.
bool HoldsPrivateKey(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (bio == nullptr) return false;
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassword, nullptr));
  return key != nullptr;
}

absl::StatusOr<std::string> NewKeyPem() {
  PkeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (key == nullptr) return absl::InternalError("P-256 key generation failed");
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr ||
      PEM_write_bio_PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0,
                               nullptr, nullptr) != 1) {
    return absl::InternalError("cannot encode the node key as PEM");
  }
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio.get(), &data);
  if (len <= 0 || data == nullptr) {
    return absl::InternalError("cannot encode the node key as PEM");
  }
  return std::string(data, static_cast<size_t>(len));
}

absl::Status ErrnoError(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// Writes `text` to `path` with kKeyFileMode: a temporary file beside it,
// synced, then renamed over `path`, so a crash leaves the old file or the
// whole new one. The temporary file never has a wider mode.
absl::Status WriteKeyFile(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) {
    return ErrnoError(tmp);
  }
  Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
               kKeyFileMode));
  if (fd.get() < 0) return ErrnoError(tmp);
  // The umask may have narrowed the mode; make it exact.
  if (::fchmod(fd.get(), kKeyFileMode) != 0) return ErrnoError(tmp);
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n =
        ::write(fd.get(), text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(tmp);
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return ErrnoError(tmp);
  if (!fd.Close()) return ErrnoError(tmp);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const absl::Status error = ErrnoError(path);
    ::unlink(tmp.c_str());
    return error;
  }
  // Make the rename durable; a failure here leaves a complete file.
  const std::filesystem::path parent =
      std::filesystem::path(path).parent_path();
  const std::string dir = parent.empty() ? std::string(".") : parent.string();
  Fd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() >= 0) ::fsync(dir_fd.get());
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadKeyFile(const std::string& path,
                                        uintmax_t size) {
  if (size > kMaxKeyFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", size, " bytes is too large for a key file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InternalError(absl::StrCat(path, ": cannot read"));
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  if (in.bad()) return absl::InternalError(absl::StrCat(path, ": read error"));
  return text;
}

absl::StatusOr<Bytes> IdOfPem(const std::string& path, const std::string& pem) {
  if (!HoldsPrivateKey(pem)) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": holds no unencrypted PEM private key"));
  }
  absl::StatusOr<std::string> hex = crypto::NodeIdFromPem(pem);
  ERR_clear_error();
  if (!hex.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", hex.status().message()));
  }
  absl::StatusOr<Bytes> id = HexDecode(*hex);
  if (!id.ok() || id->size() != kNodeIdBytes) {
    return absl::InternalError("node id derivation gave a malformed id");
  }
  return *std::move(id);
}

}  // namespace

std::string PeerNode::IdHex() const { return HexEncode(id); }

std::string PeerNode::ProtocolTarget() const { return Target(host, tcp_port); }

std::string PeerNode::DiscoveryTarget() const { return Target(host, udp_port); }

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

absl::StatusOr<Bytes> LoadOrCreateNodeKey(const std::string& path,
                                          bool* created) {
  if (created != nullptr) *created = false;
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (ec && status.type() != std::filesystem::file_type::not_found) {
    return absl::InternalError(absl::StrCat(path, ": ", ec.message()));
  }
  if (status.type() != std::filesystem::file_type::not_found) {
    if (status.type() != std::filesystem::file_type::regular) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": not a regular file"));
    }
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec) return absl::InternalError(absl::StrCat(path, ": ", ec.message()));
    absl::StatusOr<std::string> pem = ReadKeyFile(path, size);
    if (!pem.ok()) return pem.status();
    return IdOfPem(path, *pem);
  }

  absl::StatusOr<std::string> pem = NewKeyPem();
  ERR_clear_error();
  if (!pem.ok()) return pem.status();
  // The id comes from what is written, so a later load gives the same.
  absl::StatusOr<Bytes> id = IdOfPem(path, *pem);
  if (!id.ok()) {
    return absl::InternalError(
        absl::StrCat("fresh node key unreadable: ", id.status().message()));
  }
  RETURN_IF_ERROR(WriteKeyFile(path, *pem));
  if (created != nullptr) *created = true;
  return id;
}

}  // namespace rnode::node::p2p

// The node's secret files (its P2P key and TLS certificate): read with a
// size bound, written with mode 0600 so that no moment exists at which the
// secret is readable by others or only partly on disk.
#ifndef RNODE_NODE_P2P_IDENTITY_KEY_FILE_H_
#define RNODE_NODE_P2P_IDENTITY_KEY_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rnode::node::p2p {

// Largest key or certificate file read. A PKCS#8 PEM of a P-256 key is
// about 240 bytes, its certificate about 600; 16 KiB leaves room for
// comments while keeping a wrong path (a log, a database) from being read
// whole.
inline constexpr uintmax_t kMaxKeyFileBytes = 16 << 10;

// The text of the file at `path`. NotFound when nothing is there;
// InvalidArgument when it is not a regular file or holds more than
// kMaxKeyFileBytes; Internal when it cannot be read.
absl::StatusOr<std::string> ReadKeyFile(const std::string& path);

// Writes `text` to `path` with mode 0600: a temporary file beside it,
// created exclusively with that mode, synced, then renamed over `path`
// (and the directory synced), so a crash leaves the old file or the whole
// new one. Internal on any failure (the temporary file is removed).
absl::Status WriteKeyFile(const std::string& path, const std::string& text);

}  // namespace rnode::node::p2p

#endif  // RNODE_NODE_P2P_IDENTITY_KEY_FILE_H_

// The node's secret files: bounded reads, 0600 atomic writes.
#include "node/p2p/identity/key_file.h"

#include "util/file_io.h"

namespace rnode::node::p2p {
namespace {

// Mode of every secret file: readable and writable by its owner only.
constexpr mode_t kKeyFileMode = 0600;

}  // namespace

absl::StatusOr<std::string> ReadKeyFile(const std::string& path) {
  return ReadSmallFile(path, kMaxKeyFileBytes);
}

absl::Status WriteKeyFile(const std::string& path, const std::string& text) {
  return WriteFileAtomically(path, text, kKeyFileMode);
}

}  // namespace rnode::node::p2p

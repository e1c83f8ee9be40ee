// Node ids: the peer-to-peer identity of a node, derived from its P-256
// (prime256v1) TLS key as the public network does: the last 20 bytes of
// keccak256(X || Y), as 40 lower-case hex characters.
#ifndef RNODE_CRYPTO_NODE_ID_H_
#define RNODE_CRYPTO_NODE_ID_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "util/bytes.h"

namespace rnode::crypto {

// From the 64-byte X || Y of a P-256 point, or its 65-byte 04 || X || Y
// encoding. InvalidArgument on other lengths. (The point itself is not
// checked here; the TLS layer has already validated it.)
absl::StatusOr<std::string> NodeIdFromP256Point(ByteView point);

// From a PEM certificate, public key or private key holding a P-256 key.
// InvalidArgument if the PEM is unreadable or holds another key type.
absl::StatusOr<std::string> NodeIdFromPem(std::string_view pem);

}  // namespace rnode::crypto

#endif  // RNODE_CRYPTO_NODE_ID_H_

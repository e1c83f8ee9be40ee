// A validator's statement that it runs at a node id (docs/security.md
// "Validator identity"): the node id, the network and shard, a time, and
// the validator's public key, signed with the validator's key. A peer that
// presents one, over a TLS connection proving that node id, is a proven
// validator once the key is bonded in the last finalized block (the
// caller's check). A node id speaks for at most one validator key: the
// statement names exactly one.
//
// Wire form (our own; on every message a validator sends), all integers
// big-endian:
//   version      1 byte, kValidatorStatementVersion
//   node_id      20 bytes
//   time_ms      8 bytes, Unix milliseconds, signed
//   network_id   1-byte length (1..kMaxStatementNameBytes), then UTF-8
//   shard_id     1-byte length (1..kMaxStatementNameBytes), then UTF-8
//   validator    65 bytes, uncompressed secp256k1 point
//   signature    64 bytes, compact r || s, low S
// The signature is over Blake2b-256 of kValidatorStatementDomain followed
// by every byte before the signature.
#ifndef RNODE_NODE_P2P_IDENTITY_VALIDATOR_STATEMENT_H_
#define RNODE_NODE_P2P_IDENTITY_VALIDATOR_STATEMENT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "crypto/secp256k1.h"
#include "util/bytes.h"

namespace rnode::node::p2p {

inline constexpr uint8_t kValidatorStatementVersion = 1;
inline constexpr std::string_view kValidatorStatementDomain =
    "rnode validator statement v1";
// Longest network or shard name a statement carries.
inline constexpr size_t kMaxStatementNameBytes = 255;
// Largest encoded statement.
inline constexpr size_t kMaxValidatorStatementBytes =
    1 + 20 + 8 + (1 + kMaxStatementNameBytes) * 2 + 65 + 64;
// How far a statement's time may be from the checker's clock: a statement
// is re-signed every minute by its sender, so a copy replayed later
// (the statement names its node id, so only by that node) goes stale.
inline constexpr int64_t kValidatorStatementMaxSkewMs = 10 * 60 * 1000;

struct ValidatorStatement {
  Bytes node_id;  // kNodeIdBytes
  int64_t time_ms = 0;
  std::string network_id;
  std::string shard_id;
  crypto::Secp256k1PublicKey validator{};
  Bytes signature;  // 64 bytes compact
};

// A statement by the holder of `key` that it runs at `node_id`, signed.
// InvalidArgument for a node id that is not 20 bytes or names that are
// empty or longer than kMaxStatementNameBytes.
absl::StatusOr<ValidatorStatement> SignValidatorStatement(
    const crypto::Secp256k1PrivateKey& key, ByteView node_id,
    std::string_view network_id, std::string_view shard_id, int64_t time_ms);

// The wire form (see above) of a statement SignValidatorStatement made or
// DecodeValidatorStatement accepted.
Bytes EncodeValidatorStatement(const ValidatorStatement& statement);

// The inverse. InvalidArgument naming the problem for anything but exactly
// one well-formed statement: an unknown version, a short or long input,
// empty or overlong names, a validator key that is not a curve point. The
// signature is not checked here (CheckValidatorStatement does).
absl::StatusOr<ValidatorStatement> DecodeValidatorStatement(ByteView bytes);

// Whether `statement` proves its validator runs at `proven_node_id` on
// this network and shard now: PermissionDenied naming the reason when the
// signature does not verify, the node id is not the proven one, the network
// or shard differs, or its time is more than max_skew_ms from now_ms. The
// validator's bond is the caller's check.
absl::Status CheckValidatorStatement(
    const ValidatorStatement& statement, ByteView proven_node_id,
    std::string_view network_id, std::string_view shard_id, int64_t now_ms,
    int64_t max_skew_ms = kValidatorStatementMaxSkewMs);

// The time part of CheckValidatorStatement: PermissionDenied when time_ms
// is more than max_skew_ms from now_ms (computed without overflow for any
// two times). For a statement already checked whose time is asked again.
absl::Status CheckValidatorStatementTime(
    int64_t time_ms, int64_t now_ms,
    int64_t max_skew_ms = kValidatorStatementMaxSkewMs);

}  // namespace rnode::node::p2p

#endif  // RNODE_NODE_P2P_IDENTITY_VALIDATOR_STATEMENT_H_

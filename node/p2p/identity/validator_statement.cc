// Validator statements: signing, the wire form, and the check.
#include "node/p2p/identity/validator_statement.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "crypto/hash.h"
#include "util/status_macros.h"

namespace rnode::node::p2p {
namespace {

constexpr size_t kNodeIdLength = 20;
constexpr size_t kKeyBytes = 65;
constexpr size_t kSignatureBytes = 64;

void PutName(Bytes* out, std::string_view name) {
  out->push_back(static_cast<uint8_t>(name.size()));
  out->insert(out->end(), name.begin(), name.end());
}

// Every byte the signature covers.
Bytes SignedPart(const ValidatorStatement& s) {
  Bytes out;
  out.reserve(kMaxValidatorStatementBytes);
  out.push_back(kValidatorStatementVersion);
  out.insert(out.end(), s.node_id.begin(), s.node_id.end());
  const uint64_t t = static_cast<uint64_t>(s.time_ms);
  for (int shift = 56; shift >= 0; shift -= 8) {
    out.push_back(static_cast<uint8_t>(t >> shift));
  }
  PutName(&out, s.network_id);
  PutName(&out, s.shard_id);
  out.insert(out.end(), s.validator.begin(), s.validator.end());
  return out;
}

Hash32 Digest(const ValidatorStatement& s) {
  crypto::Blake2b256Hasher h;
  h.Update(AsBytes(kValidatorStatementDomain));
  h.Update(SignedPart(s));
  return h.Finish();
}

absl::Status CheckName(std::string_view what, std::string_view name) {
  if (name.empty() || name.size() > kMaxStatementNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(what), " of ", name.size(), " bytes; 1 to ",
                     kMaxStatementNameBytes, " allowed"));
  }
  return absl::OkStatus();
}

// Reads from a byte view, never past its end.
class Reader {
 public:
  explicit Reader(ByteView in) : in_(in) {}
  bool Take(size_t n, ByteView* out) {
    if (in_.size() - pos_ < n) return false;
    *out = in_.subspan(pos_, n);
    pos_ += n;
    return true;
  }
  bool Name(std::string* out) {
    ByteView len, text;
    if (!Take(1, &len) || !Take(len[0], &text)) return false;
    out->assign(reinterpret_cast<const char*>(text.data()), text.size());
    return true;
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  ByteView in_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<ValidatorStatement> SignValidatorStatement(
    const crypto::Secp256k1PrivateKey& key, ByteView node_id,
    std::string_view network_id, std::string_view shard_id, int64_t time_ms) {
  if (node_id.size() != kNodeIdLength) {
    return absl::InvalidArgumentError("a node id has 20 bytes");
  }
  if (absl::Status s = CheckName("network id", network_id); !s.ok()) return s;
  if (absl::Status s = CheckName("shard id", shard_id); !s.ok()) return s;
  ValidatorStatement s;
  s.node_id.assign(node_id.begin(), node_id.end());
  s.time_ms = time_ms;
  s.network_id = std::string(network_id);
  s.shard_id = std::string(shard_id);
  s.validator = crypto::Secp256k1PublicKeyOf(key);
  const Hash32 digest = Digest(s);
  absl::StatusOr<Bytes> sig = crypto::Secp256k1SignCompact(digest, key);
  if (!sig.ok()) return sig.status();
  s.signature = *std::move(sig);
  return s;
}

Bytes EncodeValidatorStatement(const ValidatorStatement& statement) {
  Bytes out = SignedPart(statement);
  out.insert(out.end(), statement.signature.begin(), statement.signature.end());
  return out;
}

absl::StatusOr<ValidatorStatement> DecodeValidatorStatement(ByteView bytes) {
  if (bytes.size() > kMaxValidatorStatementBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a validator statement of ", bytes.size(),
                     " bytes; at most ", kMaxValidatorStatementBytes));
  }
  Reader r(bytes);
  ByteView version, id, time, key, sig;
  ValidatorStatement s;
  if (!r.Take(1, &version)) {
    return absl::InvalidArgumentError("an empty validator statement");
  }
  if (version[0] != kValidatorStatementVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("validator statement version ", version[0], " is not ",
                     kValidatorStatementVersion));
  }
  if (!r.Take(kNodeIdLength, &id) || !r.Take(8, &time) ||
      !r.Name(&s.network_id) || !r.Name(&s.shard_id) ||
      !r.Take(kKeyBytes, &key) || !r.Take(kSignatureBytes, &sig)) {
    return absl::InvalidArgumentError("a validator statement cut short");
  }
  if (!r.done()) {
    return absl::InvalidArgumentError(
        "bytes after the validator statement's signature");
  }
  if (absl::Status c = CheckName("network id", s.network_id); !c.ok()) return c;
  if (absl::Status c = CheckName("shard id", s.shard_id); !c.ok()) return c;
  absl::StatusOr<crypto::Secp256k1PublicKey> validator =
      crypto::ParseSecp256k1PublicKey(key);
  if (!validator.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("validator key: ", validator.status().message()));
  }
  s.node_id.assign(id.begin(), id.end());
  uint64_t t = 0;
  for (uint8_t b : time) t = (t << 8) | b;
  s.time_ms = static_cast<int64_t>(t);
  s.validator = *validator;
  s.signature.assign(sig.begin(), sig.end());
  return s;
}

absl::Status CheckValidatorStatement(const ValidatorStatement& statement,
                                     ByteView proven_node_id,
                                     std::string_view network_id,
                                     std::string_view shard_id, int64_t now_ms,
                                     int64_t max_skew_ms) {
  if (!std::equal(statement.node_id.begin(), statement.node_id.end(),
                  proven_node_id.begin(), proven_node_id.end())) {
    return absl::PermissionDeniedError(
        absl::StrCat("the statement is for node ", HexEncode(statement.node_id),
                     ", not for the proven node ", HexEncode(proven_node_id)));
  }
  if (statement.network_id != network_id || statement.shard_id != shard_id) {
    return absl::PermissionDeniedError(
        absl::StrCat("the statement is for network '", statement.network_id,
                     "' shard '", statement.shard_id, "'"));
  }
  RETURN_IF_ERROR(
      CheckValidatorStatementTime(statement.time_ms, now_ms, max_skew_ms));
  absl::StatusOr<bool> ok = crypto::Secp256k1VerifyCompact(
      Digest(statement), statement.signature, statement.validator);
  if (!ok.ok() || !*ok) {
    return absl::PermissionDeniedError(
        "the statement's signature does not verify");
  }
  return absl::OkStatus();
}

absl::Status CheckValidatorStatementTime(int64_t time_ms, int64_t now_ms,
                                         int64_t max_skew_ms) {
  // Differences computed without overflow for any two int64 times.
  const bool too_far =
      time_ms > now_ms
          ? static_cast<uint64_t>(time_ms) - static_cast<uint64_t>(now_ms) >
                static_cast<uint64_t>(max_skew_ms)
          : static_cast<uint64_t>(now_ms) - static_cast<uint64_t>(time_ms) >
                static_cast<uint64_t>(max_skew_ms);
  if (too_far) {
    return absl::PermissionDeniedError(
        absl::StrCat("the statement's time ", time_ms, " is more than ",
                     max_skew_ms, " ms from ", now_ms));
  }
  return absl::OkStatus();
}

}  // namespace rnode::node::p2p

// Deploy signing and verification.
#include "casper/deploy.h"

#include <cstring>

#include "CasperMessage.pb.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "crypto/hash.h"
#include "util/limits.h"
#include "util/status_macros.h"

namespace rnode::casper {
namespace {

absl::Status NotNegative(int64_t v, const char* field) {
  if (v < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " must not be negative, got ", v));
  }
  return absl::OkStatus();
}

}  // namespace

std::string_view SigAlgorithmName(SigAlgorithm alg) {
  switch (alg) {
    case SigAlgorithm::kSecp256k1:
      return kSecp256k1Name;
    case SigAlgorithm::kSecp256k1Eth:
      return kSecp256k1EthName;
  }
  return kSecp256k1Name;  // Unreachable: every enumerator is handled above.
}

namespace {
// abseil's own compare; Debian's absl::string_view is not std::string_view.
bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return absl::EqualsIgnoreCase(absl::string_view(a.data(), a.size()),
                                absl::string_view(b.data(), b.size()));
}
}  // namespace

absl::StatusOr<SigAlgorithm> ParseSigAlgorithm(std::string_view name) {
  if (EqualsIgnoreCase(name, kSecp256k1Name)) return SigAlgorithm::kSecp256k1;
  if (EqualsIgnoreCase(name, kSecp256k1EthName) ||
      EqualsIgnoreCase(name, kSecp256k1EthPublicName)) {
    return SigAlgorithm::kSecp256k1Eth;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported signature algorithm '", std::string(name),
                   "' (expected secp256k1, secp256k1:eth or secp256k1-eth)"));
}

int64_t LastBlockNumber(const DeployData& d, int64_t lifespan) {
  // Block n may hold the deploy while n - validAfterBlockNumber < lifespan.
  int64_t last = 0;
  if (__builtin_add_overflow(d.valid_after_block_number, lifespan - 1, &last)) {
    return lifespan > 0 ? INT64_MAX : INT64_MIN;
  }
  return last;
}

bool WindowHalfGone(const DeployData& d, int64_t number, int64_t lifespan) {
  int64_t past = 0;
  if (__builtin_sub_overflow(number, d.valid_after_block_number, &past)) {
    return number > d.valid_after_block_number;
  }
  return past >= lifespan / 2;
}

DeployWindow WindowAt(const DeployData& d, int64_t number, int64_t timestamp_ms,
                      int64_t lifespan) {
  if (d.valid_after_block_number >= number) return DeployWindow::kFuture;
  if (number > LastBlockNumber(d, lifespan)) return DeployWindow::kExpired;
  if (d.expiration_timestamp != 0 && d.expiration_timestamp < timestamp_ms) {
    return DeployWindow::kTimeExpired;
  }
  return DeployWindow::kOpen;
}

absl::Status ValidateDeployData(const DeployData& data) {
  if (data.term.empty()) {
    return absl::InvalidArgumentError("term must not be empty");
  }
  if (data.term.size() > limits::kMaxDeployTermBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("term is ", data.term.size(), " bytes, limit ",
                     limits::kMaxDeployTermBytes));
  }
  RETURN_IF_ERROR(NotNegative(data.timestamp, "timestamp"));
  RETURN_IF_ERROR(NotNegative(data.phlo_price, "phloPrice"));
  RETURN_IF_ERROR(NotNegative(data.phlo_limit, "phloLimit"));
  RETURN_IF_ERROR(
      NotNegative(data.expiration_timestamp, "expirationTimestamp"));
  if (data.shard_id.size() > limits::kMaxShardIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("shardId is ", data.shard_id.size(), " bytes, limit ",
                     limits::kMaxShardIdBytes));
  }
  if (!data.language.empty() && data.language != "rholang") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unsupported deploy language '", data.language, "' (only rholang)"));
  }
  return absl::OkStatus();
}

Bytes SignedPreimage(const DeployData& data) {
  ::casper::DeployDataProto p;
  p.set_term(data.term);
  p.set_timestamp(data.timestamp);
  p.set_phloprice(data.phlo_price);
  p.set_phlolimit(data.phlo_limit);
  p.set_validafterblocknumber(data.valid_after_block_number);
  p.set_shardid(data.shard_id);
  if (data.expiration_timestamp != 0) {
    p.set_expirationtimestamp(data.expiration_timestamp);
  }
  std::string bytes = p.SerializeAsString();
  return ToBytes(bytes);
}

Hash32 SignatureDigest(const DeployData& data, SigAlgorithm alg) {
  Bytes preimage = SignedPreimage(data);
  switch (alg) {
    case SigAlgorithm::kSecp256k1:
      return crypto::Blake2b256(preimage);
    case SigAlgorithm::kSecp256k1Eth: {
      std::string prefix = absl::StrCat(
          "\x19"
          "Ethereum Signed Message:\n",
          preimage.size());
      Bytes message = ToBytes(prefix);
      message.insert(message.end(), preimage.begin(), preimage.end());
      return crypto::Keccak256(message);
    }
  }
  return crypto::Blake2b256(preimage);  // Unreachable.
}

absl::StatusOr<SignedDeploy> SignedDeploy::Sign(
    const DeployData& data, const crypto::Secp256k1PrivateKey& key,
    SigAlgorithm alg) {
  RETURN_IF_ERROR(ValidateDeployData(data));
  Hash32 digest = SignatureDigest(data, alg);
  Bytes sig;
  switch (alg) {
    case SigAlgorithm::kSecp256k1: {
      ASSIGN_OR_RETURN(sig, crypto::Secp256k1SignDer(digest, key));
      break;
    }
    case SigAlgorithm::kSecp256k1Eth: {
      ASSIGN_OR_RETURN(sig, crypto::Secp256k1SignCompact(digest, key));
      break;
    }
  }
  return SignedDeploy(data, crypto::Secp256k1PublicKeyOf(key), std::move(sig),
                      alg);
}

absl::StatusOr<SignedDeploy> SignedDeploy::Verify(
    const DeployData& data, ByteView deployer, ByteView sig,
    std::string_view sig_algorithm) {
  RETURN_IF_ERROR(ValidateDeployData(data));
  ASSIGN_OR_RETURN(SigAlgorithm alg, ParseSigAlgorithm(sig_algorithm));
  absl::StatusOr<crypto::Secp256k1PublicKey> key =
      crypto::ParseSecp256k1PublicKey(deployer);
  if (!key.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("deployer: ", key.status().message()));
  }
  Hash32 digest = SignatureDigest(data, alg);
  absl::StatusOr<bool> ok =
      alg == SigAlgorithm::kSecp256k1
          ? crypto::Secp256k1VerifyDer(digest, sig, *key)
          : crypto::Secp256k1VerifyCompact(digest, sig, *key);
  if (!ok.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sig: ", ok.status().message()));
  }
  if (!*ok) {
    return absl::InvalidArgumentError(
        "sig: signature does not match the deploy and deployer");
  }
  return SignedDeploy(data, *key, Bytes(sig.begin(), sig.end()), alg);
}

absl::StatusOr<SignedDeploy> SignedDeploy::FromProto(
    const ::casper::DeployDataProto& proto) {
  DeployData data;
  data.term = proto.term();
  data.timestamp = proto.timestamp();
  data.phlo_price = proto.phloprice();
  data.phlo_limit = proto.phlolimit();
  data.valid_after_block_number = proto.validafterblocknumber();
  data.shard_id = proto.shardid();
  data.expiration_timestamp = proto.expirationtimestamp();
  data.language = proto.language();
  return Verify(data, AsBytes(proto.deployer()), AsBytes(proto.sig()),
                proto.sigalgorithm());
}

::casper::DeployDataProto SignedDeploy::ToProto() const {
  ::casper::DeployDataProto p;
  p.set_deployer(std::string(AsChars(deployer_)));
  p.set_term(data_.term);
  p.set_timestamp(data_.timestamp);
  p.set_sig(std::string(AsChars(sig_)));
  p.set_sigalgorithm(std::string(SigAlgorithmName(sig_algorithm_)));
  p.set_phloprice(data_.phlo_price);
  p.set_phlolimit(data_.phlo_limit);
  p.set_validafterblocknumber(data_.valid_after_block_number);
  p.set_shardid(data_.shard_id);
  p.set_language(data_.language);
  p.set_expirationtimestamp(data_.expiration_timestamp);
  return p;
}

}  // namespace rnode::casper

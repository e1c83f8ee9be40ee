// The deploy model: a user's signed Rholang program, its mapping to and from
// casper.DeployDataProto, the signed preimage, and signature checks.
//
// A SignedDeploy can only be made by verifying a signature (FromProto,
// Verify) or by signing (Sign), so holding one means its fields are
// well-formed and its signature verifies. Business rules that depend on the
// node (shard name, minimum phlo price, block window) are checked at
// admission, not here.
#ifndef RNODE_CASPER_DEPLOY_H_
#define RNODE_CASPER_DEPLOY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "crypto/secp256k1.h"
#include "util/bytes.h"

namespace casper {
class DeployDataProto;
}  // namespace casper

namespace rnode::casper {

// Signature algorithms accepted for deploys, with their wire names.
enum class SigAlgorithm {
  // ECDSA over Blake2b-256 of the preimage; DER signature.
  kSecp256k1,
  // ECDSA over Keccak-256 of "\x19Ethereum Signed Message:\n" || decimal
  // length || preimage (MetaMask-style); 64-byte r || s signature.
  kSecp256k1Eth,
};

inline constexpr std::string_view kSecp256k1Name = "secp256k1";
inline constexpr std::string_view kSecp256k1EthName = "secp256k1:eth";
// The Rust public node's name for kSecp256k1Eth, accepted as an alias.
inline constexpr std::string_view kSecp256k1EthPublicName = "secp256k1-eth";

// The canonical name (what blocks and the API carry).
std::string_view SigAlgorithmName(SigAlgorithm alg);
// Any of the names above, ignoring ASCII case; InvalidArgument otherwise.
absl::StatusOr<SigAlgorithm> ParseSigAlgorithm(std::string_view name);

// The fields of a deploy, unchecked.
struct DeployData {
  std::string term;
  int64_t timestamp = 0;  // Milliseconds since the epoch; also the nonce.
  int64_t phlo_price = 0;
  int64_t phlo_limit = 0;
  int64_t valid_after_block_number = 0;
  std::string shard_id;
  int64_t expiration_timestamp = 0;  // Milliseconds; 0 = never expires.
  std::string language;              // Not signed; "" means "rholang".

  friend bool operator==(const DeployData&, const DeployData&) = default;
};

// The public node's deploy lifespan, in blocks.
inline constexpr int64_t kDeployLifespanBlocks = 50;

// Where a deploy stands for a block of number `number` made at
// `timestamp_ms` (the public node's rules); it may go in the block only
// when kOpen. The checks are in this order.
enum class DeployWindow : uint8_t {
  kOpen,
  kFuture,       // validAfterBlockNumber >= number.
  kExpired,      // number > LastBlockNumber (past the lifespan).
  kTimeExpired,  // An expiration timestamp before `timestamp_ms`.
};
DeployWindow WindowAt(const DeployData& data, int64_t number,
                      int64_t timestamp_ms,
                      int64_t lifespan = kDeployLifespanBlocks);
// The highest block number the deploy may go in: validAfterBlockNumber +
// lifespan - 1 (the public rule: block n holds it only while n -
// validAfterBlockNumber < lifespan), saturating at INT64_MAX.
int64_t LastBlockNumber(const DeployData& data,
                        int64_t lifespan = kDeployLifespanBlocks);
// Whether block `number` is at least half the lifespan past
// validAfterBlockNumber (number - validAfterBlockNumber >= lifespan / 2,
// without overflow): a deploy not in a block by then is late, and the
// other half of its window is what is left to include it.
bool WindowHalfGone(const DeployData& data, int64_t number,
                    int64_t lifespan = kDeployLifespanBlocks);

// Checks the fields a signature cannot vouch for: a non-empty term within
// limits::kMaxDeployTermBytes, timestamp, phlo price, phlo limit and
// expiration not negative, a shard id within limits::kMaxShardIdBytes, and
// language "" or "rholang". InvalidArgument naming the field otherwise.
absl::Status ValidateDeployData(const DeployData& data);

// The bytes that are signed: the proto3 encoding of a fresh DeployDataProto
// holding term, timestamp, phloPrice, phloLimit, validAfterBlockNumber,
// shardId, and expirationTimestamp when non-zero (defaults omitted, as proto3
// does). Byte-identical to what the public clients sign.
Bytes SignedPreimage(const DeployData& data);

// The 32-byte digest that the signature covers for `alg`.
Hash32 SignatureDigest(const DeployData& data, SigAlgorithm alg);

class SignedDeploy {
 public:
  // Signs `data` (which must pass ValidateDeployData) with `key`.
  static absl::StatusOr<SignedDeploy> Sign(
      const DeployData& data, const crypto::Secp256k1PrivateKey& key,
      SigAlgorithm alg = SigAlgorithm::kSecp256k1);

  // Checks every field and the signature. InvalidArgument with a message a
  // client can act on (which field, what was expected) on any failure.
  static absl::StatusOr<SignedDeploy> Verify(const DeployData& data,
                                             ByteView deployer, ByteView sig,
                                             std::string_view sig_algorithm);

  // Decodes and verifies a deploy received from a client or in a block.
  static absl::StatusOr<SignedDeploy> FromProto(
      const ::casper::DeployDataProto& proto);

  // The full proto, with deployer, sig and sigAlgorithm set.
  ::casper::DeployDataProto ToProto() const;

  const DeployData& data() const { return data_; }
  const crypto::Secp256k1PublicKey& deployer() const { return deployer_; }
  // The signature bytes; also the deploy id.
  const Bytes& sig() const { return sig_; }
  const Bytes& id() const { return sig_; }
  SigAlgorithm sig_algorithm() const { return sig_algorithm_; }

 private:
  SignedDeploy(DeployData data, const crypto::Secp256k1PublicKey& deployer,
               Bytes sig, SigAlgorithm alg)
      : data_(std::move(data)),
        deployer_(deployer),
        sig_(std::move(sig)),
        sig_algorithm_(alg) {}

  DeployData data_;
  crypto::Secp256k1PublicKey deployer_;
  Bytes sig_;
  SigAlgorithm sig_algorithm_;
};

}  // namespace rnode::casper

#endif  // RNODE_CASPER_DEPLOY_H_

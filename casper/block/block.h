// The block model (docs/formats/block.md): the public schema's layout
// (casper.BlockMessageProto) as plain C++ values, our block-hash rule and the
// block signature.
//
// A Block is data: decoding checks its shape (hash and key lengths, known
// algorithm names, bounded counts), not its meaning. Whether a block is
// valid (signature, hash, sender bonded, deploys' signatures, replay) is the
// validation pipeline's question.
#ifndef RNODE_CASPER_BLOCK_BLOCK_H_
#define RNODE_CASPER_BLOCK_BLOCK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/deploy.h"
#include "crypto/secp256k1.h"
#include "rspace/event_log.h"
#include "util/bytes.h"

namespace rnode::casper::block {

// The header's version field; every block of a shard carries the genesis
// block's, which is this.
inline constexpr int64_t kBlockVersion = 1;

// The only block signature algorithm: ECDSA over the 32-byte block hash,
// DER-encoded (the public nodes' "secp256k1").
inline constexpr std::string_view kBlockSigAlgorithm = "secp256k1";

struct Bond {
  crypto::Secp256k1PublicKey validator{};
  int64_t stake = 0;
  friend bool operator==(const Bond&, const Bond&) = default;
};

// The stake of `validator` in `bonds`; 0 when it is not there.
int64_t StakeOf(const std::vector<Bond>& bonds,
                const crypto::Secp256k1PublicKey& validator);

struct Justification {
  crypto::Secp256k1PublicKey validator{};
  Hash32 latest_block{};
  friend bool operator==(const Justification&, const Justification&) = default;
};

// A user deploy as a block carries it. The signature is not checked by
// decoding: validation verifies all of a block's deploys (in parallel).
struct ProcessedDeploy {
  DeployData data;
  crypto::Secp256k1PublicKey deployer{};
  Bytes sig;  // Also the deploy id.
  SigAlgorithm sig_algorithm = SigAlgorithm::kSecp256k1;
  int64_t cost = 0;
  // The program failed (out of phlo or an error): its effects were undone,
  // its charge stays.
  bool errored = false;
  // Non-empty when the precharge failed (the program did not run; cost 0).
  std::string system_deploy_error;
  std::vector<rspace::Event> events;
  friend bool operator==(const ProcessedDeploy&,
                         const ProcessedDeploy&) = default;
};

struct SlashDeploy {
  Hash32 invalid_block{};
  crypto::Secp256k1PublicKey issuer{};
  int64_t target_activation_epoch = 0;
  friend bool operator==(const SlashDeploy&, const SlashDeploy&) = default;
};
struct CloseBlockDeploy {
  friend bool operator==(const CloseBlockDeploy&,
                         const CloseBlockDeploy&) = default;
};

struct ProcessedSystemDeploy {
  std::variant<SlashDeploy, CloseBlockDeploy> deploy;
  std::vector<rspace::Event> events;
  // Non-empty: the system deploy failed.
  std::string error;
  friend bool operator==(const ProcessedSystemDeploy&,
                         const ProcessedSystemDeploy&) = default;
};

// A deploy the block's merge of its parents dropped.
struct RejectedDeploy {
  Bytes sig;
  // Its effect is already in the merged state (another copy won).
  bool duplicate = false;
  // The block that held the rejected copy; nullopt when not recorded.
  std::optional<Hash32> carrier;
  friend bool operator==(const RejectedDeploy&,
                         const RejectedDeploy&) = default;
};

struct BlockState {
  Hash32 pre_state{};
  Hash32 post_state{};
  std::vector<Bond> bonds;
  int64_t block_number = 0;
  friend bool operator==(const BlockState&, const BlockState&) = default;
};

struct Header {
  std::vector<Hash32> parents;  // Index 0 is the main parent.
  int64_t timestamp = 0;        // Milliseconds since the epoch.
  int64_t version = kBlockVersion;
  Bytes extra;
  friend bool operator==(const Header&, const Header&) = default;
};

struct Body {
  BlockState state;
  std::vector<ProcessedDeploy> deploys;  // Execution order.
  // Slashes first, the close-block deploy last.
  std::vector<ProcessedSystemDeploy> system_deploys;
  Bytes extra;
  std::vector<RejectedDeploy> rejected;
  // Sigs of user deploys the merge applied from the merge scope.
  std::vector<Bytes> applied_from_scope;
  // Block whose post-state the pre-state derives from; nullopt when implied.
  std::optional<Hash32> merge_base;
  friend bool operator==(const Body&, const Body&) = default;
};

struct Block {
  Hash32 hash{};
  Header header;
  Body body;
  std::vector<Justification> justifications;
  // All zero (encoded as absent) for a block without a sender: the genesis
  // block, which is not signed either.
  crypto::Secp256k1PublicKey sender{};
  int32_t seq_num = 0;
  Bytes sig;
  std::string sig_algorithm{kBlockSigAlgorithm};
  std::string shard_id;
  Bytes extra;
  friend bool operator==(const Block&, const Block&) = default;

  int64_t number() const { return body.state.block_number; }
};

// Whether one of the block's system deploys slashes a validator.
bool CarriesSlash(const Block& block);

// The block hash rule (docs/formats/block.md): Blake2b-256 of the block's
// canonical encoding with `hash` and `sig` left empty. Everything else is
// covered, justifications included.
Hash32 ComputeBlockHash(const Block& block);

// Sets the sender to `key`'s public key and the algorithm, then the hash,
// then the signature over the hash. The block must be complete otherwise.
absl::Status SignBlock(Block& block, const crypto::Secp256k1PrivateKey& key);

// Why a block's own hash or signature does not hold.
enum class SealError : uint8_t {
  kNone,
  kHashMismatch,         // `hash` is not ComputeBlockHash(block).
  kUnknownSigAlgorithm,  // Not kBlockSigAlgorithm.
  kBadSignature,         // Malformed DER or not the sender's over the hash.
};
std::string_view SealErrorName(SealError error);

// Checks the hash and then the signature (a wrong hash is reported as
// such even when the signature also fails).
SealError CheckSeal(const Block& block);

// The DeployOutcome-independent parts of a played deploy as the block
// records them: the signed deploy with its cost, failure flags and log.
ProcessedDeploy MakeProcessedDeploy(const SignedDeploy& deploy, int64_t cost,
                                    bool errored,
                                    std::string system_deploy_error,
                                    std::vector<rspace::Event> events);

}  // namespace rnode::casper::block

#endif  // RNODE_CASPER_BLOCK_BLOCK_H_

// Block hash and signature.
#include "casper/block/block.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "casper/block/block_codec.h"
#include "crypto/hash.h"
#include "util/status_macros.h"

namespace rnode::casper::block {

int64_t StakeOf(const std::vector<Bond>& bonds,
                const crypto::Secp256k1PublicKey& validator) {
  for (const Bond& b : bonds) {
    if (b.validator == validator) return b.stake;
  }
  return 0;
}

bool CarriesSlash(const Block& block) {
  return std::any_of(block.body.system_deploys.begin(),
                     block.body.system_deploys.end(),
                     [](const ProcessedSystemDeploy& d) {
                       return std::holds_alternative<SlashDeploy>(d.deploy);
                     });
}

Hash32 ComputeBlockHash(const Block& block) {
  return crypto::Blake2b256(BlockHashPreimage(block));
}

absl::Status SignBlock(Block& block, const crypto::Secp256k1PrivateKey& key) {
  block.sender = crypto::Secp256k1PublicKeyOf(key);
  block.sig_algorithm = std::string(kBlockSigAlgorithm);
  block.hash = ComputeBlockHash(block);
  ASSIGN_OR_RETURN(block.sig, crypto::Secp256k1SignDer(block.hash, key));
  return absl::OkStatus();
}

std::string_view SealErrorName(SealError error) {
  switch (error) {
    case SealError::kNone:
      return "none";
    case SealError::kHashMismatch:
      return "hash mismatch";
    case SealError::kUnknownSigAlgorithm:
      return "unknown signature algorithm";
    case SealError::kBadSignature:
      return "bad signature";
  }
  return "unknown";
}

SealError CheckSeal(const Block& block) {
  if (ComputeBlockHash(block) != block.hash) return SealError::kHashMismatch;
  if (block.sig_algorithm != kBlockSigAlgorithm) {
    return SealError::kUnknownSigAlgorithm;
  }
  auto ok = crypto::Secp256k1VerifyDer(block.hash, block.sig, block.sender);
  if (!ok.ok() || !*ok) return SealError::kBadSignature;
  return SealError::kNone;
}

ProcessedDeploy MakeProcessedDeploy(const SignedDeploy& deploy, int64_t cost,
                                    bool errored,
                                    std::string system_deploy_error,
                                    std::vector<rspace::Event> events) {
  ProcessedDeploy d;
  d.data = deploy.data();
  d.deployer = deploy.deployer();
  d.sig = deploy.sig();
  d.sig_algorithm = deploy.sig_algorithm();
  d.cost = cost;
  d.errored = errored;
  d.system_deploy_error = std::move(system_deploy_error);
  d.events = std::move(events);
  return d;
}

}  // namespace rnode::casper::block

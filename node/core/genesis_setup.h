// What a node settles before it opens its store: its validator key and,
// for a new shard, the genesis inputs (bonds, wallets, proof-of-stake
// parameters) and the parameters file kept beside the store so that a
// restart plays blocks with the parameters the genesis was made with.
#ifndef RNODE_NODE_CORE_GENESIS_SETUP_H_
#define RNODE_NODE_CORE_GENESIS_SETUP_H_

#include <optional>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "casper/contracts/pos.h"
#include "casper/deploy_rules.h"
#include "casper/genesis/genesis.h"
#include "crypto/secp256k1.h"
#include "node/config/config.h"

namespace rnode::node {

// The genesis parameters file, under the data dir.
inline constexpr const char* kGenesisParamsFile = "/genesis/params.toml";

// The validator key: the setting, the key file, the environment
// (RNODE_VALIDATOR_PRIVATE_KEY, removed from the environment once read, so
// that no child process or crash report inherits it), or (a standalone
// node with none) the dev key generated once into the data dir with mode
// 0600 (announced on `out`). nullopt: a read-only node. InvalidArgument
// for a key that does not parse or a key file that is not a small regular
// file, NotFound for a key file that is not there.
absl::StatusOr<std::optional<crypto::Secp256k1PrivateKey>> ResolveKey(
    const NodeConfig& c, const std::string& data_dir, std::ostream& out);

// `c` with the genesis parameters stored in `data_dir` (c itself when
// there are none). FailedPrecondition when they name another shard.
absl::StatusOr<NodeConfig> WithStoredGenesisParams(const NodeConfig& c,
                                                   const std::string& data_dir);

// The genesis parameters as the file keeps them (TOML).
std::string GenesisParamsToml(const NodeConfig& c);

// The shard's deploy rules of the config (valid: Validate passed).
casper::DeployRules DeployRulesOf(const NodeConfig& c);

// The proof-of-stake parameters of the config. InvalidArgument for a bad
// vault-transfer key.
absl::StatusOr<casper::contracts::PosParams> PosParamsOf(const NodeConfig& c);

// The genesis inputs: the files given, or for a standalone node without
// them one bond (its own key) and one wallet (its own address), written
// into the data dir so the operator sees them. InvalidArgument for a bad
// setting or file line.
absl::StatusOr<casper::genesis::GenesisParams> GenesisInputs(
    const NodeConfig& c, const std::string& data_dir,
    const std::optional<crypto::Secp256k1PrivateKey>& key, std::ostream& out);

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_GENESIS_SETUP_H_

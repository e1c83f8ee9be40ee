// Offline tools over a genesis state held in memory: `rnode genesis` builds
// the genesis block from bonds.txt / wallets.txt and prints it; `rnode
// eval-deploy` also runs one signed deploy on that state with cost
// accounting and prints its outcome. Each returns the process exit code
// (0 ok, 1 bad input, 2 internal error), results to `out`, errors to `err`.
#ifndef RNODE_NODE_TOOLS_GENESIS_TOOL_H_
#define RNODE_NODE_TOOLS_GENESIS_TOOL_H_

#include <cstdint>
#include <iosfwd>
#include <string>

#include "casper/contracts/pos.h"

namespace rnode::node {

struct GenesisToolOptions {
  std::string bonds_path;    // bonds.txt
  std::string wallets_path;  // wallets.txt
  std::string shard_id = "root";
  int64_t timestamp = 0;  // genesis block time, ms
  int threads = 1;        // interpreter threads (results do not depend on it)
  casper::contracts::PosParams pos;  // bond bounds, epoch, quarantine, ...
  // The coop vault and the token are the node's defaults (the validators,
  // a majority of them; F1R3CAP): a shard configured otherwise has another
  // genesis than this prints.
};

// Prints "shard: ", "validators: ", "wallets: ", "total supply: ",
// "post-state: <hex>", "block hash: <hex>", one per line. A bad line in a
// file is reported as "<file>:<line>: <reason>" (exit 1).
int RunGenesis(const GenesisToolOptions& options, std::ostream& out,
               std::ostream& err);

// Builds the genesis, then plays the JSON deploy in `deploy_json` (as
// `rnode sign-deploy` prints it) in block 1 and prints: the program's
// stdout lines prefixed "stdout: ", then "cost: ", "charged: ",
// "refunded: ", "error: " (the program's error or the payment failure, if
// any), one "balance <address>: <before> -> <after>" per vault whose
// balance changed, and "post-state: <hex>".
int RunEvalDeploy(const GenesisToolOptions& options,
                  const std::string& deploy_json, std::ostream& out,
                  std::ostream& err);

}  // namespace rnode::node

#endif  // RNODE_NODE_TOOLS_GENESIS_TOOL_H_

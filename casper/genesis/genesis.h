// The genesis block and state (docs/contracts.md "Genesis"): from the
// parsed bonds.txt and wallets.txt, a shard name and the PoS parameters,
// a deterministic state root and the block that names it.
#ifndef RNODE_CASPER_GENESIS_GENESIS_H_
#define RNODE_CASPER_GENESIS_GENESIS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "casper/contracts/helper_contracts.h"
#include "casper/contracts/pos.h"
#include "casper/contracts/system_contracts.h"
#include "casper/genesis/genesis_files.h"
#include "rholang/interpreter/reducer.h"
#include "rspace/space.h"
#include "util/bytes.h"

namespace rnode::casper::genesis {

struct GenesisParams {
  std::string shard_id = "root";
  int64_t timestamp = 0;  // block time, ms
  // Must equal the PoS parameters `contracts` was made with.
  contracts::PosParams pos;
  std::vector<Bond> bonds;      // ParseBonds
  std::vector<Wallet> wallets;  // ParseWallets
  // The coop vault's signers (65-byte public keys; empty: the bonded
  // validators' keys) and how many of them must sign (0: a majority).
  std::vector<Bytes> coop_keys;
  int64_t coop_quorum = 0;
  // What rho:system:tokenMetadata says.
  contracts::TokenInfo token;
};

// The genesis block (docs/formats/block.md "Genesis block") and what the
// genesis files added up to.
struct GenesisBlock {
  block::Block block;
  // The stakes as the PoS state holds them (ascending by key).
  std::vector<contracts::Bond> bonds;
  int64_t total_supply = 0;  // wallets + stakes, in dust

  const Hash32& hash() const { return block.hash; }
  const Hash32& pre_state() const { return block.body.state.pre_state; }
  const Hash32& post_state() const { return block.body.state.post_state; }
};

// Builds the genesis state on `space` (reset to the empty root first): the
// wallets, the PoS bonds, the helper contracts (helper_contracts.h) and the
// coop vault (CreateCoopVault), and checkpoints it. `contracts` and the
// runtime's options must come from the same SystemContracts. InvalidArgument
// for no bonds, PoS parameters other than the contracts', an invalid stake (out
// of the PoS bounds), a total supply above INT64_MAX, bad token metadata or
// coop vault signers; the space's errors otherwise. The result depends only on
// `params`.
absl::StatusOr<GenesisBlock> CreateGenesis(
    const GenesisParams& params, rspace::Space* space,
    contracts::SystemContracts* contracts, rholang::interp::Runtime* runtime);

}  // namespace rnode::casper::genesis

#endif  // RNODE_CASPER_GENESIS_GENESIS_H_

#include "casper/genesis/genesis.h"

#include <algorithm>
#include <limits>

#include "casper/contracts/helper_contracts.h"
#include "casper/contracts/ledger.h"
#include "rholang/interpreter/native_space.h"
#include "util/status_macros.h"

namespace rnode::casper::genesis {
absl::StatusOr<GenesisBlock> CreateGenesis(
    const GenesisParams& params, rspace::Space* space,
    contracts::SystemContracts* contracts, rholang::interp::Runtime* runtime) {
  if (params.bonds.empty()) {
    return absl::InvalidArgumentError("genesis: no bonded validators");
  }
  if (!(params.pos == contracts->pos().params())) {
    return absl::InvalidArgumentError(
        "genesis: the PoS parameters differ from the contracts' (the node "
        "must run with its genesis parameters)");
  }
  GenesisBlock block;
  int64_t supply = 0;
  auto add = [&supply](int64_t v) {
    if (v > std::numeric_limits<int64_t>::max() - supply) return false;
    supply += v;
    return true;
  };
  for (const Bond& b : params.bonds) {
    contracts::Bond c;
    c.validator.assign(b.validator.begin(), b.validator.end());
    c.stake = b.stake;
    block.bonds.push_back(std::move(c));
    if (!add(b.stake)) {
      return absl::InvalidArgumentError("genesis: total supply overflows");
    }
  }
  std::sort(block.bonds.begin(), block.bonds.end(),
            [](const contracts::Bond& a, const contracts::Bond& b) {
              return a.validator < b.validator;
            });
  for (const Wallet& w : params.wallets) {
    if (!add(w.balance)) {
      return absl::InvalidArgumentError("genesis: total supply overflows");
    }
  }
  block.total_supply = supply;

  RETURN_IF_ERROR(space->Clear());
  const Hash32 pre_state = space->root();
  rspace::EventLog log;
  rholang::interp::SpaceNative native(
      space, rspace::OpContext{&log, &runtime->matcher()}, nullptr);
  contracts->ledger().BeginDeploy();
  for (const Wallet& w : params.wallets) {
    if (w.balance == 0) continue;
    RETURN_IF_ERROR(contracts->ledger().Mint(native, w.address, w.balance));
  }
  RETURN_IF_ERROR(contracts->pos().Genesis(native, block.bonds));
  // The helper contracts user programs look up (rho:lang:listOps, ...),
  // each by its own deploy in the genesis block's time.
  rholang::interp::BlockInfo info;
  info.timestamp = params.timestamp;
  RETURN_IF_ERROR(
      contracts::DeployHelperContracts(*runtime, *space, info, params.token));
  // Slashed stakes go to a multi-signature vault, by default of the
  // genesis validators, spent by a majority of them.
  std::vector<Bytes> coop_keys = params.coop_keys;
  if (coop_keys.empty()) {
    for (const contracts::Bond& b : block.bonds)
      coop_keys.push_back(b.validator);
  }
  const int64_t quorum = params.coop_quorum > 0
                             ? params.coop_quorum
                             : static_cast<int64_t>(coop_keys.size() / 2 + 1);
  RETURN_IF_ERROR(
      contracts::CreateCoopVault(*runtime, *space, info, coop_keys, quorum));
  ASSIGN_OR_RETURN(const Hash32 post_state, space->CreateCheckpoint());
  block::Block& b = block.block;
  b.header.timestamp = params.timestamp;
  b.body.state.pre_state = pre_state;
  b.body.state.post_state = post_state;
  for (const contracts::Bond& bond : block.bonds) {
    block::Bond wire;
    std::copy(bond.validator.begin(), bond.validator.end(),
              wire.validator.begin());
    wire.stake = bond.stake;
    b.body.state.bonds.push_back(wire);
  }
  b.shard_id = params.shard_id;
  b.sig_algorithm.clear();  // Not signed.
  b.hash = block::ComputeBlockHash(b);
  return block;
}

}  // namespace rnode::casper::genesis

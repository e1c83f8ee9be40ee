#include "casper/genesis/genesis.h"

#include <algorithm>
#include <limits>

#include "casper/contracts/ledger.h"
#include "crypto/hash.h"
#include "rholang/interpreter/native_space.h"
#include "util/status_macros.h"

namespace rnode::casper::genesis {
namespace {

constexpr std::string_view kDomain = "rnode-genesis-v1";

void PutU64(Bytes& out, uint64_t v) {
  for (int i = 7; i >= 0; --i)
    out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void PutBytes(Bytes& out, ByteView b) {
  PutU64(out, b.size());
  out.insert(out.end(), b.begin(), b.end());
}

}  // namespace

Bytes GenesisBlockPreimage(const GenesisBlock& block) {
  Bytes out(kDomain.begin(), kDomain.end());
  PutBytes(out, AsBytes(block.shard_id));
  PutU64(out, static_cast<uint64_t>(block.timestamp));
  PutU64(out, static_cast<uint64_t>(block.block_number));
  out.insert(out.end(), block.pre_state.begin(), block.pre_state.end());
  out.insert(out.end(), block.post_state.begin(), block.post_state.end());
  PutU64(out, block.bonds.size());
  for (const contracts::Bond& b : block.bonds) {
    PutBytes(out, b.validator);
    PutU64(out, static_cast<uint64_t>(b.stake));
  }
  PutU64(out, static_cast<uint64_t>(block.total_supply));
  return out;
}

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
  block.shard_id = params.shard_id;
  block.timestamp = params.timestamp;
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
  block.pre_state = space->root();
  rspace::EventLog log;
  rholang::interp::SpaceNative native(
      space, rspace::OpContext{&log, &runtime->matcher()}, nullptr);
  contracts->ledger().BeginDeploy();
  for (const Wallet& w : params.wallets) {
    if (w.balance == 0) continue;
    RETURN_IF_ERROR(contracts->ledger().Mint(native, w.address, w.balance));
  }
  RETURN_IF_ERROR(contracts->pos().Genesis(native, block.bonds));
  ASSIGN_OR_RETURN(block.post_state, space->CreateCheckpoint());
  block.hash = crypto::Blake2b256(GenesisBlockPreimage(block));
  return block;
}

}  // namespace rnode::casper::genesis

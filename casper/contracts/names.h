// Names and constants of the native system contracts (docs/contracts.md).
#ifndef RNODE_CASPER_CONTRACTS_NAMES_H_
#define RNODE_CASPER_CONTRACTS_NAMES_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "rholang/frontend/ir.h"
#include "rspace/types.h"

namespace rnode::casper::contracts {

// Native object kinds (rholang/interpreter/system_processes.h "Native
// objects"). Part of state: object names appear in stored data.
enum ObjectKind : uint8_t {
  kRevVaultObject = 1,  // the vault contract (key empty)
  kVaultObject = 2,     // one vault (key: its REV address)
  kAuthKeyObject = 3,   // a vault's auth key (key: the address); never called
  kPosObject = 4,       // proof of stake (key empty)
};

// The registry value of a system contract: (INT64_MAX, bundle+{object}),
// the (nonce, contract) shape the public registry returns for them.
inline constexpr int64_t kSystemContractNonce =
    std::numeric_limits<int64_t>::max();

// (ok, value): the Either reply of the public contracts, e.g. (true, Nil)
// or (false, "Insufficient funds").
rholang::ir::ParPtr EitherPar(bool ok, rholang::ir::ParPtr value);

// The values of the one datum of a channel state that holds exactly one
// non-persistent datum and nothing else (a balance, the PoS state);
// FailedPrecondition otherwise.
absl::StatusOr<std::vector<rholang::ir::ParPtr>> OnlyDatum(
    const rspace::ChannelState& state);

// bundle+{ObjectName(kind, key)}: what programs get for an object.
rholang::ir::ParPtr WriteOnlyObject(ObjectKind kind, std::string_view key);
// bundle0{ObjectName(kAuthKeyObject, address)}: the auth key of a vault.
rholang::ir::ParPtr AuthKeyOf(std::string_view address);

// The PoS vault: the address of the GPrivate with id "rnode/pos-vault"
// (rho:vault:address fromUnforgeable of that name). It holds bonds and the
// phlo fees collected by precharge.
const std::string& PosVaultAddress();
// Where slashed stakes go: the address of the GPrivate "rnode/coop-vault".
const std::string& CoopVaultAddress();

}  // namespace rnode::casper::contracts

#endif  // RNODE_CASPER_CONTRACTS_NAMES_H_

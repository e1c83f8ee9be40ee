// The REV vault contract, native (docs/contracts.md "REV vault"): the
// `rho:vault:system` object (findOrCreate, deployerAuthKey,
// unforgeableAuthKey) and the vault objects it hands out (balance,
// transfer), with the public node's replies. Balances are the Ledger's.
#ifndef RNODE_CASPER_CONTRACTS_VAULT_H_
#define RNODE_CASPER_CONTRACTS_VAULT_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "casper/contracts/ledger.h"
#include "rholang/frontend/ir.h"
#include "rholang/interpreter/system_processes.h"

namespace rnode::casper::contracts {

// The vault contract (kind kRevVaultObject). `ledger` is not owned.
rholang::interp::NativeObjectDef RevVaultObject(Ledger* ledger);
// One vault (kind kVaultObject, key = its address). `ledger` is not owned.
rholang::interp::NativeObjectDef VaultObject(Ledger* ledger);

// What the vault at `from` replies to ("transfer", target, amount,
// auth_key, ret): (true, Nil) once moved, or (false, reason) with the
// public node's reasons, checked in its order (target, amount, key,
// funds). Errors are the ledger's (the deploy fails).
absl::StatusOr<rholang::ir::ParPtr> VaultTransfer(
    Ledger* ledger, std::string_view from, const rholang::ir::ParPtr& target,
    const rholang::ir::ParPtr& amount, const rholang::ir::ParPtr& auth_key,
    rholang::interp::ProcessContext& ctx);

}  // namespace rnode::casper::contracts

#endif  // RNODE_CASPER_CONTRACTS_VAULT_H_

// The REV vault contract, native (docs/contracts.md "REV vault"): the
// `rho:vault:system` object (findOrCreate, deployerAuthKey,
// unforgeableAuthKey) and the vault objects it hands out (balance,
// transfer), with the public node's replies. Balances are the Ledger's.
#ifndef RNODE_CASPER_CONTRACTS_VAULT_H_
#define RNODE_CASPER_CONTRACTS_VAULT_H_

#include "casper/contracts/ledger.h"
#include "rholang/interpreter/system_processes.h"

namespace rnode::casper::contracts {

// The vault contract (kind kRevVaultObject). `ledger` is not owned.
rholang::interp::NativeObjectDef RevVaultObject(Ledger* ledger);
// One vault (kind kVaultObject, key = its address). `ledger` is not owned.
rholang::interp::NativeObjectDef VaultObject(Ledger* ledger);

}  // namespace rnode::casper::contracts

#endif  // RNODE_CASPER_CONTRACTS_VAULT_H_

// The native system contracts assembled for a runtime: the registry, the
// REV vault and proof of stake (docs/contracts.md), sharing one Ledger.
#ifndef RNODE_CASPER_CONTRACTS_SYSTEM_CONTRACTS_H_
#define RNODE_CASPER_CONTRACTS_SYSTEM_CONTRACTS_H_

#include <memory>
#include <vector>

#include "casper/contracts/ledger.h"
#include "casper/contracts/pos.h"
#include "rholang/interpreter/reducer.h"
#include "rholang/interpreter/system_processes.h"

namespace rnode::casper::contracts {

struct ContractsOptions {
  PosParams pos;
  // Also install the rho:test:* processes (tests and the contract test
  // runner only; never a validator).
  bool test_processes = false;
};

// Owns the tables a Runtime points to; must outlive every runtime made with
// RuntimeOptionsFor. One deploy at a time (the ledger's tracking).
class SystemContracts {
 public:
  explicit SystemContracts(ContractsOptions options = {});
  SystemContracts(const SystemContracts&) = delete;
  SystemContracts& operator=(const SystemContracts&) = delete;

  // The standard system processes with the registry's handlers (lookup,
  // insertArbitrary, insertSigned), plus the test table when asked.
  const std::vector<rholang::interp::SystemProcessDef>& processes() const {
    return processes_;
  }
  // The vault contract, vaults and proof of stake.
  const std::vector<rholang::interp::NativeObjectDef>& objects() const {
    return objects_;
  }
  rholang::interp::RuntimeOptions RuntimeOptionsFor(
      int threads, rholang::interp::OutputSink* output = nullptr) const;

  Ledger& ledger() { return ledger_; }
  ProofOfStake& pos() { return pos_; }

 private:
  ContractsOptions options_;
  Ledger ledger_;
  ProofOfStake pos_;
  std::vector<rholang::interp::SystemProcessDef> processes_;
  std::vector<rholang::interp::NativeObjectDef> objects_;
  // What rho:test:block:data:set and rho:test:casper:invalidBlocks:set
  // changed (RuntimeOptionsFor hands it out); null without test_processes.
  std::unique_ptr<rholang::interp::TestOverrides> test_overrides_;
};

}  // namespace rnode::casper::contracts

#endif  // RNODE_CASPER_CONTRACTS_SYSTEM_CONTRACTS_H_

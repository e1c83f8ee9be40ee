#include "casper/contracts/system_contracts.h"

#include "casper/contracts/registry.h"
#include "casper/contracts/vault.h"

namespace rnode::casper::contracts {

namespace interp = rholang::interp;

SystemContracts::SystemContracts(ContractsOptions options)
    : options_(options), pos_(&ledger_, options.pos) {
  std::vector<interp::SystemProcessDef> registry = RegistryProcesses();
  for (const interp::SystemProcessDef& def :
       interp::StandardSystemProcesses()) {
    bool replaced = false;
    for (const interp::SystemProcessDef& r : registry) {
      if (r.uri == def.uri) {
        processes_.push_back(r);
        replaced = true;
      }
    }
    if (!replaced) processes_.push_back(def);
  }
  if (options_.test_processes) {
    for (const interp::SystemProcessDef& def : interp::TestSystemProcesses()) {
      processes_.push_back(def);
    }
    test_overrides_ = std::make_unique<interp::TestOverrides>();
  }
  objects_.push_back(RevVaultObject(&ledger_));
  objects_.push_back(VaultObject(&ledger_));
  objects_.push_back(pos_.Object());
}

interp::RuntimeOptions SystemContracts::RuntimeOptionsFor(
    int threads, interp::OutputSink* output) const {
  interp::RuntimeOptions o;
  o.threads = threads;
  o.processes = &processes_;
  o.objects = &objects_;
  o.output = output;
  o.test_overrides = test_overrides_.get();
  return o;
}

}  // namespace rnode::casper::contracts

// The helper contracts the public genesis registers and user programs look
// up (rho:lang:listOps, ...), written here in Rholang with the public
// external interface (ADR 0012). Each registers itself through the
// registry's signed insert with the published key and signature, so it
// lands at the public rho:id URI; its deploy must therefore run at the
// published timestamp by the published deployer key.
#ifndef RNODE_CASPER_CONTRACTS_HELPER_CONTRACTS_H_
#define RNODE_CASPER_CONTRACTS_HELPER_CONTRACTS_H_

#include <cstdint>
#include <span>
#include <string_view>

namespace rnode::casper::contracts {

struct HelperContract {
  std::string_view name;       // "ListOps"
  std::string_view shorthand;  // "rho:lang:listOps"
  // Hex of the secp256k1 private key the registering deploy is made with
  // (published with the public contract: its signed insert names it).
  std::string_view deployer_key;
  int64_t timestamp = 0;    // of the registering deploy
  std::string_view source;  // Rholang
};

// In the order they must be deployed (a helper may look up an earlier one).
std::span<const HelperContract> HelperContracts();

}  // namespace rnode::casper::contracts

#endif  // RNODE_CASPER_CONTRACTS_HELPER_CONTRACTS_H_

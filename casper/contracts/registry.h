// The registry, native (docs/contracts.md "Registry"): rho:registry:lookup,
// rho:registry:insertArbitrary and rho:registry:insertSigned:secp256k1 on
// their public fixed channels, with the public node's URIs and replies.
//
// An entry for URI u lives on its own channel: GPrivate with id
// blake2b256("rnode/registry/" || u), one datum (the stored value), so
// entries never conflict with each other in a merge (the public node keeps
// them in one tree map). System contracts are not stored: their URIs (and
// the shorthands rho:vault:system, rho:system:pos, ...) resolve to
// (INT64_MAX, bundle+{contract}) in code.
#ifndef RNODE_CASPER_CONTRACTS_REGISTRY_H_
#define RNODE_CASPER_CONTRACTS_REGISTRY_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rholang/frontend/ir.h"
#include "rholang/interpreter/system_processes.h"

namespace rnode::casper::contracts {

// The rho:id URI a shorthand stands for (the public table), or nullopt.
std::optional<std::string> ResolveShorthand(std::string_view uri);

// The channel of a registry entry.
rholang::ir::ParPtr RegistryEntryChannel(std::string_view uri);

// The three registry processes (fixed channels 14, 15, 16 of the standard
// table, with handlers).
std::vector<rholang::interp::SystemProcessDef> RegistryProcesses();

}  // namespace rnode::casper::contracts

#endif  // RNODE_CASPER_CONTRACTS_REGISTRY_H_

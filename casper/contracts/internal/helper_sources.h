// The helper contracts' Rholang, embedded at build time from
// casper/contracts/rho/*.rho (rnode_embed_text in casper/contracts'
// CMakeLists.txt). Each file is its deploy's source byte for byte: the
// deploy's id, and so the genesis state, is derived from it.
#ifndef RNODE_CASPER_CONTRACTS_INTERNAL_HELPER_SOURCES_H_
#define RNODE_CASPER_CONTRACTS_INTERNAL_HELPER_SOURCES_H_

#include <string_view>

namespace rnode::casper::contracts::rho {

extern const std::string_view kTreeHashMapText;  // rho/tree_hash_map.rho
extern const std::string_view kListOpsText;  // rho/list_ops.rho
extern const std::string_view kEitherText;  // rho/either.rho
extern const std::string_view kNonNegativeNumberText;  // rho/non_negative_number.rho
extern const std::string_view kAuthKeyText;  // rho/auth_key.rho
extern const std::string_view kStackText;  // rho/stack.rho
extern const std::string_view kMakeMintText;  // rho/make_mint.rho
extern const std::string_view kMultiSigVaultText;  // rho/multi_sig_vault.rho

}  // namespace rnode::casper::contracts::rho

#endif  // RNODE_CASPER_CONTRACTS_INTERNAL_HELPER_SOURCES_H_

// The helper contracts the public genesis registers and user programs look
// up (rho:lang:listOps, ...), written here in Rholang with the public
// external interface (ADR 0012). Each registers itself through the
// registry's signed insert with the published key and signature, so it
// lands at the public rho:id URI; its deploy must therefore run at the
// published timestamp by the published deployer key.
#ifndef RNODE_CASPER_CONTRACTS_HELPER_CONTRACTS_H_
#define RNODE_CASPER_CONTRACTS_HELPER_CONTRACTS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rholang/interpreter/reducer.h"
#include "rholang/interpreter/system_processes.h"
#include "rspace/space.h"
#include "util/bytes.h"

namespace rnode::casper::contracts {

// The channel a helper registered under a plain URI sends its contract on
// (`@"rnode:helper:export"!(bundle+{*Contract})`): the installer moves that
// datum to the registry entry of `literal_uri`. Only installers run such a
// helper (genesis, the spec runner), on a state no user has touched.
inline constexpr std::string_view kHelperExportChannel = "rnode:helper:export";

struct HelperContract {
  std::string_view name;       // "ListOps"
  std::string_view shorthand;  // "rho:lang:listOps"
  // Empty for a helper that registers itself by a signed insert. Otherwise
  // the URI whose registry entry is the exported contract itself (not a
  // (nonce, contract) pair), as the public Registry.rho stores TreeHashMap
  // under `rho:lang:treeHashMap`.
  std::string_view literal_uri;
  // Hex of the secp256k1 private key the registering deploy is made with
  // (published with the public contract: its signed insert names it).
  std::string_view deployer_key;
  int64_t timestamp = 0;    // of the registering deploy
  std::string_view source;  // Rholang
};

// In the order they must be deployed (a helper may look up an earlier one).
std::span<const HelperContract> HelperContracts();

// Runs after a helper's deploy: for a helper with a literal_uri, takes the
// datum it exported and stores it as that URI's registry entry.
// FailedPrecondition when nothing was exported.
absl::Status InstallLiteralEntry(const HelperContract& helper,
                                 rholang::interp::NativeSpace& space);

// A deploy of `source` at `timestamp` by the holder of `key_hex` (hex of a
// secp256k1 private key), with an id derived from the source, so that its
// unforgeable names are the same on every run and node (helper contracts,
// the spec runner's deploys). InvalidArgument "deployer key: ..." for a bad
// key.
absl::StatusOr<rholang::interp::DeployInfo> SourceDeploy(
    std::string_view source, int64_t timestamp, std::string_view key_hex);

// The native token as TokenMetadata (rho:system:tokenMetadata) describes
// it; the defaults are the public node's.
inline constexpr size_t kMaxTokenTextBytes = 32;
inline constexpr int kMaxTokenDecimals = 18;
struct TokenInfo {
  std::string name = "F1R3CAP";
  std::string symbol = "F1R3";
  int decimals = 8;
};
// InvalidArgument unless name and symbol are 1..kMaxTokenTextBytes
// printable ASCII characters other than `"` and `\`, and decimals is
// 0..kMaxTokenDecimals.
absl::Status CheckTokenInfo(const TokenInfo& token);

// Runs every helper's deploy on `runtime`'s space, in order, in `block`,
// and installs the literal-URI entries. The space keeps their effects, not
// checkpointed. Genesis and the spec runner call it on a fresh state. An
// error names the helper that failed; a bad `token` is InvalidArgument
// (CheckTokenInfo) before anything runs.
absl::Status DeployHelperContracts(rholang::interp::Runtime& runtime,
                                   rspace::Space& space,
                                   const rholang::interp::BlockInfo& block,
                                   const TokenInfo& token = TokenInfo());

// The coop vault slashed stakes go to: a multi-signature vault
// (rho:vault:multiSig) of `public_keys` (65-byte keys) spent by `quorum` of
// them, made by a deploy in `block` after the helper contracts, and kept on
// CoopVaultChannel() (pos.h) for getCoopVault and Slash. InvalidArgument
// for no key, a key that is not 65 bytes or a quorum outside
// 1..public_keys.size(); FailedPrecondition if the vault's create refused.
absl::Status CreateCoopVault(rholang::interp::Runtime& runtime,
                             rspace::Space& space,
                             const rholang::interp::BlockInfo& block,
                             std::span<const Bytes> public_keys,
                             int64_t quorum);

}  // namespace rnode::casper::contracts

#endif  // RNODE_CASPER_CONTRACTS_HELPER_CONTRACTS_H_

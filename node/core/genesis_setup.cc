#include "node/core/genesis_setup.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "casper/contracts/ledger.h"
#include "casper/genesis/genesis_files.h"
#include "crypto/rev_address.h"
#include "node/core/clock.h"
#include "util/bytes.h"
#include "util/file_io.h"
#include "util/status_macros.h"

namespace rnode::node {
namespace {

// Stake of the generated standalone validator and balance of its wallet
// (the public standalone shard's figures: 1000 and 5e16 dust).
constexpr int64_t kStandaloneStake = 1000;
constexpr int64_t kStandaloneBalance = 50'000'000'000'000'000;

// Largest validator key file read: 64 hex digits and some room.
constexpr uintmax_t kMaxValidatorKeyFileBytes = 4096;
// Mode of the generated standalone validator key: its owner's only.
constexpr mode_t kValidatorKeyFileMode = 0600;
constexpr char kValidatorKeyVariable[] = "RNODE_VALIDATOR_PRIVATE_KEY";

absl::StatusOr<crypto::Secp256k1PrivateKey> ParseKeyHex(std::string_view hex,
                                                        std::string_view from) {
  absl::StatusOr<crypto::Secp256k1PrivateKey> key =
      crypto::ParseSecp256k1PrivateKeyHex(hex);
  if (!key.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(from), ": ", key.status().message()));
  }
  return *key;
}

absl::StatusOr<crypto::Secp256k1PrivateKey> GenerateKey() {
  for (int attempt = 0; attempt < 8; ++attempt) {
    uint8_t seed[32];
    if (getrandom(seed, sizeof seed, 0) != sizeof seed) {
      return absl::InternalError("no entropy available from getrandom");
    }
    absl::StatusOr<crypto::Secp256k1PrivateKey> key =
        crypto::ParseSecp256k1PrivateKey(ByteView(seed, sizeof seed));
    if (key.ok()) return *key;
  }
  return absl::InternalError("could not draw a valid key");
}

// A 65-byte public key from its hex; `setting` names it in the error.
absl::StatusOr<Bytes> PublicKeyOf(std::string_view hex,
                                  std::string_view setting) {
  const absl::string_view trimmed =
      absl::StripAsciiWhitespace(absl::string_view(hex.data(), hex.size()));
  absl::StatusOr<Bytes> key =
      HexDecode(std::string_view(trimmed.data(), trimmed.size()));
  if (!key.ok() || key->size() != 65 || (*key)[0] != 0x04) {
    return absl::InvalidArgumentError(
        absl::StrCat(absl::string_view(setting.data(), setting.size()), ": \"",
                     absl::string_view(hex.data(), hex.size()),
                     "\" is not a public key (130 hex digits, uncompressed: "
                     "04...)"));
  }
  return *std::move(key);
}

// A standalone node's own genesis files, for the ones not given (empty
// `*bonds_path` or `*wallets_path`): one bond (its key) and one wallet (its
// address), written into `dir`.
absl::Status StandaloneGenesisFiles(
    const NodeConfig& c, const std::string& dir,
    const std::optional<crypto::Secp256k1PrivateKey>& key,
    std::string* bonds_path, std::string* wallets_path, std::ostream& out) {
  if (!c.standalone || !key.has_value()) {
    return absl::InvalidArgumentError(
        "a new shard needs --bonds-file and --wallets-file (or "
        "--standalone, which makes them for its own key)");
  }
  const crypto::Secp256k1PublicKey pk = crypto::Secp256k1PublicKeyOf(*key);
  if (bonds_path->empty()) {
    *bonds_path = dir + "/bonds.txt";
    RETURN_IF_ERROR(WriteFileAtomically(
        *bonds_path, absl::StrCat(HexEncode(pk), " ", kStandaloneStake, "\n"),
        0644));
  }
  if (wallets_path->empty()) {
    *wallets_path = dir + "/wallets.txt";
    RETURN_IF_ERROR(
        WriteFileAtomically(*wallets_path,
                            absl::StrCat(crypto::RevAddressFromPublicKey(pk),
                                         ",", kStandaloneBalance, "\n"),
                            0644));
  }
  out << "rnode: new standalone shard: bonds " << *bonds_path << ", wallets "
      << *wallets_path << "\n";
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<crypto::Secp256k1PrivateKey>> ResolveKey(
    const NodeConfig& c, const std::string& data_dir, std::ostream& out) {
  if (!c.validator_private_key.empty()) {
    return ParseKeyHex(c.validator_private_key, "casper.validator-private-key");
  }
  if (!c.validator_private_key_path.empty()) {
    ASSIGN_OR_RETURN(
        std::string text,
        ReadSmallFile(c.validator_private_key_path, kMaxValidatorKeyFileBytes));
    return ParseKeyHex(text, c.validator_private_key_path);
  }
  if (const char* env = std::getenv(kValidatorKeyVariable);
      env != nullptr && *env != '\0') {
    const std::string hex = env;
    ::unsetenv(kValidatorKeyVariable);
    return ParseKeyHex(hex, kValidatorKeyVariable);
  }
  if (!c.standalone) return std::nullopt;
  const std::string path = data_dir + "/validator.key";
  if (std::filesystem::exists(path)) {
    ASSIGN_OR_RETURN(std::string text,
                     ReadSmallFile(path, kMaxValidatorKeyFileBytes));
    return ParseKeyHex(text, path);
  }
  ASSIGN_OR_RETURN(crypto::Secp256k1PrivateKey key, GenerateKey());
  RETURN_IF_ERROR(
      WriteFileAtomically(path, HexEncode(key) + "\n", kValidatorKeyFileMode));
  out << "rnode: generated a standalone validator key (kept in " << path
      << ")\n";
  return key;
}

absl::StatusOr<NodeConfig> WithStoredGenesisParams(
    const NodeConfig& c, const std::string& data_dir) {
  const std::string path = data_dir + kGenesisParamsFile;
  if (!std::filesystem::exists(path)) return c;
  ASSIGN_OR_RETURN(std::string text, casper::genesis::ReadGenesisFile(path));
  NodeConfig stored = c;
  RETURN_IF_ERROR(ApplyToml(stored, text, path));
  if (stored.shard_name != c.shard_name) {
    return absl::FailedPreconditionError(
        absl::StrCat("the data dir ", data_dir, " holds shard '",
                     stored.shard_name, "', not '", c.shard_name, "'"));
  }
  return stored;
}

std::string GenesisParamsToml(const NodeConfig& c) {
  return absl::StrCat(
      "# Written at genesis; the node reads it on every start.\n",
      "[casper]\nshard-name = \"", c.shard_name, "\"\n",
      "fault-tolerance-threshold = ", c.fault_tolerance_threshold, "\n",
      "min-phlo-price = ", c.min_phlo_price, "\n",
      "max-phlo-limit = ", c.max_phlo_limit, "\n",
      "max-deploy-term-bytes = ", c.max_deploy_term_bytes, "\n",
      "max-block-bytes = ", c.max_block_bytes, "\n",
      "[casper.genesis-block-data]\n",
      "deploy-timestamp = ", c.deploy_timestamp,
      "\nbond-minimum = ", c.bond_minimum, "\nbond-maximum = ", c.bond_maximum,
      "\nepoch-length = ", c.epoch_length,
      "\nquarantine-length = ", c.quarantine_length,
      "\nnumber-of-active-validators = ", c.number_of_active_validators,
      "\npos-multi-sig-public-keys = \"", c.pos_multi_sig_public_keys,
      "\"\npos-multi-sig-quorum = ", c.pos_multi_sig_quorum,
      "\npos-vault-transfer-public-key = \"", c.pos_vault_transfer_public_key,
      "\"\nnative-token-name = \"", c.native_token_name,
      "\"\nnative-token-symbol = \"", c.native_token_symbol,
      "\"\nnative-token-decimals = ", c.native_token_decimals, "\n");
}

casper::DeployRules DeployRulesOf(const NodeConfig& c) {
  casper::DeployRules r;
  r.shard_id = c.shard_name;
  r.min_phlo_price = c.min_phlo_price;
  r.max_phlo_limit = c.max_phlo_limit;
  r.max_term_bytes = static_cast<size_t>(c.max_deploy_term_bytes);
  return r;
}

absl::StatusOr<casper::contracts::PosParams> PosParamsOf(const NodeConfig& c) {
  casper::contracts::PosParams p;
  if (!c.pos_vault_transfer_public_key.empty()) {
    ASSIGN_OR_RETURN(
        p.vault_transfer_key,
        PublicKeyOf(c.pos_vault_transfer_public_key,
                    "casper.genesis-block-data.pos-vault-transfer-public-key"));
  }
  p.minimum_bond = c.bond_minimum;
  p.maximum_bond = c.bond_maximum;
  p.epoch_length = c.epoch_length;
  p.quarantine_length = c.quarantine_length;
  p.number_of_active_validators = c.number_of_active_validators;
  // In [0, 1) (Validate): rounds to the nearest ppm.
  p.fault_tolerance_threshold_ppm =
      std::llround(c.fault_tolerance_threshold * 1'000'000);
  return p;
}

absl::StatusOr<casper::genesis::GenesisParams> GenesisInputs(
    const NodeConfig& c, const std::string& data_dir,
    const std::optional<crypto::Secp256k1PrivateKey>& key, std::ostream& out) {
  casper::genesis::GenesisParams p;
  p.shard_id = c.shard_name;
  p.timestamp = c.deploy_timestamp > 0 ? c.deploy_timestamp : UnixMs();
  ASSIGN_OR_RETURN(p.pos, PosParamsOf(c));
  for (absl::string_view hex : absl::StrSplit(c.pos_multi_sig_public_keys, ',',
                                              absl::SkipWhitespace())) {
    ASSIGN_OR_RETURN(
        Bytes key,
        PublicKeyOf(std::string_view(hex.data(), hex.size()),
                    "casper.genesis-block-data.pos-multi-sig-public-keys"));
    p.coop_keys.push_back(std::move(key));
  }
  p.coop_quorum = c.pos_multi_sig_quorum;
  if (!p.coop_keys.empty() &&
      p.coop_quorum > static_cast<int64_t>(p.coop_keys.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "casper.genesis-block-data.pos-multi-sig-quorum: ", p.coop_quorum,
        " is more than the ", p.coop_keys.size(), " signers"));
  }
  p.token.name = c.native_token_name;
  p.token.symbol = c.native_token_symbol;
  p.token.decimals =
      static_cast<int>(std::min<int64_t>(c.native_token_decimals, INT32_MAX));
  if (absl::Status s = casper::contracts::CheckTokenInfo(p.token); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "casper.genesis-block-data.native-token-*: ", s.message()));
  }
  const std::string dir = data_dir + "/genesis";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, ": cannot create: ", ec.message()));
  }
  std::string bonds_path = c.bonds_file;
  std::string wallets_path = c.wallets_file;
  if (bonds_path.empty() || wallets_path.empty()) {
    RETURN_IF_ERROR(
        StandaloneGenesisFiles(c, dir, key, &bonds_path, &wallets_path, out));
  }
  ASSIGN_OR_RETURN(std::string bonds_text,
                   casper::genesis::ReadGenesisFile(bonds_path));
  ASSIGN_OR_RETURN(p.bonds,
                   casper::genesis::ParseBonds(bonds_text, bonds_path));
  ASSIGN_OR_RETURN(std::string wallets_text,
                   casper::genesis::ReadGenesisFile(wallets_path));
  ASSIGN_OR_RETURN(p.wallets,
                   casper::genesis::ParseWallets(wallets_text, wallets_path));
  return p;
}

}  // namespace rnode::node

#include "node/config/config.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "toml++/toml.h"
#include "util/host_address.h"
#include "util/limits.h"
#include "util/status_macros.h"

namespace rnode::node {
namespace {

// Every setting. The file key is the public node's HOCON key where it has
// one; flags likewise.
const Setting kSettings[] = {
    {"standalone", "standalone", "run as the only validator of a new shard",
     &NodeConfig::standalone},
    {"dev-mode", "dev-mode", "allow exploratory deploys on a validator",
     &NodeConfig::dev_mode},
    {"autopropose", "autopropose",
     "propose whenever deploys wait (false: only on request)",
     &NodeConfig::autopropose},
    {"fault-injection", "fault-injection",
     "serve the admin API's fault-injection routes (fault campaign only)",
     &NodeConfig::fault_injection},
    {"storage.data-dir", "data-dir", "where the node keeps its state",
     &NodeConfig::data_dir},
    {"storage.block-cache-size", "block-cache-size",
     "bound of the store's block cache in bytes (e.g. 64M)",
     &NodeConfig::block_cache_bytes},
    {"storage.min-free-bytes", "min-free-bytes",
     "free space below which deploys are refused as disk_full (e.g. 1G; 0: "
     "none)",
     &NodeConfig::min_free_bytes},
    {"storage.retain-blocks", "retain-blocks",
     "keep the states of the last this many finalized block numbers and "
     "delete older ones (0: keep every state, an archive node; else at "
     "least 1024)",
     &NodeConfig::retain_blocks},
    {"sync.state-min-finalized", "state-sync-min-finalized",
     "a new node joins from its peers' last finalized state when that "
     "block is numbered at least this (-1: never; it replays from the "
     "genesis)",
     &NodeConfig::state_sync_min_finalized},
    {"sync.state-requests", "state-sync-requests",
     "trie node requests a joining node keeps in flight to its peers",
     &NodeConfig::state_sync_requests},
    {"sync.state-hashes-per-request", "state-sync-hashes-per-request",
     "trie nodes a joining node asks for in one request (at most 1024)",
     &NodeConfig::state_sync_hashes_per_request},
    {"sync.rejoin-after-seconds", "rejoin-after-seconds",
     "a node with retention that has been further behind than its peers "
     "keep blocks this long forgets its chain and joins again from their "
     "last finalized state (-1: never)",
     &NodeConfig::rejoin_after_seconds},
    {"logging.level", "", "trace, debug, info, warn, error, critical, off",
     &NodeConfig::log_level},
    {"threads", "threads", "worker threads (0: all hardware threads)",
     &NodeConfig::threads},
    {"protocol-server.network-id", "network-id", "the network's name",
     &NodeConfig::network_id},
    {"protocol-server.host", "host",
     "host peers reach this node at (the P2P servers bind it)",
     &NodeConfig::host},
    {"protocol-server.port", "protocol-port", "peer-to-peer protocol port",
     &NodeConfig::port_protocol},
    {"peers-discovery.port", "discovery-port", "peer discovery port",
     &NodeConfig::port_discovery},
    {"protocol-client.bootstrap", "bootstrap",
     "rnode:// address of a node to join through", &NodeConfig::bootstrap},
    {"protocol-server.allow-private-addresses", "allow-private-addresses",
     "accept peers on loopback and private addresses",
     &NodeConfig::allow_private_addresses},
    {"protocol-client.network-timeout", "network-timeout",
     "timeout of one peer-to-peer call (e.g. 5s)",
     &NodeConfig::network_timeout_ms},
    {"protocol-server.max-connections", "max-peers",
     "peers kept connected at most", &NodeConfig::max_peers},
    {"tls.key-path", "tls-key-path",
     "the node's P-256 TLS key, PKCS#8 PEM (default <data-dir>/node.key.pem; "
     "made when absent)",
     &NodeConfig::tls_key_path},
    {"tls.certificate-path", "tls-certificate-path",
     "the node's self-signed TLS certificate (default "
     "<data-dir>/node.certificate.pem; made when absent)",
     &NodeConfig::tls_certificate_path},
    {"peers-discovery.lookup-interval", "lookup-interval",
     "how often peers are asked for their peers (e.g. 5s)",
     &NodeConfig::lookup_interval_ms},
    {"api-server.host", "api-host", "address the API servers listen on",
     &NodeConfig::api_host},
    {"api-server.admin-host", "api-admin-host",
     "address the admin APIs (propose, fault injection) listen on; "
     "loopback unless allow-public-admin",
     &NodeConfig::api_admin_host},
    {"api-server.allow-public-admin", "allow-public-admin",
     "let api-server.admin-host be an address others can reach",
     &NodeConfig::allow_public_admin},
    {"api-server.allowed-origins", "allowed-origins",
     "browser origins whose pages may call the public HTTP API (CORS), "
     "comma-separated; * for any (default: none)",
     &NodeConfig::http_allowed_origins},
    {"api-server.allowed-hosts", "allowed-hosts",
     "Host names the public HTTP API answers, comma-separated; * for any "
     "(default: the loopback names on a loopback api-host, else any)",
     &NodeConfig::http_allowed_hosts},
    {"api-server.port-grpc-external", "api-port-grpc-external",
     "external gRPC API port", &NodeConfig::port_grpc_external},
    {"api-server.port-grpc-internal", "api-port-grpc-internal",
     "internal gRPC API port (propose)", &NodeConfig::port_grpc_internal},
    {"api-server.port-http", "api-port-http",
     "HTTP API, /metrics and /ws/events port", &NodeConfig::port_http},
    {"api-server.port-admin-http", "api-port-admin-http",
     "admin HTTP API port (propose)", &NodeConfig::port_admin_http},
    {"api-server.grpc-max-recv-message-size", "api-grpc-max-recv-message-size",
     "largest gRPC request", &NodeConfig::grpc_max_recv_message_bytes},
    {"api-server.http-max-body-bytes", "api-http-max-body-bytes",
     "largest HTTP request body", &NodeConfig::http_max_body_bytes},
    {"api-server.max-in-flight", "api-max-in-flight",
     "requests each API server handles at once; more are answered busy",
     &NodeConfig::api_max_in_flight},
    {"api-server.max-blocks-limit", "api-max-blocks-limit",
     "most blocks one query returns", &NodeConfig::max_blocks_limit},
    {"api-server.max-blocks-bytes", "api-max-blocks-bytes",
     "most bytes of stored blocks one query reads; a range holding more is "
     "refused",
     &NodeConfig::max_blocks_bytes},
    {"api-server.exploratory-deploy-phlo-limit",
     "api-exploratory-deploy-phlo-limit", "phlo of one exploratory deploy",
     &NodeConfig::exploratory_deploy_phlo_limit},
    {"metrics.prometheus", "prometheus", "serve /metrics",
     &NodeConfig::prometheus},
    {"casper.shard-name", "shard-name", "the shard's name (deploys carry it)",
     &NodeConfig::shard_name},
    {"casper.fault-tolerance-threshold", "fault-tolerance-threshold",
     "fault tolerance a block needs to be finalized, in [0, 1)",
     &NodeConfig::fault_tolerance_threshold},
    {"casper.validator-private-key", "validator-private-key",
     "the validator's secp256k1 key, hex (visible in ps: prefer the path "
     "or RNODE_VALIDATOR_PRIVATE_KEY)",
     &NodeConfig::validator_private_key},
    {"casper.validator-private-key-path", "validator-private-key-path",
     "file holding the validator's key in hex",
     &NodeConfig::validator_private_key_path},
    {"casper.max-number-of-parents", "max-number-of-parents",
     "parents a block may have", &NodeConfig::max_number_of_parents},
    {"casper.max-user-deploys-per-block", "max-user-deploys-per-block",
     "user deploys a block may hold", &NodeConfig::max_user_deploys_per_block},
    {"casper.min-phlo-price", "min-phlo-price",
     "lowest phlo price a deploy may offer (a shard parameter, fixed at "
     "genesis)",
     &NodeConfig::min_phlo_price},
    {"casper.max-phlo-limit", "max-phlo-limit",
     "highest phlo limit a deploy may ask for (a shard parameter, fixed at "
     "genesis)",
     &NodeConfig::max_phlo_limit},
    {"casper.max-deploy-term-bytes", "max-deploy-term-bytes",
     "largest deploy term, in bytes (a shard parameter, fixed at genesis)",
     &NodeConfig::max_deploy_term_bytes},
    {"casper.max-block-bytes", "max-block-bytes",
     "largest block, encoded, in bytes (a shard parameter, fixed at "
     "genesis)",
     &NodeConfig::max_block_bytes},
    {"casper.propose-batch-window", "propose-batch-window",
     "wait after the first pending deploy before proposing (e.g. 20ms)",
     &NodeConfig::propose_batch_window_ms},
    {"casper.min-block-interval", "min-block-interval",
     "least time between two blocks of this validator unless a full block "
     "waits (e.g. 250ms)",
     &NodeConfig::min_block_interval_ms},
    {"casper.deploy-pool-max-deploys", "deploy-pool-max-deploys",
     "deploys that may wait; more are refused",
     &NodeConfig::deploy_pool_max_deploys},
    {"casper.heartbeat.enabled", "heartbeat-enabled",
     "propose an empty block when finality waits for this validator",
     &NodeConfig::heartbeat_enabled},
    {"casper.heartbeat.check-interval", "heartbeat-check-interval",
     "how long finality may stall before the heartbeat proposes (e.g. 5s)",
     &NodeConfig::heartbeat_check_interval_ms},
    {"casper.synchrony-constraint-threshold", "synchrony-constraint-threshold",
     "share of the other validators' stake to have seen new blocks from "
     "before proposing again, in [0, 1] (0: off)",
     &NodeConfig::synchrony_constraint_threshold},
    {"casper.deploy-gossip-takeover", "deploy-gossip-takeover",
     "after this long a deploy gossiped by a peer and in no block is "
     "proposed here (e.g. 5s)",
     &NodeConfig::deploy_gossip_takeover_ms},
    {"casper.genesis-block-data.bonds-file", "bonds-file",
     "bonds.txt of a new shard", &NodeConfig::bonds_file},
    {"casper.genesis-block-data.wallets-file", "wallets-file",
     "wallets.txt of a new shard", &NodeConfig::wallets_file},
    {"casper.genesis-block-data.bond-minimum", "bond-minimum", "smallest stake",
     &NodeConfig::bond_minimum},
    {"casper.genesis-block-data.bond-maximum", "bond-maximum", "largest stake",
     &NodeConfig::bond_maximum},
    {"casper.genesis-block-data.epoch-length", "epoch-length",
     "blocks per epoch", &NodeConfig::epoch_length},
    {"casper.genesis-block-data.quarantine-length", "quarantine-length",
     "blocks a withdrawal waits", &NodeConfig::quarantine_length},
    {"casper.genesis-block-data.number-of-active-validators",
     "number-of-active-validators", "size of the active validator set",
     &NodeConfig::number_of_active_validators},
    {"casper.genesis-block-data.deploy-timestamp", "deploy-timestamp",
     "genesis block time in ms (0: the first start)",
     &NodeConfig::deploy_timestamp},
    {"casper.genesis-block-data.pos-multi-sig-public-keys",
     "pos-multi-sig-public-keys",
     "signers of the coop vault slashed stakes go to: hex public keys, "
     "comma-separated (default: the genesis validators)",
     &NodeConfig::pos_multi_sig_public_keys},
    {"casper.genesis-block-data.pos-multi-sig-quorum", "pos-multi-sig-quorum",
     "signatures the coop vault needs (0: a majority of its signers)",
     &NodeConfig::pos_multi_sig_quorum},
    {"casper.genesis-block-data.pos-vault-transfer-public-key",
     "pos-vault-transfer-public-key",
     "hex public key whose deployer may spend the PoS vault with "
     "posVaultTransfer (default: no one)",
     &NodeConfig::pos_vault_transfer_public_key},
    {"casper.genesis-block-data.native-token-name", "native-token-name",
     "the native token's name (rho:system:tokenMetadata)",
     &NodeConfig::native_token_name},
    {"casper.genesis-block-data.native-token-symbol", "native-token-symbol",
     "the native token's symbol", &NodeConfig::native_token_symbol},
    {"casper.genesis-block-data.native-token-decimals", "native-token-decimals",
     "the native token's decimal places (0..18)",
     &NodeConfig::native_token_decimals},
};

// Multipliers of the units an integer setting may carry.
struct Unit {
  std::string_view suffix;
  int64_t factor;
};
constexpr Unit kDurationUnits[] = {
    {"ms", 1}, {"s", 1000}, {"seconds", 1000}, {"min", 60'000}, {"m", 60'000}};
constexpr Unit kSizeUnits[] = {
    {"K", int64_t{1} << 10}, {"M", int64_t{1} << 20}, {"G", int64_t{1} << 30}};

bool IsDuration(std::string_view key) {
  return key == "casper.propose-batch-window" ||
         key == "casper.min-block-interval" ||
         key == "protocol-client.network-timeout" ||
         key == "peers-discovery.lookup-interval" ||
         key == "casper.heartbeat.check-interval" ||
         key == "casper.deploy-gossip-takeover";
}

absl::StatusOr<int64_t> ParseInt(std::string_view key, std::string_view text) {
  std::string trimmed(text);
  absl::StripAsciiWhitespace(&trimmed);
  std::string_view digits = trimmed;
  int64_t factor = 1;
  auto strip = [&](std::span<const Unit> units) {
    for (const Unit& u : units) {
      if (digits.size() > u.suffix.size() && digits.ends_with(u.suffix) &&
          std::isdigit(static_cast<unsigned char>(
              digits[digits.size() - u.suffix.size() - 1]))) {
        digits.remove_suffix(u.suffix.size());
        factor = u.factor;
        return;
      }
    }
  };
  strip(IsDuration(key) ? std::span<const Unit>(kDurationUnits)
                        : std::span<const Unit>(kSizeUnits));
  int64_t v = 0;
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size() ||
      digits.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(key), ": expected an integer",
                     IsDuration(key) ? " duration (e.g. 20ms, 5s)" : "",
                     ", got \"", std::string(text), "\""));
  }
  if (v != 0 && (v > INT64_MAX / factor || v < INT64_MIN / factor)) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(key), ": \"", std::string(text), "\" is out of range"));
  }
  return v * factor;
}

absl::StatusOr<double> ParseDouble(std::string_view key,
                                   std::string_view text) {
  std::string s(text);
  absl::StripAsciiWhitespace(&s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno != 0 ||
      !std::isfinite(v)) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(key), ": expected a number, got \"",
                     std::string(text), "\""));
  }
  return v;
}

absl::StatusOr<bool> ParseBool(std::string_view key, std::string_view text) {
  std::string t(text);
  absl::StripAsciiWhitespace(&t);
  absl::AsciiStrToLower(&t);
  if (t == "true" || t == "on" || t == "yes" || t == "1") return true;
  if (t == "false" || t == "off" || t == "no" || t == "0") return false;
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(key), ": expected true or false, got \"",
                   std::string(text), "\""));
}

const Setting* Find(std::string_view key) {
  for (const Setting& s : kSettings) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

// Flattens a TOML table into (dotted key, text value).
absl::Status Flatten(const toml::table& table, const std::string& prefix,
                     std::map<std::string, std::string>& out) {
  for (const auto& [k, node] : table) {
    std::string key = prefix.empty()
                          ? std::string(k.str())
                          : absl::StrCat(prefix, ".", std::string(k.str()));
    if (const toml::table* sub = node.as_table()) {
      if (absl::Status s = Flatten(*sub, key, out); !s.ok()) return s;
    } else if (auto v = node.value<bool>(); node.is_boolean() && v) {
      out[key] = *v ? "true" : "false";
    } else if (node.is_integer()) {
      out[key] = std::to_string(*node.value<int64_t>());
    } else if (node.is_floating_point()) {
      std::ostringstream os;
      os.precision(17);
      os << *node.value<double>();
      out[key] = os.str();
    } else if (node.is_string()) {
      out[key] = *node.value<std::string>();
    } else if (const toml::array* list = node.as_array()) {
      // A list of strings (public keys) as the one comma-separated text
      // the flag takes.
      std::string joined;
      for (const toml::node& item : *list) {
        std::optional<std::string> text = item.value<std::string>();
        if (!item.is_string() || !text.has_value() ||
            text->find(',') != std::string::npos) {
          return absl::InvalidArgumentError(
              absl::StrCat(key, ": expected a list of strings"));
        }
        absl::StrAppend(&joined, joined.empty() ? "" : ",", *text);
      }
      out[key] = joined;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          key, ": expected a string, number, boolean or list of strings"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::span<const Setting> Settings() { return kSettings; }

absl::Status ApplySetting(NodeConfig& config, std::string_view key,
                          std::string_view value) {
  const Setting* s = Find(key);
  if (s == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown setting \"", std::string(key), "\""));
  }
  return std::visit(
      [&](auto field) -> absl::Status {
        using T = std::remove_reference_t<decltype(config.*field)>;
        if constexpr (std::is_same_v<T, bool>) {
          absl::StatusOr<bool> v = ParseBool(key, value);
          if (!v.ok()) return v.status();
          config.*field = *v;
        } else if constexpr (std::is_same_v<T, int64_t>) {
          absl::StatusOr<int64_t> v = ParseInt(key, value);
          if (!v.ok()) return v.status();
          config.*field = *v;
        } else if constexpr (std::is_same_v<T, double>) {
          absl::StatusOr<double> v = ParseDouble(key, value);
          if (!v.ok()) return v.status();
          config.*field = *v;
        } else {
          config.*field = std::string(value);
        }
        return absl::OkStatus();
      },
      s->field);
}

absl::Status ApplyToml(NodeConfig& config, std::string_view toml_text,
                       std::string_view source) {
  const std::string src(source);
  toml::table parsed;
  try {
    parsed = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        src, ":", e.source().begin.line, ":", e.source().begin.column, ": ",
        std::string(e.description())));
  }
  std::map<std::string, std::string> values;
  if (absl::Status s = Flatten(parsed, "", values); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(src, ": ", s.message()));
  }
  NodeConfig next = config;
  for (const auto& [key, value] : values) {
    if (absl::Status s = ApplySetting(next, key, value); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(src, ": ", s.message()));
    }
  }
  config = std::move(next);
  return absl::OkStatus();
}

namespace {

// The limits a block's contents are held to: each within what a node can
// parse or decode, and a block with room for four deploys of the largest
// term.
absl::Status ValidateBlockLimits(const NodeConfig& c) {
  if (c.max_deploy_term_bytes >
      static_cast<int64_t>(limits::kMaxDeployTermBytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("casper.max-deploy-term-bytes: at most ",
                     limits::kMaxDeployTermBytes, " (the parser's limit)"));
  }
  if (c.max_block_bytes > static_cast<int64_t>(limits::kMaxBlockBytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("casper.max-block-bytes: at most ", limits::kMaxBlockBytes,
                     " (what a node decodes)"));
  }
  if (c.max_block_bytes < 4 * (c.max_deploy_term_bytes + 4096)) {
    return absl::InvalidArgumentError(
        absl::StrCat("casper.max-block-bytes: ", c.max_block_bytes,
                     " is below four deploys of the largest term (4 x (",
                     c.max_deploy_term_bytes,
                     " + 4096)); raise it or lower "
                     "casper.max-deploy-term-bytes"));
  }
  if (c.max_number_of_parents >
      static_cast<int64_t>(limits::kMaxBlockParents)) {
    return absl::InvalidArgumentError(
        absl::StrCat("casper.max-number-of-parents: at most ",
                     limits::kMaxBlockParents, " (what a block may carry)"));
  }
  return absl::OkStatus();
}

// The joining node's trie fetch, within what its peers answer; the
// retention, above what merges and joining peers read.
absl::Status ValidateRetentionAndSync(const NodeConfig& c) {
  if (c.retain_blocks != 0 && c.retain_blocks < 1024) {
    return absl::InvalidArgumentError(
        "storage.retain-blocks: 0 (keep every state) or at least 1024 (twice "
        "the merge depth)");
  }
  // A peer punishes a request for more trie nodes than this
  // (node::kMaxTrieNodesPerRequest).
  if (c.state_sync_hashes_per_request > 1024) {
    return absl::InvalidArgumentError(
        "sync.state-hashes-per-request: at most 1024");
  }
  if (c.state_sync_requests > 256) {
    return absl::InvalidArgumentError("sync.state-requests: at most 256");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Validate(const NodeConfig& c) {
  std::set<int64_t> ports;
  for (const auto& [name, port] :
       {std::pair{"api-server.port-grpc-external", c.port_grpc_external},
        std::pair{"api-server.port-grpc-internal", c.port_grpc_internal},
        std::pair{"api-server.port-http", c.port_http},
        std::pair{"api-server.port-admin-http", c.port_admin_http},
        std::pair{"protocol-server.port", c.port_protocol},
        std::pair{"peers-discovery.port", c.port_discovery}}) {
    if (port < 1 || port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": ", port, " is not a port (1..65535)"));
    }
    if (!ports.insert(port).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": port ", port, " is used twice"));
    }
  }
  if (!c.allow_public_admin && !IsLoopbackHost(c.api_admin_host)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "api-server.admin-host: '", c.api_admin_host,
        "' is not a loopback address, so the admin APIs (propose, fault "
        "injection) would face the network; set "
        "api-server.allow-public-admin = true if that is meant"));
  }
  if (!(c.fault_tolerance_threshold >= 0 && c.fault_tolerance_threshold < 1)) {
    return absl::InvalidArgumentError(
        "casper.fault-tolerance-threshold: must be in [0, 1)");
  }
  RETURN_IF_ERROR(ValidateRetentionAndSync(c));
  for (const auto& [name, v, min] :
       {std::tuple{"threads", c.threads, int64_t{0}},
        std::tuple{"storage.block-cache-size", c.block_cache_bytes,
                   int64_t{1} << 20},
        std::tuple{"storage.min-free-bytes", c.min_free_bytes, int64_t{0}},
        std::tuple{"sync.state-min-finalized", c.state_sync_min_finalized,
                   int64_t{-1}},
        std::tuple{"sync.state-requests", c.state_sync_requests, int64_t{1}},
        std::tuple{"sync.rejoin-after-seconds", c.rejoin_after_seconds,
                   int64_t{-1}},
        std::tuple{"sync.state-hashes-per-request",
                   c.state_sync_hashes_per_request, int64_t{1}},
        std::tuple{"casper.genesis-block-data.pos-multi-sig-quorum",
                   c.pos_multi_sig_quorum, int64_t{0}},
        std::tuple{"casper.genesis-block-data.native-token-decimals",
                   c.native_token_decimals, int64_t{0}},
        std::tuple{"api-server.grpc-max-recv-message-size",
                   c.grpc_max_recv_message_bytes, int64_t{1024}},
        std::tuple{"api-server.http-max-body-bytes", c.http_max_body_bytes,
                   int64_t{1024}},
        std::tuple{"api-server.max-in-flight", c.api_max_in_flight, int64_t{1}},
        std::tuple{"api-server.max-blocks-bytes", c.max_blocks_bytes,
                   int64_t{1} << 20},
        std::tuple{"api-server.max-blocks-limit", c.max_blocks_limit,
                   int64_t{1}},
        std::tuple{"api-server.exploratory-deploy-phlo-limit",
                   c.exploratory_deploy_phlo_limit, int64_t{1}},
        std::tuple{"casper.max-number-of-parents", c.max_number_of_parents,
                   int64_t{1}},
        std::tuple{"casper.max-user-deploys-per-block",
                   c.max_user_deploys_per_block, int64_t{1}},
        std::tuple{"casper.min-phlo-price", c.min_phlo_price, int64_t{0}},
        std::tuple{"casper.max-phlo-limit", c.max_phlo_limit, int64_t{1}},
        std::tuple{"casper.max-deploy-term-bytes", c.max_deploy_term_bytes,
                   int64_t{1}},
        std::tuple{"casper.max-block-bytes", c.max_block_bytes,
                   int64_t{1} << 20},
        std::tuple{"casper.propose-batch-window", c.propose_batch_window_ms,
                   int64_t{0}},
        std::tuple{"casper.min-block-interval", c.min_block_interval_ms,
                   int64_t{0}},
        std::tuple{"casper.deploy-pool-max-deploys", c.deploy_pool_max_deploys,
                   int64_t{1}},
        std::tuple{"protocol-client.network-timeout", c.network_timeout_ms,
                   int64_t{100}},
        std::tuple{"protocol-server.max-connections", c.max_peers, int64_t{1}},
        std::tuple{"peers-discovery.lookup-interval", c.lookup_interval_ms,
                   int64_t{100}},
        std::tuple{"casper.heartbeat.check-interval",
                   c.heartbeat_check_interval_ms, int64_t{100}},
        std::tuple{"casper.deploy-gossip-takeover", c.deploy_gossip_takeover_ms,
                   int64_t{0}},
        std::tuple{"casper.genesis-block-data.bond-minimum", c.bond_minimum,
                   int64_t{1}},
        std::tuple{"casper.genesis-block-data.epoch-length", c.epoch_length,
                   int64_t{1}},
        std::tuple{"casper.genesis-block-data.quarantine-length",
                   c.quarantine_length, int64_t{0}},
        std::tuple{"casper.genesis-block-data.number-of-active-validators",
                   c.number_of_active_validators, int64_t{1}},
        std::tuple{"casper.genesis-block-data.deploy-timestamp",
                   c.deploy_timestamp, int64_t{0}}}) {
    if (v < min) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": ", v, " is below the least allowed, ", min));
    }
  }
  if (c.threads > 1024) {
    return absl::InvalidArgumentError("threads: at most 1024");
  }
  if (!(c.synchrony_constraint_threshold >= 0 &&
        c.synchrony_constraint_threshold <= 1)) {
    return absl::InvalidArgumentError(
        "casper.synchrony-constraint-threshold: must be in [0, 1]");
  }
  if (c.max_peers > 1024) {
    return absl::InvalidArgumentError(
        "protocol-server.max-connections: at most 1024");
  }
  RETURN_IF_ERROR(ValidateBlockLimits(c));
  if (c.bond_maximum < c.bond_minimum) {
    return absl::InvalidArgumentError(
        "casper.genesis-block-data.bond-maximum: below bond-minimum");
  }
  if (c.shard_name.empty() || c.shard_name.size() > 256) {
    return absl::InvalidArgumentError(
        "casper.shard-name: must be 1 to 256 characters");
  }
  return absl::OkStatus();
}

std::string DataDir(const NodeConfig& config) {
  if (!config.data_dir.empty()) return config.data_dir;
  const char* home = std::getenv("HOME");
  return absl::StrCat(home != nullptr && *home != '\0' ? home : ".", "/.rnode");
}

std::string TlsKeyPath(const NodeConfig& config) {
  if (!config.tls_key_path.empty()) return config.tls_key_path;
  return DataDir(config) + "/node.key.pem";
}

std::string TlsCertificatePath(const NodeConfig& config) {
  if (!config.tls_certificate_path.empty()) return config.tls_certificate_path;
  return DataDir(config) + "/node.certificate.pem";
}

}  // namespace rnode::node

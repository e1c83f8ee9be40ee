// The node's configuration (docs/node.md "Configuration"): one typed
// struct, filled from embedded defaults, then a TOML file, then
// command-line flags, each later source overriding the earlier. Keys and
// flags carry the public node's names where it has them (`casper.shard-name`
// / `--shard-name`); the table of settings is the single place that says
// which key, which flag and what it means.
#ifndef RNODE_NODE_CONFIG_CONFIG_H_
#define RNODE_NODE_CONFIG_CONFIG_H_

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rnode::node {

// Every setting of `rnode run`. Defaults are the embedded defaults.
struct NodeConfig {
  // General.
  bool standalone = false;
  // Allows exploratory deploys on a validator (the public node allows them
  // only on read-only nodes or in dev mode). --standalone turns it on.
  bool dev_mode = false;
  // Propose whenever deploys wait (after the batching window). Off: only
  // the propose API makes blocks.
  bool autopropose = true;
  // Serves the fault-injection routes on the admin API (POST
  // /api/fault/isolate, /api/fault/heal): for the fault campaign only.
  bool fault_injection = false;
  std::string data_dir;  // "" = $HOME/.rnode
  // Bound of the store's RocksDB block cache (hot blocks of its tables).
  int64_t block_cache_bytes = 64 << 20;
  // Free-space floor of the data dir's file system: below it deploys are
  // refused as disk_full before any write fails (node/core/disk_guard.h).
  // 0: no floor.
  int64_t min_free_bytes = int64_t{1} << 30;
  // History retention (node/core/retention.h, docs/node.md "Retention"):
  // the states of the last this many finalized block numbers are kept and
  // older ones deleted in the background; 0 keeps every state (an archive
  // node). At least 1024 otherwise.
  int64_t retain_blocks = 16384;
  // A new node (its DAG holds the genesis alone) with a bootstrap joins
  // from its bonded peers' last finalized state when that block is
  // numbered at least this (docs/p2p.md "Joining"); below it, or at -1,
  // it replays the blocks from the genesis.
  int64_t state_sync_min_finalized = 1024;
  // The join's trie fetch: requests in flight to its peers (in all; two
  // at most to one peer) and trie nodes asked per request (at most 1024,
  // node::kMaxTrieNodesPerRequest: a server punishes more).
  int64_t state_sync_requests = 8;
  int64_t state_sync_hashes_per_request = 256;
  // A node with retention on (retain_blocks > 0) that has been further
  // behind than its peers keep blocks (beyond_history) for this many
  // seconds joins the shard again from its last finalized state: it
  // forgets its chain (node/core/rejoin.h) and starts over as a new node.
  // -1: never (the operator does it). An archive node (retain_blocks 0)
  // never forgets its chain by itself.
  int64_t rejoin_after_seconds = 30;
  std::string config_file;
  std::string log_level = "info";
  // Worker threads of the node's one pool (interpreter rounds, signature
  // checks, parallel replay); 0 = the machine's hardware threads.
  int64_t threads = 0;

  // Peer-to-peer (docs/p2p.md; off in standalone mode).
  std::string network_id = "testnet";
  // The host peers reach this node at, and the address the protocol and
  // discovery servers bind.
  std::string host = "127.0.0.1";
  int64_t port_protocol = 40400;
  int64_t port_discovery = 40404;
  // "rnode://<id>@<host>?protocol=<port>&discovery=<port>"; "" for the
  // first node of a shard.
  std::string bootstrap;
  // Peers on loopback and private ranges are found by discovery.
  bool allow_private_addresses = true;
  int64_t network_timeout_ms = 5000;
  int64_t max_peers = 32;
  // How often a node asks its peers for the peers they know.
  int64_t lookup_interval_ms = 5000;
  // The node's TLS identity (docs/security.md): its P-256 key and
  // self-signed certificate, made on first start when absent. "" = in the
  // data dir (TlsKeyPath, TlsCertificatePath).
  std::string tls_key_path;
  std::string tls_certificate_path;

  // API servers.
  std::string api_host = "127.0.0.1";
  // The admin APIs (internal gRPC and admin HTTP: propose, fault
  // injection) listen here, loopback by default; an address others can
  // reach needs allow_public_admin as well (docs/security.md).
  std::string api_admin_host = "127.0.0.1";
  bool allow_public_admin = false;
  // The public HTTP API's browser origins (CORS) and Host names, each
  // comma-separated (http::HttpServerOptions). Origins "" (the default):
  // no page elsewhere may read its answers; "*": any. Hosts "": on a
  // loopback api_host, the loopback names only (localhost, 127.0.0.1,
  // [::1]: no DNS rebinding); elsewhere any; "*": any.
  std::string http_allowed_origins;
  std::string http_allowed_hosts;
  int64_t port_grpc_external = 40401;
  int64_t port_grpc_internal = 40402;
  int64_t port_http = 40403;
  int64_t port_admin_http = 40405;
  int64_t grpc_max_recv_message_bytes = 16 << 20;
  int64_t http_max_body_bytes = 16 << 20;
  // Requests handled at once by each server; more are answered "busy".
  int64_t api_max_in_flight = 64;
  // Most blocks one query returns (depths and height ranges are clamped).
  int64_t max_blocks_limit = 100;
  // Bytes of stored blocks one query may read (blocks are up to
  // casper.max-block-bytes each): a range holding more is refused.
  int64_t max_blocks_bytes = 64 << 20;
  int64_t exploratory_deploy_phlo_limit = 5'000'000;
  bool prometheus = true;

  // Casper.
  std::string shard_name = "root";
  double fault_tolerance_threshold = 0.1;
  // Hex; or from the file at validator_private_key_path, or from the
  // environment variable RNODE_VALIDATOR_PRIVATE_KEY. Never logged.
  std::string validator_private_key;
  std::string validator_private_key_path;
  int64_t max_number_of_parents = 16;
  int64_t max_user_deploys_per_block = 128;
  // The shard's deploy rules (casper/deploy_rules.h): fixed at genesis,
  // kept in the genesis parameters file, which wins over these on restart.
  int64_t min_phlo_price = 1;
  int64_t max_phlo_limit = 1'000'000'000;  // casper::kDefaultMaxPhloLimit
  int64_t max_deploy_term_bytes = (256 << 10) - 4096;
  // The largest block, encoded (a shard parameter, kept with the deploy
  // rules): the creator stops adding deploys below it, a block above it is
  // invalid, and the p2p stream budgets are derived from it.
  int64_t max_block_bytes = 32 << 20;
  // How long the proposer waits after the first pending deploy for more to
  // join the block.
  int64_t propose_batch_window_ms = 20;
  // The least time between two blocks of this validator, unless a full
  // block's worth of deploys waits (keeps the block height, which bounds a
  // deploy's life, from racing ahead of the clock in a busy shard).
  int64_t min_block_interval_ms = 250;
  int64_t deploy_pool_max_deploys = 20'000;
  // A validator that has blocks with deploys to finalize proposes an empty
  // block when it sees blocks it has not justified; the heartbeat also
  // does when the last finalized block has not moved for check-interval.
  bool heartbeat_enabled = true;
  int64_t heartbeat_check_interval_ms = 5000;
  // Share of the other validators' stake whose new blocks a validator must
  // have seen since its last block before it proposes again (0: off).
  double synchrony_constraint_threshold = 0;
  // A deploy gossiped by another validator is proposed here only if it is
  // in no block this long after it arrived (the receiving validator is
  // down or slow).
  int64_t deploy_gossip_takeover_ms = 5000;

  // Genesis (read only when the data dir holds no genesis yet).
  std::string bonds_file;
  std::string wallets_file;
  int64_t bond_minimum = 1;
  int64_t bond_maximum = INT64_MAX;
  int64_t epoch_length = 10'000;
  int64_t quarantine_length = 50'000;
  int64_t number_of_active_validators = 100;
  // Genesis block time in ms; 0 = the time of the first start.
  int64_t deploy_timestamp = 0;
  // The coop vault slashed stakes go to: its signers as comma-separated
  // hex public keys (a TOML array of strings also; "" = the genesis
  // validators' keys) and how many must sign (0 = a majority of them).
  std::string pos_multi_sig_public_keys;
  int64_t pos_multi_sig_quorum = 0;
  // Hex public key whose deployer may spend the PoS vault with PoS
  // posVaultTransfer; "" = no one.
  std::string pos_vault_transfer_public_key;
  // The native token as rho:system:tokenMetadata describes it.
  std::string native_token_name = "F1R3CAP";
  std::string native_token_symbol = "F1R3";
  int64_t native_token_decimals = 8;
};

// One setting: its file key, its flag (without "--"; "" for file only) and
// where it lives in NodeConfig.
struct Setting {
  using Field = std::variant<bool NodeConfig::*, int64_t NodeConfig::*,
                             double NodeConfig::*, std::string NodeConfig::*>;
  std::string_view key;
  std::string_view flag;
  std::string_view help;
  Field field;
};

// Every setting, in documentation order.
std::span<const Setting> Settings();

// Sets the setting named `key` (a file key) from its text form: "true" /
// "false" for switches, decimal integers (with an optional unit for
// durations and sizes: "20ms", "5s", "1min"; "16M", "256K"), decimal
// fractions, or any string. InvalidArgument naming the key and the
// expected form; nothing changes on error.
absl::Status ApplySetting(NodeConfig& config, std::string_view key,
                          std::string_view value);

// Applies every key of a TOML document (tables give the dotted prefix:
// `[casper] shard-name = "root"` is `casper.shard-name`). `source` names the
// file in errors. InvalidArgument "<source>: <reason>" for a syntax error
// (with line and column), an unknown key, or a value of the wrong type;
// nothing changes on error.
absl::Status ApplyToml(NodeConfig& config, std::string_view toml,
                       std::string_view source);

// Checks the settings together: ports in 1..65535 and distinct, a
// threshold in [0, 1), positive limits, a shard name the deploys can carry.
// InvalidArgument naming the first bad setting.
absl::Status Validate(const NodeConfig& config);

// The data directory with "" resolved to $HOME/.rnode.
std::string DataDir(const NodeConfig& config);
// The TLS key and certificate paths with "" resolved into the data dir.
std::string TlsKeyPath(const NodeConfig& config);
std::string TlsCertificatePath(const NodeConfig& config);

}  // namespace rnode::node

#endif  // RNODE_NODE_CONFIG_CONFIG_H_

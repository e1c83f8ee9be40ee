#include "node/core/assembly.h"

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "casper/genesis/genesis.h"
#include "node/core/clock.h"
#include "node/core/genesis_setup.h"
#include "node/core/gossip_backup.h"
#include "node/core/rejoin.h"
#include "node/p2p/identity/validator_statement.h"
#include "rholang/interpreter/term_codec.h"
#include "util/file_io.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace rnode::node {
namespace {

namespace interp = rholang::interp;
using casper::block::Block;

// Merge indexes kept (casper::prestate::PreStateBuilder). A shard makes
// tens of blocks a second, and one index holds a block's event logs, so
// the bound is what keeps the node's memory flat (a miss is rebuilt by
// replaying the block).
constexpr size_t kMergeIndexesKept = 1024;
// The bytes of a stream carrying a block of `block_bytes`: the packet's
// type and framing (a few hundred bytes) and LZ4's growth of content that
// does not compress (under 1/255), with room to spare.
size_t BlockStreamBytes(size_t block_bytes) {
  return block_bytes + block_bytes / 128 + (64 << 10);
}

absl::Status OpenStore(const NodeConfig& c, const std::string& data_dir,
                       NodeParts& m) {
  std::vector<std::string> columns = rspace::DefaultHistoryColumnNames();
  for (const std::string& name : casper::dag::DagColumnNames()) {
    columns.push_back(name);
  }
  columns.push_back("deploy-pool");
  columns.push_back("left-deploys");
  rspace::RocksDbOptions store_options;
  store_options.injectable_faults = c.fault_injection;
  store_options.block_cache_bytes = static_cast<size_t>(c.block_cache_bytes);
  ASSIGN_OR_RETURN(m.store, rspace::RocksDbStore::Open(data_dir + "/db",
                                                       columns, store_options));
  // A node that must join the shard again forgets its chain first
  // (node/core/rejoin.h): it opens as a new node.
  RETURN_IF_ERROR(
      ForgetChainIfMarked(
          m.store.get(), casper::dag::DagColumnsFrom(kHistoryColumns), data_dir)
          .status());
  m.pipelined = std::make_unique<rspace::PipelinedStore>(m.store.get());
  return absl::OkStatus();
}

absl::Status OpenExecution(const NodeConfig& c, NodeParts& m) {
  rspace::SpaceOptions so;
  so.term_factory = interp::StoredTermFactory();
  m.trie_guard = std::make_unique<rspace::TrieWriteGuard>(so.history.columns);
  so.history.write_guard = m.trie_guard.get();
  ASSIGN_OR_RETURN(m.space, rspace::Space::Open(m.pipelined.get(), so));
  ASSIGN_OR_RETURN(casper::contracts::PosParams pos_params, PosParamsOf(c));
  casper::contracts::ContractsOptions contract_options{.pos = pos_params};
  m.contracts =
      std::make_unique<casper::contracts::SystemContracts>(contract_options);
  interp::RuntimeOptions ro =
      m.contracts->RuntimeOptionsFor(m.threads, &m.output);
  ro.pool = &m.pool_threads;
  ASSIGN_OR_RETURN(m.runtime, interp::Runtime::Create(m.space.get(), ro));
  m.executor = std::make_unique<casper::DeployExecutor>(
      m.space.get(), m.contracts.get(), m.runtime.get());
  if (m.threads > 1) {
    ASSIGN_OR_RETURN(
        m.lanes, casper::ExecutorLanes::Create(m.space.get(), contract_options,
                                               static_cast<size_t>(m.threads),
                                               &m.pool_threads));
  }
  m.blocks = std::make_unique<casper::BlockExecutor>(
      m.space.get(), m.executor.get(), m.lanes.get());
  m.validators =
      std::make_unique<casper::contracts::ValidatorsCache>(&m.space->history());
  return absl::OkStatus();
}

absl::Status OpenChain(const NodeConfig& c, NodeParts& m) {
  ASSIGN_OR_RETURN(m.dag, casper::dag::DagStore::Open(
                              m.pipelined.get(),
                              casper::dag::DagColumnsFrom(kHistoryColumns)));
  casper::pool::DeployPoolOptions pool_options;
  pool_options.max_deploys = static_cast<size_t>(c.deploy_pool_max_deploys);
  // Each key's share, as in the gossip backup.
  pool_options.max_deploys_per_deployer = std::max<size_t>(
      1, pool_options.max_deploys / GossipBackup::kDeployerShare);
  pool_options.max_term_bytes_per_deployer =
      pool_options.max_term_bytes / GossipBackup::kDeployerShare;
  pool_options.rules = DeployRulesOf(c);
  ASSIGN_OR_RETURN(m.pool, casper::pool::DeployPool::Open(
                               m.pipelined.get(), kPoolColumn, pool_options));
  ASSIGN_OR_RETURN(m.left, casper::pool::LeftDeploys::Open(m.pipelined.get(),
                                                           kLeftDeploysColumn));
  return absl::OkStatus();
}

absl::StatusOr<Block> MakeGenesis(const NodeConfig& c,
                                  const std::string& data_dir,
                                  const NodeIdentity& id, NodeParts& m,
                                  std::ostream& out) {
  ASSIGN_OR_RETURN(casper::genesis::GenesisParams params,
                   GenesisInputs(c, data_dir, id.key, out));
  // The parameters first: a crash before the genesis is stored leaves
  // them for the next start, which makes the same genesis state. With the
  // block time chosen here (now, when none was given), so that a genesis
  // made again (a node that forgot its chain: rejoin.h) is the same block.
  NodeConfig stored = c;
  stored.deploy_timestamp = params.timestamp;
  RETURN_IF_ERROR(WriteFileAtomically(data_dir + kGenesisParamsFile,
                                      GenesisParamsToml(stored), 0644));
  ASSIGN_OR_RETURN(
      casper::genesis::GenesisBlock g,
      casper::genesis::CreateGenesis(params, m.space.get(), m.contracts.get(),
                                     m.runtime.get()));
  ASSIGN_OR_RETURN(bool inserted, m.dag->Insert(g.block));
  (void)inserted;
  RETURN_IF_ERROR(m.dag->SetLastFinalized(g.block.hash));
  Log("node")->info("genesis block {} made (shard {}, {} validators)",
                    HexEncode(g.block.hash), c.shard_name, g.bonds.size());
  return g.block;
}

absl::StatusOr<Block> StoredGenesis(const NodeConfig& c, NodeParts& m) {
  std::vector<Hash32> roots = m.dag->AtHeight(0);
  if (roots.size() != 1) {
    return absl::DataLossError("the DAG has no single genesis block");
  }
  ASSIGN_OR_RETURN(std::optional<Block> stored, m.dag->GetBlock(roots[0]));
  if (!stored.has_value()) return absl::DataLossError("genesis not stored");
  if (stored->shard_id != c.shard_name) {
    return absl::FailedPreconditionError(
        absl::StrCat("the data dir holds shard '", stored->shard_id, "', not '",
                     c.shard_name, "'"));
  }
  // A crash between storing the genesis and finalizing it.
  std::optional<Hash32> lfb = m.dag->LastFinalized();
  if (!lfb.has_value()) {
    RETURN_IF_ERROR(m.dag->SetLastFinalized(stored->hash));
    lfb = stored->hash;
  }
  ASSIGN_OR_RETURN(const auto lfb_meta, m.dag->Meta(*lfb));
  Log("node")->info("continuing from {} blocks (last finalized #{})",
                    m.dag->size(), lfb_meta->block_number);
  return *std::move(stored);
}

// A callback counter for one field of a counters struct.
template <typename Counters>
struct CounterField {
  const char* name;
  const char* help;
  uint64_t Counters::*field;
};

// One callback counter per entry of `fields`, each reading its field of
// what `read` returns (a snapshot of the counters, taken per scrape).
template <typename Counters, typename Read>
absl::Status AddCounterFields(
    metrics::Registry* registry,
    std::initializer_list<CounterField<Counters>> fields, Read read) {
  for (const CounterField<Counters>& f : fields) {
    RETURN_IF_ERROR(
        registry->AddCallbackCounter(f.name, f.help, [read, field = f.field] {
          return static_cast<double>(read().*field);
        }));
  }
  return absl::OkStatus();
}

// Catching up by height (docs/metrics.md "Catching up").
absl::Status RegisterSyncMetrics(metrics::Registry* registry,
                                 const ChainSync* sync) {
  using F = CounterField<SyncCounters>;
  RETURN_IF_ERROR(AddCounterFields<SyncCounters>(
      registry,
      {
          F{"rnode_sync_ranges_asked_total",
            "block range requests sent while behind",
            &SyncCounters::ranges_asked},
          F{"rnode_sync_range_timeouts_total",
            "block range requests whose answer did not end in "
            "time (asked of another peer)",
            &SyncCounters::range_timeouts},
          F{"rnode_sync_ranges_served_total", "block range requests answered",
            &SyncCounters::ranges_served},
          F{"rnode_sync_range_blocks_served_total",
            "blocks streamed in answer to range requests",
            &SyncCounters::range_blocks_served},
          F{"rnode_sync_heights_ignored_total",
            "peers' heights not counted: the peer is not proven "
            "to run a bonded validator",
            &SyncCounters::heights_ignored},
          F{"rnode_sync_catch_ups_total",
            "times this node was far behind its peers and "
            "caught up",
            &SyncCounters::catch_ups},
          F{"rnode_sync_caught_up_heights_total",
            "block numbers closed by catching up (its rate is "
            "the catch-up rate)",
            &SyncCounters::caught_up_numbers},
          F{"rnode_sync_range_serve_busy_total",
            "range answers cut short: the stream budget for "
            "that peer was spent (it asks again from there)",
            &SyncCounters::serve_busy},
      },
      [sync] { return sync->counters(); }));
  RETURN_IF_ERROR(registry->AddCallbackGauge(
      "rnode_sync_blocks_behind",
      "block numbers this node's highest block is below its peers' height",
      [sync] { return static_cast<double>(sync->Progress().behind()); }));
  RETURN_IF_ERROR(registry->AddCallbackGauge(
      "rnode_sync_peers_height",
      "the peers' height (the second highest a peer told; -1 for none)",
      [sync] { return static_cast<double>(sync->Progress().target); }));
  return registry->AddCallbackGauge(
      "rnode_sync_last_catch_up_seconds",
      "how long the last catch-up took, from far behind to caught up",
      [sync] { return sync->counters().last_catch_up_seconds; });
}

// The transport's counters and the network's gauges.
absl::StatusOr<metrics::Family<metrics::Counter>*> RegisterNetworkMetrics(
    metrics::Registry* registry, CasperNetwork* net,
    const NetworkGauges& gauges) {
  using F = CounterField<NetworkCounters>;
  RETURN_IF_ERROR(AddCounterFields<NetworkCounters>(
      registry,
      {
          F{"casper_peer_blocks_received_total",
            "blocks received from peers (decoded)",
            &NetworkCounters::blocks_received},
          F{"casper_peer_blocks_served_total",
            "blocks streamed to peers that asked",
            &NetworkCounters::blocks_served},
          F{"casper_block_requests_total", "block requests sent to peers",
            &NetworkCounters::requests_sent},
          F{"casper_block_request_retries_total",
            "block requests repeated after a timeout",
            &NetworkCounters::retries},
          F{"casper_peer_blocks_duplicate_total",
            "copies of a block already received and not yet "
            "handed on, dropped on arrival",
            &NetworkCounters::duplicates_dropped},
          F{"casper_block_requests_given_up_total",
            "blocks no longer asked for (too many wanted)",
            &NetworkCounters::wanted_given_up},
          F{"casper_block_requests_expired_total",
            "announced blocks given up after 8 asks no peer served",
            &NetworkCounters::wanted_expired},
          F{"casper_block_requests_stale_total",
            "blocks the node needs that 8 asks did not bring: "
            "still asked for, no longer counted as behind",
            &NetworkCounters::wanted_stale},
          F{"casper_gossip_deploys_from_unbonded_total",
            "deploys offered by peers not proven to run a bonded "
            "validator, declined",
            &NetworkCounters::deploys_from_unbonded},
          F{"casper_block_serve_busy_total",
            "block requests not served: the stream budget was "
            "spent (the requester asks again)",
            &NetworkCounters::serve_busy},
          F{"casper_peer_packets_malformed_total",
            "Casper packets from peers that did not decode",
            &NetworkCounters::malformed},
          F{"casper_peer_genesis_mismatch_total",
            "peers refused for another genesis",
            &NetworkCounters::genesis_mismatch},
      },
      [net] { return net->counters(); }));
  ASSIGN_OR_RETURN(
      metrics::Family<metrics::Counter> * behind_seconds,
      registry->AddCounterFamily(
          "rnode_behind_seconds_total",
          "time this validator was behind its peers and refused deploys "
          "as catching up, by reason: paused (the process was stopped), "
          "resuming (just after), starting (no peer has told its height "
          "yet), far_behind (far below the peers' height: fetching by "
          "height), parents (blocks wait for their "
          "parents), missing (a block asked for is long missing), queue "
          "(blocks wait for the consensus thread), syncing (joining from "
          "the shard's last finalized state)",
          {"reason"}));
  RETURN_IF_ERROR(registry->AddCallbackGauge(
      "casper_blocks_wanted", "blocks asked from peers and not received",
      [net] { return static_cast<double>(net->wanted()); }));
  RETURN_IF_ERROR(registry->AddCallbackGauge(
      "casper_peer_blocks_waiting",
      "blocks from peers waiting for the consensus thread",
      [f = gauges.blocks_waiting] { return static_cast<double>(f()); }));
  RETURN_IF_ERROR(registry->AddCallbackGauge(
      "casper_gossiped_deploys_held",
      "deploys gossiped by peers held as backup",
      [f = gauges.deploys_held] { return static_cast<double>(f()); }));
  return behind_seconds;
}

}  // namespace

NodeParts::NodeParts(const NodeConfig& c)
    : threads(c.threads > 0
                  ? static_cast<int>(c.threads)
                  : std::max(1, static_cast<int>(
                                    std::thread::hardware_concurrency()))),
      pool_threads(threads) {}

absl::Status OpenStorage(const NodeConfig& c, const std::string& data_dir,
                         NodeParts& parts) {
  RETURN_IF_ERROR(OpenStore(c, data_dir, parts));
  RETURN_IF_ERROR(OpenExecution(c, parts));
  return OpenChain(c, parts);
}

absl::StatusOr<Block> OpenGenesis(const NodeConfig& c,
                                  const std::string& data_dir,
                                  const NodeIdentity& id, NodeParts& parts,
                                  std::ostream& out) {
  if (parts.dag->size() == 0) return MakeGenesis(c, data_dir, id, parts, out);
  return StoredGenesis(c, parts);
}

absl::Status AssembleCasper(
    const NodeConfig& c, const NodeIdentity& id, const Block& genesis,
    NetworkCallbacks callbacks,
    std::unique_ptr<casper::engine::EngineListener> listener, NodeParts& m) {
  ASSIGN_OR_RETURN(casper::contracts::PosParams pos_params, PosParamsOf(c));
  m.merge_context = std::make_unique<casper::merge::MergeContext>(
      casper::merge::MergeContextOptions{.pool = &m.pool_threads});
  m.pre_states = std::make_unique<casper::prestate::PreStateBuilder>(
      m.dag.get(), &m.space->history(), &m.codec, interp::StoredTermFactory(),
      m.merge_context.get(), kMergeIndexesKept);
  RETURN_IF_ERROR(m.pre_states->Remember(genesis, {}));
  m.pre_states->set_replayer(m.blocks.get());
  m.pre_states->set_merge_observer(
      [metrics = m.metrics.get()](const casper::merge::MergeMetrics& merge) {
        metrics->Merged(merge);
      });
  casper::proposer::CreatorOptions creator_options;
  creator_options.shard_id = c.shard_name;
  creator_options.max_deploys =
      static_cast<size_t>(c.max_user_deploys_per_block);
  creator_options.max_parents = static_cast<size_t>(c.max_number_of_parents);
  creator_options.deploy_rules = DeployRulesOf(c);
  creator_options.max_block_bytes = static_cast<size_t>(c.max_block_bytes);
  m.creator = std::make_unique<casper::proposer::BlockCreator>(
      m.dag.get(), m.pool.get(), m.blocks.get(), m.validators.get(),
      creator_options, m.pre_states.get());
  casper::validation::ValidatorOptions validator_options;
  validator_options.shard_id = c.shard_name;
  validator_options.deploy_rules = DeployRulesOf(c);
  validator_options.max_block_bytes = static_cast<size_t>(c.max_block_bytes);
  m.validator = std::make_unique<casper::validation::BlockValidator>(
      m.dag.get(), m.blocks.get(), m.validators.get(), &m.pool_threads,
      validator_options, m.pre_states.get());
  if (!c.standalone) {
    NetworkOptions network_options;
    network_options.only_bonded_holders = true;
    network_options.max_block_bytes = static_cast<size_t>(c.max_block_bytes);
    network_options.behind_from_bonded_only = true;
    m.network = std::make_unique<CasperNetwork>(
        m.dag.get(), genesis, std::move(callbacks), network_options);
    ChainSyncOptions sync_options;
    sync_options.has_bootstrap = !c.bootstrap.empty();
    sync_options.bonded_only = true;
    m.sync = std::make_unique<ChainSync>(m.dag.get(), sync_options);
    m.network->SetSync(m.sync.get());
  }
  m.listener = std::move(listener);
  casper::engine::EngineOptions engine_options;
  engine_options.finalizer.threshold_ppm =
      pos_params.fault_tolerance_threshold_ppm;
  engine_options.listener = m.listener.get();
  m.engine = std::make_unique<casper::engine::Engine>(
      m.dag.get(), m.pool.get(), m.validator.get(), m.creator.get(),
      m.network != nullptr
          ? static_cast<casper::engine::Transport*>(m.network.get())
          : &m.peers,
      id.key.value_or(crypto::Secp256k1PrivateKey{}), engine_options,
      m.pre_states.get());
  return absl::OkStatus();
}

absl::StatusOr<metrics::Family<metrics::Counter>*> StartNetwork(
    const NodeConfig& c, const NodeIdentity& node, NodeParts& m,
    metrics::Registry* registry, const NetworkGauges& gauges,
    std::ostream& out) {
  std::string created;
  absl::StatusOr<p2p::TlsIdentity> identity = p2p::LoadOrCreateTlsIdentity(
      TlsKeyPath(c), TlsCertificatePath(c), &created);
  if (!identity.ok()) {
    return absl::Status(identity.status().code(),
                        absl::StrCat("tls: ", identity.status().message()));
  }
  if (!created.empty()) {
    Log("p2p")->info("made the node's TLS identity: {}", created);
  }
  m.tls = std::make_shared<const p2p::TlsIdentity>(*std::move(identity));
  const Bytes id = m.tls->node_id;
  p2p::TransportOptions to;
  to.self.id = id;
  to.tls = m.tls;
  to.shard_id = c.shard_name;
  // Every deploy the shard's rules admit fits one packet (deploy gossip).
  to.max_unary_bytes = std::max(to.max_unary_bytes,
                                static_cast<size_t>(c.max_deploy_term_bytes) +
                                    casper::kDeployFieldsBytes);
  // Every block the shard's limit allows travels: a stream holds one block
  // (and its packet's few fields), and each budget has room for it.
  const size_t block_stream =
      BlockStreamBytes(static_cast<size_t>(c.max_block_bytes));
  to.max_stream_bytes = block_stream;
  to.inbound_stream_bytes_per_peer =
      std::max(to.inbound_stream_bytes_per_peer, block_stream);
  to.inbound_stream_bytes = std::max(to.inbound_stream_bytes, 4 * block_stream);
  to.outbound_stream_bytes_per_peer =
      std::max(to.outbound_stream_bytes_per_peer, block_stream);
  to.outbound_stream_bytes =
      std::max(to.outbound_stream_bytes, 4 * block_stream);
  if (node.key.has_value()) {
    to.validator_statement = [key = *node.key, id, network = c.network_id,
                              shard = c.shard_name]() -> Bytes {
      absl::StatusOr<p2p::ValidatorStatement> s =
          p2p::SignValidatorStatement(key, id, network, shard, UnixMs());
      return s.ok() ? p2p::EncodeValidatorStatement(*s) : Bytes{};
    };
  }
  to.self.host = c.host;
  to.self.tcp_port = static_cast<uint32_t>(c.port_protocol);
  to.self.udp_port = static_cast<uint32_t>(c.port_discovery);
  to.network_id = c.network_id;
  to.listen_host = c.host;
  to.network_timeout = std::chrono::milliseconds(c.network_timeout_ms);
  to.max_peers = static_cast<size_t>(c.max_peers);
  // Half the slots wait for bonded validators (docs/security.md).
  to.reserved_validator_slots = to.max_peers / 2;
  to.is_bonded_validator =
      [dag = m.dag.get()](const crypto::Secp256k1PublicKey& key) {
        return BondedAtLastFinalized(*dag, key).value_or(false);
      };
  if (!c.bootstrap.empty()) {
    absl::StatusOr<p2p::PeerNode> boot = p2p::ParsePeerAddress(c.bootstrap);
    if (!boot.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "protocol-client.bootstrap: ", std::string(boot.status().message())));
    }
    m.bootstrap = *boot;
  }
  ASSIGN_OR_RETURN(m.transport,
                   p2p::Transport::Start(to, m.network.get(), registry));
  m.network->Attach(m.transport.get());
  m.sync->Attach(m.transport.get());
  metrics::Family<metrics::Counter>* behind_seconds = nullptr;
  if (registry != nullptr) {
    ASSIGN_OR_RETURN(behind_seconds,
                     RegisterNetworkMetrics(registry, m.network.get(), gauges));
    RETURN_IF_ERROR(RegisterSyncMetrics(registry, m.sync.get()));
  }
  m.peer_table = std::make_unique<p2p::PeerTable>(id, to.max_peers);
  p2p::DiscoveryOptions dopt;
  dopt.self = m.transport->self();
  dopt.network_id = c.network_id;
  dopt.listen_host = c.host;
  dopt.allow_private_addresses = c.allow_private_addresses;
  dopt.tls = m.tls;
  ASSIGN_OR_RETURN(m.discovery,
                   p2p::DiscoveryServer::Start(dopt, m.peer_table.get()));
  if (m.bootstrap.has_value()) {
    m.peer_table->Upsert(*m.bootstrap);
    m.transport->AddPeer(*m.bootstrap, /*persistent=*/true);
  }
  const std::string address = p2p::FormatPeerAddress(m.transport->self());
  out << "rnode: peer-to-peer address " << address << "\n";
  Log("p2p")->info("listening as {}{}", address,
                   m.bootstrap.has_value()
                       ? absl::StrCat(" (bootstrap ",
                                      p2p::FormatPeerAddress(*m.bootstrap), ")")
                       : std::string(" (first node: no bootstrap)"));
  return behind_seconds;
}

}  // namespace rnode::node

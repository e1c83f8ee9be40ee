#include "node/core/node.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "casper/consensus/finality.h"
#include "casper/prestate/ancestry.h"
#include "node/core/assembly.h"
#include "node/core/catch_up.h"
#include "node/core/chain_queries.h"
#include "node/core/consensus_driver.h"
#include "node/core/deploy_admission.h"
#include "node/core/disk_guard.h"
#include "node/core/engine_events.h"
#include "node/core/genesis_setup.h"
#include "node/core/peer_discovery.h"
#include "node/core/rejoin.h"
#include "node/core/retention.h"
#include "node/core/scheduler.h"
#include "node/core/state_sync.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace rnode::node {
namespace {

using casper::block::Block;

}  // namespace

// The parts (assembly.h) and the rooms that run on them, each made after
// what it uses and so destroyed before it.
struct Node::Impl {
  explicit Impl(const NodeConfig& c) : parts(c) {}

  NodeParts parts;
  std::unique_ptr<ConsensusScheduler> scheduler;
  std::unique_ptr<DiskGuard> disk;
  std::unique_ptr<CatchUpMonitor> catch_up;
  std::unique_ptr<DeployAdmission> admission;
  std::unique_ptr<ConsensusDriver> driver;
  std::unique_ptr<ChainQueries> queries;
  // State sync (in a shard): the serving side always, the join while a new
  // node joins from state.
  std::unique_ptr<TrieServer> trie_server;
  std::unique_ptr<StateJoin> join;
  std::unique_ptr<StateRetention> retention;
  DiscoveryLoop discovery_loop;
  // Set once the data dir is marked for a new join (node/core/rejoin.h).
  std::atomic<bool> rejoin{false};
};

Node::Node(NodeConfig config) : config_(std::move(config)) {}

Node::~Node() { Stop(); }

void Node::Stop() {
  if (impl_ == nullptr) return;
  Impl& m = *impl_;
  // A collection of old states, between two of its sweep steps.
  if (m.retention != nullptr) m.retention->Stop();
  // The consensus thread after its current task (a transport dispatcher
  // waiting for room in its queue is woken too; tasks still queued are
  // answered), then the loops that only sleep.
  if (m.scheduler != nullptr) {
    m.scheduler->RequestStop();
    m.scheduler->Join();
  }
  m.discovery_loop.Stop();
  if (m.join != nullptr) m.join->Stop();
  if (m.catch_up != nullptr) m.catch_up->Stop();
  // The network's timer, then the transport's servers and dispatchers.
  if (m.parts.sync != nullptr) m.parts.sync->Stop();
  if (m.parts.network != nullptr) m.parts.network->Stop();
  if (m.parts.transport != nullptr) m.parts.transport->Stop();
  if (m.parts.discovery != nullptr) m.parts.discovery->Stop();
}

absl::StatusOr<std::unique_ptr<Node>> Node::Open(const NodeConfig& config,
                                                 NodeHooks hooks,
                                                 metrics::Registry* registry,
                                                 std::ostream& out) {
  RETURN_IF_ERROR(Validate(config));
  const std::string data_dir = DataDir(config);
  std::error_code ec;
  std::filesystem::create_directories(data_dir + "/genesis", ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat(data_dir, ": cannot create: ", ec.message()));
  }
  // A data dir that has a genesis keeps its parameters.
  ASSIGN_OR_RETURN(NodeConfig c, WithStoredGenesisParams(config, data_dir));
  std::unique_ptr<Node> node(new Node(c));
  ASSIGN_OR_RETURN(node->identity_.key, ResolveKey(c, data_dir, out));
  if (node->identity_.key.has_value()) {
    node->identity_.public_key =
        crypto::Secp256k1PublicKeyOf(*node->identity_.key);
  }
  node->impl_ = std::make_unique<Impl>(c);
  NodeParts& parts = node->impl_->parts;
  parts.hooks = std::move(hooks);
  ASSIGN_OR_RETURN(parts.metrics, NodeMetrics::Create(registry));
  RETURN_IF_ERROR(OpenStorage(c, data_dir, parts));
  node->dag_ = parts.dag.get();
  ASSIGN_OR_RETURN(Block genesis,
                   OpenGenesis(c, data_dir, node->identity_, parts, out));
  RETURN_IF_ERROR(node->Assemble(genesis, registry, out));
  return node;
}

absl::Status Node::Assemble(const Block& genesis, metrics::Registry* registry,
                            std::ostream& out) {
  Impl& m = *impl_;
  NodeParts& p = m.parts;
  const NodeConfig& c = config_;
  m.scheduler = std::make_unique<ConsensusScheduler>(
      SchedulerOptions{
          .batch_window = std::chrono::milliseconds(c.propose_batch_window_ms),
          .min_interval = std::chrono::milliseconds(c.min_block_interval_ms),
          .full_block = static_cast<uint64_t>(c.max_user_deploys_per_block),
          .proposer = c.autopropose && identity_.is_validator()},
      p.metrics.get());
  // The engine's and the network's news reach the rooms made below: none
  // arrives before the consensus thread and the transport start.
  NetworkCallbacks callbacks;
  callbacks.block = [&m](Block b) {
    m.scheduler->QueuePeerBlock(std::move(b));
  };
  // Set (in StartShard) before the transport starts, never reset.
  callbacks.divert = [&m](const p2p::PeerNode& from, Block& b) {
    return m.join != nullptr && m.join->OnBlock(from, b);
  };
  callbacks.deploy = [&m](const ::casper::DeployDataProto& d) {
    return m.admission->HoldGossiped(d);
  };
  auto listener = std::make_unique<NodeListener>(
      p.dag.get(), p.metrics.get(), &p.hooks, &p.output,
      [&m](const Block& b) { m.driver->NoteAdded(b); },
      [&m](std::span<const Hash32> blocks) {
        m.driver->NoteFinalized(blocks);
      });
  RETURN_IF_ERROR(AssembleCasper(c, identity_, genesis, std::move(callbacks),
                                 std::move(listener), p));
  m.disk = std::make_unique<DiskGuard>(
      p.pipelined.get(), kPoolColumn,
      DiskFloor{.path = DataDir(c),
                .min_free = static_cast<uint64_t>(c.min_free_bytes)});
  m.catch_up = std::make_unique<CatchUpMonitor>(
      p.network.get(), m.scheduler.get(), p.sync.get());
  m.admission = std::make_unique<DeployAdmission>(
      AdmissionDeps{.config = &config_,
                    .identity = &identity_,
                    .dag = p.dag.get(),
                    .pool = p.pool.get(),
                    .history = &p.space->history(),
                    .network = p.network.get(),
                    .scheduler = m.scheduler.get(),
                    .catch_up = m.catch_up.get(),
                    .disk = m.disk.get(),
                    .metrics = p.metrics.get()});
  // Work not final yet: a restart continues finalizing it.
  ASSIGN_OR_RETURN(std::vector<Hash32> work,
                   casper::dag::UnfinalizedWork(*p.dag));
  m.driver = std::make_unique<ConsensusDriver>(
      DriverDeps{.config = &config_,
                 .identity = &identity_,
                 .dag = p.dag.get(),
                 .pool = p.pool.get(),
                 .engine = p.engine.get(),
                 .network = p.network.get(),
                 .scheduler = m.scheduler.get(),
                 .catch_up = m.catch_up.get(),
                 .admission = m.admission.get(),
                 .disk = m.disk.get(),
                 .metrics = p.metrics.get(),
                 .left = p.left.get(),
                 .creator = p.creator.get()},
      work);
  m.queries =
      std::make_unique<ChainQueries>(QueryDeps{.config = &config_,
                                               .identity = &identity_,
                                               .dag = p.dag.get(),
                                               .pool = p.pool.get(),
                                               .left = p.left.get(),
                                               .space = p.space.get(),
                                               .runtime = p.runtime.get(),
                                               .scheduler = m.scheduler.get()});
  RETURN_IF_ERROR(DropFinalizedFromPool());
  if (absl::Status s = m.driver->ResumeAwaited(); !s.ok()) {
    Log("casper")->warn("rejected deploys not awaited again: {}", s.ToString());
  }
  RETURN_IF_ERROR(p.metrics->Attach(registry, p.dag.get(), p.pool.get(), [&m] {
    return m.scheduler->queued_tasks();
  }));
  RETURN_IF_ERROR(p.metrics->AttachStorage(
      registry, p.store.get(), p.pipelined.get(), &p.space->history().trie()));
  RETURN_IF_ERROR(registry->AddCallbackGauge(
      "rnode_disk_free_bytes",
      "Free bytes of the data dir's file system (NaN when unreadable)",
      [disk = m.disk.get()]() -> absl::StatusOr<double> {
        const std::optional<uint64_t> free = disk->FreeBytes();
        return free.has_value() ? static_cast<double>(*free)
                                : std::numeric_limits<double>::quiet_NaN();
      }));
  RETURN_IF_ERROR(registry->AddCallbackGauge(
      "rnode_disk_min_free_bytes",
      "The free-space floor below which deploys are refused (0: none)",
      [disk = m.disk.get()]() -> absl::StatusOr<double> {
        return static_cast<double>(disk->min_free());
      }));
  if (p.network != nullptr) RETURN_IF_ERROR(StartShard(registry, out));
  RETURN_IF_ERROR(StartRetention(registry));
  m.scheduler->Start(m.driver.get(), p.pool->size());
  return absl::OkStatus();
}

absl::Status Node::StartRetention(metrics::Registry* registry) {
  if (config_.retain_blocks <= 0) return absl::OkStatus();
  Impl& m = *impl_;
  NodeParts& p = m.parts;
  RetentionOptions options;
  options.keep_numbers = config_.retain_blocks;
  m.retention = std::make_unique<StateRetention>(
      StateRetention::Deps{.dag = p.dag.get(),
                           .history = &p.space->history(),
                           .store = p.pipelined.get(),
                           .columns = rspace::HistoryColumns{},
                           .guard = p.trie_guard.get(),
                           .ready = [this] { return ready(); }},
      options);
  if (registry != nullptr) {
    const StateRetention* r = m.retention.get();
    using Read = double (*)(const RetentionCounters&);
    const struct {
      const char* name;
      const char* help;
      Read read;
    } metrics[] = {
        {"rnode_retention_collections_total",
         "collections of old states (storage.retain-blocks)",
         [](const RetentionCounters& c) { return double(c.collections); }},
        {"rnode_retention_failures_total", "collections that failed",
         [](const RetentionCounters& c) { return double(c.failures); }},
        {"rnode_retention_trie_nodes_deleted_total",
         "trie nodes of old states deleted",
         [](const RetentionCounters& c) { return double(c.nodes_deleted); }},
        {"rnode_retention_values_deleted_total",
         "out-of-line channel values of old states deleted",
         [](const RetentionCounters& c) { return double(c.values_deleted); }},
        {"rnode_retention_roots_deleted_total", "old state roots deleted",
         [](const RetentionCounters& c) { return double(c.roots_deleted); }},
        {"rnode_retention_bytes_deleted_total",
         "bytes (keys and values) of old states deleted",
         [](const RetentionCounters& c) { return double(c.bytes_deleted); }},
        {"rnode_retention_blocks_deleted_total",
         "old blocks deleted (bodies, event logs, metadata, index records)",
         [](const RetentionCounters& c) { return double(c.blocks_deleted); }},
        {"rnode_retention_block_bytes_deleted_total",
         "bytes of old blocks' encodings and metadata deleted",
         [](const RetentionCounters& c) {
           return double(c.block_bytes_deleted);
         }},
        {"rnode_retention_floor",
         "the DAG's floor: blocks numbered below it are not kept (-1: none)",
         [](const RetentionCounters& c) { return double(c.floor); }},
        {"rnode_retention_kept_from",
         "the lowest block number whose states the last collection kept",
         [](const RetentionCounters& c) { return double(c.kept_from); }},
        {"rnode_retention_kept_trie_nodes",
         "trie nodes the last collection's kept states reach",
         [](const RetentionCounters& c) { return double(c.marked_nodes); }},
        {"rnode_retention_kept_values",
         "out-of-line channel values the last collection's kept states reach",
         [](const RetentionCounters& c) { return double(c.marked_values); }},
        {"rnode_retention_kept_bytes",
         "bytes (keys and values) of the trie nodes and channel values the "
         "last collection's kept states reach: the live state, before the "
         "store's overhead",
         [](const RetentionCounters& c) { return double(c.marked_bytes); }},
        {"rnode_retention_last_seconds",
         "how long the last collection took (mark and sweep)",
         [](const RetentionCounters& c) {
           return c.mark_seconds + c.sweep_seconds;
         }}};
    for (const auto& g : metrics) {
      auto fn = [r, read = g.read]() -> absl::StatusOr<double> {
        return read(r->counters());
      };
      const std::string_view name = g.name;
      RETURN_IF_ERROR(name.ends_with("_total")
                          ? registry->AddCallbackCounter(name, g.help, fn)
                          : registry->AddCallbackGauge(name, g.help, fn));
    }
  }
  m.retention->Start();
  return absl::OkStatus();
}

absl::Status Node::StartShard(metrics::Registry* registry, std::ostream& out) {
  Impl& m = *impl_;
  NodeParts& p = m.parts;
  PrepareStateSync();
  if (registry != nullptr) RETURN_IF_ERROR(RegisterStateSyncMetrics(registry));
  NetworkGauges gauges{
      .blocks_waiting = [&m] { return m.scheduler->queued_blocks(); },
      .deploys_held = [&m] { return m.admission->held(); }};
  ASSIGN_OR_RETURN(metrics::Family<metrics::Counter> * behind_seconds,
                   StartNetwork(config_, identity_, p, registry, gauges, out));
  m.driver->AttachTransport(p.transport.get(), p.bootstrap.has_value());
  if (m.join != nullptr) m.join->Start(p.transport.get());
  m.discovery_loop.Start(
      p.transport.get(), p.peer_table.get(),
      DiscoveryLoopOptions{
          .interval = std::chrono::milliseconds(config_.lookup_interval_ms),
          .timeout = std::chrono::milliseconds(config_.network_timeout_ms),
          .network_id = config_.network_id,
          .tls = p.tls});
  // A node with retention that fell further behind than its peers keep
  // blocks joins again (node/core/rejoin.h); an archive keeps its chain,
  // and one without a bootstrap (the shard's first node) has nobody to
  // join from once it forgot.
  if (config_.rejoin_after_seconds >= 0 && config_.retain_blocks > 0 &&
      config_.state_sync_min_finalized >= 0 && !config_.bootstrap.empty()) {
    m.catch_up->SetBeyondHistoryListener(
        std::chrono::seconds(config_.rejoin_after_seconds), [this] {
          const std::string why =
              absl::StrCat("beyond_history for ", config_.rejoin_after_seconds,
                           " s: further behind than the peers keep blocks");
          if (absl::Status s = MarkForRejoin(DataDir(config_), why); !s.ok()) {
            Log("node")->error("cannot join the shard again: {}", s.ToString());
            return;
          }
          Log("node")->warn(
              "{}; forgetting the chain and joining the shard again from its "
              "last finalized state",
              why);
          impl_->rejoin.store(true);
        });
  }
  m.catch_up->Start(behind_seconds);
  return absl::OkStatus();
}

bool Node::rejoin_requested() const { return impl_->rejoin.load(); }

void Node::PrepareStateSync() {
  Impl& m = *impl_;
  NodeParts& p = m.parts;
  rspace::History* history = &p.space->history();
  // The history's columns are the store's first (kHistoryColumns).
  const rspace::HistoryColumns columns{};
  // Peers joining from state ask for the tries of any state this node
  // holds (each answer is bounded; a root it does not hold is refused).
  m.trie_server = std::make_unique<TrieServer>(
      p.pipelined.get(), columns, [history](const Hash32& root) {
        absl::StatusOr<bool> held = history->HasRoot(root);
        return held.ok() && *held;
      });
  CasperNetwork::TrieHandlers handlers;
  handlers.serve = [&m](p2p::Transport& t, const p2p::PeerNode& from,
                        const std::string& content) {
    m.trie_server->Serve(t, from, content);
  };
  // A new node with a bootstrap joins from state when its peers' chain is
  // long enough (StateJoin decides); one with history follows as before.
  const bool fresh = p.dag->size() == 1 && p.dag->MaxHeight() == 0;
  // A node anchored before a restart whose anchor is not verified yet
  // verifies it again before it is ready.
  const bool unverified = p.dag->UnverifiedAnchor().has_value();
  if ((fresh && !config_.bootstrap.empty() &&
       config_.state_sync_min_finalized >= 0) ||
      unverified) {
    StateJoinOptions options;
    options.min_finalized_number = config_.state_sync_min_finalized;
    options.fetch.max_requests =
        static_cast<size_t>(config_.state_sync_requests);
    options.fetch.hashes_per_request =
        static_cast<size_t>(config_.state_sync_hashes_per_request);
    // The anchor is verified by the shard's own rule: the threshold its
    // finalizer uses (the settings were checked when the node was made).
    const absl::StatusOr<casper::contracts::PosParams> pos =
        PosParamsOf(config_);
    const int64_t threshold_ppm =
        pos.ok() ? pos->fault_tolerance_threshold_ppm
                 : casper::consensus::FinalizerOptions{}.threshold_ppm;
    const casper::dag::DagStore* dag = p.dag.get();
    m.join = std::make_unique<StateJoin>(
        StateJoin::Deps{
            .dag = p.dag.get(),
            .store = p.pipelined.get(),
            .columns = columns,
            .sync = p.sync.get(),
            .has_root =
                [history](const Hash32& root) {
                  return history->HasRoot(root);
                },
            .anchor_final =
                [dag, threshold_ppm](const Hash32& anchor) {
                  return AnchorIsFinal(*dag, anchor, threshold_ppm);
                },
            .hand_on =
                [&m](Block b) { m.scheduler->QueuePeerBlock(std::move(b)); },
            .done = [&m] { m.catch_up->set_syncing(false); }},
        options);
    m.catch_up->set_syncing(true);
    p.sync->SetRangeEndListener(
        [&m](const p2p::PeerNode& from, int64_t f, int64_t next) {
          m.join->OnRangeEnd(from, f, next);
        });
    handlers.answer = [&m](const p2p::PeerNode& from,
                           const std::string& content) {
      m.join->OnTrieNodes(from, content);
    };
  }
  p.network->SetTrieHandlers(std::move(handlers));
}

absl::Status Node::RegisterStateSyncMetrics(metrics::Registry* registry) {
  Impl& m = *impl_;
  // Serving (docs/metrics.md, rnode_state_sync_*).
  const TrieServer* server = m.trie_server.get();
  const std::pair<const char*, const char*> served[] = {
      {"rnode_state_sync_requests_served_total",
       "trie node requests from joining peers answered"},
      {"rnode_state_sync_nodes_served_total",
       "trie nodes sent to joining peers"},
      {"rnode_state_sync_bytes_served_total",
       "bytes of trie nodes sent to joining peers"},
      {"rnode_state_sync_requests_refused_total",
       "trie node requests refused: a root not held, or the stream budget "
       "to that peer spent"},
  };
  for (size_t i = 0; i < std::size(served); ++i) {
    RETURN_IF_ERROR(registry->AddCallbackCounter(
        served[i].first, served[i].second, [server, i]() -> double {
          const TrieServerCounters c = server->counters();
          const uint64_t v[] = {c.requests, c.nodes_served, c.bytes_served,
                                c.refused};
          return static_cast<double>(v[i]);
        }));
  }
  const StateJoin* join = m.join.get();
  if (join == nullptr) return absl::OkStatus();
  // Joining (this node started new).
  RETURN_IF_ERROR(registry->AddCallbackGauge(
      "rnode_state_sync_joining",
      "1 while this node joins from the shard's last finalized state",
      [join] { return join->settled() ? 0.0 : 1.0; }));
  RETURN_IF_ERROR(registry->AddCallbackGauge(
      "rnode_state_sync_anchor_number",
      "the last finalized block the join anchors at (-1: not chosen yet)",
      [join] { return static_cast<double>(join->Progress().anchor_number); }));
  RETURN_IF_ERROR(registry->AddCallbackGauge(
      "rnode_state_sync_blocks", "blocks the join holds",
      [join] { return static_cast<double>(join->Progress().blocks); }));
  RETURN_IF_ERROR(registry->AddCallbackCounter(
      "rnode_state_sync_trie_nodes_total", "trie nodes the join fetched",
      [join] { return static_cast<double>(join->Progress().trie_nodes); }));
  RETURN_IF_ERROR(registry->AddCallbackCounter(
      "rnode_state_sync_trie_bytes_total",
      "bytes of trie nodes the join fetched",
      [join] { return static_cast<double>(join->Progress().trie_bytes); }));
  return registry->AddCallbackGauge(
      "rnode_state_sync_seconds",
      "how long the join has taken (its length once done)",
      [join] { return join->Progress().seconds; });
}

absl::Status Node::DropFinalizedFromPool() {
  NodeParts& p = impl_->parts;
  const std::optional<Hash32> lfb = p.dag->LastFinalized();
  if (!lfb.has_value()) return absl::OkStatus();
  std::vector<Bytes> sigs;
  p.pool->ForEach(
      [&](const casper::SignedDeploy& d) { sigs.push_back(d.sig()); });
  // Those whose effect the finalized state holds; a copy a merge rejected
  // leaves its deploy waiting to be proposed again.
  std::vector<Bytes> done;
  for (const Bytes& sig : sigs) {
    ASSIGN_OR_RETURN(std::optional<Hash32> copy,
                     casper::prestate::CopyInPostState(*p.dag, *lfb, sig, 0));
    if (copy.has_value()) done.push_back(sig);
  }
  return p.pool->Remove(done);
}

bool Node::ready() const {
  if (impl_->scheduler == nullptr || !impl_->scheduler->ready()) return false;
  if (impl_->join != nullptr && !impl_->join->settled()) return false;
  const ChainSync* sync = impl_->parts.sync.get();
  return sync == nullptr || sync->Progress().state == SyncState::kCaughtUp;
}

std::optional<SyncProgress> Node::sync_progress() const {
  const ChainSync* sync = impl_->parts.sync.get();
  if (sync == nullptr) return std::nullopt;
  return sync->Progress();
}

std::optional<JoinProgress> Node::join_progress() const {
  const StateJoin* join = impl_->join.get();
  if (join == nullptr) return std::nullopt;
  return join->Progress();
}

int64_t Node::last_finalized_number() const {
  return casper::dag::LastFinalizedNumber(*dag_).value_or(-1);
}

size_t Node::pending_deploys() const { return impl_->parts.pool->size(); }

absl::StatusOr<Bytes> Node::Deploy(const ::casper::DeployDataProto& proto) {
  return impl_->admission->Admit(proto);
}

absl::StatusOr<Hash32> Node::Propose() {
  if (!identity_.is_validator()) {
    return absl::FailedPreconditionError("Propose error: read-only node.");
  }
  ConsensusDriver* driver = impl_->driver.get();
  return impl_->scheduler->Call<Hash32>(
      [driver] { return driver->ProposeNow(false); });
}

absl::StatusOr<Exploration> Node::Explore(std::string term,
                                          std::optional<Hash32> block,
                                          bool use_pre_state) {
  return impl_->queries->Explore(std::move(term), block, use_pre_state);
}

absl::StatusOr<Block> Node::GetBlock(const Hash32& hash) {
  return impl_->queries->GetBlock(hash);
}

absl::StatusOr<Block> Node::FindBlock(std::string_view hex) {
  return impl_->queries->FindBlock(hex);
}

absl::StatusOr<std::vector<Block>> Node::BlocksByHeight(int64_t from,
                                                        int64_t to) {
  return impl_->queries->BlocksByHeight(from, to);
}

absl::StatusOr<std::vector<Block>> Node::MainChain(int64_t depth) {
  return impl_->queries->MainChain(depth);
}

absl::StatusOr<Block> Node::LastFinalizedBlock() {
  return impl_->queries->LastFinalizedBlock();
}

absl::StatusOr<DeployStatus> Node::FindDeploy(ByteView sig) {
  return impl_->queries->FindDeploy(sig);
}

absl::StatusOr<std::vector<rholang::ir::ParPtr>> Node::DataAtName(
    const rholang::ir::ParPtr& channel, const Hash32& block,
    bool use_pre_state) {
  return impl_->queries->DataAtName(channel, block, use_pre_state);
}

absl::StatusOr<bool> Node::IsBonded(ByteView public_key) const {
  return impl_->queries->IsBonded(public_key);
}

std::string Node::address() const {
  const p2p::Transport* t = impl_->parts.transport.get();
  return t == nullptr ? "" : p2p::FormatPeerAddress(t->self());
}

std::vector<PeerStatus> Node::peers() const {
  std::vector<PeerStatus> out;
  p2p::Transport* t = impl_->parts.transport.get();
  if (t == nullptr) return out;
  std::vector<p2p::PeerNode> connected = t->Connected();
  for (const p2p::PeerNode& p : t->Known()) {
    out.push_back(PeerStatus{p, std::find(connected.begin(), connected.end(),
                                          p) != connected.end()});
  }
  return out;
}

absl::Status Node::SetIsolated(bool isolated) {
  if (!config_.fault_injection) {
    return absl::PermissionDeniedError(
        "fault injection is off (start the node with --fault-injection)");
  }
  if (impl_->parts.transport == nullptr) {
    return absl::FailedPreconditionError(
        "a standalone node has no peers to be cut off from");
  }
  impl_->parts.transport->SetIsolated(isolated);
  return absl::OkStatus();
}

bool Node::isolated() const {
  return impl_->parts.transport != nullptr &&
         impl_->parts.transport->isolated();
}

absl::Status Node::SetDiskFull(bool full) {
  if (!config_.fault_injection) {
    return absl::PermissionDeniedError(
        "fault injection is off (start the node with --fault-injection)");
  }
  RETURN_IF_ERROR(impl_->parts.store->InjectNoSpace(full));
  Log("node")->warn("fault injection: the disk is {}",
                    full ? "full" : "no longer full");
  return absl::OkStatus();
}

bool Node::disk_full_injected() const {
  return impl_->parts.store->no_space_injected();
}

absl::Status Node::SetCorruptTrie(bool corrupt) {
  if (!config_.fault_injection) {
    return absl::PermissionDeniedError(
        "fault injection is off (start the node with --fault-injection)");
  }
  if (impl_->trie_server == nullptr) {
    return absl::FailedPreconditionError("a standalone node serves no peer");
  }
  impl_->trie_server->SetCorrupt(corrupt);
  Log("node")->warn("fault injection: trie nodes served to peers are {}",
                    corrupt ? "corrupt" : "true again");
  return absl::OkStatus();
}

bool Node::corrupt_trie_injected() const {
  return impl_->trie_server != nullptr && impl_->trie_server->corrupt();
}

}  // namespace rnode::node

#include "node/core/node.h"

#include <sys/random.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <limits>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "CasperMessage.pb.h"
#include "absl/cleanup/cleanup.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "casper/consensus/fork_choice.h"
#include "casper/contracts/helper_contracts.h"
#include "casper/contracts/ledger.h"
#include "casper/contracts/pos.h"
#include "casper/contracts/system_contracts.h"
#include "casper/engine/engine.h"
#include "casper/execution/block_executor.h"
#include "casper/execution/deploy_executor.h"
#include "casper/execution/executor_lanes.h"
#include "casper/genesis/genesis.h"
#include "casper/genesis/genesis_files.h"
#include "casper/merge/merge_context.h"
#include "casper/pool/deploy_pool.h"
#include "casper/proposer/block_creator.h"
#include "casper/validation/pre_state.h"
#include "casper/validation/validator.h"
#include "crypto/hash.h"
#include "crypto/rev_address.h"
#include "crypto/rng.h"
#include "node/core/gossip_backup.h"
#include "node/core/network.h"
#include "node/core/node_metrics.h"
#include "node/p2p/discovery.h"
#include "node/p2p/transport.h"
#include "rholang/interpreter/reducer.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/channel_codec.h"
#include "rspace/event_log.h"
#include "rspace/history/history.h"
#include "rspace/space.h"
#include "rspace/storage/kv_store.h"
#include "rspace/storage/pipelined_store.h"
#include "rspace/storage/rocksdb_store.h"
#include "util/bounded_cache.h"
#include "util/limits.h"
#include "util/logging.h"
#include "util/mutex.h"
#include "util/status_macros.h"
#include "util/worker_pool.h"

namespace rnode::node {
namespace {

namespace interp = rholang::interp;
using casper::block::Block;
using Clock = std::chrono::steady_clock;

// The store's column families: history, DAG, deploy pool (docs/node.md
// "Data directory").
constexpr size_t kHistoryColumns = 3;
constexpr size_t kPoolColumn = kHistoryColumns + 4;

// Stake of the generated standalone validator and balance of its wallet
// (the public standalone shard's figures: 1000 and 5e16 dust).
constexpr int64_t kStandaloneStake = 1000;
constexpr int64_t kStandaloneBalance = 50'000'000'000'000'000;

// How often an idle consensus thread looks again at a pool whose deploys
// could not go in a block (future validAfterBlockNumber): they may fit a
// later block only.
constexpr auto kProposeRetry = std::chrono::seconds(1);

// How often the consensus thread looks at the heartbeat and the deploys
// peers gossiped.
constexpr auto kHousekeepingInterval = std::chrono::seconds(1);

// Empty blocks a validator makes in a row for finality that does not move
// before it leaves the rest to the heartbeat.
constexpr int kMaxEmptyStreak = 6;

// Blocks from peers waiting for the engine at most.
constexpr size_t kMaxBlocksWaiting = 64;

// A validator is behind its peers (and refuses deploys, whose validity
// window it cannot judge) while this many blocks wait for their parents
// or for the consensus thread, or while a block asked for is missing this
// long. A shard at tens of blocks a second has a few of each in passing
// (measured: 4 refused 1.4 % of a 50 deploys/s stream), so only a backlog
// counts.
constexpr size_t kBehindBuffered = 16;
constexpr size_t kBehindQueued = kMaxBlocksWaiting / 2;
constexpr auto kBehindWanted = std::chrono::milliseconds(2000);

// A gap this long between two housekeeping rounds means the process was
// paused.
constexpr auto kPauseNoticed = std::chrono::seconds(3);
// How long an acknowledgement waits for each peer it offers the deploy to
// until one holds a copy, and for each after that (a live peer answers in
// a millisecond; a stopped one costs this until it is disconnected, after
// three failures). The first is generous: a busy peer (a loaded machine,
// the sanitizer builds) is not a missing one; under ASan 250 ms refused
// deploys as "reaches no other validator" while the peers were only slow.
constexpr auto kDeployReplicationTimeout = std::chrono::milliseconds(1000);
constexpr auto kDeployExtraCopyTimeout = std::chrono::milliseconds(250);
constexpr char kNoPeerTookTheDeploy[] =
    "Deploy was not accepted: this validator reaches no other validator to "
    "keep a copy of the deploy; retry shortly or deploy to another "
    "validator.";
constexpr char kDiskFull[] =
    "Deploy was not accepted: this validator's disk is full, so it cannot "
    "store the deploy; retry once space returns or deploy to another "
    "validator.";
// How often the pause watch wakes, and how long after a pause a validator
// still counts as catching up (its peers' tips arrive in milliseconds on a
// live network; blocks it then asks for keep it catching up by the
// queues).
constexpr auto kPauseWatchInterval = std::chrono::milliseconds(100);
constexpr auto kResumeGrace = std::chrono::seconds(2);
// How often the pause watch logs the time the node spent behind (nothing
// when it was not): one line, so that a validator that stays behind says
// why without flooding its log.
constexpr int64_t kBehindReportMs = 10'000;

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             Clock::now().time_since_epoch())
      .count();
}

// Merge indexes kept (casper::validation::PreStateBuilder).
constexpr size_t kMergeIndexesKept = 1024;

// Expired deploys remembered for clients that ask after them.
constexpr size_t kExpiredDeploysRemembered = 65536;

// Lines of deploy output (rho:io:stdout) logged per second at most.
constexpr double kDeployOutputLinesPerSecond = 50;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// No peers: a standalone validator broadcasts to no one.
class NoPeers final : public casper::engine::Transport {
 public:
  void Broadcast(const Block&) override {}
  void Request(const Hash32&) override {}
};

// Deploy output goes to the log, rate-limited (a deploy can print a lot).
// Muted while this node validates its own block: the lines were logged
// when the block was made.
class LogSink final : public interp::OutputSink {
 public:
  void Stdout(std::string_view line) override { Write("stdout", line); }
  void Stderr(std::string_view line) override { Write("stderr", line); }
  void set_muted(bool muted) { muted_.store(muted, std::memory_order_relaxed); }

 private:
  void Write(std::string_view stream, std::string_view line) {
    if (muted_.load(std::memory_order_relaxed)) return;
    uint64_t suppressed = 0;
    if (!limiter_.Allow(&suppressed)) return;
    if (suppressed > 0) {
      Log("deploy")->info("({} lines of deploy output not logged)", suppressed);
    }
    Log("deploy")->info("{}: {}", stream, line);
  }
  LogRateLimiter limiter_{kDeployOutputLinesPerSecond};
  std::atomic<bool> muted_{false};
};

absl::StatusOr<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read"));
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  if (text.size() > 4096) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": too large"));
  }
  return text;
}

absl::Status WriteFileAtomically(const std::string& path,
                                 const std::string& text, mode_t mode) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return absl::InternalError(absl::StrCat(tmp, ": cannot write"));
    out << text;
    out.flush();
    if (!out) return absl::InternalError(absl::StrCat(tmp, ": write failed"));
  }
  ::chmod(tmp.c_str(), mode);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat(path, ": ", ec.message()));
  }
  return absl::OkStatus();
}

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

// The validator key: the setting, the key file, the environment, or (a
// standalone node with none) the dev key generated once into the data dir.
// nullopt: a read-only node.
absl::StatusOr<std::optional<crypto::Secp256k1PrivateKey>> ResolveKey(
    const NodeConfig& c, const std::string& data_dir, std::ostream& out) {
  if (!c.validator_private_key.empty()) {
    return ParseKeyHex(c.validator_private_key, "casper.validator-private-key");
  }
  if (!c.validator_private_key_path.empty()) {
    ASSIGN_OR_RETURN(std::string text,
                     ReadSmallFile(c.validator_private_key_path));
    return ParseKeyHex(text, c.validator_private_key_path);
  }
  if (const char* env = std::getenv("RNODE_VALIDATOR_PRIVATE_KEY");
      env != nullptr && *env != '\0') {
    return ParseKeyHex(env, "RNODE_VALIDATOR_PRIVATE_KEY");
  }
  if (!c.standalone) return std::nullopt;
  const std::string path = data_dir + "/validator.key";
  if (std::filesystem::exists(path)) {
    ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path));
    return ParseKeyHex(text, path);
  }
  ASSIGN_OR_RETURN(crypto::Secp256k1PrivateKey key, GenerateKey());
  RETURN_IF_ERROR(WriteFileAtomically(path, HexEncode(key) + "\n", 0600));
  out << "rnode: generated a standalone validator key (kept in " << path
      << ")\n";
  return key;
}

}  // namespace

struct Node::Impl {
  explicit Impl(const NodeConfig& c)
      : threads(c.threads > 0
                    ? static_cast<int>(c.threads)
                    : std::max(1, static_cast<int>(
                                      std::thread::hardware_concurrency()))),
        pool_threads(threads),
        backup(static_cast<size_t>(c.deploy_pool_max_deploys),
               std::chrono::milliseconds(c.deploy_gossip_takeover_ms)) {}

  const int threads;
  WorkerPool pool_threads;
  std::unique_ptr<rspace::RocksDbStore> store;
  // Over `store`; every user of the store goes through it, so the merge's
  // pipelined write lands before any later write (docs/merge.md §8).
  std::unique_ptr<rspace::PipelinedStore> pipelined;
  std::unique_ptr<rspace::Space> space;
  std::unique_ptr<casper::contracts::SystemContracts> contracts;
  LogSink output;
  std::unique_ptr<interp::Runtime> runtime;
  std::unique_ptr<casper::DeployExecutor> executor;
  std::unique_ptr<casper::ExecutorLanes> lanes;
  std::unique_ptr<casper::BlockExecutor> blocks;
  std::unique_ptr<casper::contracts::ValidatorsCache> validators;
  casper::contracts::BalanceCodec codec;
  std::unique_ptr<casper::merge::MergeContext> merge_context;
  std::unique_ptr<casper::validation::PreStateBuilder> pre_states;
  std::unique_ptr<casper::dag::DagStore> dag;
  std::unique_ptr<casper::pool::DeployPool> pool;
  std::unique_ptr<casper::proposer::BlockCreator> creator;
  std::unique_ptr<casper::validation::BlockValidator> validator;
  NoPeers peers;
  // Peer-to-peer (null in standalone mode). The network is the engine's
  // transport; stopped before anything it calls into.
  std::unique_ptr<CasperNetwork> network;
  std::unique_ptr<p2p::Transport> transport;
  std::unique_ptr<p2p::PeerTable> peer_table;
  std::unique_ptr<p2p::DiscoveryServer> discovery;
  std::optional<p2p::PeerNode> bootstrap;
  std::thread discovery_thread;
  std::thread pause_watch_thread;
  // Steady-clock milliseconds of the pause watch's last wake-up and of the
  // end of the last pause it saw (INT64_MIN: none).
  std::atomic<int64_t> watch_tick_ms{0};
  std::atomic<int64_t> resumed_ms{std::numeric_limits<int64_t>::min()};
  // Seconds spent behind, by BehindName (null without a registry; counted
  // by the pause watch).
  metrics::Family<metrics::Counter>* behind_seconds = nullptr;
  std::shared_ptr<casper::engine::EngineListener> listener;
  std::unique_ptr<casper::engine::Engine> engine;
  std::unique_ptr<NodeMetrics> metrics;
  NodeHooks hooks;
  uint64_t explore_counter = 0;  // consensus thread

  // The consensus thread and what it is asked to do.
  mutable Mutex mu;
  CondVar cv;
  // A task runs with true on the consensus thread, or with false when the
  // node stops first (it then answers Unavailable).
  std::deque<std::function<void(bool)>> tasks ABSL_GUARDED_BY(mu);
  // Blocks from peers waiting for the engine; a full queue holds the
  // transport's stream dispatcher (back-pressure to the senders).
  std::deque<Block> blocks_in ABSL_GUARDED_BY(mu);
  // Deploys other validators admitted, held as backup until they are in a
  // block or the takeover time passes.
  GossipBackup backup ABSL_GUARDED_BY(mu);
  // Finality waits for a block of this node (it has seen blocks it has
  // not justified while blocks with deploys are not final), since when.
  bool finality_wanted ABSL_GUARDED_BY(mu) = false;
  Clock::time_point finality_since ABSL_GUARDED_BY(mu){};
  // A peer's block was invalid: a block of this validator carries the
  // slash of its sender (if still bonded) even when no deploy waits.
  bool slash_wanted ABSL_GUARDED_BY(mu) = false;
  // Consensus thread only: blocks with user deploys or a slash not yet
  // final, and when the last finalized block last moved.
  std::set<Hash32> unfinalized_work;
  // Empty blocks this node made in a row for finality without finality
  // moving; at kMaxEmptyStreak it waits for the heartbeat instead (no
  // empty-block churn when finality is stuck).
  int empty_streak = 0;
  // Blocks the engine holds for missing parents (mirrored for the API
  // threads' admission check).
  std::atomic<size_t> engine_buffered{0};
  // Deploys dropped from the pool unincluded (their window closed), so
  // that a client asking after them learns it.
  BoundedCache<Bytes, bool> expired{kExpiredDeploysRemembered};
  Clock::time_point last_housekeeping = Clock::now();
  // A node that joins a shard proposes only after it has caught up once:
  // connected to a peer, and not CatchingUp().
  bool caught_up = false;
  // Said once: the state a block would build on gives this validator no
  // stake (slashed, or unbonded before it is final).
  bool said_no_stake = false;
  // Set while the store's disk is full (a write failed for want of space),
  // so that it is said once, and when space returns (DiskFull, DiskOk).
  std::atomic<bool> disk_full{false};
  std::optional<Hash32> last_lfb;
  Clock::time_point lfb_moved{};
  bool stopping ABSL_GUARDED_BY(mu) = false;
  bool running ABSL_GUARDED_BY(mu) = false;
  // Deploys admitted since the proposer last looked, and when the first of
  // them came.
  uint64_t deploys_waiting ABSL_GUARDED_BY(mu) = 0;
  Clock::time_point first_waiting ABSL_GUARDED_BY(mu){};
  // Deploys a client is having admitted: in the pool, or about to be, and
  // not yet counted in deploys_waiting. The proposer's recount of the pool
  // leaves them out, as their admission counts them (regression: one
  // counted twice passed for a full block and broke the block interval).
  uint64_t deploys_admitting ABSL_GUARDED_BY(mu) = 0;
  // Consensus thread only: when this node last made a block (the next one
  // waits for casper.min-block-interval unless a full block waits).
  Clock::time_point last_made{};
  std::thread thread;

  // Posts `task` for the consensus thread; Unavailable when stopping or
  // when the queue is full.
  absl::Status Post(std::function<void(bool)> task) {
    MutexLock lock(&mu);
    if (stopping || !running) {
      return absl::UnavailableError("the node is not running");
    }
    if (tasks.size() >= kMaxConsensusTasks) {
      metrics->ConsensusBusy();
      return absl::UnavailableError(
          "busy: too many requests wait for the "
          "consensus thread; retry later");
    }
    tasks.push_back(std::move(task));
    cv.SignalAll();
    return absl::OkStatus();
  }

  // Runs `fn` on the consensus thread and returns its result.
  template <typename T>
  absl::StatusOr<T> Call(std::function<absl::StatusOr<T>()> fn) {
    auto promise = std::make_shared<std::promise<absl::StatusOr<T>>>();
    std::future<absl::StatusOr<T>> result = promise->get_future();
    RETURN_IF_ERROR(Post([promise, fn = std::move(fn)](bool run) {
      promise->set_value(run ? fn()
                             : absl::UnavailableError("the node is stopping"));
    }));
    return result.get();
  }
};

Node::Node(NodeConfig config) : config_(std::move(config)) {}

Node::~Node() { Stop(); }

void Node::Stop() {
  if (impl_ == nullptr) return;
  {
    MutexLock lock(&impl_->mu);
    impl_->stopping = true;
    impl_->cv.SignalAll();
  }
  if (impl_->thread.joinable()) impl_->thread.join();
  if (impl_->discovery_thread.joinable()) impl_->discovery_thread.join();
  if (impl_->pause_watch_thread.joinable()) {
    impl_->pause_watch_thread.join();
  }
  // The network's timer, then the transport's servers and dispatchers (a
  // dispatcher waiting for room in blocks_in has been woken by stopping).
  if (impl_->network != nullptr) impl_->network->Stop();
  if (impl_->transport != nullptr) impl_->transport->Stop();
  if (impl_->discovery != nullptr) impl_->discovery->Stop();
  // Tasks still queued are answered rather than left waiting.
  std::deque<std::function<void(bool)>> left;
  {
    MutexLock lock(&impl_->mu);
    left.swap(impl_->tasks);
    impl_->running = false;
  }
  for (auto& t : left) t(false);
}

bool Node::ready() const {
  MutexLock lock(&impl_->mu);
  return impl_->running && !impl_->stopping;
}

int64_t Node::last_finalized_number() const {
  std::optional<Hash32> lfb = dag_->LastFinalized();
  if (!lfb.has_value()) return -1;
  return dag_->Meta(*lfb)->block_number;
}

size_t Node::pending_deploys() const { return impl_->pool->size(); }

namespace {

// The engine's events, turned into the node's hooks and metrics. Runs on
// the consensus thread.
class Listener final : public casper::engine::EngineListener {
 public:
  // `on_added` / `on_finalized` (consensus thread) keep the node's own
  // bookkeeping.
  Listener(casper::dag::DagStore* dag, NodeMetrics* metrics,
           const NodeHooks* hooks, LogSink* output,
           std::function<void(const Block&)> on_added,
           std::function<void(std::span<const Hash32>)> on_finalized)
      : dag_(dag),
        metrics_(metrics),
        hooks_(hooks),
        output_(output),
        on_added_(std::move(on_added)),
        on_finalized_(std::move(on_finalized)) {}

  void OnBlockCreated(const Block& block) override {
    output_->set_muted(true);
    if (hooks_->block_created) hooks_->block_created(block);
  }
  void OnBlockValidated(const Block& block,
                        const casper::validation::Verdict& verdict,
                        double seconds) override {
    output_->set_muted(false);
    metrics_->BlockValidated(block, verdict, seconds);
  }
  void OnBlockAdded(const Block& block) override {
    on_added_(block);
    metrics_->BlockAdded(block);
    if (hooks_->block_added) hooks_->block_added(block);
  }
  void OnFinalized(const Hash32& last, std::span<const Hash32> blocks,
                   std::span<const Bytes> deploys) override {
    on_finalized_(blocks);
    metrics_->Finalized(dag_->Meta(last)->block_number, blocks.size(), deploys);
    if (!hooks_->block_finalized) return;
    for (const Hash32& h : blocks) {
      absl::StatusOr<std::optional<Block>> b = dag_->GetBlock(h);
      if (b.ok() && b->has_value()) hooks_->block_finalized(**b);
    }
  }

 private:
  casper::dag::DagStore* dag_;
  NodeMetrics* metrics_;
  const NodeHooks* hooks_;
  LogSink* output_;
  std::function<void(const Block&)> on_added_;
  std::function<void(std::span<const Hash32>)> on_finalized_;
};

// The genesis parameters kept beside the store: a restart plays blocks
// with the PoS parameters the genesis was made with, whatever the flags
// say now.
constexpr const char* kGenesisParamsFile = "/genesis/params.toml";

std::string GenesisParamsToml(const NodeConfig& c) {
  return absl::StrCat(
      "# Written at genesis; the node reads it on every start.\n",
      "[casper]\nshard-name = \"", c.shard_name, "\"\n",
      "fault-tolerance-threshold = ", c.fault_tolerance_threshold, "\n",
      "[casper.genesis-block-data]\n", "bond-minimum = ", c.bond_minimum,
      "\nbond-maximum = ", c.bond_maximum, "\nepoch-length = ", c.epoch_length,
      "\nquarantine-length = ", c.quarantine_length,
      "\nnumber-of-active-validators = ", c.number_of_active_validators,
      "\npos-multi-sig-public-keys = \"", c.pos_multi_sig_public_keys,
      "\"\npos-multi-sig-quorum = ", c.pos_multi_sig_quorum,
      "\npos-vault-transfer-public-key = \"", c.pos_vault_transfer_public_key,
      "\"\nnative-token-name = \"", c.native_token_name,
      "\"\nnative-token-symbol = \"", c.native_token_symbol,
      "\"\nnative-token-decimals = ", c.native_token_decimals, "\n");
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
  p.fault_tolerance_threshold_ppm =
      static_cast<int64_t>(c.fault_tolerance_threshold * 1'000'000 + 0.5);
  return p;
}

// The genesis inputs: the files given, or for a standalone node without
// them one bond (its own key) and one wallet (its own address), written
// into the data dir so the operator sees them.
absl::StatusOr<casper::genesis::GenesisParams> GenesisInputs(
    const NodeConfig& c, const std::string& data_dir,
    const std::optional<crypto::Secp256k1PrivateKey>& key, std::ostream& out) {
  casper::genesis::GenesisParams p;
  p.shard_id = c.shard_name;
  p.timestamp = c.deploy_timestamp > 0 ? c.deploy_timestamp : NowMs();
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
    if (!c.standalone || !key.has_value()) {
      return absl::InvalidArgumentError(
          "a new shard needs --bonds-file and --wallets-file (or "
          "--standalone, which makes them for its own key)");
    }
    const crypto::Secp256k1PublicKey pk = crypto::Secp256k1PublicKeyOf(*key);
    if (bonds_path.empty()) {
      bonds_path = dir + "/bonds.txt";
      RETURN_IF_ERROR(WriteFileAtomically(
          bonds_path, absl::StrCat(HexEncode(pk), " ", kStandaloneStake, "\n"),
          0644));
    }
    if (wallets_path.empty()) {
      wallets_path = dir + "/wallets.txt";
      RETURN_IF_ERROR(
          WriteFileAtomically(wallets_path,
                              absl::StrCat(crypto::RevAddressFromPublicKey(pk),
                                           ",", kStandaloneBalance, "\n"),
                              0644));
    }
    out << "rnode: new standalone shard: bonds " << bonds_path << ", wallets "
        << wallets_path << "\n";
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

}  // namespace

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
  NodeConfig c = config;
  // A data dir that has a genesis keeps its parameters.
  const bool has_genesis_params =
      std::filesystem::exists(data_dir + kGenesisParamsFile);
  if (has_genesis_params) {
    ASSIGN_OR_RETURN(std::string text, casper::genesis::ReadGenesisFile(
                                           data_dir + kGenesisParamsFile));
    NodeConfig stored = c;
    RETURN_IF_ERROR(ApplyToml(stored, text, data_dir + kGenesisParamsFile));
    if (stored.shard_name != c.shard_name) {
      return absl::FailedPreconditionError(
          absl::StrCat("the data dir ", data_dir, " holds shard '",
                       stored.shard_name, "', not '", c.shard_name, "'"));
    }
    c = stored;
  }

  std::unique_ptr<Node> node(new Node(c));
  ASSIGN_OR_RETURN(node->key_, ResolveKey(c, data_dir, out));
  if (node->key_.has_value()) {
    node->public_key_ = crypto::Secp256k1PublicKeyOf(*node->key_);
  }
  node->impl_ = std::make_unique<Impl>(c);
  Impl& m = *node->impl_;
  m.hooks = std::move(hooks);
  ASSIGN_OR_RETURN(m.metrics, NodeMetrics::Create(registry));

  std::vector<std::string> columns = rspace::DefaultHistoryColumnNames();
  for (const std::string& name : casper::dag::DagColumnNames()) {
    columns.push_back(name);
  }
  columns.push_back("deploy-pool");
  rspace::RocksDbOptions store_options;
  store_options.injectable_faults = c.fault_injection;
  store_options.block_cache_bytes = static_cast<size_t>(c.block_cache_bytes);
  ASSIGN_OR_RETURN(m.store, rspace::RocksDbStore::Open(data_dir + "/db",
                                                       columns, store_options));
  m.pipelined = std::make_unique<rspace::PipelinedStore>(m.store.get());
  rspace::SpaceOptions so;
  so.term_factory = interp::StoredTermFactory();
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
  ASSIGN_OR_RETURN(m.dag, casper::dag::DagStore::Open(
                              m.pipelined.get(),
                              casper::dag::DagColumnsFrom(kHistoryColumns)));
  node->dag_ = m.dag.get();
  casper::pool::DeployPoolOptions pool_options;
  pool_options.max_deploys = static_cast<size_t>(c.deploy_pool_max_deploys);
  ASSIGN_OR_RETURN(m.pool, casper::pool::DeployPool::Open(
                               m.pipelined.get(), kPoolColumn, pool_options));

  // Genesis: made once, on the first start of a new shard.
  std::optional<Block> genesis;
  if (m.dag->size() == 0) {
    ASSIGN_OR_RETURN(casper::genesis::GenesisParams params,
                     GenesisInputs(c, data_dir, node->key_, out));
    // The parameters first: a crash before the genesis is stored leaves
    // them for the next start, which makes the same genesis state.
    RETURN_IF_ERROR(WriteFileAtomically(data_dir + kGenesisParamsFile,
                                        GenesisParamsToml(c), 0644));
    ASSIGN_OR_RETURN(
        casper::genesis::GenesisBlock g,
        casper::genesis::CreateGenesis(params, m.space.get(), m.contracts.get(),
                                       m.runtime.get()));
    ASSIGN_OR_RETURN(bool inserted, m.dag->Insert(g.block));
    (void)inserted;
    RETURN_IF_ERROR(m.dag->SetLastFinalized(g.block.hash));
    genesis = g.block;
    Log("node")->info("genesis block {} made (shard {}, {} validators)",
                      HexEncode(g.block.hash), c.shard_name, g.bonds.size());
  } else {
    std::vector<Hash32> roots = m.dag->AtHeight(0);
    if (roots.size() != 1) {
      return absl::DataLossError("the DAG has no single genesis block");
    }
    ASSIGN_OR_RETURN(std::optional<Block> stored, m.dag->GetBlock(roots[0]));
    if (!stored.has_value()) return absl::DataLossError("genesis not stored");
    if (stored->shard_id != c.shard_name) {
      return absl::FailedPreconditionError(
          absl::StrCat("the data dir holds shard '", stored->shard_id,
                       "', not '", c.shard_name, "'"));
    }
    // A crash between storing the genesis and finalizing it.
    if (!m.dag->LastFinalized().has_value()) {
      RETURN_IF_ERROR(m.dag->SetLastFinalized(stored->hash));
    }
    genesis = *std::move(stored);
    Log("node")->info("continuing from {} blocks (last finalized #{})",
                      m.dag->size(), node->last_finalized_number());
  }

  m.merge_context = std::make_unique<casper::merge::MergeContext>(
      casper::merge::MergeContextOptions{.pool = &m.pool_threads});
  // Merge indexes of the blocks above the last finalized one: a shard makes
  // tens of blocks a second, and one index holds a block's event logs, so
  // the bound is what keeps the node's memory flat (a miss is rebuilt by
  // replaying the block).
  m.pre_states = std::make_unique<casper::validation::PreStateBuilder>(
      m.dag.get(), &m.space->history(), &m.codec, interp::StoredTermFactory(),
      m.merge_context.get(), kMergeIndexesKept);
  RETURN_IF_ERROR(m.pre_states->Remember(*genesis, {}));
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
  m.creator = std::make_unique<casper::proposer::BlockCreator>(
      m.dag.get(), m.pool.get(), m.blocks.get(), m.validators.get(),
      creator_options, m.pre_states.get());
  casper::validation::ValidatorOptions validator_options;
  validator_options.shard_id = c.shard_name;
  m.validator = std::make_unique<casper::validation::BlockValidator>(
      m.dag.get(), m.blocks.get(), m.validators.get(), &m.pool_threads,
      validator_options, m.pre_states.get());
  casper::engine::EngineOptions engine_options;
  engine_options.finalizer.threshold_ppm =
      pos_params.fault_tolerance_threshold_ppm;
  Node* self = node.get();
  m.listener = std::make_shared<Listener>(
      m.dag.get(), m.metrics.get(), &m.hooks, &m.output,
      [&m](const Block& b) {
        // Work to finalize: user deploys, and slashes (a slash that is
        // never final leaves the equivocator its stake).
        if (!b.body.deploys.empty() || casper::block::CarriesSlash(b)) {
          m.unfinalized_work.insert(b.hash);
        }
        MutexLock lock(&m.mu);
        for (const auto& d : b.body.deploys) m.backup.Forget(d.sig);
      },
      [&m](std::span<const Hash32> blocks) {
        for (const Hash32& h : blocks) m.unfinalized_work.erase(h);
        m.empty_streak = 0;
      });
  engine_options.listener = m.listener.get();
  if (!c.standalone) {
    NetworkCallbacks callbacks;
    callbacks.block = [self](Block b) { self->QueuePeerBlock(std::move(b)); };
    callbacks.deploy = [self](const ::casper::DeployDataProto& d) {
      return self->HoldGossipedDeploy(d);
    };
    m.network = std::make_unique<CasperNetwork>(m.dag.get(), *genesis,
                                                std::move(callbacks));
  }
  m.engine = std::make_unique<casper::engine::Engine>(
      m.dag.get(), m.pool.get(), m.validator.get(), m.creator.get(),
      m.network != nullptr
          ? static_cast<casper::engine::Transport*>(m.network.get())
          : &m.peers,
      node->key_.value_or(crypto::Secp256k1PrivateKey{}), engine_options,
      m.pre_states.get());
  // Work not final yet: a restart continues finalizing it.
  ASSIGN_OR_RETURN(std::vector<Hash32> work,
                   casper::dag::UnfinalizedWork(*m.dag));
  m.unfinalized_work.insert(work.begin(), work.end());
  m.last_lfb = m.dag->LastFinalized();
  m.lfb_moved = Clock::now();

  // Deploys a crash left in the pool after their block was finalized.
  std::vector<Bytes> done;
  m.pool->ForEach([&](const casper::SignedDeploy& d) {
    absl::StatusOr<std::vector<Hash32>> in = m.dag->BlocksWithDeploy(d.sig());
    if (in.ok() && std::any_of(in->begin(), in->end(), [&](const Hash32& h) {
          return m.dag->IsFinalized(h);
        })) {
      done.push_back(d.sig());
    }
  });
  RETURN_IF_ERROR(m.pool->Remove(done));
  RETURN_IF_ERROR(m.metrics->Attach(registry, m.dag.get(), m.pool.get(), [&m] {
    MutexLock lock(&m.mu);
    return m.tasks.size();
  }));
  RETURN_IF_ERROR(m.metrics->AttachStorage(
      registry, m.store.get(), m.pipelined.get(), &m.space->history().trie()));

  if (m.network != nullptr) {
    RETURN_IF_ERROR(node->StartNetwork(registry, out));
  }
  {
    MutexLock lock(&m.mu);
    m.running = true;
    if (m.pool->size() > 0) {
      m.deploys_waiting = m.pool->size();
      m.first_waiting = Clock::now();
    }
  }
  m.thread = std::thread([self] { self->ConsensusLoop(); });
  return node;
}

void Node::ConsensusLoop() {
  Impl& m = *impl_;
  const auto window =
      std::chrono::milliseconds(config_.propose_batch_window_ms);
  const auto min_interval =
      std::chrono::milliseconds(config_.min_block_interval_ms);
  const auto full_block =
      static_cast<uint64_t>(config_.max_user_deploys_per_block);
  const bool proposer = config_.autopropose && key_.has_value();
  bool retry_later = false;  // the pool holds deploys no block could take
  Clock::time_point retry_at{};
  auto next_housekeeping = Clock::now() + kHousekeepingInterval;
  for (;;) {
    std::function<void(bool)> task;
    std::optional<Block> block;
    enum class Propose { kNone, kDeploys, kEmpty } propose = Propose::kNone;
    bool housekeeping = false;
    {
      MutexLock lock(&m.mu);
      for (;;) {
        if (m.stopping) return;
        if (!m.tasks.empty()) {
          task = std::move(m.tasks.front());
          m.tasks.pop_front();
          break;
        }
        const auto now = Clock::now();
        if (now >= next_housekeeping) {
          housekeeping = true;
          next_housekeeping = now + kHousekeepingInterval;
          break;
        }
        if (!m.blocks_in.empty()) {
          block = std::move(m.blocks_in.front());
          m.blocks_in.pop_front();
          m.cv.SignalAll();  // room for the dispatcher
          break;
        }
        auto wake = next_housekeeping;
        // Not sooner than the minimum interval after this node's last
        // block: at tens of blocks a second the block height outruns the
        // deploys' 50-block lifespan, and every block costs each peer a
        // replay. A full block's worth of deploys does not wait for it.
        const auto spaced = m.last_made + min_interval;
        if (proposer && m.deploys_waiting > 0) {
          const auto due = m.deploys_waiting >= full_block
                               ? m.first_waiting + window
                               : std::max(m.first_waiting + window, spaced);
          if (now >= due) {
            m.deploys_waiting = 0;
            propose = Propose::kDeploys;
            break;
          }
          wake = std::min(wake, due);
        }
        if (proposer && retry_later) {
          if (now >= retry_at) {
            retry_later = false;
            propose = Propose::kDeploys;
            break;
          }
          wake = std::min(wake, retry_at);
        }
        if (proposer && m.slash_wanted) {
          m.slash_wanted = false;
          propose = Propose::kDeploys;  // a block only if it has a slash
          break;
        }
        if (proposer && m.finality_wanted) {
          const auto due = std::max(m.finality_since + window, spaced);
          if (now >= due) {
            m.finality_wanted = false;
            propose = Propose::kEmpty;
            break;
          }
          wake = std::min(wake, due);
        }
        m.cv.WaitUntil(&m.mu, wake);
      }
    }
    if (task) {
      task(true);
      continue;
    }
    if (block.has_value()) {
      HandlePeerBlock(*block);
      continue;
    }
    if (housekeeping) {
      Housekeeping();
      continue;
    }
    if (propose == Propose::kNone) continue;
    absl::StatusOr<Hash32> made = ProposeNow(propose == Propose::kEmpty);
    if (made.ok()) m.last_made = Clock::now();
    if (made.ok() && propose == Propose::kEmpty) {
      std::shared_ptr<const casper::dag::BlockMeta> meta = dag_->Meta(*made);
      m.empty_streak =
          meta != nullptr && meta->deploy_count == 0 ? m.empty_streak + 1 : 0;
    }
    if (made.ok()) {
      // Deploys beyond one block's cap go in the next one.
      MutexLock lock(&m.mu);
      // What is left, counted once: deploys admitted while the block was
      // made are counted already, or are being (and a double count could
      // pass for a full block).
      const size_t pooled = m.pool->size();
      const uint64_t left =
          pooled > m.deploys_admitting ? pooled - m.deploys_admitting : 0;
      if (left > 0) {
        if (m.deploys_waiting == 0) m.first_waiting = Clock::now();
        m.deploys_waiting = std::max<uint64_t>(m.deploys_waiting, left);
      }
    } else if (m.pool->size() > 0) {
      retry_later = true;
      retry_at = Clock::now() + kProposeRetry;
    }
  }
}

void Node::QueuePeerBlock(Block block) {
  Impl& m = *impl_;
  MutexLock lock(&m.mu);
  while (!m.stopping && m.blocks_in.size() >= kMaxBlocksWaiting) {
    m.cv.Wait(&m.mu);
  }
  if (m.stopping) return;
  m.blocks_in.push_back(std::move(block));
  m.cv.SignalAll();
}

void Node::HandlePeerBlock(const Block& block) {
  Impl& m = *impl_;
  absl::StatusOr<casper::engine::Received> r =
      m.engine->OnBlock(block, NowMs());
  m.engine_buffered.store(m.engine->buffered(), std::memory_order_relaxed);
  if (!r.ok()) {
    // Not taken is not invalid: it is fetched again (regression: a block
    // dropped while the disk was full was never asked for again, as the
    // buffered blocks waiting for it counted it as on its way; the node
    // stayed behind for good).
    m.network->NotTaken(block.hash);
    if (rspace::IsNoSpace(r.status())) {
      DiskFull(r.status());
    } else {
      Log("casper")->warn("block {} from a peer not taken: {}",
                          HexEncode(block.hash), r.status().ToString());
    }
    return;
  }
  m.network->Delivered(block.hash);
  if (r->kind == casper::engine::Received::Kind::kAdded) DiskOk();
  if (r->kind == casper::engine::Received::Kind::kInvalid) {
    Log("casper")->warn("block {} by {} is invalid: {}", HexEncode(block.hash),
                        HexEncode(block.sender), r->verdict.detail);
    // Its sender is slashed in this validator's next block, made now: with
    // no deploys coming there would be no next block (found by chaos
    // bad-peer under TSan: an equivocation that came after the stream's
    // last deploy was never slashed).
    MutexLock lock(&m.mu);
    m.slash_wanted = true;
    m.cv.SignalAll();
    return;
  }
  if (r->kind == casper::engine::Received::Kind::kAdded &&
      m.empty_streak < kMaxEmptyStreak && NeedsOwnBlock()) {
    MutexLock lock(&m.mu);
    if (!m.finality_wanted) {
      m.finality_wanted = true;
      m.finality_since = Clock::now();
      m.cv.SignalAll();
    }
  }
}

bool Node::NeedsOwnBlock() const {
  const Impl& m = *impl_;
  if (!key_.has_value() || !config_.autopropose || m.unfinalized_work.empty()) {
    return false;
  }
  if (!SelfBonded()) return false;
  return !casper::dag::LatestJustifiesOthers(*dag_, public_key_);
}

void Node::Housekeeping() {
  Impl& m = *impl_;
  const auto now = Clock::now();
  // A long gap since the last look: the process was paused (SIGSTOP, a
  // suspended machine). Its peers moved on; ask them for their tips.
  if (m.network != nullptr && now - m.last_housekeeping > kPauseNoticed) {
    Log("p2p")->info("paused for {} ms; asking peers for their tips",
                     std::chrono::duration_cast<std::chrono::milliseconds>(
                         now - m.last_housekeeping)
                         .count());
    m.network->AskTips();
  }
  m.last_housekeeping = now;
  // The heartbeat: finality has not moved for a while although blocks with
  // deploys wait for it.
  const std::optional<Hash32> lfb = dag_->LastFinalized();
  if (lfb != m.last_lfb) {
    m.last_lfb = lfb;
    m.lfb_moved = now;
  }
  if (config_.heartbeat_enabled && key_.has_value() && config_.autopropose &&
      !m.unfinalized_work.empty() &&
      now - m.lfb_moved >=
          std::chrono::milliseconds(config_.heartbeat_check_interval_ms)) {
    m.lfb_moved = now;  // once per interval
    MutexLock lock(&m.mu);
    if (!m.finality_wanted) {
      m.finality_wanted = true;
      m.finality_since = now;
    }
  }
  // Gossiped deploys whose validator did not include them in time: held
  // for the takeover time, or until half their window has passed (at ten
  // heights a second the window is about 5 s, as short as the takeover
  // time: a validator that stalls must not take its deploys with it).
  // Not while behind: "in no block" means in no block seen here, and a
  // validator catching up has not seen the latest ones. The deploys stay
  // held until it has.
  if (CatchingUp()) return;
  std::vector<casper::SignedDeploy> due;
  {
    const int64_t next = dag_->MaxHeight() + 1;
    MutexLock lock(&m.mu);
    due = m.backup.TakeDue(now, next);
  }
  size_t taken = 0;
  for (const casper::SignedDeploy& d : due) {
    absl::StatusOr<std::vector<Hash32>> in = dag_->BlocksWithDeploy(d.sig());
    if (!in.ok() || !in->empty()) continue;
    absl::Status added = m.pool->Add(d, dag_->MaxHeight(), NowMs());
    if (added.ok()) {
      ++taken;
    } else if (rspace::IsNoSpace(added)) {
      DiskFull(added);
    } else {
      Log("casper")->warn(
          "deploy {} gossiped by a peer, in no block, not "
          "taken over: {}",
          HexEncode(d.sig()), added.ToString());
    }
  }
  if (taken > 0) {
    Log("casper")->info(
        "{} deploys gossiped by peers and in no block are "
        "proposed here",
        taken);
    MutexLock lock(&m.mu);
    if (m.deploys_waiting == 0) m.first_waiting = Clock::now();
    m.deploys_waiting += taken;
  }
}

absl::Status Node::HoldGossipedDeploy(const ::casper::DeployDataProto& proto) {
  Impl& m = *impl_;
  if (!key_.has_value()) {
    return absl::FailedPreconditionError(
        "a read-only node proposes no deploys");
  }
  if (!SelfBonded()) {
    return absl::FailedPreconditionError(
        "this validator is not bonded, it proposes no deploys");
  }
  absl::StatusOr<casper::SignedDeploy> d =
      casper::SignedDeploy::FromProto(proto);
  if (!d.ok()) return d.status();
  if (d->data().shard_id != config_.shard_name) {
    return absl::InvalidArgumentError(
        absl::StrCat("a deploy of shard '", d->data().shard_id,
                     "', this is shard '", config_.shard_name, "'"));
  }
  if (m.pool->Contains(d->sig())) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<Hash32> in, dag_->BlocksWithDeploy(d->sig()));
  if (!in.empty()) return absl::OkStatus();
  MutexLock lock(&m.mu);
  if (m.backup.Hold(*std::move(d), Clock::now()) == GossipBackup::Held::kFull) {
    m.metrics->DeployRefused("gossip_backup_full");
    return absl::ResourceExhaustedError("the gossip backup is full");
  }
  return absl::OkStatus();
}

absl::Status Node::StartNetwork(metrics::Registry* registry,
                                std::ostream& out) {
  Impl& m = *impl_;
  const NodeConfig& c = config_;
  bool created = false;
  ASSIGN_OR_RETURN(Bytes id, p2p::LoadOrCreateNodeKey(
                                 DataDir(c) + "/node.key.pem", &created));
  p2p::TransportOptions to;
  to.self.id = id;
  to.self.host = c.host;
  to.self.tcp_port = static_cast<uint32_t>(c.port_protocol);
  to.self.udp_port = static_cast<uint32_t>(c.port_discovery);
  to.network_id = c.network_id;
  to.listen_host = c.host;
  to.network_timeout = std::chrono::milliseconds(c.network_timeout_ms);
  to.max_peers = static_cast<size_t>(c.max_peers);
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
  if (registry != nullptr) {
    CasperNetwork* net = m.network.get();
    struct NetCounter {
      const char* name;
      const char* help;
      uint64_t NetworkCounters::*field;
    };
    for (const NetCounter& nc : {
             NetCounter{"casper_peer_blocks_received_total",
                        "blocks received from peers (decoded)",
                        &NetworkCounters::blocks_received},
             NetCounter{"casper_peer_blocks_served_total",
                        "blocks streamed to peers that asked",
                        &NetworkCounters::blocks_served},
             NetCounter{"casper_block_requests_total",
                        "block requests sent to peers",
                        &NetworkCounters::requests_sent},
             NetCounter{"casper_block_request_retries_total",
                        "block requests repeated after a timeout",
                        &NetworkCounters::retries},
             NetCounter{"casper_peer_blocks_duplicate_total",
                        "copies of a block already received and not yet "
                        "handed on, dropped on arrival",
                        &NetworkCounters::duplicates_dropped},
             NetCounter{"casper_block_requests_given_up_total",
                        "blocks no longer asked for (too many wanted)",
                        &NetworkCounters::wanted_given_up},
             NetCounter{"casper_block_serve_busy_total",
                        "block requests not served: the stream budget was "
                        "spent (the requester asks again)",
                        &NetworkCounters::serve_busy},
             NetCounter{"casper_peer_packets_malformed_total",
                        "Casper packets from peers that did not decode",
                        &NetworkCounters::malformed},
             NetCounter{"casper_peer_genesis_mismatch_total",
                        "peers refused for another genesis",
                        &NetworkCounters::genesis_mismatch},
         }) {
      RETURN_IF_ERROR(registry->AddCallbackCounter(
          nc.name, nc.help, [net, field = nc.field] {
            return static_cast<double>(net->counters().*field);
          }));
    }
    ASSIGN_OR_RETURN(
        m.behind_seconds,
        registry->AddCounterFamily(
            "rnode_behind_seconds_total",
            "time this validator was behind its peers and refused deploys "
            "as catching up, by reason: paused (the process was stopped), "
            "resuming (just after), parents (blocks wait for their "
            "parents), missing (a block asked for is long missing), queue "
            "(blocks wait for the consensus thread)",
            {"reason"}));
    RETURN_IF_ERROR(registry->AddCallbackGauge(
        "casper_blocks_wanted", "blocks asked from peers and not received",
        [net] { return static_cast<double>(net->wanted()); }));
    RETURN_IF_ERROR(registry->AddCallbackGauge(
        "casper_peer_blocks_waiting",
        "blocks from peers waiting for the consensus thread", [&m] {
          MutexLock lock(&m.mu);
          return static_cast<double>(m.blocks_in.size());
        }));
    RETURN_IF_ERROR(registry->AddCallbackGauge(
        "casper_gossiped_deploys_held",
        "deploys gossiped by peers held as backup", [&m] {
          MutexLock lock(&m.mu);
          return static_cast<double>(m.backup.size());
        }));
  }
  m.peer_table = std::make_unique<p2p::PeerTable>(id, to.max_peers);
  p2p::DiscoveryOptions dopt;
  dopt.self = m.transport->self();
  dopt.network_id = c.network_id;
  dopt.listen_host = c.host;
  dopt.allow_private_addresses = c.allow_private_addresses;
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
  m.discovery_thread = std::thread([this] { DiscoveryLoop(); });
  m.watch_tick_ms.store(SteadyMs());
  m.pause_watch_thread = std::thread([this] { PauseWatchLoop(); });
  return absl::OkStatus();
}

void Node::PauseWatchLoop() {
  Impl& m = *impl_;
  const int64_t pause_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(kPauseNoticed)
          .count();
  // Time behind in the current report window, by reason.
  std::array<int64_t, kBehindReasons> behind_ms{};
  int64_t report_from = SteadyMs();
  for (;;) {
    {
      MutexLock lock(&m.mu);
      const auto until = Clock::now() + kPauseWatchInterval;
      while (!m.stopping && Clock::now() < until) m.cv.WaitUntil(&m.mu, until);
      if (m.stopping) return;
    }
    const int64_t now = SteadyMs();
    const int64_t gap = now - m.watch_tick_ms.load();
    if (gap > pause_ms) {
      m.resumed_ms.store(now);
      Log("p2p")->info(
          "the process was paused for {} ms; refusing deploys while it "
          "catches up",
          gap);
    }
    m.watch_tick_ms.store(now);
    const Behind reason = gap > pause_ms ? Behind::kPaused : BehindReason();
    if (reason != Behind::kNo) {
      behind_ms[static_cast<size_t>(reason)] += gap;
      if (m.behind_seconds != nullptr) {
        absl::StatusOr<metrics::Counter*> c =
            m.behind_seconds->WithLabels({BehindName(reason)});
        if (c.ok()) (*c)->Add(static_cast<double>(gap) / 1000.0);
      }
    }
    if (now - report_from >= kBehindReportMs) {
      ReportBehind(behind_ms, now - report_from);
      behind_ms.fill(0);
      report_from = now;
    }
  }
}

void Node::ReportBehind(const std::array<int64_t, kBehindReasons>& behind_ms,
                        int64_t window_ms) const {
  const Impl& m = *impl_;
  int64_t total = 0;
  std::string split;
  for (size_t i = 1; i < behind_ms.size(); ++i) {
    if (behind_ms[i] == 0) continue;
    total += behind_ms[i];
    absl::StrAppend(&split, split.empty() ? "" : ", ",
                    BehindName(static_cast<Behind>(i)), " ",
                    absl::StrFormat("%.1f", behind_ms[i] / 1000.0), " s");
  }
  if (total == 0) return;
  size_t queued = 0;
  {
    MutexLock lock(&m.mu);
    queued = m.blocks_in.size();
  }
  Log("casper")->info(
      "behind its peers {:.1f} s of the last {:.0f} s ({}); now {} blocks "
      "queued, {} waiting for parents, {} asked for (oldest {} ms)",
      total / 1000.0, window_ms / 1000.0, split, queued,
      m.engine_buffered.load(std::memory_order_relaxed), m.network->wanted(),
      m.network->oldest_wanted_age().count());
}

void Node::DiscoveryLoop() {
  Impl& m = *impl_;
  const auto interval = std::chrono::milliseconds(config_.lookup_interval_ms);
  const auto timeout = std::chrono::milliseconds(config_.network_timeout_ms);
  const p2p::PeerNode self = m.transport->self();
  auto next = Clock::now();
  for (;;) {
    {
      MutexLock lock(&m.mu);
      while (!m.stopping && Clock::now() < next) {
        m.cv.WaitUntil(&m.mu, next);
      }
      if (m.stopping) return;
    }
    next = Clock::now() + interval;
    // Peers that reached us are known to discovery too; then ask each
    // known peer (the bootstrap first) for the peers it knows.
    for (const p2p::PeerNode& p : m.transport->Known()) m.peer_table->Upsert(p);
    std::vector<p2p::PeerNode> ask = m.peer_table->All();
    for (const p2p::PeerNode& peer : ask) {
      absl::StatusOr<std::vector<p2p::PeerNode>> found =
          p2p::Lookup(peer, self.id, self, config_.network_id, timeout);
      if (!found.ok()) continue;
      for (const p2p::PeerNode& p : *found) {
        if (m.peer_table->Upsert(p)) m.transport->AddPeer(p);
      }
      {
        MutexLock lock(&m.mu);
        if (m.stopping) return;
      }
    }
  }
}

const char* Node::BehindName(Behind b) {
  switch (b) {
    case Behind::kNo:
      return "none";
    case Behind::kPaused:
      return "paused";
    case Behind::kResuming:
      return "resuming";
    case Behind::kParents:
      return "parents";
    case Behind::kMissing:
      return "missing";
    case Behind::kQueue:
      return "queue";
  }
  return "?";
}

Node::Behind Node::BehindReason() const {
  const Impl& m = *impl_;
  if (m.network == nullptr) return Behind::kNo;
  const int64_t now = SteadyMs();
  const int64_t resumed = m.resumed_ms.load();
  if (now - m.watch_tick_ms.load() >
      std::chrono::duration_cast<std::chrono::milliseconds>(kPauseNoticed)
          .count()) {
    return Behind::kPaused;
  }
  if (resumed != std::numeric_limits<int64_t>::min() &&
      now - resumed <
          std::chrono::duration_cast<std::chrono::milliseconds>(kResumeGrace)
              .count()) {
    return Behind::kResuming;
  }
  if (m.engine_buffered.load(std::memory_order_relaxed) >= kBehindBuffered) {
    return Behind::kParents;
  }
  if (m.network->oldest_wanted_age() >= kBehindWanted) return Behind::kMissing;
  MutexLock lock(&m.mu);
  return m.blocks_in.size() >= kBehindQueued ? Behind::kQueue : Behind::kNo;
}

bool Node::SynchronyAllows() const {
  const double threshold = config_.synchrony_constraint_threshold;
  if (threshold <= 0) return true;
  const std::map<crypto::Secp256k1PublicKey, Hash32> latest =
      dag_->LatestMessages();
  auto mine = latest.find(public_key_);
  const std::optional<Hash32> lfb = dag_->LastFinalized();
  if (mine == latest.end() || !lfb.has_value()) return true;  // first block
  std::shared_ptr<const casper::dag::BlockMeta> my_meta =
      dag_->Meta(mine->second);
  std::shared_ptr<const casper::dag::BlockMeta> lfb_meta = dag_->Meta(*lfb);
  if (my_meta == nullptr || lfb_meta == nullptr) return true;
  double others = 0;
  double seen = 0;
  for (const casper::block::Bond& bond : lfb_meta->bonds) {
    if (bond.validator == public_key_ || bond.stake <= 0) continue;
    others += static_cast<double>(bond.stake);
    auto it = latest.find(bond.validator);
    if (it == latest.end()) continue;
    auto justified = std::find_if(my_meta->justifications.begin(),
                                  my_meta->justifications.end(),
                                  [&](const casper::block::Justification& j) {
                                    return j.validator == bond.validator;
                                  });
    if (justified == my_meta->justifications.end() ||
        justified->latest_block != it->second) {
      seen += static_cast<double>(bond.stake);
    }
  }
  return others == 0 || seen >= threshold * others;
}

std::string Node::address() const {
  if (impl_->transport == nullptr) return "";
  return p2p::FormatPeerAddress(impl_->transport->self());
}

std::vector<PeerStatus> Node::peers() const {
  std::vector<PeerStatus> out;
  if (impl_->transport == nullptr) return out;
  std::vector<p2p::PeerNode> connected = impl_->transport->Connected();
  for (const p2p::PeerNode& p : impl_->transport->Known()) {
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
  if (impl_->transport == nullptr) {
    return absl::FailedPreconditionError(
        "a standalone node has no peers to be cut off from");
  }
  impl_->transport->SetIsolated(isolated);
  return absl::OkStatus();
}

absl::Status Node::SetDiskFull(bool full) {
  if (!config_.fault_injection) {
    return absl::PermissionDeniedError(
        "fault injection is off (start the node with --fault-injection)");
  }
  RETURN_IF_ERROR(impl_->store->InjectNoSpace(full));
  Log("node")->warn("fault injection: the disk is {}",
                    full ? "full" : "no longer full");
  return absl::OkStatus();
}

bool Node::disk_full_injected() const {
  return impl_->store->no_space_injected();
}

void Node::DiskFull(const absl::Status& s) {
  if (!impl_->disk_full.exchange(true)) {
    Log("node")->error(
        "the data dir's disk is full: deploys are refused and no blocks are "
        "made or taken until space returns ({})",
        s.ToString());
  }
}

bool Node::DiskWritable() {
  Impl& m = *impl_;
  if (!m.disk_full.load()) return true;
  // A write of nothing (a delete of a key never written) tells whether the
  // store takes writes again (after landing a merge's write that failed).
  rspace::WriteBatch probe;
  probe.Delete(kPoolColumn, AsBytes("disk-probe"));
  absl::Status s = m.pipelined->Write(probe);
  if (!s.ok()) return false;
  DiskOk();
  return true;
}

void Node::DiskOk() {
  if (impl_->disk_full.exchange(false)) {
    Log("node")->warn("the data dir's disk takes writes again");
  }
}

bool Node::isolated() const {
  return impl_->transport != nullptr && impl_->transport->isolated();
}

absl::StatusOr<Hash32> Node::ProposeNow(bool allow_empty) {
  Impl& m = *impl_;
  if (!key_.has_value()) {
    return absl::FailedPreconditionError("Propose error: read-only node.");
  }
  if (!SelfBonded()) {
    return absl::FailedPreconditionError(
        "Propose error: this validator is not bonded.");
  }
  // The same backlog test as deploy admission: with blocks streaming in
  // at tens a second, "nothing asked for" is rarely true even of a node
  // that is up to date, and its deploys would wait out their window.
  if (!m.caught_up && m.network != nullptr) {
    if ((m.bootstrap.has_value() && m.transport->Connected().empty()) ||
        CatchingUp()) {
      return absl::UnavailableError(
          "Propose error: this node is still catching up with its peers.");
    }
  }
  m.caught_up = true;
  if (!SynchronyAllows()) {
    return absl::UnavailableError(
        "Propose error: the synchrony constraint waits for blocks of other "
        "validators.");
  }
  const int64_t now = NowMs();
  absl::StatusOr<std::vector<Bytes>> pruned =
      m.pool->PruneExpired(dag_->MaxHeight(), now);
  if (pruned.ok() && !pruned->empty()) {
    m.metrics->DeploysExpired(pruned->size());
    for (const Bytes& sig : *pruned) m.expired.Put(sig, true);
    Log("casper")->info(
        "{} deploys expired unincluded (their validity window closed)",
        pruned->size());
  }
  const auto t0 = Clock::now();
  absl::StatusOr<std::optional<Hash32>> made =
      m.engine->Propose(now, allow_empty);
  const double seconds =
      std::chrono::duration<double>(Clock::now() - t0).count();
  if (!made.ok()) {
    m.metrics->Proposed("error", seconds);
    if (made.status().code() == absl::StatusCode::kFailedPrecondition) {
      // The block creator's "not bonded in the state of ...": expected of
      // a validator that was just slashed; said once, not per attempt.
      if (!m.said_no_stake) {
        m.said_no_stake = true;
        Log("casper")->warn("this validator proposes no blocks: {}",
                            std::string(made.status().message()));
      }
    } else if (rspace::IsNoSpace(made.status())) {
      DiskFull(made.status());
    } else {
      Log("casper")->error("propose failed: {}", made.status().ToString());
    }
    return made.status();
  }
  m.said_no_stake = false;
  if (!made->has_value()) {
    m.metrics->Proposed("empty", seconds);
    return absl::FailedPreconditionError("No new deploys to propose.");
  }
  m.metrics->Proposed("created", seconds);
  DiskOk();
  Log("casper")->info("Success! Block {} created and added.",
                      HexEncode(**made));
  return **made;
}

absl::StatusOr<Hash32> Node::Propose() {
  if (!key_.has_value()) {
    return absl::FailedPreconditionError("Propose error: read-only node.");
  }
  return impl_->Call<Hash32>([this] { return ProposeNow(false); });
}

absl::StatusOr<Bytes> Node::Deploy(const ::casper::DeployDataProto& proto) {
  Impl& m = *impl_;
  if (!key_.has_value()) {
    m.metrics->DeployRefused("read_only");
    return absl::FailedPreconditionError(
        "Deploy was rejected because node is running in read-only mode.");
  }
  if (!SelfBonded()) {
    m.metrics->DeployRefused("not_bonded");
    return absl::FailedPreconditionError(
        "Deploy was not accepted: this validator has no stake in the last "
        "finalized block, so it proposes no blocks; deploy to a bonded "
        "validator.");
  }
  absl::StatusOr<casper::SignedDeploy> d =
      casper::SignedDeploy::FromProto(proto);
  if (!d.ok()) {
    m.metrics->DeployRefused("invalid");
    return absl::InvalidArgumentError(d.status().message());
  }
  if (d->data().shard_id != config_.shard_name) {
    m.metrics->DeployRefused("wrong_shard");
    return absl::InvalidArgumentError(absl::StrCat(
        "Deploy shardId '", d->data().shard_id,
        "' is not as expected network shard '", config_.shard_name, "'."));
  }
  if (d->data().phlo_price < config_.min_phlo_price) {
    m.metrics->DeployRefused("low_phlo_price");
    return absl::InvalidArgumentError(absl::StrCat(
        "Phlo price ", d->data().phlo_price, " is less than minimum price ",
        config_.min_phlo_price, "."));
  }
  // Before anything that depends on the node's view: a full disk is what
  // the client must hear.
  if (!DiskWritable()) {
    m.metrics->DeployRefused("disk_full");
    return rspace::NoSpaceError(kDiskFull);
  }
  if (CatchingUp()) {
    m.metrics->DeployRefused("catching_up");
    return absl::UnavailableError(
        "Deploy was not accepted: this validator is catching up with its "
        "peers and cannot judge the deploy's validity window yet; retry "
        "shortly or deploy to another validator.");
  }
  // In a shard an acknowledged deploy is on two machines (below): a
  // validator cut off from every peer cannot give that, nor judge the
  // window against the shard's height, so it says so at once.
  if (m.network != nullptr && !m.network->HasPeers()) {
    m.metrics->DeployRefused("no_peers");
    return absl::UnavailableError(kNoPeerTookTheDeploy);
  }
  ASSIGN_OR_RETURN(std::vector<Hash32> in, dag_->BlocksWithDeploy(d->sig()));
  if (!in.empty()) {
    m.metrics->DeployRefused("duplicate");
    return absl::AlreadyExistsError(absl::StrCat("Deploy ", HexEncode(d->sig()),
                                                 " is already in block ",
                                                 HexEncode(in.back()), "."));
  }
  {
    MutexLock lock(&m.mu);
    ++m.deploys_admitting;
  }
  // Uncounts it from deploys_admitting; counts it waiting when admitted.
  bool admitted = false;
  absl::Cleanup settle = [&m, &admitted] {
    MutexLock lock(&m.mu);
    --m.deploys_admitting;
    if (!admitted) return;
    if (m.deploys_waiting == 0) m.first_waiting = Clock::now();
    ++m.deploys_waiting;
    m.cv.SignalAll();
  };
  if (absl::Status s = m.pool->Add(*d, dag_->MaxHeight(), NowMs()); !s.ok()) {
    if (rspace::IsNoSpace(s)) {
      DiskFull(s);
      m.metrics->DeployRefused("disk_full");
      return rspace::NoSpaceError(kDiskFull);
    }
    m.metrics->DeployRefused(
        s.code() == absl::StatusCode::kAlreadyExists       ? "duplicate"
        : s.code() == absl::StatusCode::kResourceExhausted ? "pool_full"
                                                           : "window");
    return s;
  }
  DiskOk();
  // A peer holds the deploy before the client hears it was accepted: should
  // this validator die before proposing it and stay down past half its
  // window, the peer takes it over (docs/p2p.md "Deploy gossip"). When no
  // peer took it the deploy leaves the pool and the client is told to retry
  // (a peer that got it after all may still include it: the client finds
  // it by its id, and a retry of the same deploy is kept once).
  if (m.network != nullptr &&
      m.network->ReplicateDeploy(proto.SerializeAsString(),
                                 kDeployReplicationTimeout,
                                 kDeployExtraCopyTimeout) == 0) {
    const Bytes sig = d->sig();
    RETURN_IF_ERROR(m.pool->Remove(std::span<const Bytes>(&sig, 1)));
    m.metrics->DeployRefused("no_peers");
    return absl::UnavailableError(kNoPeerTookTheDeploy);
  }
  m.metrics->DeployAdmitted(d->sig());
  admitted = true;
  return d->sig();
}

absl::StatusOr<Exploration> Node::Explore(std::string term,
                                          std::optional<Hash32> block,
                                          bool use_pre_state) {
  if (key_.has_value() && !config_.dev_mode) {
    return absl::FailedPreconditionError(
        "Exploratory deploy can only be executed on read-only RNode (or a "
        "validator in dev mode).");
  }
  if (term.size() > limits::kMaxDeployTermBytes) {
    return absl::InvalidArgumentError("the term is too large");
  }
  Hash32 at{};
  if (block.has_value()) {
    at = *block;
  } else {
    std::optional<Hash32> lfb = dag_->LastFinalized();
    if (!lfb.has_value()) return absl::UnavailableError("no finalized block");
    at = *lfb;
  }
  std::shared_ptr<const casper::dag::BlockMeta> meta = dag_->Meta(at);
  if (meta == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("Block not found: ", HexEncode(at)));
  }
  const Hash32 root = use_pre_state ? meta->pre_state : meta->post_state;
  Impl& m = *impl_;
  return m.Call<Exploration>([this, &m, term = std::move(term), root,
                              meta]() -> absl::StatusOr<Exploration> {
    RETURN_IF_ERROR(m.space->Reset(root));
    interp::DeployInfo info;
    info.timestamp = NowMs();
    info.deployer_public_key.assign(public_key_.begin(), public_key_.end());
    const Hash32 id = crypto::Blake2b256(
        AsBytes(absl::StrCat("rnode/explore/", ++m.explore_counter, "/",
                             info.timestamp, "/", term)));
    info.deploy_id.assign(id.begin(), id.end());
    interp::BlockInfo block_info;
    block_info.block_number = meta->block_number;
    block_info.timestamp = meta->timestamp;
    block_info.sender_public_key.assign(meta->sender.begin(),
                                        meta->sender.end());
    rspace::EventLog log;
    interp::EvalResult r = m.runtime->EvaluateSource(
        term, info, config_.exploratory_deploy_phlo_limit, &log, &block_info);
    if (r.static_error) {
      (void)m.space->Reset(root);
      return absl::InvalidArgumentError(r.error.message());
    }
    Exploration e;
    e.cost = r.cost;
    e.block = meta->hash;
    // The term's first `new` name: the deploy's first random name.
    crypto::SplittableRng rng = crypto::SplittableRng::FromSeed(info.deploy_id);
    const Hash32 name_id = rng.Next();
    rholang::ir::ParPtr name =
        rholang::ir::ParBuilder()
            .Add(rholang::ir::Unforgeable::Make(
                rholang::ir::UnforgeableKind::kPrivate, name_id))
            .Build();
    absl::StatusOr<rspace::TermPtr> channel = interp::MakeChannelTerm(name);
    absl::Status read = channel.status();
    if (channel.ok()) {
      absl::StatusOr<std::vector<rspace::Datum>> data =
          m.space->GetData((*channel)->hash());
      read = data.status();
      if (data.ok()) {
        for (const rspace::Datum& d : *data) {
          std::shared_ptr<const interp::StoredValue> holder;
          absl::StatusOr<const interp::DataValue*> v =
              interp::DataOf(*d.value, holder);
          if (!v.ok()) {
            read = v.status();
            break;
          }
          for (const auto& p : (*v)->pars) e.data.push_back(p);
        }
      }
    }
    // The exploration's changes are dropped with the overlay.
    RETURN_IF_ERROR(m.space->Reset(root));
    RETURN_IF_ERROR(read);
    return e;
  });
}

absl::StatusOr<Block> Node::GetBlock(const Hash32& hash) {
  ASSIGN_OR_RETURN(std::optional<Block> b, dag_->GetBlock(hash));
  if (!b.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("Block not found: ", HexEncode(hash)));
  }
  return *std::move(b);
}

absl::StatusOr<Block> Node::FindBlock(std::string_view hex) {
  std::string h(hex);
  absl::StripAsciiWhitespace(&h);
  absl::AsciiStrToLower(&h);
  const bool is_hex =
      !h.empty() && std::all_of(h.begin(), h.end(), [](char ch) {
        return absl::ascii_isxdigit(static_cast<unsigned char>(ch));
      });
  if (!is_hex || h.size() < 6 || h.size() > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", std::string(hex),
                     "' is not a valid block hash (minimum 6 hex characters)"));
  }
  if (h.size() == 64) {
    ASSIGN_OR_RETURN(Hash32 full, HexDecodeFixed<32>(h));
    return GetBlock(full);
  }
  std::optional<Hash32> found;
  for (int64_t n = dag_->MaxHeight(); n >= 0; --n) {
    for (const Hash32& candidate : dag_->AtHeight(n)) {
      if (HexEncode(candidate).starts_with(h)) {
        if (found.has_value()) {
          return absl::NotFoundError(
              absl::StrCat("Block hash prefix '", h, "' names several blocks"));
        }
        found = candidate;
      }
    }
  }
  if (!found.has_value()) {
    return absl::NotFoundError(absl::StrCat("Block not found: ", h));
  }
  return GetBlock(*found);
}

absl::StatusOr<std::vector<Block>> Node::BlocksByHeight(int64_t from,
                                                        int64_t to) {
  to = std::min(to, dag_->MaxHeight());
  from = std::max<int64_t>(from, 0);
  if (to - from + 1 > config_.max_blocks_limit) {
    from = to - config_.max_blocks_limit + 1;
  }
  std::vector<Block> out;
  for (int64_t n = to; n >= from; --n) {
    std::vector<Hash32> at = dag_->AtHeight(n);
    for (auto it = at.rbegin(); it != at.rend(); ++it) {
      ASSIGN_OR_RETURN(Block b, GetBlock(*it));
      out.push_back(std::move(b));
    }
  }
  return out;
}

absl::StatusOr<std::vector<Block>> Node::MainChain(int64_t depth) {
  depth = std::clamp<int64_t>(depth, 1, config_.max_blocks_limit);
  std::optional<Hash32> lfb = dag_->LastFinalized();
  if (!lfb.has_value()) return std::vector<Block>{};
  const casper::consensus::Weights weights =
      casper::consensus::WeightsOf(dag_->Meta(*lfb)->bonds);
  ASSIGN_OR_RETURN(
      casper::consensus::ForkChoice choice,
      casper::consensus::ChooseParents(*dag_, dag_->LatestMessages(), weights));
  const Hash32 tip = choice.parents.front();
  const int64_t floor = dag_->Meta(tip)->block_number - depth + 1;
  std::vector<Block> out;
  for (const Hash32& h : casper::consensus::MainChain(*dag_, tip, floor)) {
    if (static_cast<int64_t>(out.size()) >= depth) break;
    ASSIGN_OR_RETURN(Block b, GetBlock(h));
    out.push_back(std::move(b));
  }
  return out;
}

absl::StatusOr<Block> Node::LastFinalizedBlock() {
  std::optional<Hash32> lfb = dag_->LastFinalized();
  if (!lfb.has_value()) return absl::UnavailableError("no finalized block");
  return GetBlock(*lfb);
}

absl::StatusOr<DeployStatus> Node::FindDeploy(ByteView sig) {
  ASSIGN_OR_RETURN(std::vector<Hash32> in, dag_->BlocksWithDeploy(sig));
  DeployStatus s;
  if (!in.empty()) {
    // The newest block first; a finalized one decides.
    std::sort(in.begin(), in.end(), [&](const Hash32& a, const Hash32& b) {
      return dag_->Meta(a)->block_number > dag_->Meta(b)->block_number;
    });
    s.block = in.front();
    for (const Hash32& h : in) {
      if (dag_->IsFinalized(h)) {
        s.state = DeployStatus::State::kFinalized;
        s.block = h;
        return s;
      }
    }
    return s;  // pending: in blocks not yet final
  }
  if (impl_->pool->Contains(sig)) return s;
  if (impl_->expired.Get(Bytes(sig.begin(), sig.end())).has_value()) {
    s.state = DeployStatus::State::kExpired;
    return s;
  }
  return absl::NotFoundError(absl::StrCat(
      "Couldn't find block containing deploy with id: ", HexEncode(sig)));
}

absl::StatusOr<std::vector<rholang::ir::ParPtr>> Node::DataAtName(
    const rholang::ir::ParPtr& channel, const Hash32& block,
    bool use_pre_state) {
  std::shared_ptr<const casper::dag::BlockMeta> meta = dag_->Meta(block);
  if (meta == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("Block not found: ", HexEncode(block)));
  }
  ASSIGN_OR_RETURN(rspace::TermPtr term, interp::MakeChannelTerm(channel));
  ASSIGN_OR_RETURN(
      std::optional<Bytes> blob,
      impl_->space->history().ReadLeaf(
          use_pre_state ? meta->pre_state : meta->post_state, term->hash()));
  std::vector<rholang::ir::ParPtr> out;
  if (!blob.has_value()) return out;
  ASSIGN_OR_RETURN(
      rspace::ChannelState state,
      rspace::DecodeChannelState(*blob, interp::StoredTermFactory()));
  for (const rspace::Datum& d : state.data) {
    std::shared_ptr<const interp::StoredValue> holder;
    ASSIGN_OR_RETURN(const interp::DataValue* v,
                     interp::DataOf(*d.value, holder));
    for (const auto& p : v->pars) out.push_back(p);
  }
  return out;
}

bool Node::SelfBonded() const {
  // The key is already parsed: per peer block and gossiped deploy, no
  // second parse of it.
  if (!key_.has_value()) return false;
  std::optional<Hash32> lfb = dag_->LastFinalized();
  return lfb.has_value() &&
         casper::block::StakeOf(dag_->Meta(*lfb)->bonds, public_key_) > 0;
}

absl::StatusOr<bool> Node::IsBonded(ByteView public_key) const {
  ASSIGN_OR_RETURN(crypto::Secp256k1PublicKey key,
                   crypto::ParseSecp256k1PublicKey(public_key));
  std::optional<Hash32> lfb = dag_->LastFinalized();
  if (!lfb.has_value()) return false;
  return casper::block::StakeOf(dag_->Meta(*lfb)->bonds, key) > 0;
}

}  // namespace rnode::node

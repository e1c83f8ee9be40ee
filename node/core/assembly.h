// How a node is put together (Node::Open's steps, docs/node.md "Data
// directory"): the store, the execution core over it, the DAG and the
// pool, the genesis (made once or found), Casper's proposer, validator and
// engine, and in a shard the transport and discovery. Each step fills its
// part of NodeParts from the ones before it.
#ifndef RNODE_NODE_CORE_ASSEMBLY_H_
#define RNODE_NODE_CORE_ASSEMBLY_H_

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "casper/contracts/helper_contracts.h"
#include "casper/contracts/ledger.h"
#include "casper/contracts/pos.h"
#include "casper/contracts/system_contracts.h"
#include "casper/dag/dag_store.h"
#include "casper/engine/engine.h"
#include "casper/execution/block_executor.h"
#include "casper/execution/deploy_executor.h"
#include "casper/execution/executor_lanes.h"
#include "casper/merge/merge_context.h"
#include "casper/pool/deploy_pool.h"
#include "casper/pool/left_deploys.h"
#include "casper/prestate/pre_state.h"
#include "casper/proposer/block_creator.h"
#include "casper/validation/validator.h"
#include "node/config/config.h"
#include "node/core/chain_sync.h"
#include "node/core/engine_events.h"
#include "node/core/identity.h"
#include "node/core/network.h"
#include "node/core/node.h"
#include "node/core/node_metrics.h"
#include "node/metrics/metrics.h"
#include "node/p2p/discovery.h"
#include "node/p2p/identity/tls_identity.h"
#include "node/p2p/transport.h"
#include "rholang/interpreter/reducer.h"
#include "rspace/history/trie_gc.h"
#include "rspace/space.h"
#include "rspace/storage/pipelined_store.h"
#include "rspace/storage/rocksdb_store.h"
#include "util/worker_pool.h"

namespace rnode::node {

// The store's column families: history, DAG, deploy pool (docs/node.md
// "Data directory").
inline constexpr size_t kHistoryColumns = 3;
inline constexpr size_t kPoolColumn = kHistoryColumns + 4;
inline constexpr size_t kLeftDeploysColumn = kPoolColumn + 1;

// No peers: a standalone validator broadcasts to no one.
class NoPeers final : public casper::engine::Transport {
 public:
  void Broadcast(const casper::block::Block&) override {}
  void Request(const Hash32&) override {}
};

// The node's components, in construction order (destroyed in reverse:
// every part outlives the parts made after it).
struct NodeParts {
  explicit NodeParts(const NodeConfig& c);

  const int threads;
  WorkerPool pool_threads;
  std::unique_ptr<NodeMetrics> metrics;
  NodeHooks hooks;
  std::unique_ptr<rspace::RocksDbStore> store;
  // Over `store`; every user of the store goes through it, so the merge's
  // pipelined write lands before any later write (docs/merge.md §8).
  std::unique_ptr<rspace::PipelinedStore> pipelined;
  // Told of every commit of the space's history, for retention's sweeps
  // (rspace::TrieWriteGuard).
  std::unique_ptr<rspace::TrieWriteGuard> trie_guard;
  std::unique_ptr<rspace::Space> space;
  std::unique_ptr<casper::contracts::SystemContracts> contracts;
  LogSink output;
  std::unique_ptr<rholang::interp::Runtime> runtime;
  std::unique_ptr<casper::DeployExecutor> executor;
  std::unique_ptr<casper::ExecutorLanes> lanes;
  std::unique_ptr<casper::BlockExecutor> blocks;
  std::unique_ptr<casper::contracts::ValidatorsCache> validators;
  casper::contracts::BalanceCodec codec;
  std::unique_ptr<casper::dag::DagStore> dag;
  std::unique_ptr<casper::pool::DeployPool> pool;
  std::unique_ptr<casper::pool::LeftDeploys> left;
  std::unique_ptr<casper::merge::MergeContext> merge_context;
  std::unique_ptr<casper::prestate::PreStateBuilder> pre_states;
  std::unique_ptr<casper::proposer::BlockCreator> creator;
  std::unique_ptr<casper::validation::BlockValidator> validator;
  NoPeers peers;
  // Peer-to-peer (null in standalone mode). The network is the engine's
  // transport; stopped before anything it calls into. It hands catching
  // up by height to `sync` (declared first, so destroyed after it).
  std::unique_ptr<ChainSync> sync;
  std::unique_ptr<CasperNetwork> network;
  // This node's TLS identity (protocol and discovery ports, discovery's
  // outbound calls).
  std::shared_ptr<const p2p::TlsIdentity> tls;
  std::unique_ptr<p2p::Transport> transport;
  std::unique_ptr<p2p::PeerTable> peer_table;
  std::unique_ptr<p2p::DiscoveryServer> discovery;
  std::optional<p2p::PeerNode> bootstrap;
  std::unique_ptr<casper::engine::EngineListener> listener;
  std::unique_ptr<casper::engine::Engine> engine;
};

// The store (RocksDB under the pipelined store), the execution core over
// it (space, contracts, runtime, executors) and the DAG and deploy pool.
// The store's errors; InvalidArgument for bad PoS settings.
absl::Status OpenStorage(const NodeConfig& c, const std::string& data_dir,
                         NodeParts& parts);

// The genesis block: made on the first start of a new shard (from
// GenesisInputs, announced on `out`), else the stored one. DataLossError
// for a DAG without a single genesis, FailedPrecondition for another
// shard's.
absl::StatusOr<casper::block::Block> OpenGenesis(const NodeConfig& c,
                                                 const std::string& data_dir,
                                                 const NodeIdentity& id,
                                                 NodeParts& parts,
                                                 std::ostream& out);

// Casper over the opened parts: the merge's pre-states, the proposer, the
// validator, the network (unless standalone; not started) and the engine
// with `listener`.
absl::Status AssembleCasper(
    const NodeConfig& c, const NodeIdentity& id,
    const casper::block::Block& genesis, NetworkCallbacks callbacks,
    std::unique_ptr<casper::engine::EngineListener> listener, NodeParts& parts);

// Gauges the network's start registers beside the transport's.
struct NetworkGauges {
  std::function<size_t()> blocks_waiting;  // for the consensus thread
  std::function<size_t()> deploys_held;    // gossip backup
};

// Starts the transport (this node's id from node.key.pem), the discovery
// server and the bootstrap link, and registers the network's metrics in
// `registry` (may be null). Returns the behind-seconds counter family
// (null without a registry). InvalidArgument for a bad bootstrap address;
// the transport's errors.
// A validator (`id` with a key) proves itself to its peers with a fresh
// validator statement on every message (re-signed each minute).
absl::StatusOr<metrics::Family<metrics::Counter>*> StartNetwork(
    const NodeConfig& c, const NodeIdentity& id, NodeParts& parts,
    metrics::Registry* registry, const NetworkGauges& gauges,
    std::ostream& out);

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_ASSEMBLY_H_

// The node's read side for the APIs (docs/node.md "API"): blocks by hash,
// prefix, height and main chain, where a deploy stands, the data at a
// name, and exploratory deploys. Reads go to the DAG and the history
// (both thread-safe); an exploratory deploy plays on the space, so it runs
// on the consensus thread.
#ifndef RNODE_NODE_CORE_CHAIN_QUERIES_H_
#define RNODE_NODE_CORE_CHAIN_QUERIES_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "casper/dag/dag_store.h"
#include "casper/pool/deploy_pool.h"
#include "node/config/config.h"
#include "node/core/consensus_driver.h"
#include "node/core/identity.h"
#include "node/core/node.h"
#include "node/core/scheduler.h"
#include "rholang/frontend/ir.h"
#include "rholang/interpreter/reducer.h"
#include "rspace/space.h"
#include "util/bytes.h"

namespace rnode::node {

// None owned; all outlive the queries.
struct QueryDeps {
  const NodeConfig* config = nullptr;
  const NodeIdentity* identity = nullptr;
  casper::dag::DagStore* dag = nullptr;
  casper::pool::DeployPool* pool = nullptr;
  LeftDeploys* left = nullptr;
  rspace::Space* space = nullptr;
  rholang::interp::Runtime* runtime = nullptr;
  ConsensusScheduler* scheduler = nullptr;
};

// Thread-safe. The contracts are Node's (node.h).
class ChainQueries {
 public:
  explicit ChainQueries(const QueryDeps& deps) : d_(deps) {}

  absl::StatusOr<casper::block::Block> GetBlock(const Hash32& hash);
  absl::StatusOr<casper::block::Block> FindBlock(std::string_view hex);
  // Blocks of numbers [from, to], newest first, clamped to max-blocks-limit
  // heights from `to`; InvalidArgument when they hold more than
  // max-blocks-bytes stored.
  absl::StatusOr<std::vector<casper::block::Block>> BlocksByHeight(int64_t from,
                                                                   int64_t to);
  absl::StatusOr<std::vector<casper::block::Block>> MainChain(int64_t depth);
  absl::StatusOr<casper::block::Block> LastFinalizedBlock();
  absl::StatusOr<DeployStatus> FindDeploy(ByteView sig);
  absl::StatusOr<std::vector<rholang::ir::ParPtr>> DataAtName(
      const rholang::ir::ParPtr& channel, const Hash32& block,
      bool use_pre_state);
  absl::StatusOr<Exploration> Explore(std::string term,
                                      std::optional<Hash32> block,
                                      bool use_pre_state);
  absl::StatusOr<bool> IsBonded(ByteView public_key) const;

 private:
  // The stored blocks `hashes`, decoded, in that order; InvalidArgument
  // naming `what` once they hold more than max-blocks-bytes stored (read
  // before decoding: a range of large blocks costs no more than that).
  absl::StatusOr<std::vector<casper::block::Block>> ReadBlocks(
      std::span<const Hash32> hashes, std::string_view what);
  // Runs `term` on `root` (consensus thread) and reads the data at its
  // first `new` name; the space is reset to `root` after.
  absl::StatusOr<Exploration> ExploreOn(
      const std::string& term, const Hash32& root,
      const std::shared_ptr<const casper::dag::BlockMeta>& meta);

  const QueryDeps d_;
  uint64_t explore_counter_ = 0;  // consensus thread
};

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_CHAIN_QUERIES_H_

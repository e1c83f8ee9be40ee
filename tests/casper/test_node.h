// An in-process validator for Casper tests: its own store, space, runtime,
// DAG, deploy pool, block creator and validator, on a genesis shared by
// every TestNode made with the same validators and wallets.
#ifndef RNODE_TESTS_CASPER_TEST_NODE_H_
#define RNODE_TESTS_CASPER_TEST_NODE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "casper/contracts/ledger.h"
#include "casper/contracts/pos.h"
#include "casper/contracts/system_contracts.h"
#include "casper/dag/dag_store.h"
#include "casper/execution/block_executor.h"
#include "casper/execution/deploy_executor.h"
#include "casper/execution/executor_lanes.h"
#include "casper/genesis/genesis.h"
#include "casper/merge/merge_context.h"
#include "casper/pool/deploy_pool.h"
#include "casper/prestate/pre_state.h"
#include "casper/proposer/block_creator.h"
#include "casper/validation/validator.h"
#include "gtest/gtest.h"
#include "rholang/interpreter/reducer.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/space.h"
#include "rspace/storage/fault_store.h"
#include "rspace/storage/kv_store.h"
#include "tests/casper/test_genesis.h"
#include "tests/casper/test_key.h"
#include "util/worker_pool.h"

namespace rnode::casper::testing {

inline constexpr int64_t kGenesisTime = 1'700'000'000'000;

// Column layout of a test node's store: history, DAG, pool.
inline constexpr size_t kHistoryColumns = 3;
inline constexpr size_t kNodeColumns = kHistoryColumns + 4 + 1;

class TestNode {
 public:
  // Validators are MakeTestKey(1..validators), each bonded with 1000; the
  // addresses of keys 1..funded hold `funds` each. `key` is this node's
  // signing key seed; its blocks have at most `max_parents` parents. With
  // threads > 1 the node's one pool runs the interpreter's rounds,
  // signature checks and parallel replay on `threads` lanes. `dag_options`
  // sets how much of the DAG its store keeps in memory.
  TestNode(uint8_t key, int validators, int64_t funds = 1'000'000'000,
           int threads = 1, size_t max_parents = 1, int funded = 1,
           dag::DagStoreOptions dag_options = {})
      : key_(MakeTestKey(key)), store_(kNodeColumns), pool_threads_(threads) {
    rspace::SpaceOptions so;
    so.term_factory = rholang::interp::StoredTermFactory();
    space_ = *rspace::Space::Open(&faults_, so);
    contracts_ = std::make_unique<contracts::SystemContracts>(
        contracts::ContractsOptions{});
    rholang::interp::RuntimeOptions ro =
        contracts_->RuntimeOptionsFor(threads, &output_);
    ro.pool = &pool_threads_;
    runtime_ = *rholang::interp::Runtime::Create(space_.get(), ro);
    executor_ = std::make_unique<DeployExecutor>(space_.get(), contracts_.get(),
                                                 runtime_.get());
    if (threads > 1) {
      lanes_ =
          *ExecutorLanes::Create(space_.get(), contracts::ContractsOptions{},
                                 static_cast<size_t>(threads), &pool_threads_);
    }
    // Every block of independent deploys on the lanes, however small.
    blocks_ = std::make_unique<BlockExecutor>(
        space_.get(), executor_.get(), lanes_.get(),
        BlockExecutorOptions{.min_parallel_events_per_deploy = 0});
    validators_ =
        std::make_unique<contracts::ValidatorsCache>(&space_->history());
    genesis::GenesisParams p = TestGenesisParams(validators, funded, funds);
    p.timestamp = kGenesisTime;
    auto g = genesis::CreateGenesis(p, space_.get(), contracts_.get(),
                                    runtime_.get());
    EXPECT_TRUE(g.ok()) << g.status();
    genesis_ = g->block;
    dag_ = *dag::DagStore::Open(&faults_, dag::DagColumnsFrom(kHistoryColumns),
                                dag_options);
    EXPECT_TRUE(*dag_->Insert(genesis_));
    pool_ = *pool::DeployPool::Open(&faults_, kHistoryColumns + 4);
    pre_states_ = std::make_unique<prestate::PreStateBuilder>(
        dag_.get(), &space_->history(), &codec_,
        rholang::interp::StoredTermFactory(), &merge_context_);
    EXPECT_TRUE(pre_states_->Remember(genesis_, {}).ok());
    pre_states_->set_replayer(blocks_.get());
    proposer::CreatorOptions creator_options;
    creator_options.max_parents = max_parents;
    creator_ = std::make_unique<proposer::BlockCreator>(
        dag_.get(), pool_.get(), blocks_.get(), validators_.get(),
        creator_options, pre_states_.get());
    validator_ = std::make_unique<validation::BlockValidator>(
        dag_.get(), blocks_.get(), validators_.get(), &pool_threads_,
        validation::ValidatorOptions{}, pre_states_.get());
  }

  // Creates a block (nullopt when nothing to include and not forced).
  std::optional<block::Block> Propose(int64_t now_ms,
                                      bool allow_empty = false) {
    auto created = creator_->Create(key_.sk, now_ms, allow_empty);
    EXPECT_TRUE(created.ok()) << created.status();
    if (!created.ok() || !created->has_value()) return std::nullopt;
    return **created;
  }

  // Validates and stores a block from a peer (or this node).
  validation::Verdict Receive(const block::Block& b, int64_t now_ms) {
    validation::Verdict v = validator_->Validate(b, now_ms);
    if (v.valid()) {
      EXPECT_TRUE(dag_->Insert(b).ok());
      EXPECT_TRUE(pre_states_->Remember(b, v.outcomes).ok());
    } else if (v.kind == validation::Verdict::Kind::kInvalid &&
               validation::IsSlashable(v.reason)) {
      EXPECT_TRUE(dag_->Insert(b, /*invalid=*/true).ok());
    }
    return v;
  }

  SignedDeploy Sign(const std::string& term, int64_t timestamp,
                    uint8_t signer = 1, int64_t valid_after = 0) {
    DeployData d;
    d.term = term;
    d.timestamp = timestamp;
    d.phlo_price = 1;
    d.phlo_limit = 100'000;
    d.valid_after_block_number = valid_after;
    d.shard_id = "root";
    return *SignedDeploy::Sign(d, MakeTestKey(signer).sk);
  }

  const TestKey& key() const { return key_; }
  dag::DagStore& dag() { return *dag_; }
  pool::DeployPool& pool() { return *pool_; }
  rspace::Space& space() { return *space_; }
  BlockExecutor& blocks() { return *blocks_; }
  const block::Block& genesis() const { return genesis_; }
  validation::BlockValidator& validator() { return *validator_; }
  prestate::PreStateBuilder& pre_states() { return *pre_states_; }
  // A pre-state builder over this node's DAG and space that has kept no
  // index, as after a restart; it rebuilds them by replay.
  std::unique_ptr<prestate::PreStateBuilder> FreshPreStates() {
    auto fresh = std::make_unique<prestate::PreStateBuilder>(
        dag_.get(), &space_->history(), &codec_,
        rholang::interp::StoredTermFactory(), &merge_context_);
    fresh->set_replayer(blocks_.get());
    return fresh;
  }
  proposer::BlockCreator& creator() { return *creator_; }
  // A new creator, or validator, with these options (over the same parts).
  void SetCreatorOptions(proposer::CreatorOptions options) {
    creator_ = std::make_unique<proposer::BlockCreator>(
        dag_.get(), pool_.get(), blocks_.get(), validators_.get(),
        std::move(options), pre_states_.get());
  }
  void SetValidatorOptions(validation::ValidatorOptions options) {
    validator_ = std::make_unique<validation::BlockValidator>(
        dag_.get(), blocks_.get(), validators_.get(), &pool_threads_,
        std::move(options), pre_states_.get());
  }
  // The node's store, which can be made to fail (every part of the node
  // reads and writes through it).
  rspace::FaultInjectingStore& faults() { return faults_; }

 private:
  TestKey key_;
  rspace::InMemoryStore store_;
  rspace::FaultInjectingStore faults_{&store_};
  WorkerPool pool_threads_;
  rholang::interp::CollectingSink output_;
  std::unique_ptr<rspace::Space> space_;
  std::unique_ptr<contracts::SystemContracts> contracts_;
  std::unique_ptr<rholang::interp::Runtime> runtime_;
  std::unique_ptr<DeployExecutor> executor_;
  std::unique_ptr<ExecutorLanes> lanes_;
  std::unique_ptr<BlockExecutor> blocks_;
  std::unique_ptr<contracts::ValidatorsCache> validators_;
  contracts::BalanceCodec codec_;
  merge::MergeContext merge_context_{
      merge::MergeContextOptions{.pool = &pool_threads_}};
  std::unique_ptr<prestate::PreStateBuilder> pre_states_;
  block::Block genesis_;
  std::unique_ptr<dag::DagStore> dag_;
  std::unique_ptr<pool::DeployPool> pool_;
  std::unique_ptr<proposer::BlockCreator> creator_;
  std::unique_ptr<validation::BlockValidator> validator_;
};

}  // namespace rnode::casper::testing

#endif  // RNODE_TESTS_CASPER_TEST_NODE_H_

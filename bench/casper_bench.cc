// Casper benchmarks: fork choice and the finalizer on a DAG of 100
// validators and 10,000 blocks (the consensus issue's sizes), the repeat
// check's walk (prestate::CopyInPreState), block encoding, hashing and the
// seal check.
//
// The DAG: validators take turns; each block's parent is the previous block
// and it justifies every validator's latest block (a synchronous shard), so
// the latest messages are the last 100 blocks, all on one main chain.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "benchmark/benchmark.h"
#include "casper/block/block.h"
#include "casper/block/block_codec.h"
#include "casper/consensus/finality.h"
#include "casper/consensus/fork_choice.h"
#include "casper/contracts/pos.h"
#include "casper/contracts/system_contracts.h"
#include "casper/dag/dag_store.h"
#include "casper/execution/block_executor.h"
#include "casper/execution/deploy_executor.h"
#include "casper/execution/executor_lanes.h"
#include "casper/genesis/genesis.h"
#include "casper/pool/deploy_pool.h"
#include "casper/prestate/ancestry.h"
#include "casper/proposer/block_creator.h"
#include "casper/validation/validator.h"
#include "crypto/rev_address.h"
#include "rholang/interpreter/reducer.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/space.h"
#include "rspace/storage/kv_store.h"
#include "util/worker_pool.h"

namespace rnode::casper {
namespace {

crypto::Secp256k1PrivateKey KeyOf(int v) {
  crypto::Secp256k1PrivateKey k{};
  k.fill(1);
  k[30] = static_cast<uint8_t>(v >> 8);
  k[31] = static_cast<uint8_t>(v + 1);
  return k;
}

struct Dag {
  rspace::InMemoryStore store{4};
  std::unique_ptr<dag::DagStore> dag;
  std::vector<block::Bond> bonds;
};

std::unique_ptr<Dag> BuildDag(int validators, int blocks) {
  auto d = std::make_unique<Dag>();
  d->dag = *dag::DagStore::Open(&d->store, dag::DagColumnsFrom(0));
  std::vector<crypto::Secp256k1PublicKey> keys;
  for (int v = 0; v < validators; ++v) {
    keys.push_back(crypto::Secp256k1PublicKeyOf(KeyOf(v)));
    d->bonds.push_back({keys.back(), 100});
  }
  block::Block g;
  g.body.state.bonds = d->bonds;
  g.sender = keys[0];
  g.hash = block::ComputeBlockHash(g);
  (void)*d->dag->Insert(g);
  std::vector<Hash32> latest(validators, g.hash);
  std::vector<int32_t> seq(validators, 0);
  Hash32 prev = g.hash;
  for (int i = 1; i < blocks; ++i) {
    const int v = i % validators;
    block::Block b;
    b.header.parents = {prev};
    b.body.state.block_number = i;
    b.body.state.bonds = d->bonds;
    for (int u = 0; u < validators; ++u) {
      b.justifications.push_back({keys[u], latest[u]});
    }
    b.sender = keys[v];
    b.seq_num = ++seq[v];
    // Unsigned: the DAG does not check seals and signing 10,000 blocks
    // would dominate the setup.
    b.hash = block::ComputeBlockHash(b);
    (void)*d->dag->Insert(b);
    latest[v] = prev = b.hash;
  }
  return d;
}

Dag& Shared() {
  static std::unique_ptr<Dag> dag = BuildDag(100, 10'000);
  return *dag;
}

void BM_ForkChoice(benchmark::State& state) {
  Dag& d = Shared();
  const consensus::LatestMessages latest = d.dag->LatestMessages();
  const consensus::Weights weights = consensus::WeightsOf(d.bonds);
  for (auto _ : state) {
    auto fc = consensus::ChooseParents(*d.dag, latest, weights);
    benchmark::DoNotOptimize(fc);
  }
  state.counters["validators"] = static_cast<double>(latest.size());
  state.counters["blocks"] = static_cast<double>(d.dag->size());
}
BENCHMARK(BM_ForkChoice)->Unit(benchmark::kMicrosecond);

// One finalizer pass with nothing finalized yet: the highest candidates
// lack a majority, the first with one is examined by the clique oracle.
void BM_Finalizer(benchmark::State& state) {
  Dag& d = Shared();
  const consensus::LatestMessages latest = d.dag->LatestMessages();
  for (auto _ : state) {
    auto lfb = consensus::FindNewLastFinalized(*d.dag, latest);
    if (!lfb.ok() || !lfb->has_value()) {
      state.SkipWithError("nothing finalized");
      return;
    }
    benchmark::DoNotOptimize(lfb);
  }
}
BENCHMARK(BM_Finalizer)->Unit(benchmark::kMillisecond);

// A chain of `blocks` blocks (genesis first), each holding
// `deploys_per_block` deploys with distinct signatures (unsigned data: the
// DAG indexes signatures, it does not check them); `tip` is the last.
struct DeployChain {
  rspace::InMemoryStore store{4};
  std::unique_ptr<dag::DagStore> dag;
  std::vector<Hash32> hashes;
};

Bytes DeploySig(int block, int i) {
  Bytes sig(71, 0x30);
  for (int k = 0; k < 4; ++k) {
    sig[1 + k] = static_cast<uint8_t>(block >> (8 * k));
    sig[5 + k] = static_cast<uint8_t>(i >> (8 * k));
  }
  return sig;
}

std::unique_ptr<DeployChain> BuildDeployChain(int blocks,
                                              int deploys_per_block) {
  auto d = std::make_unique<DeployChain>();
  d->dag = *dag::DagStore::Open(&d->store, dag::DagColumnsFrom(0));
  const crypto::Secp256k1PublicKey key = crypto::Secp256k1PublicKeyOf(KeyOf(0));
  for (int n = 0; n < blocks; ++n) {
    block::Block b;
    if (n > 0) b.header.parents = {d->hashes.back()};
    b.body.state.block_number = n;
    b.body.state.bonds = {{key, 100}};
    b.sender = key;
    b.seq_num = n;
    if (n > 0) {
      for (int i = 0; i < deploys_per_block; ++i) {
        block::ProcessedDeploy pd;
        pd.sig = DeploySig(n, i);
        pd.deployer = key;
        b.body.deploys.push_back(std::move(pd));
      }
    }
    b.hash = block::ComputeBlockHash(b);
    (void)*d->dag->Insert(b);
    d->hashes.push_back(b.hash);
  }
  return d;
}

// The repeat check, run by the creator for each deploy it selects and by
// the validator for each deploy of a block, on a chain of 1,000 blocks of
// 100 deploys: arg 0, a deploy no block holds (one index read, the common
// case); arg 1, one held 25 blocks below the pre-state (the holder's
// ancestry is checked down the chain).
void BM_CopyInPreState(benchmark::State& state) {
  static const std::unique_ptr<DeployChain> d = BuildDeployChain(1000, 100);
  const int top = static_cast<int>(d->hashes.size()) - 1;
  const Bytes sig =
      state.range(0) == 1 ? DeploySig(top - 25, 0) : DeploySig(top + 10, 0);
  const Hash32 parents[1] = {d->hashes.back()};
  for (auto _ : state) {
    auto held = prestate::CopyInPreState(*d->dag, {parents, std::nullopt, {}},
                                         sig, top + 1 - 50);
    if (!held.ok() || held->has_value() != (state.range(0) == 1)) {
      state.SkipWithError("unexpected answer");
      return;
    }
    benchmark::DoNotOptimize(held);
  }
}
BENCHMARK(BM_CopyInPreState)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// The preference of a merge (docs/merge.md §5.2): which copies of its
// scope's deploys its main parent's state holds. The main parent heads a
// chain of range(0) blocks of 10 deploys above the merge base (the scope,
// as when the other parent is that stale). range(1): 0, one walk of the
// scope (ScopeCopiesInPostState, what PreStateBuilder runs); 1, the walk
// per deploy (CopyInPostState), which it replaced.
void BM_ScopeCopies(benchmark::State& state) {
  const int blocks = static_cast<int>(state.range(0));
  static std::map<int, std::unique_ptr<DeployChain>> chains;
  std::unique_ptr<DeployChain>& d = chains[blocks];
  if (d == nullptr) d = BuildDeployChain(blocks + 1, 10);
  const std::set<Hash32> scope(d->hashes.begin() + 1, d->hashes.end());
  std::vector<Bytes> sigs;
  for (int n = 1; n <= blocks; ++n) {
    for (int i = 0; i < 10; ++i) sigs.push_back(DeploySig(n, i));
  }
  std::sort(sigs.begin(), sigs.end());
  const Hash32 main = d->hashes.back();
  for (auto _ : state) {
    size_t held = 0;
    if (state.range(1) == 0) {
      auto copies = prestate::ScopeCopiesInPostState(
          *d->dag, main, [&](const Hash32& h) { return scope.contains(h); },
          sigs);
      held = copies.ok() ? copies->size() : 0;
    } else {
      for (const Bytes& sig : sigs) {
        auto copy = prestate::CopyInPostState(*d->dag, main, sig, 0);
        held += copy.ok() && copy->has_value() && scope.contains(**copy);
      }
    }
    if (held != sigs.size()) {
      state.SkipWithError("not every copy is held");
      return;
    }
  }
  state.counters["scope_blocks"] = blocks;
  state.counters["deploys"] = static_cast<double>(sigs.size());
}
BENCHMARK(BM_ScopeCopies)
    ->Args({100, 0})
    ->Args({100, 1})
    ->Args({1000, 0})
    ->Args({1000, 1})
    ->Unit(benchmark::kMillisecond);

// The clique oracle for a block everyone agrees with (all 4,950 pairs).
void BM_CliqueOracleAllAgree(benchmark::State& state) {
  Dag& d = Shared();
  const consensus::LatestMessages latest = d.dag->LatestMessages();
  const Hash32 target = d.dag->AtHeight(9'000).front();
  for (auto _ : state) {
    auto ft = consensus::CliqueOracle(*d.dag, target, latest);
    benchmark::DoNotOptimize(ft);
  }
}
BENCHMARK(BM_CliqueOracleAllAgree)->Unit(benchmark::kMillisecond);

// Encode, decode, hash and seal check of a block with 100 justifications.
block::Block SampleBlock() {
  Dag& d = Shared();
  auto b = d.dag->GetBlock(d.dag->AtHeight(5'000).front());
  block::Block out = **b;
  (void)block::SignBlock(out, KeyOf(5'000 % 100));
  return out;
}

void BM_BlockEncode(benchmark::State& state) {
  const block::Block b = SampleBlock();
  for (auto _ : state) benchmark::DoNotOptimize(block::EncodeBlock(b));
  state.counters["bytes"] = static_cast<double>(block::EncodeBlock(b).size());
}
BENCHMARK(BM_BlockEncode)->Unit(benchmark::kMicrosecond);

void BM_BlockDecode(benchmark::State& state) {
  const Bytes bytes = block::EncodeBlock(SampleBlock());
  for (auto _ : state) benchmark::DoNotOptimize(block::DecodeBlock(bytes));
}
BENCHMARK(BM_BlockDecode)->Unit(benchmark::kMicrosecond);

void BM_BlockCheckSeal(benchmark::State& state) {
  const block::Block b = SampleBlock();
  for (auto _ : state) {
    if (block::CheckSeal(b) != block::SealError::kNone) {
      state.SkipWithError("bad seal");
      return;
    }
  }
}
BENCHMARK(BM_BlockCheckSeal)->Unit(benchmark::kMicrosecond);

// Deployers of the benchmark blocks: KeyOf(kFirstDeployer + i).
constexpr int kFirstDeployer = 100;
constexpr int kDeployers = 100;

// A validator's execution stack on an in-memory store: genesis with three
// validators and kDeployers + 1 funded deployers, DAG, pool, creator and
// validator.
struct Stack {
  // One pool of `threads` runs the signature checks and, with threads > 1,
  // `threads` replay lanes and (with parallel_rounds) the interpreter's
  // parallel rounds.
  explicit Stack(int threads, bool parallel_rounds = false,
                 bool replay_lanes = true, bool always_lanes = false)
      : store(8), workers(threads), contracts(contracts::ContractsOptions{}) {
    rspace::SpaceOptions so;
    so.term_factory = rholang::interp::StoredTermFactory();
    space = *rspace::Space::Open(&store, so);
    rholang::interp::RuntimeOptions ro =
        contracts.RuntimeOptionsFor(1, &output);
    if (parallel_rounds) ro.pool = &workers;
    runtime = *rholang::interp::Runtime::Create(space.get(), ro);
    deploys = std::make_unique<DeployExecutor>(space.get(), &contracts,
                                               runtime.get());
    if (threads > 1 && replay_lanes) {
      lanes = *ExecutorLanes::Create(space.get(), contracts::ContractsOptions{},
                                     static_cast<size_t>(threads), &workers);
    }
    BlockExecutorOptions options;
    if (always_lanes) options.min_parallel_events_per_deploy = 0;
    blocks = std::make_unique<BlockExecutor>(space.get(), deploys.get(),
                                             lanes.get(), options);
    validators =
        std::make_unique<contracts::ValidatorsCache>(&space->history());
    genesis::GenesisParams p;
    p.timestamp = 1'700'000'000'000;
    for (int v = 0; v < 3; ++v) {
      genesis::Bond b;
      b.validator = crypto::Secp256k1PublicKeyOf(KeyOf(v));
      b.stake = 1000;
      p.bonds.push_back(b);
    }
    auto fund = [&](int key) {
      genesis::Wallet w;
      w.address = *crypto::RevAddressFromKeyBytes(
          ByteView(crypto::Secp256k1PublicKeyOf(KeyOf(key))));
      w.balance = 1'000'000'000'000;
      p.wallets.push_back(w);
    };
    fund(50);
    for (int i = 0; i < kDeployers; ++i) fund(kFirstDeployer + i);
    auto g = genesis::CreateGenesis(p, space.get(), &contracts, runtime.get());
    dag = *dag::DagStore::Open(&store, dag::DagColumnsFrom(3));
    (void)*dag->Insert(g->block);
    pool = *pool::DeployPool::Open(&store, 7);
    creator = std::make_unique<proposer::BlockCreator>(
        dag.get(), pool.get(), blocks.get(), validators.get(),
        proposer::CreatorOptions{});
    validator = std::make_unique<validation::BlockValidator>(
        dag.get(), blocks.get(), validators.get(), &workers,
        validation::ValidatorOptions{});
  }
  rspace::InMemoryStore store;
  WorkerPool workers;
  rholang::interp::CollectingSink output;
  std::unique_ptr<rspace::Space> space;
  contracts::SystemContracts contracts;
  std::unique_ptr<rholang::interp::Runtime> runtime;
  std::unique_ptr<DeployExecutor> deploys;
  std::unique_ptr<ExecutorLanes> lanes;
  std::unique_ptr<BlockExecutor> blocks;
  std::unique_ptr<contracts::ValidatorsCache> validators;
  std::unique_ptr<dag::DagStore> dag;
  std::unique_ptr<pool::DeployPool> pool;
  std::unique_ptr<proposer::BlockCreator> creator;
  std::unique_ptr<validation::BlockValidator> validator;
};

// A block of 100 trivial deploys made by validator 0. Shared: one deployer
// sends on one public name (every deploy depends on the one before: the
// worst case of parallel replay, one group). Independent: 100 deployers
// each send on a name of its own (100 groups), as users paying for their
// own work do.
block::Block MakeHundredDeployBlock(bool independent, bool heavy = false) {
  Stack maker(1);
  for (int i = 0; i < 100; ++i) {
    DeployData d;
    d.term = independent ? "new x in { x!(" + std::to_string(i) + ") }"
                         : "@0!(" + std::to_string(i) + ")";
    if (heavy) {
      d.term =
          "new loop, x in { contract loop(@n) = { if (n > 0) { x!(n) | "
          "loop!(n - 1) } } | loop!(" +
          std::to_string(20 + i % 3) + ") }";
    }
    d.timestamp = 1'700'000'001'000 + i;
    d.phlo_price = 1;
    d.phlo_limit = 100'000;
    d.shard_id = "root";
    const auto deployer = KeyOf(independent ? kFirstDeployer + i : 50);
    (void)maker.pool->Add(*SignedDeploy::Sign(d, deployer), 0,
                          1'700'000'001'000);
  }
  auto created = maker.creator->Create(KeyOf(0), 1'700'000'002'000);
  return **created;
}

const block::Block& HundredDeployBlock(bool independent, bool heavy = false) {
  static const block::Block shared = MakeHundredDeployBlock(false);
  static const block::Block own = MakeHundredDeployBlock(true);
  static const block::Block loops = MakeHundredDeployBlock(true, true);
  return heavy ? loops : independent ? own : shared;
}

// Validation of a peer's block of 100 trivial deploys: seal, every check,
// the 100 deploy signatures, the replay (on lanes when the pool has more
// than one thread) and the post-state.
void BM_ValidateBlock(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const bool independent = state.range(1) != 0;
  const block::Block& block = HundredDeployBlock(independent);
  Stack node(threads, /*parallel_rounds=*/state.range(2) != 0,
             /*replay_lanes=*/state.range(3) != 0);
  size_t parallel = 0;
  for (auto _ : state) {
    validation::Verdict v = node.validator->Validate(block, 1'700'000'002'000);
    if (!v.valid()) {
      state.SkipWithError(v.detail.c_str());
      return;
    }
    parallel += node.blocks->last_replay().parallel ? 1 : 0;
  }
  state.counters["deploys"] = static_cast<double>(block.body.deploys.size());
  state.counters["groups"] =
      static_cast<double>(node.blocks->last_replay().groups);
  state.counters["parallel"] = benchmark::Counter(
      static_cast<double>(parallel), benchmark::Counter::kAvgIterations);
}
// Args: pool threads, independent deploys (0: one deployer, one name),
// interpreter rounds on the pool, replay lanes.
BENCHMARK(BM_ValidateBlock)
    ->Args({1, 0, 0, 0})
    ->Args({2, 0, 0, 1})
    ->Args({1, 1, 0, 0})
    ->Args({2, 1, 0, 0})
    ->Args({2, 1, 0, 1})
    ->Args({2, 1, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Replay alone (signatures verified beforehand) of a block of 100
// independent deploys: serially, or on the lanes of a pool (whatever the
// work per deploy: kMinParallelEventsPerDeploy comes from these figures).
void BM_ReplayBlock(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const block::Block& block =
      HundredDeployBlock(/*independent=*/true, state.range(2) != 0);
  Stack node(threads, /*parallel_rounds=*/false,
             /*replay_lanes=*/state.range(1) != 0, /*always_lanes=*/true);
  std::vector<SignedDeploy> deploys;
  for (const block::ProcessedDeploy& d : block.body.deploys) {
    deploys.push_back(*SignedDeploy::Verify(d.data, d.deployer, d.sig,
                                            SigAlgorithmName(d.sig_algorithm)));
  }
  for (auto _ : state) {
    BlockReplayVerdict v = node.blocks->Replay(block, deploys, {});
    if (!v.ok()) {
      state.SkipWithError(v.reason.c_str());
      return;
    }
  }
  state.counters["parallel"] = node.blocks->last_replay().parallel ? 1 : 0;
}
// Args: pool threads, replay lanes, heavy deploys (a recursive contract
// of about 20 rounds each instead of one send).
BENCHMARK(BM_ReplayBlock)
    ->Args({1, 0, 0})
    ->Args({2, 0, 0})
    ->Args({2, 1, 0})
    ->Args({1, 0, 1})
    ->Args({2, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace rnode::casper

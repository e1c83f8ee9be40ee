// Casper benchmarks: fork choice and the finalizer on a DAG of 100
// validators and 10,000 blocks (the consensus issue's sizes), block
// encoding, hashing and the seal check.
//
// The DAG: validators take turns; each block's parent is the previous block
// and it justifies every validator's latest block (a synchronous shard), so
// the latest messages are the last 100 blocks, all on one main chain.
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "casper/block/block.h"
#include "casper/block/block_codec.h"
#include "casper/consensus/finality.h"
#include "casper/consensus/fork_choice.h"
#include "casper/dag/dag_store.h"
#include "rspace/storage/kv_store.h"

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

}  // namespace
}  // namespace rnode::casper

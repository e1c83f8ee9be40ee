// Reducer throughput: a one-send deploy end to end (parse, normalize,
// evaluate, costs), a contract called many times in one deploy, and a wide
// Par of independent computations on 1 and 2 worker threads.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "rholang/frontend/normalizer.h"
#include "rholang/interpreter/reducer.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/event_log.h"
#include "rspace/space.h"
#include "rspace/storage/kv_store.h"

namespace rnode::rholang::interp {
namespace {

constexpr size_t kStoreColumns = 3;
constexpr int64_t kLimit = 1'000'000'000;

struct Node {
  rspace::InMemoryStore store{kStoreColumns};
  std::unique_ptr<rspace::Space> space;
  std::unique_ptr<Runtime> rt;
  explicit Node(int threads) {
    rspace::SpaceOptions so;
    so.term_factory = StoredTermFactory();
    space = *rspace::Space::Open(&store, so);
    RuntimeOptions ro;
    ro.threads = threads;
    rt = *Runtime::Create(space.get(), ro);
  }
};

DeployInfo Deploy() {
  DeployInfo d;
  d.deployer_public_key = Bytes(65, 4);
  d.deploy_id = Bytes(64, 1);
  return d;
}

void Check(const EvalResult& r) {
  if (r.failed()) std::abort();
}

// `@N!(N)` as one deploy, N the iteration number, on one growing space.
void BM_SendDeployEndToEnd(benchmark::State& state) {
  Node node(1);
  DeployInfo d = Deploy();
  int64_t n = 0;
  for (auto _ : state) {
    std::string src = "@" + std::to_string(n) + "!(" + std::to_string(n) + ")";
    ++n;
    rspace::EventLog log;
    Check(node.rt->EvaluateSource(src, d, kLimit, &log));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SendDeployEndToEnd)->Unit(benchmark::kMicrosecond);

// One contract called `calls` times in one deploy, each call replying on a
// return channel that a persistent receive collects. Items: calls.
void BM_ContractCalls(benchmark::State& state) {
  const int calls = static_cast<int>(state.range(0));
  std::string src =
      "contract @\"f\"(@x, r) = { r!(x + 1) } | new ret in { "
      "for (@v <= ret) { Nil }";
  for (int i = 0; i < calls; ++i) {
    src += " | @\"f\"!(" + std::to_string(i) + ", *ret)";
  }
  src += " }";
  auto program = Compile(src);
  if (!program.ok()) std::abort();
  DeployInfo d = Deploy();
  for (auto _ : state) {
    state.PauseTiming();
    auto node = std::make_unique<Node>(1);
    rspace::EventLog log;
    state.ResumeTiming();
    Check(node->rt->Evaluate(*program, d, kLimit, &log));
    state.PauseTiming();
    node.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * calls);
}
BENCHMARK(BM_ContractCalls)->Arg(1000)->Unit(benchmark::kMillisecond);

// 1000 independent match computations, each ending in a send; range(0)
// worker threads. Items: components.
void BM_WidePar(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  constexpr int kWidth = 1000;
  std::string src;
  for (int i = 0; i < kWidth; ++i) {
    if (i > 0) src += " | ";
    src +=
        "match [" + std::to_string(i) + ", \"k" + std::to_string(i) +
        "\", {\"a\": " + std::to_string(i) +
        "}] { [n, s, {\"a\": m}] => @\"out\"!(n * m + (s ++ \"x\").length()) }";
  }
  auto program = Compile(src);
  if (!program.ok()) std::abort();
  DeployInfo d = Deploy();
  for (auto _ : state) {
    state.PauseTiming();
    auto node = std::make_unique<Node>(threads);
    rspace::EventLog log;
    state.ResumeTiming();
    Check(node->rt->Evaluate(*program, d, kLimit, &log));
    state.PauseTiming();
    node.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kWidth);
}
BENCHMARK(BM_WidePar)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace rnode::rholang::interp

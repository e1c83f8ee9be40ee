// RSpace with the interpreter's matcher (StoredMatcher) and term factory:
// produce+consume pairs on own and shared channels, and a consume that
// scans a backlog of data its pattern rejects (the matcher runs under the
// channel lock). A separate target because rnode_rspace must not depend on
// rholang.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "rholang/frontend/normalizer.h"
#include "rholang/interpreter/native_contract.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/event_log.h"
#include "rspace/space.h"
#include "rspace/storage/kv_store.h"

namespace rnode::rholang::interp {
namespace {

using rspace::TermPtr;

// Events are taken from the per-thread log this often, as a deploy's log
// would be at its end, so the log does not grow without bound.
constexpr int kTakeEvery = 4096;

template <typename T>
T OrDie(absl::StatusOr<T> v) {
  if (!v.ok()) std::abort();
  return *std::move(v);
}

// The pattern `@{x /\ Int}, @y` as the reducer stores it, and data that it
// matches (42, "payload") or rejects ("text", "payload").
struct Terms {
  TermPtr pattern;
  TermPtr continuation;
  TermPtr matching;
  TermPtr rejected;

  Terms() {
    ir::ParPtr prog = OrDie(
        Compile(R"(for (@{x /\ Int}, @y <- @"c") { Nil } | @"c"!(1, "p"))"));
    const ir::ReceiveBind& b = prog->receives[0]->binds[0];
    BindPattern bp;
    bp.patterns = b.patterns;
    bp.remainder = b.remainder;
    bp.free_count = b.free_count;
    pattern = OrDie(MakePatternTerm(std::move(bp)));
    ContinuationValue kv;
    kv.body = prog->receives[0]->body;
    continuation = OrDie(MakeContinuationTerm(std::move(kv)));
    matching = OrDie(MakeDataTerm(DataValue{{IntPar(42), StringPar("payload")}, {}}));
    rejected =
        OrDie(MakeDataTerm(DataValue{{StringPar("text"), StringPar("payload")}, {}}));
  }
};

const Terms& SharedTerms() {
  static const Terms* t = new Terms();
  return *t;
}

TermPtr Channel(const std::string& name) {
  return OrDie(MakeChannelTerm(StringPar(name)));
}

struct Run {
  rspace::InMemoryStore store{3};
  std::unique_ptr<rspace::Space> space;
  StoredMatcher matcher;
  std::vector<TermPtr> shared;  // range(0) shared channels; 0: own channels
};
Run* g_run = nullptr;

void SetupRun(const benchmark::State& state) {
  SharedTerms();
  g_run = new Run;
  rspace::SpaceOptions options;
  options.term_factory = StoredTermFactory();
  g_run->space = OrDie(rspace::Space::Open(&g_run->store, options));
  for (int i = 0; i < state.range(0); ++i) {
    g_run->shared.push_back(Channel("shared" + std::to_string(i)));
  }
}
void TeardownRun(const benchmark::State&) {
  delete g_run;
  g_run = nullptr;
}

// One produce + one consume per iteration with the real matcher; range(0)
// shared channels (1 or 8), or 0: 64 channels of the thread's own.
void BM_StoredMatcherPair(benchmark::State& state) {
  Run& s = *g_run;
  const Terms& t = SharedTerms();
  std::vector<TermPtr> channels = s.shared;
  if (channels.empty()) {
    for (int i = 0; i < 64; ++i) {
      channels.push_back(Channel("t" + std::to_string(state.thread_index()) +
                                 "c" + std::to_string(i)));
    }
  }
  // Distinct per thread: identical events in two logs have equal hashes.
  TermPtr data = OrDie(MakeDataTerm(DataValue{
      {IntPar(state.thread_index()), StringPar("payload")}, {}}));
  rspace::EventLog log;
  rspace::OpContext ctx{&log, &s.matcher};
  size_t i = static_cast<size_t>(state.thread_index());
  for (auto _ : state) {
    const TermPtr& ch = channels[i++ % channels.size()];
    auto p = s.space->Produce(ctx, ch, data, false);
    auto c = s.space->Consume(ctx, {ch}, {t.pattern}, t.continuation, false,
                              false);
    if (!p.ok() || !c.ok()) {
      state.SkipWithError("op failed");
      break;
    }
    if (i % kTakeEvery == 0) benchmark::DoNotOptimize(log.Take());
  }
  state.SetItemsProcessed(state.iterations() * 2);
}
BENCHMARK(BM_StoredMatcherPair)
    ->Setup(SetupRun)
    ->Teardown(TeardownRun)
    ->Arg(0)
    ->Arg(1)
    ->Arg(8)
    ->Threads(1)
    ->Threads(2)
    ->Threads(4)
    ->UseRealTime();

// A consume on a channel holding range(0) data the pattern rejects and one
// it matches: the matcher runs over the backlog (in source order, so about
// half of it on average) under the channel lock, then the COMM takes the
// matching datum, which the next iteration produces again.
void BM_ConsumeScansBacklog(benchmark::State& state) {
  const Terms& t = SharedTerms();
  rspace::InMemoryStore store(3);
  rspace::SpaceOptions options;
  options.term_factory = StoredTermFactory();
  auto space = OrDie(rspace::Space::Open(&store, options));
  StoredMatcher matcher;
  TermPtr ch = Channel("backlog");
  rspace::EventLog setup_log;
  rspace::OpContext setup{&setup_log, &matcher};
  for (int64_t i = 0; i < state.range(0); ++i) {
    if (!space->Produce(setup, ch, t.rejected, false).ok()) std::abort();
  }
  rspace::EventLog log;
  rspace::OpContext ctx{&log, &matcher};
  int i = 0;
  for (auto _ : state) {
    auto p = space->Produce(ctx, ch, t.matching, false);
    auto c = space->Consume(ctx, {ch}, {t.pattern}, t.continuation, false,
                            false);
    if (!p.ok() || !c.ok() || !c->has_value()) {
      state.SkipWithError("no COMM");
      break;
    }
    if (++i % kTakeEvery == 0) benchmark::DoNotOptimize(log.Take());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ConsumeScansBacklog)->Arg(0)->Arg(16)->Arg(256);

}  // namespace
}  // namespace rnode::rholang::interp

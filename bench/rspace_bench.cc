// RSpace benchmarks: produce+consume pairs on 1 and 2 threads, threads
// contending on the same channels, consumes reading cold from a freshly
// reopened store (RocksDB and in memory), replayed consumes from a long
// backlog, checkpoint time by number of changed channels, reset time.
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "rspace/history/history.h"
#include "rspace/space.h"
#include "rspace/storage/kv_store.h"
#include "rspace/storage/rocksdb_store.h"

namespace rnode::rspace {
namespace {

class AnyMatcher final : public Matcher {
 public:
  absl::StatusOr<std::optional<MatchResult>> Match(
      const Term&, const TermPtr& datum) const override {
    return std::optional<MatchResult>(MatchResult(datum));
  }
};

TermPtr T(const std::string& s) { return Term::Make(ToBytes(s)); }

// Events are taken from the per-thread log this often, as a deploy's log
// would be at its end, so the log does not grow without bound.
constexpr int kTakeEvery = 4096;

struct Shared {
  InMemoryStore store{3};
  std::unique_ptr<Space> space = *Space::Open(&store);
  AnyMatcher matcher;
};

Shared& SharedSpace() {
  static Shared* s = new Shared();
  return *s;
}

// One produce + one consume that meet (a COMM) per iteration; each thread
// uses its own channels, so threads contend only on shared structures.
void BM_ProduceConsumePair(benchmark::State& state) {
  Shared& s = SharedSpace();
  std::vector<TermPtr> channels;
  for (int i = 0; i < 64; ++i) {
    channels.push_back(T("t" + std::to_string(state.thread_index()) + "c" +
                         std::to_string(i)));
  }
  TermPtr data = T("datum: a small Rholang value");
  std::vector<TermPtr> pattern = {T("pattern")};
  TermPtr k = T("continuation body");
  EventLog log;
  OpContext ctx{&log, &s.matcher};
  int i = 0;
  for (auto _ : state) {
    const TermPtr& ch = channels[i & 63];
    auto p = s.space->Produce(ctx, ch, data, false);
    auto c = s.space->Consume(ctx, {ch}, pattern, k, false, false);
    benchmark::DoNotOptimize(c);
    if (!p.ok() || !c.ok() || !c->has_value()) state.SkipWithError("no COMM");
    if (++i % kTakeEvery == 0) benchmark::DoNotOptimize(log.Take());
  }
  state.SetItemsProcessed(state.iterations() * 2);
  state.counters["pairs/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ProduceConsumePair)->Threads(1)->Threads(2)->UseRealTime();

// Threads contending on the same channels: each iteration is a
// non-persistent produce then consume on one of range(0) shared channels.
// With a match-all matcher a channel holds data or continuations, never
// both, and at most about `threads` items, so the queues stay bounded.
// Setup/Teardown give each run a fresh space.
struct Contended {
  InMemoryStore store{3};
  std::unique_ptr<Space> space;
  AnyMatcher matcher;
  std::vector<TermPtr> channels;
};
Contended* g_contended = nullptr;

void SetupContended(const benchmark::State& state) {
  g_contended = new Contended;
  g_contended->space = *Space::Open(&g_contended->store);
  for (int i = 0; i < state.range(0); ++i) {
    g_contended->channels.push_back(T("shared" + std::to_string(i)));
  }
}
void TeardownContended(const benchmark::State&) {
  delete g_contended;
  g_contended = nullptr;
}

void BM_ProduceConsumeSharedChannels(benchmark::State& state) {
  Contended& s = *g_contended;
  const size_t n = s.channels.size();
  EventLog log;
  OpContext ctx{&log, &s.matcher};
  // Distinct data per thread: identical produce events in two logs would
  // have equal hashes (the repeat count is per log).
  TermPtr data = T("datum " + std::to_string(state.thread_index()));
  std::vector<TermPtr> pattern = {T("pattern")};
  TermPtr k = T("k " + std::to_string(state.thread_index()));
  size_t i = static_cast<size_t>(state.thread_index());
  int64_t comms = 0;
  for (auto _ : state) {
    const TermPtr& ch = s.channels[i++ % n];
    auto p = s.space->Produce(ctx, ch, data, false);
    auto c = s.space->Consume(ctx, {ch}, pattern, k, false, false);
    if (!p.ok() || !c.ok()) {
      state.SkipWithError("op failed");
      break;
    }
    comms += static_cast<int64_t>(p->size()) + c->has_value();
    if (i % kTakeEvery == 0) benchmark::DoNotOptimize(log.Take());
  }
  state.SetItemsProcessed(state.iterations() * 2);
  state.counters["comms_per_pair"] = benchmark::Counter(
      static_cast<double>(comms), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_ProduceConsumeSharedChannels)
    ->Setup(SetupContended)
    ->Teardown(TeardownContended)
    ->Arg(1)
    ->Arg(8)
    ->Arg(64)
    ->Threads(1)
    ->Threads(2)
    ->Threads(4)
    ->UseRealTime();

// Produces that are stored (no waiting continuation).
void BM_ProduceStored(benchmark::State& state) {
  InMemoryStore store(3);
  auto space = *Space::Open(&store);
  AnyMatcher matcher;
  std::vector<TermPtr> channels;
  for (int i = 0; i < 1024; ++i) channels.push_back(T("c" + std::to_string(i)));
  TermPtr data = T("datum");
  EventLog log;
  OpContext ctx{&log, &matcher};
  int i = 0;
  for (auto _ : state) {
    auto p = space->Produce(ctx, channels[i & 1023], data, false);
    benchmark::DoNotOptimize(p);
    if (++i % kTakeEvery == 0) {
      benchmark::DoNotOptimize(log.Take());
      state.PauseTiming();
      auto r = space->Reset(kEmptyRoot);
      state.ResumeTiming();
      if (!r.ok()) state.SkipWithError("reset failed");
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ProduceStored);

// Matches only the datum whose bytes equal the pattern's: each consume takes
// one specific datum out of a long backlog.
class EqualMatcher final : public Matcher {
 public:
  absl::StatusOr<std::optional<MatchResult>> Match(
      const Term& pattern, const TermPtr& datum) const override {
    if (pattern.hash() != datum->hash()) return std::optional<MatchResult>();
    return std::optional<MatchResult>(MatchResult(datum));
  }
};

// Replay of N consumes, each taking a specific datum from a channel holding
// N data: the cost per replayed consume (the recorded datum is found by its
// produce hash). Setup (play, reset, reload) is excluded from the timing.
void BM_ReplayConsumesFromBacklog(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  InMemoryStore store(3);
  auto space = *Space::Open(&store);
  EqualMatcher matcher;
  TermPtr ch = T("hot channel");
  TermPtr k = T("continuation");
  std::vector<TermPtr> data;
  for (int i = 0; i < n; ++i) data.push_back(T("datum " + std::to_string(i)));
  EventLog setup_log;
  OpContext setup{&setup_log, &matcher};
  for (const TermPtr& d : data) {
    if (!space->Produce(setup, ch, d, false).ok())
      state.SkipWithError("produce");
  }
  absl::StatusOr<Hash32> root = space->CreateCheckpoint();
  if (!root.ok()) state.SkipWithError("checkpoint");
  // Play: consume in reverse insertion order (a fixed, hash-independent
  // order), recording the log.
  EventLog play_log;
  OpContext play{&play_log, &matcher};
  for (int i = n - 1; i >= 0; --i) {
    auto c = space->Consume(play, {ch}, {data[i]}, k, false, false);
    if (!c.ok() || !c->has_value()) state.SkipWithError("play consume");
  }
  std::vector<Event> recorded = play_log.Take();
  for (auto _ : state) {
    state.PauseTiming();
    if (!space->Reset(*root).ok()) state.SkipWithError("reset");
    auto replay = EventLog::ForReplay(recorded);
    if (!replay.ok()) state.SkipWithError("rig");
    OpContext ctx{replay->get(), &matcher};
    // Load the channel before timing, as a block replay would have it hot.
    benchmark::DoNotOptimize(space->GetData(ch->hash()));
    state.ResumeTiming();
    for (int i = n - 1; i >= 0; --i) {
      auto c = space->Consume(ctx, {ch}, {data[i]}, k, false, false);
      if (!c.ok() || !c->has_value()) state.SkipWithError("replay consume");
    }
    state.PauseTiming();
    if (!(*replay)->CheckReplayDone().ok()) state.SkipWithError("unused");
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_ReplayConsumesFromBacklog)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond);

std::string BenchDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("rspace_bench_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

// Checkpoint of N changed channels (one new datum each) on RocksDB (arg 1)
// or in memory (arg 0).
void BM_Checkpoint(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const bool rocks = state.range(1) == 1;
  std::string dir;
  std::unique_ptr<KeyValueStore> store;
  if (rocks) {
    dir = BenchDir("checkpoint");
    store = *RocksDbStore::Open(dir, DefaultHistoryColumnNames());
  } else {
    store = std::make_unique<InMemoryStore>(3);
  }
  auto space = *Space::Open(store.get());
  AnyMatcher matcher;
  std::vector<TermPtr> channels;
  for (int i = 0; i < n; ++i)
    channels.push_back(T("channel-" + std::to_string(i)));
  int round = 0;
  for (auto _ : state) {
    state.PauseTiming();
    EventLog log;
    OpContext ctx{&log, &matcher};
    TermPtr data = T("round " + std::to_string(round++));
    for (const auto& ch : channels) {
      if (!space->Produce(ctx, ch, data, false).ok())
        state.SkipWithError("produce");
    }
    state.ResumeTiming();
    auto root = space->CreateCheckpoint();
    if (!root.ok()) state.SkipWithError("checkpoint failed");
  }
  state.counters["channels"] = n;
  space.reset();
  store.reset();
  if (!dir.empty()) std::filesystem::remove_all(dir);
}
BENCHMARK(BM_Checkpoint)
    ->ArgsProduct({{1000, 10000, 100000}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// Reset to a root with 10k channels after touching 1k of them.
void BM_Reset(benchmark::State& state) {
  InMemoryStore store(3);
  auto space = *Space::Open(&store);
  AnyMatcher matcher;
  EventLog log;
  OpContext ctx{&log, &matcher};
  std::vector<TermPtr> channels;
  for (int i = 0; i < 10000; ++i)
    channels.push_back(T("channel-" + std::to_string(i)));
  TermPtr data = T("d");
  for (const auto& ch : channels) {
    if (!space->Produce(ctx, ch, data, false).ok())
      state.SkipWithError("produce");
  }
  Hash32 root = *space->CreateCheckpoint();
  const int touched = static_cast<int>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    for (int i = 0; i < touched; ++i) {
      if (!space->Produce(ctx, channels[i], data, false).ok())
        state.SkipWithError("p");
    }
    state.ResumeTiming();
    if (!space->Reset(root).ok()) state.SkipWithError("reset failed");
  }
  state.counters["touched"] = touched;
}
BENCHMARK(BM_Reset)->Arg(0)->Arg(1000);

// Consumes reading cold from history: a store holding kColdChannels
// channels with one datum each is built once per store kind; every run
// reopens it (RocksDB: a cold block cache; both: a new space, so an empty
// overlay and a new trie node cache of range(1) entries) and each
// consume is the first touch of its channel: a trie walk, a blob read and a
// decode, then a COMM on the stored datum. Thread t takes channels
// i * threads + t. range(0): 0 in memory, 1 RocksDB.
constexpr int kColdChannels = 40000;
constexpr int kColdMaxThreads = 4;

struct ColdStore {
  ~ColdStore() {
    if (!dir.empty()) std::filesystem::remove_all(dir);
  }
  std::string dir;  // RocksDB only
  std::unique_ptr<KeyValueStore> memory;
  std::vector<TermPtr> channels;
};

ColdStore& BuildColdStore(bool rocks) {
  static std::mutex mu;
  // Destroyed at exit, which removes the RocksDB directory.
  static std::unique_ptr<ColdStore> built[2];
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<ColdStore>& s = built[rocks ? 1 : 0];
  if (s != nullptr) return *s;
  s = std::make_unique<ColdStore>();
  std::unique_ptr<KeyValueStore> rocks_store;
  KeyValueStore* store = nullptr;
  if (rocks) {
    s->dir = (std::filesystem::temp_directory_path() /
              ("rspace_bench_cold_" + std::to_string(::getpid())))
                 .string();
    std::filesystem::remove_all(s->dir);
    rocks_store = *RocksDbStore::Open(s->dir, DefaultHistoryColumnNames());
    store = rocks_store.get();
  } else {
    s->memory = std::make_unique<InMemoryStore>(3);
    store = s->memory.get();
  }
  auto space = *Space::Open(store);
  AnyMatcher matcher;
  EventLog log;
  OpContext ctx{&log, &matcher};
  TermPtr data = T("datum: a small Rholang value");
  for (int i = 0; i < kColdChannels; ++i) {
    s->channels.push_back(T("cold-channel-" + std::to_string(i)));
    if (!space->Produce(ctx, s->channels.back(), data, false).ok()) {
      std::abort();
    }
  }
  if (!space->CreateCheckpoint().ok()) std::abort();
  space.reset();
  if (rocks) {
    // Reopen once so the WAL is replayed and flushed into SST files: later
    // opens read from SSTs.
    rocks_store.reset();
    rocks_store = *RocksDbStore::Open(s->dir, DefaultHistoryColumnNames());
  }
  return *s;
}

struct ColdRun {
  ColdStore* cold = nullptr;
  std::unique_ptr<KeyValueStore> rocks;
  std::unique_ptr<Space> space;
  AnyMatcher matcher;
};
ColdRun* g_cold = nullptr;

void SetupCold(const benchmark::State& state) {
  const bool rocks = state.range(0) == 1;
  g_cold = new ColdRun;
  g_cold->cold = &BuildColdStore(rocks);
  KeyValueStore* store = g_cold->cold->memory.get();
  if (rocks) {
    g_cold->rocks =
        *RocksDbStore::Open(g_cold->cold->dir, DefaultHistoryColumnNames());
    store = g_cold->rocks.get();
  }
  SpaceOptions options;
  options.history.node_cache_entries = static_cast<size_t>(state.range(1));
  g_cold->space = *Space::Open(store, options);
}
void TeardownCold(const benchmark::State&) {
  delete g_cold;
  g_cold = nullptr;
}

void BM_ColdConsume(benchmark::State& state) {
  ColdRun& s = *g_cold;
  EventLog log;
  OpContext ctx{&log, &s.matcher};
  std::vector<TermPtr> pattern = {T("pattern")};
  TermPtr k = T("continuation body");
  const size_t threads = static_cast<size_t>(state.threads());
  size_t i = 0;
  for (auto _ : state) {
    const TermPtr& ch =
        s.cold->channels[i++ * threads +
                         static_cast<size_t>(state.thread_index())];
    auto c = s.space->Consume(ctx, {ch}, pattern, k, false, false);
    if (!c.ok() || !c->has_value()) {
      state.SkipWithError("no COMM on a stored datum");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ColdConsume)
    ->Setup(SetupCold)
    ->Teardown(TeardownCold)
    ->ArgsProduct({{0, 1}, {0, 32768}})
    ->ArgNames({"rocks", "node_cache"})
    ->Iterations(kColdChannels / kColdMaxThreads)
    ->Threads(1)
    ->Threads(2)
    ->Threads(4)
    ->UseRealTime();

}  // namespace
}  // namespace rnode::rspace

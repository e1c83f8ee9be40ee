// Merger benchmark: merge time for N deploy chains (one per deploy, 10 per
// block) at 1 % conflicting chains, with one hot channel every chain
// produces on and one hot number channel (a fee vault) every chain adds to;
// a third of the chains also read a persistent base datum, a fifth peek at a
// base datum and a quarter leave a 2-channel join waiting (BM_MergePlain
// leaves those out); and the same with every chain racing for one datum. The
// history is in memory, except in BM_MergeRocksDb (a RocksDB store in a
// temporary folder, as a node runs it) and BM_MergeRocksDbFresh (the same
// store reopened before every merge: cold node and block caches); the
// *Pipelined variants put a PipelinedStore over that store, so the merge's
// write lands in the background (docs/merge.md §8): their time is the merge
// to its root, readable, and durable_ms adds the wait for the write.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "benchmark/benchmark.h"
#include "casper/merge/merger.h"
#include "crypto/hash.h"
#include "rspace/channel_codec.h"
#include "rspace/storage/kv_store.h"
#include "rspace/storage/pipelined_store.h"
#include "rspace/storage/rocksdb_store.h"

namespace rnode::casper::merge {
namespace {

using rspace::ChannelState;
using rspace::Datum;

Bytes U64(uint64_t v) {
  Bytes b(8);
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  return b;
}

Hash32 H(uint64_t a, uint64_t b) {
  Bytes x = U64(a), y = U64(b);
  x.insert(x.end(), y.begin(), y.end());
  return crypto::Blake2b256(x);
}

class Codec final : public NumberChannelCodec {
 public:
  absl::StatusOr<int64_t> Read(const ChannelState& s) const override {
    if (s.empty()) return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= uint64_t{s.data[0].value->bytes()[i]} << (8 * i);
    return static_cast<int64_t>(v);
  }
  absl::StatusOr<ChannelState> Write(const Hash32& ch,
                                     int64_t v) const override {
    ChannelState s;
    s.data.push_back(Datum{rspace::Term::Make(U64(static_cast<uint64_t>(v))),
                           false, H(0xfee, static_cast<uint64_t>(v))});
    return s;
  }
};

constexpr int kDeploysPerBlock = 10;
constexpr int kConflictEvery = 100;  // 1 % of chains race with a neighbour.
constexpr int kPersistEvery = 3;     // Chains reading the persistent datum.
constexpr int kPeekEvery = 5;        // Chains peeking at the shared datum.
constexpr int kJoinEvery = 4;        // Chains leaving a 2-channel join.

struct Shape {
  bool hot_race = false;
  bool rocksdb = false;
  bool pipelined = false;  // A PipelinedStore over the RocksDB store.
  bool mixed = true;       // Persistent reads, peeks and joins.
};

struct Setup {
  ~Setup() {
    history.reset();
    pipelined.reset();
    store.reset();
    if (!dir.empty()) std::filesystem::remove_all(dir);
  }
  std::string dir;  // RocksDB folder, removed at the end.
  std::unique_ptr<rspace::KeyValueStore> store;
  std::unique_ptr<rspace::PipelinedStore> pipelined;  // Over `store`.
  std::unique_ptr<rspace::History> history;
  // The store the history writes to.
  rspace::KeyValueStore* top() {
    return pipelined ? pipelined.get() : store.get();
  }
  Hash32 base_root{};
  std::vector<std::shared_ptr<const BlockIndex>> scope;
  Codec codec;
};

std::unique_ptr<Setup> Build(int chains, Shape shape = {}) {
  const bool hot_race = shape.hot_race;
  auto s = std::make_unique<Setup>();
  if (shape.rocksdb) {
    s->dir = (std::filesystem::temp_directory_path() /
              ("merge_bench_" + std::to_string(::getpid())))
                 .string();
    std::filesystem::remove_all(s->dir);
    s->store = *rspace::RocksDbStore::Open(s->dir,
                                           rspace::DefaultHistoryColumnNames());
  } else {
    s->store = std::make_unique<rspace::InMemoryStore>(3);
  }
  if (shape.pipelined) {
    s->pipelined = std::make_unique<rspace::PipelinedStore>(s->store.get());
  }
  s->history = *rspace::History::Open(s->top(), rspace::HistoryOptions{});
  const Hash32 hot = H(1, 0);
  const Hash32 vault = H(2, 0);
  std::vector<Hash32> in(chains), out(chains);
  std::vector<Datum> x(chains);
  std::vector<rspace::LeafUpdate> updates;
  std::map<Hash32, ChannelState> base;
  for (int i = 0; i < chains; ++i) {
    in[i] = H(3, i);
    out[i] = H(4, i);
    x[i] = Datum{rspace::Term::Make(U64(i)), false, H(5, i)};
    base[in[i]].data.push_back(x[i]);
  }
  base[vault] = *s->codec.Write(vault, 1000);
  // A persistent datum many chains read, and a datum many chains peek at.
  const Hash32 persistent = H(20, 0), peeked = H(21, 0);
  const Datum pd{rspace::Term::Make(U64(20)), true, H(22, 0)};
  const Datum kd{rspace::Term::Make(U64(21)), false, H(23, 0)};
  if (shape.mixed) {
    base[persistent].data.push_back(pd);
    base[peeked].data.push_back(kd);
  }
  for (auto& [ch, st] : base) {
    Bytes blob = rspace::EncodeChannelState(st);
    Hash32 h = crypto::Blake2b256(blob);
    updates.push_back(rspace::LeafUpdate{ch, std::move(blob), h});
  }
  s->base_root = *s->history->Commit(rspace::kEmptyRoot, updates);
  const Datum vault_datum = base[vault].data[0];
  for (int b = 0; b * kDeploysPerBlock < chains; ++b) {
    BlockInput block{H(6, b), static_cast<uint64_t>(b), {}};
    for (int j = 0; j < kDeploysPerBlock && b * kDeploysPerBlock + j < chains;
         ++j) {
      const int i = b * kDeploysPerBlock + j;
      int take = (i % kConflictEvery == 0 && i + 1 < chains) ? i + 1 : i;
      if (hot_race) take = 0;
      DeployInput d;
      d.id = U64(static_cast<uint64_t>(i) + 1);
      d.cost = 100 + static_cast<uint64_t>(i % 7);
      // Take this chain's input datum (or the neighbour's: a race).
      Hash32 k = H(7, i);
      d.events.push_back(rspace::ConsumeEvent{
          k, {in[take]}, {H(8, 0)}, H(9, 0), false, false, 0});
      d.events.push_back(rspace::CommEvent{
          H(10, i), k, false, false, {{in[take], x[take].source, false}}});
      // Leave a datum on its own output channel and one on the hot channel.
      Datum o{rspace::Term::Make(U64(i)), false, H(11, i)};
      Datum hd{rspace::Term::Make(U64(i)), false, H(12, i)};
      d.events.push_back(
          rspace::ProduceEvent{o.source, out[i], o.value->hash(), false, 0});
      d.events.push_back(
          rspace::ProduceEvent{hd.source, hot, hd.value->hash(), false, 0});
      // Pay the fee vault (a number channel: its events are mergeable).
      Hash32 fk = H(13, i);
      d.events.push_back(rspace::ConsumeEvent{
          fk, {vault}, {H(8, 0)}, H(9, 0), false, false, 0});
      d.events.push_back(rspace::CommEvent{
          H(14, i), fk, false, false, {{vault, vault_datum.source, false}}});
      d.events.push_back(
          rspace::ProduceEvent{H(15, i), vault, H(16, 0), false, 0});
      d.number_diffs[vault] = static_cast<int64_t>(d.cost);
      rspace::ChannelChange ci, co, ch;
      ci.channel = in[take];
      ci.removed_data.push_back(x[take]);
      co.channel = out[i];
      co.added_data.push_back(o);
      ch.channel = hot;
      ch.added_data.push_back(hd);
      d.changes.channels = {ci, co, ch};
      if (shape.mixed && i % kPersistEvery == 0) {
        // Read the persistent datum: it stays, so no change.
        Hash32 pk = H(24, i);
        d.events.push_back(rspace::ConsumeEvent{
            pk, {persistent}, {H(8, 0)}, H(9, 0), false, false, 0});
        d.events.push_back(rspace::CommEvent{
            H(25, i), pk, false, false, {{persistent, pd.source, true}}});
      }
      if (shape.mixed && i % kPeekEvery == 0) {
        // Peek at the shared datum: it stays, so no change.
        Hash32 kk = H(26, i);
        d.events.push_back(rspace::ConsumeEvent{
            kk, {peeked}, {H(8, 0)}, H(9, 0), false, true, 0});
        d.events.push_back(rspace::CommEvent{
            H(27, i), kk, false, true, {{peeked, kd.source, false}}});
      }
      if (shape.mixed && i % kJoinEvery == 0) {
        // A continuation waiting on two channels of its own: stored on the
        // group's first channel, the join on both.
        rspace::WaitingContinuation k;
        k.channels = {rspace::Term::Make(U64(4'000'000 + 2 * i)),
                      rspace::Term::Make(U64(4'000'001 + 2 * i))};
        k.patterns = {rspace::Term::Make(U64(8)), rspace::Term::Make(U64(8))};
        k.continuation = rspace::Term::Make(U64(9));
        k.source = H(28, i);
        k.group = rspace::MakeJoinGroup(k.channels);
        d.events.push_back(
            rspace::ConsumeEvent{k.source,
                                 {k.channels[0]->hash(), k.channels[1]->hash()},
                                 {k.patterns[0]->hash(), k.patterns[1]->hash()},
                                 k.continuation->hash(),
                                 false,
                                 false,
                                 0});
        rspace::ChannelChange j0, j1;
        j0.channel = k.group[0];
        j1.channel = k.group[1];
        j0.added_joins.push_back(k.group);
        j1.added_joins.push_back(k.group);
        j0.added_continuations.push_back(std::move(k));
        d.changes.channels.push_back(std::move(j0));
        d.changes.channels.push_back(std::move(j1));
      }
      std::sort(
          d.changes.channels.begin(), d.changes.channels.end(),
          [](const auto& a, const auto& c) { return a.channel < c.channel; });
      block.deploys.push_back(std::move(d));
    }
    s->scope.push_back(*BuildBlockIndex(std::move(block)));
  }
  return s;
}

// Closes the store and opens it again: the node cache and RocksDB's block
// cache start cold, and reopening flushes the memtables (WAL replay), so
// reads go to SST files.
void Reopen(Setup& s) {
  const bool pipelined = s.pipelined != nullptr;
  s.history.reset();
  s.pipelined.reset();
  s.store.reset();
  s.store =
      *rspace::RocksDbStore::Open(s.dir, rspace::DefaultHistoryColumnNames());
  if (pipelined) {
    s.pipelined = std::make_unique<rspace::PipelinedStore>(s.store.get());
  }
  s.history = *rspace::History::Open(s.top(), rspace::HistoryOptions{});
}

void RunMerge(benchmark::State& state, Shape shape, size_t threads = 1,
              bool fresh = false) {
  const int chains = static_cast<int>(state.range(0));
  std::unique_ptr<Setup> s = Build(chains, shape);
  MergeOptions options;
  options.number_codec = &s->codec;
  MergeContextOptions context_options;
  context_options.threads = threads;
  MergeContext context(context_options);
  // Step times summed over every iteration (reported as means), and the
  // wall time of each whole iteration: what the steps leave out (the
  // result's assembly and teardown) is the difference.
  MergeMetrics last, sum;
  int64_t merges = 0, wall_ns = 0, sync_ns = 0;
  for (auto _ : state) {
    if (fresh) {
      state.PauseTiming();
      Reopen(*s);
      state.ResumeTiming();
    }
    const auto t0 = std::chrono::steady_clock::now();
    {
      auto r = Merge(*s->history, s->base_root, s->scope, options, context);
      if (!r.ok()) {
        state.SkipWithError(std::string(r.status().message()).c_str());
        return;
      }
      last = r->metrics;
      benchmark::DoNotOptimize(r->root);
    }
    wall_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - t0)
                   .count();
    if (s->pipelined) {
      // Outside the timing: the wait until the merge's write is durable
      // (durable_ms). A node overlaps it with the block's own replay.
      state.PauseTiming();
      const auto t1 = std::chrono::steady_clock::now();
      absl::Status synced = s->pipelined->Sync();
      sync_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::steady_clock::now() - t1)
                     .count();
      state.ResumeTiming();
      if (!synced.ok()) {
        state.SkipWithError(std::string(synced.message()).c_str());
        return;
      }
    }
    sum.index_ns += last.index_ns;
    sum.branches_ns += last.branches_ns;
    sum.conflicts_ns += last.conflicts_ns;
    sum.rejection_ns += last.rejection_ns;
    sum.combine_ns += last.combine_ns;
    sum.trie_actions_ns += last.trie_actions_ns;
    sum.apply_ns += last.apply_ns;
    sum.base_read_ns += last.base_read_ns;
    sum.base_wait_ns += last.base_wait_ns;
    sum.base_plan_ns += last.base_plan_ns;
    ++merges;
  }
  auto ms = [&](int64_t ns) {
    return merges == 0
               ? 0.0
               : static_cast<double>(ns) / 1e6 / static_cast<double>(merges);
  };
  const int64_t steps = sum.index_ns + sum.branches_ns + sum.conflicts_ns +
                        sum.rejection_ns + sum.combine_ns +
                        sum.trie_actions_ns + sum.apply_ns;
  state.counters["branches"] = static_cast<double>(last.branches);
  state.counters["rejected"] = static_cast<double>(last.rejected_branches);
  state.counters["index_ms"] = ms(sum.index_ns);
  state.counters["branches_ms"] = ms(sum.branches_ns);
  state.counters["conflicts_ms"] = ms(sum.conflicts_ns);
  state.counters["rejection_ms"] = ms(sum.rejection_ns);
  state.counters["combine_ms"] = ms(sum.combine_ns);
  state.counters["trie_ms"] = ms(sum.trie_actions_ns);
  state.counters["apply_ms"] = ms(sum.apply_ns);
  state.counters["base_read_ms"] = ms(sum.base_read_ns);
  state.counters["base_wait_ms"] = ms(sum.base_wait_ns);
  state.counters["base_plan_ms"] = ms(sum.base_plan_ns);
  state.counters["outside_ms"] = ms(wall_ns - steps);
  if (s->pipelined) {
    const rspace::PipelinedStoreStats stats = s->pipelined->stats();
    state.counters["durable_ms"] = ms(wall_ns + sync_ns);
    state.counters["sync_wait_ms"] = ms(sync_ns);
    state.counters["write_ms"] =
        stats.async_writes == 0
            ? 0.0
            : static_cast<double>(stats.background_ns) / 1e6 /
                  static_cast<double>(stats.async_writes);
  }
  state.SetComplexityN(chains);
}

void BM_Merge(benchmark::State& state) { RunMerge(state, {}); }

// Without persistent reads, peeks and joins (the shape of earlier figures).
void BM_MergePlain(benchmark::State& state) {
  RunMerge(state, {.mixed = false});
}
BENCHMARK(BM_MergePlain)->Arg(10000)->Unit(benchmark::kMillisecond);

// Every chain takes the same datum: one race key with N branches (an
// N-clique solved by the greedy fallback), never N^2 pairs.
void BM_MergeHotRace(benchmark::State& state) {
  RunMerge(state, {.hot_race = true});
}
BENCHMARK(BM_MergeHotRace)->Arg(10000)->Unit(benchmark::kMillisecond);

// The same merges with per-channel work on two threads.
void BM_MergeTwoThreads(benchmark::State& state) { RunMerge(state, {}, 2); }
BENCHMARK(BM_MergeTwoThreads)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
void BM_MergeHotRaceTwoThreads(benchmark::State& state) {
  RunMerge(state, {.hot_race = true}, 2);
}
BENCHMARK(BM_MergeHotRaceTwoThreads)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK(BM_Merge)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oNLogN);

// The same merge over a RocksDB history (arg 1: threads).
void BM_MergeRocksDb(benchmark::State& state) {
  RunMerge(state, {.rocksdb = true}, static_cast<size_t>(state.range(1)));
}
BENCHMARK(BM_MergeRocksDb)
    ->Args({10000, 1})
    ->Args({10000, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same merge on a freshly opened store every time (reopened outside
// the timing): trie nodes and blobs come from SST files.
void BM_MergeRocksDbFresh(benchmark::State& state) {
  RunMerge(state, {.rocksdb = true}, static_cast<size_t>(state.range(1)),
           /*fresh=*/true);
}
BENCHMARK(BM_MergeRocksDbFresh)
    ->Args({10000, 1})
    ->Args({10000, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same two with the merge's write pipelined (PipelinedStore).
void BM_MergeRocksDbPipelined(benchmark::State& state) {
  RunMerge(state, {.rocksdb = true, .pipelined = true},
           static_cast<size_t>(state.range(1)));
}
BENCHMARK(BM_MergeRocksDbPipelined)
    ->Args({10000, 1})
    ->Args({10000, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
void BM_MergeRocksDbFreshPipelined(benchmark::State& state) {
  RunMerge(state, {.rocksdb = true, .pipelined = true},
           static_cast<size_t>(state.range(1)), /*fresh=*/true);
}
BENCHMARK(BM_MergeRocksDbFreshPipelined)
    ->Args({10000, 1})
    ->Args({10000, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Index build per block (done once at admission, not part of a merge).
void BM_BuildBlockIndex(benchmark::State& state) {
  std::unique_ptr<Setup> s = Build(kDeploysPerBlock, {.mixed = false});
  BlockInput block{H(6, 0), 0, s->scope[0]->deploys};
  for (auto _ : state) {
    auto idx = BuildBlockIndex(block);
    benchmark::DoNotOptimize(idx);
  }
}
BENCHMARK(BM_BuildBlockIndex)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace rnode::casper::merge

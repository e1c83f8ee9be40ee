// Spatial matcher cost: the ground fast path, element-wise lists, Par
// assignment with a rest variable, connectives beside a rest variable, and
// how long a hostile pattern runs before the step limit stops it.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "rholang/frontend/matcher.h"
#include "rholang/frontend/normalizer.h"

namespace rnode::rholang {
namespace {

struct Pair {
  ir::ParPtr target;
  ir::ParPtr pattern;
  uint32_t free_count = 0;
};

Pair CompilePair(const std::string& target, const std::string& pattern) {
  auto r = Compile("match {" + target + "} { {" + pattern + "} => Nil }");
  if (!r.ok()) std::abort();
  const ir::Match& m = *(*r)->matches[0];
  return {m.target, m.cases[0].pattern, m.cases[0].free_count};
}

void RunMatch(benchmark::State& state, const Pair& p) {
  for (auto _ : state) {
    auto r = SpatialMatch(*p.target, *p.pattern, p.free_count);
    benchmark::DoNotOptimize(r);
  }
}

void BM_GroundEquality(benchmark::State& state) {
  RunMatch(state, CompilePair("[1, 2, {\"a\": 3}]", "[1, 2, {\"a\": 3}]"));
}
BENCHMARK(BM_GroundEquality);

// A list of n ints against a list of n variables.
void BM_ListOfVars(benchmark::State& state) {
  std::string target = "[0";
  std::string pattern = "[v0";
  for (int i = 1; i < state.range(0); ++i) {
    target += ", " + std::to_string(i);
    pattern += ", v" + std::to_string(i);
  }
  RunMatch(state, CompilePair(target + "]", pattern + "]"));
}
BENCHMARK(BM_ListOfVars)->Arg(4)->Arg(32);

// n sends on distinct channels; the pattern picks one and a rest variable
// takes the others.
void BM_ParWithRest(benchmark::State& state) {
  std::string target = "@0!(0)";
  for (int i = 1; i < state.range(0); ++i) {
    target += " | @" + std::to_string(i) + "!(" + std::to_string(i) + ")";
  }
  RunMatch(state, CompilePair(target, "@0!(x) | rest"));
}
BENCHMARK(BM_ParWithRest)->Arg(4)->Arg(32);

// n identical sends against n send patterns (each capturing its datum):
// the assignment is a bipartite matching, polynomial in n.
void BM_IdenticalSends(benchmark::State& state) {
  std::string target = "@0!(1)";
  std::string pattern = "@0!(a0)";
  for (int i = 1; i < state.range(0); ++i) {
    target += " | @0!(1)";
    pattern += " | @0!(a" + std::to_string(i) + ")";
  }
  RunMatch(state, CompilePair(target, pattern));
}
BENCHMARK(BM_IdenticalSends)->Arg(10)->Arg(32);

// The old hostile case: 10 identical sends against 10 send patterns and
// `~Nil`, which now fails at once (`~Nil` gets only Nil).
void BM_IdenticalSendsAndNotNil(benchmark::State& state) {
  std::string target = "@0!(1)";
  std::string pattern = "@0!(a0)";
  for (int i = 1; i < 10; ++i) {
    target += " | @0!(1)";
    pattern += " | @0!(a" + std::to_string(i) + ")";
  }
  RunMatch(state, CompilePair(target, pattern + " | ~Nil"));
}
BENCHMARK(BM_IdenticalSendsAndNotNil);

// Two simple-type connectives and a rest variable over n mixed exprs.
void BM_ConnectivesWithRest(benchmark::State& state) {
  std::string target = "\"s\"";
  for (int i = 1; i < state.range(0); ++i) {
    target += " | " + std::to_string(i);
  }
  RunMatch(state, CompilePair(target, "Int | String | x"));
}
BENCHMARK(BM_ConnectivesWithRest)->Arg(4)->Arg(32);

// 20 distinct sends against `~Nil | ~Nil | @99!(99)`: every split of the
// sends between the two connectives (3^20) would be tried; the step limit
// (kMaxMatchSteps) cuts it off with ResourceExhausted.
void BM_HostileParUntilStepLimit(benchmark::State& state) {
  std::string target = "@0!(0)";
  for (int i = 1; i < 20; ++i) {
    target += " | @" + std::to_string(i) + "!(" + std::to_string(i) + ")";
  }
  RunMatch(state, CompilePair(target, "~Nil | ~Nil | @99!(99)"));
}
BENCHMARK(BM_HostileParUntilStepLimit)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rnode::rholang

// Rholang front-end throughput (MB/s of source): lexing, parsing, parse +
// normalize, encoding and printing, over generated programs shaped like real
// contracts (registry lookups, contracts with pattern formals, maps, matches,
// joins, conditionals).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "rholang/frontend/ir_encoding.h"
#include "rholang/frontend/lexer.h"
#include "rholang/frontend/normalizer.h"
#include "rholang/frontend/parser.h"
#include "rholang/frontend/printer.h"

namespace rnode::rholang {
namespace {

// One contract module; `i` varies names and constants.
std::string Module(int i) {
  std::string n = std::to_string(i);
  return "new vault" + n +
         ", stdout(`rho:io:stdout`), "
         "rl(`rho:registry:lookup`), listOpsCh, mapCh in {\n"
         "  rl!(`rho:lang:listOps`, *listOpsCh) |\n"
         "  mapCh!({\"alice\": " +
         n +
         ", \"bob\": 200, \"carol\": 300}) |\n"
         "  for (@(_, ListOps) <- listOpsCh) {\n"
         "    contract vault" +
         n +
         "(@\"deposit\", @amount, ret) = {\n"
         "      if (amount > 0 and amount < 1000000) {\n"
         "        for (@balances <- mapCh) {\n"
         "          mapCh!(balances.set(\"alice\", "
         "balances.getOrElse(\"alice\","
         " 0) + amount)) |\n"
         "          ret!((true, amount))\n"
         "        }\n"
         "      } else {\n"
         "        ret!((false, \"amount out of range: \" ++ \"${a}\" %% "
         "{\"a\": amount}))\n"
         "      }\n"
         "    } |\n"
         "    contract vault" +
         n +
         "(@\"balance\", @who, ret) = {\n"
         "      for (@balances <<- mapCh) {\n"
         "        match balances.get(who) {\n"
         "          Nil => ret!((false, \"unknown account\"))\n"
         "          {b /\\ Int} => ret!((true, b))\n"
         "          _ => ret!((false, \"corrupt\"))\n"
         "        }\n"
         "      }\n"
         "    } |\n"
         "    contract vault" +
         n +
         "(@\"transfer\", @from, @to, @amount, "
         "ret) = {\n"
         "      new ack1, ack2 in {\n"
         "        vault" +
         n +
         "!(\"balance\", from, *ack1) |\n"
         "        vault" +
         n +
         "!(\"balance\", to, *ack2) |\n"
         "        for (@(true, b1) <- ack1 & @(true, b2) <- ack2) {\n"
         "          if (b1 >= amount) {\n"
         "            @ListOps!(\"fold\", [b1, b2, amount], " +
         n +
         ", *ret)\n"
         "          } else { ret!((false, \"insufficient funds\")) }\n"
         "        }\n"
         "      }\n"
         "    } |\n"
         "    for (@[head ...tail] <= @{\"queue\" ++ \"" +
         n +
         "\"}) {\n"
         "      stdout!([head, tail.length(), Set(1, 2, head)])\n"
         "    }\n"
         "  }\n"
         "}\n";
}

// About 64 KiB of source: 48 modules joined in parallel.
const std::string& Corpus() {
  static const std::string* corpus = [] {
    auto* s = new std::string;
    for (int i = 0; i < 48; ++i) {
      if (i > 0) *s += " |\n";
      *s += Module(i);
    }
    return s;
  }();
  return *corpus;
}

void BM_Lex(benchmark::State& state) {
  const std::string& src = Corpus();
  for (auto _ : state) benchmark::DoNotOptimize(Lex(src));
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(src.size()));
}
BENCHMARK(BM_Lex);

void BM_Parse(benchmark::State& state) {
  const std::string& src = Corpus();
  for (auto _ : state) benchmark::DoNotOptimize(Parse(src));
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(src.size()));
}
BENCHMARK(BM_Parse);

void BM_ParseAndNormalize(benchmark::State& state) {
  const std::string& src = Corpus();
  for (auto _ : state) {
    auto par = Compile(src);
    if (!par.ok()) state.SkipWithError("corpus does not compile");
    benchmark::DoNotOptimize(par);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(src.size()));
}
BENCHMARK(BM_ParseAndNormalize);

void BM_Encode(benchmark::State& state) {
  auto par = Compile(Corpus());
  if (!par.ok()) {
    state.SkipWithError("corpus does not compile");
    return;
  }
  int64_t bytes = 0;
  for (auto _ : state) {
    auto enc = ir::EncodePar(**par);
    bytes += static_cast<int64_t>(enc->size());
    benchmark::DoNotOptimize(enc);
  }
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_Encode);

void BM_Print(benchmark::State& state) {
  auto par = Compile(Corpus());
  if (!par.ok()) {
    state.SkipWithError("corpus does not compile");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(Print(**par));
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(Corpus().size()));
}
BENCHMARK(BM_Print);

}  // namespace
}  // namespace rnode::rholang

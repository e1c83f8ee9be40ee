// Property test: random well-formed programs (program_generator.h) give the
// same observable result with 1 and with 4 threads, and replaying the
// recorded event log on a fresh space at the same pre-state reproduces it:
// identical stdout lines (in order), cost, error and checkpoint root, and
// the two plays record identical event logs. A failed deploy leaves the
// pre-state root.
//
// The base seed is printed (tests/test_seed.h); set RNODE_TEST_SEED to run
// other programs. Program i of shard k uses seed base + k * 500 + i.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/rholang/interpreter/program_generator.h"
#include "tests/rholang/interpreter/program_runner.h"
#include "tests/sanitizer.h"
#include "tests/test_seed.h"

namespace rnode::rholang::interp::testing {
namespace {

// The acceptance criterion: 10,000 programs, split into shards so ctest runs
// them in parallel and each shard stays well inside the ctest timeout.
constexpr int kPrograms = 10000;
constexpr int kShards = 20;
constexpr int kProgramsPerShard = kPrograms / kShards;
static_assert(kPrograms % kShards == 0);
// Thread count of the parallel play and of the replay.
constexpr int kParallelThreads = 4;
// Generous for the generated programs (a few thousand phlo on average); a
// program that still exceeds it fails out of phlo, which must be just as
// deterministic.
constexpr int64_t kPhloLimit = 2'000'000;
// One program in kLowPhloEvery gets kLowPhlo instead, so out of phlo hits
// programs midway (it must end them at the same point with any thread
// count).
constexpr uint64_t kLowPhloEvery = 8;
constexpr int64_t kLowPhlo = 6'000;
// Divergent programs printed in full per shard (the rest by seed only).
constexpr int kMaxPrintedDivergences = 3;
constexpr uint64_t kDefaultBaseSeed = 0x5eed'2026'1130ull;

std::string Describe(const RunResult& r) {
  std::ostringstream out;
  out << "cost " << r.cost << ", error " << r.error << ", "
      << r.stdout_lines.size() << " lines, " << r.events.size() << " events";
  return out.str();
}

// Empty when the two runs agree; otherwise what differs.
std::string Compare(const char* what, const RunResult& a, const RunResult& b,
                    bool compare_events) {
  std::ostringstream diff;
  if (a.stdout_lines != b.stdout_lines) {
    size_t i = 0;
    while (i < a.stdout_lines.size() && i < b.stdout_lines.size() &&
           a.stdout_lines[i] == b.stdout_lines[i]) {
      ++i;
    }
    auto line = [i](const RunResult& r) {
      return i < r.stdout_lines.size() ? r.stdout_lines[i] : "(none)";
    };
    diff << " stdout lines (line " << i << ": '" << line(a) << "' vs '"
         << line(b) << "');";
  }
  if (a.cost != b.cost) diff << " cost " << a.cost << " vs " << b.cost << ";";
  if (a.error.ToString() != b.error.ToString()) {
    diff << " error '" << a.error << "' vs '" << b.error << "';";
  }
  if (a.root != b.root) diff << " checkpoint root;";
  if (compare_events && a.events != b.events) {
    diff << " event log (" << a.events.size() << " vs " << b.events.size()
         << " events);";
  }
  if (diff.str().empty()) return "";
  return std::string(what) + ":" + diff.str();
}

class PropertyTest : public ::testing::TestWithParam<int> {
 protected:
  static void SetUpTestSuite() {
    auto empty = RunProgram("Nil", {.threads = 1, .phlo = kPhloLimit});
    ASSERT_TRUE(empty.ok()) << empty.status();
    empty_root_ = empty->root;
  }
  static Hash32 empty_root_;
};
Hash32 PropertyTest::empty_root_{};

TEST_P(PropertyTest, SerialParallelAndReplayAgree) {
  const int shard = GetParam();
  const uint64_t base = ::rnode::testing::TestSeed(kDefaultBaseSeed);
  int divergences = 0;
  int failed_deploys = 0;
  // Under a sanitizer (10-20x slower) each shard runs its first tenth.
  const int programs = ::rnode::testing::kUnderSanitizer
                           ? kProgramsPerShard / 10
                           : kProgramsPerShard;
  for (int i = 0; i < programs; ++i) {
    const uint64_t seed =
        base + static_cast<uint64_t>(shard) * kProgramsPerShard + i;
    const std::string program = GenerateProgram(seed);
    const int64_t phlo = seed % kLowPhloEvery == 0 ? kLowPhlo : kPhloLimit;
    auto serial = RunProgram(program, {.threads = 1, .phlo = phlo});
    auto parallel =
        RunProgram(program, {.threads = kParallelThreads, .phlo = phlo});
    ASSERT_TRUE(serial.ok()) << "seed " << seed << ": " << serial.status();
    ASSERT_TRUE(parallel.ok()) << "seed " << seed << ": " << parallel.status();
    ASSERT_EQ(parallel->parallel_rounds, parallel->rounds)
        << "seed " << seed << ": the 4-thread run skipped the workers";
    auto replay = RunProgram(
        program,
        {.threads = kParallelThreads, .phlo = phlo, .replay = &serial->events});
    ASSERT_TRUE(replay.ok()) << "seed " << seed << ": " << replay.status();
    std::string diff =
        Compare("1 vs 4 threads", *serial, *parallel, /*compare_events=*/true);
    std::string replay_diff =
        Compare("play vs replay", *serial, *replay, /*compare_events=*/false);
    if (!replay_diff.empty()) diff += (diff.empty() ? "" : " ") + replay_diff;
    if (!serial->error.ok()) {
      ++failed_deploys;
      if (serial->root != empty_root_) diff += " failed deploy left state;";
    }
    if (diff.empty()) continue;
    ++divergences;
    ADD_FAILURE() << "divergence, seed " << seed << ": " << diff
                  << "\n  serial:   " << Describe(*serial)
                  << "\n  parallel: " << Describe(*parallel)
                  << "\n  replay:   " << Describe(*replay)
                  << (divergences <= kMaxPrintedDivergences
                          ? "\nprogram:\n" + program
                          : std::string());
  }
  EXPECT_EQ(divergences, 0);
  RecordProperty("failed_deploys", failed_deploys);
}

// The replay comparison above is only meaningful if replay enforces the log:
// a program that makes different COMMs fails against another's log.
TEST(ReplayCheckTest, ReplayingAnotherProgramsLogFails) {
  const std::string played =
      "new stdout(`rho:io:stdout`) in { @\"a\"!(1) | for (@x <- @\"a\") { "
      "stdout!(x) } }";
  const std::string other =
      "new stdout(`rho:io:stdout`) in { @\"a\"!(2) | for (@x <- @\"a\") { "
      "stdout!(x) } }";
  auto play = RunProgram(played, {.threads = 1, .phlo = kPhloLimit});
  ASSERT_TRUE(play.ok()) << play.status();
  ASSERT_TRUE(play->error.ok()) << play->error;
  ASSERT_FALSE(play->events.empty());
  auto same = RunProgram(
      played, {.threads = 1, .phlo = kPhloLimit, .replay = &play->events});
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->error.ok()) << same->error;
  auto replay = RunProgram(
      other, {.threads = 1, .phlo = kPhloLimit, .replay = &play->events});
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_EQ(replay->error.code(), absl::StatusCode::kFailedPrecondition)
      << replay->error;
}

INSTANTIATE_TEST_SUITE_P(Shards, PropertyTest, ::testing::Range(0, kShards),
                         [](const auto& info) {
                           return "Shard" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace rnode::rholang::interp::testing

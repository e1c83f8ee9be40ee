// Test helper: evaluates a Rholang program in a fresh in-memory space and
// collects everything observable about the run.
#ifndef RNODE_TESTS_INTERPRETER_PROGRAM_RUNNER_H_
#define RNODE_TESTS_INTERPRETER_PROGRAM_RUNNER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rspace/event_log.h"
#include "util/bytes.h"

namespace rnode::rholang::interp::testing {

struct RunConfig {
  int threads = 1;
  int64_t phlo = 0;  // required: > 0
  // RuntimeOptions::min_parallel_tasks: 1 sends every round of a
  // multi-threaded run through the workers.
  size_t min_parallel_tasks = 1;
  // Replay this recorded log instead of playing.
  const std::vector<rspace::Event>* replay = nullptr;
};

struct RunResult {
  std::vector<std::string> stdout_lines;  // in the order they were written
  std::vector<std::string> stderr_lines;
  int64_t cost = 0;
  size_t rounds = 0;
  size_t parallel_rounds = 0;         // rounds run on the worker threads
  absl::Status error;                 // the deploy's error, OK on success
  Hash32 root{};                      // checkpoint root after the deploy
  std::vector<rspace::Event> events;  // the deploy's event log (play only)
};

// Compiles and evaluates `source` as one deploy (fixed deploy id and
// timestamp) on a fresh in-memory space with the standard system processes,
// then checkpoints. The returned status is the harness's own failure (space
// or runtime setup, checkpoint); the program's error is RunResult::error.
absl::StatusOr<RunResult> RunProgram(std::string_view source,
                                     const RunConfig& config);

// The phlo limit given by a first line `// phlo: N`, or `fallback`.
int64_t PhloDirective(std::string_view source, int64_t fallback);

}  // namespace rnode::rholang::interp::testing

#endif  // RNODE_TESTS_INTERPRETER_PROGRAM_RUNNER_H_

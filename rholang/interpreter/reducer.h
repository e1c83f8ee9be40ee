// The Rholang reducer over RSpace and the per-deploy runtime API.
//
// Scheduling (what makes results independent of the thread count and of
// play vs replay; docs/interpreter.md):
//  * Work is a list of tasks, each (Par, Env, SplittableRng) or a ready
//    space operation (a persistent re-issue or a system-process reply).
//    Evaluation runs in ROUNDS over an ordered task list.
//  * Parallel phase: each task is evaluated on its own PhloMeter (budget:
//    the deploy's remaining phlo at round start) into an ordered list of
//    effects (produce, consume, spawn a task for the next round). Tasks never
//    touch the space here, so the phase may run on any number of threads.
//  * Sequential phase: the tasks' spent phlo is added in task order; then
//    the effects are applied in task order and effect order: space
//    operations (Space::Produce / Consume), COMM handling (a Rholang
//    continuation becomes a task of the next round; a system process runs
//    here and its replies become produces of the next round; a persistent
//    operation that fired is re-issued in the next round) and spawns.
//  * A Par with two or more runnable components (sends, receives, news,
//    matches, ifs, bundles, top-level variables and method calls, in that
//    order) spawns one next-round task per component, component i with
//    rng.Split(i); a single component runs inline with the parent's rng.
//  * A round with a failed task fails the deploy with the first failing
//    task's error (out of phlo wins when the deploy's total exceeds its
//    limit); the space is reverted to the soft checkpoint taken before the
//    deploy.
#ifndef RNODE_RHOLANG_INTERPRETER_REDUCER_H_
#define RNODE_RHOLANG_INTERPRETER_REDUCER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rholang/frontend/ir.h"
#include "rholang/interpreter/native_space.h"
#include "rholang/interpreter/system_processes.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/deploy_scope.h"
#include "rspace/event_log.h"
#include "rspace/space.h"

namespace rnode {
class WorkerPool;
}  // namespace rnode

namespace rnode::rholang::interp {

// Most rounds one deploy may take. Every round of a real program does some
// charged work, so the phlo limit ends a loop long before this; the bound
// stops an unlimited (system or tool) deploy that loops without end.
inline constexpr size_t kMaxRounds = size_t{1} << 22;

// Most tasks one round may hold (the bounded queue of the scheduler). A
// round's tasks and effects are held in memory at once; 2^18 tasks of a few
// hundred bytes each stay well under a gigabyte, and a deploy whose term is
// at most kMaxDeployTermBytes spawns far fewer in one step.
inline constexpr size_t kMaxTasksPerRound = size_t{1} << 18;

// Deepest chain of inline evaluations (new / match / if / bundle bodies,
// variables run as processes) inside one task; deeper bodies are spawned as
// next-round tasks instead, so recursion depth never depends on the program
// beyond this (and never on the thread stack).
inline constexpr int kMaxInlineDepth = 64;

// Fewest tasks in a round for the parallel phase to use threads: below it
// the scheduling overhead exceeds the work. The default of
// RuntimeOptions::min_parallel_tasks.
inline constexpr size_t kMinParallelTasks = 8;

// Default phlo limit of the `rholang run` tool (a generous test budget).
inline constexpr int64_t kDefaultToolPhloLimit = 10'000'000;

struct RuntimeOptions {
  // Worker threads for the parallel phase (>= 1). Results do not depend on it.
  // Ignored when `pool` is set.
  int threads = 1;
  // The node's worker pool to run the parallel phase on (not owned; must
  // outlive the runtime); null: the runtime owns a pool of `threads`.
  WorkerPool* pool = nullptr;
  // Install the system processes into the space. Only the first runtime of
  // a space does; further runtimes on it (parallel replay's lanes) share
  // those installs and must be made with the same process table.
  bool install_processes = true;
  // Fewest tasks in a round for the parallel phase to use the workers (>= 1).
  // Results do not depend on it; tests set 1 so that a comparison of thread
  // counts runs every round of the multi-threaded run through the workers.
  size_t min_parallel_tasks = kMinParallelTasks;
  // The system processes to install and to resolve URIs with; null means
  // StandardSystemProcesses(). Not owned; must outlive the runtime.
  const std::vector<SystemProcessDef>* processes = nullptr;
  // Native objects served by this runtime (system_processes.h); null means
  // none. Not owned; must outlive the runtime.
  const std::vector<NativeObjectDef>* objects = nullptr;
  // Where stdout / stderr of the programs go; null drops them. Not owned.
  OutputSink* output = nullptr;
  // Remember every channel used, for TrackedChannels() (tools, tests).
  bool track_channels = false;
  // Channel terms of native code remembered (channel_terms()): the balance
  // channels of the deployers of a few blocks.
  size_t channel_term_cache = 4096;
  // The test processes' state (spec runs); null in a node. Not owned.
  TestOverrides* test_overrides = nullptr;
};

struct EvalResult {
  // Phlo charged: what was spent, or the whole limit when out of phlo.
  int64_t cost = 0;
  // OK, or the deploy's error (cost.h lists the codes).
  absl::Status error;
  // Rounds the deploy took (for tests and benchmarks).
  size_t rounds = 0;
  // Of those, rounds whose tasks ran on the worker threads (tests use it to
  // show that a thread-count comparison exercised the parallel phase).
  size_t parallel_rounds = 0;
  // EvaluateSource: the error is a parse / normalize error (a Diagnostic).
  bool static_error = false;
  bool failed() const { return !error.ok(); }
};

// Evaluates deploys against one space. One runtime per space: Create installs
// the system processes into it. Evaluate calls must not overlap (the
// runtime keeps one deploy's state); the runtime itself uses `threads`
// workers. Each deploy's changes are recorded in its rspace::DeployScope.
class Runtime {
 public:
  // `space` is not owned and must outlive the runtime; it should be opened
  // with SpaceOptions::term_factory = StoredTermFactory(). Installs every
  // process of the table that has a handler on its fixed channel with an
  // `arity`-free-variable pattern. InvalidArgument for threads < 1; the
  // space's install error.
  static absl::StatusOr<std::unique_ptr<Runtime>> Create(
      rspace::Space* space, RuntimeOptions options = {});
  ~Runtime();

  // Evaluates a compiled program as one deploy with `phlo_limit` (< 0:
  // unlimited), recording into (or replaying from) `log`. The names it
  // creates derive from SplittableRng::FromSeed(deploy.deploy_id). On
  // failure the space is reverted to its state before the call. In replay
  // mode, log->CheckReplayDone() is checked at the end unless
  // `check_replay_done` is false (the caller replays more of the same log
  // afterwards, e.g. a refund, and checks it then). The deploy's space
  // operations are recorded in `scope` (not owned; null: a scope local to
  // the call), and a failure reverts to a mark taken at the start of the
  // call; the caller reads the deploy's changes from its own scope.
  EvalResult Evaluate(const ir::ParPtr& program, const DeployInfo& deploy,
                      int64_t phlo_limit, rspace::EventLog* log,
                      const BlockInfo* block = nullptr,
                      bool check_replay_done = true,
                      rspace::DeployScope* scope = nullptr);

  // Charges cost::kParsePerByte per byte, compiles (with the deploy's
  // rho:system:deployId / deployerId injections) and evaluates. A static
  // error is returned as the error with the parse cost.
  EvalResult EvaluateSource(std::string_view source, const DeployInfo& deploy,
                            int64_t phlo_limit, rspace::EventLog* log,
                            const BlockInfo* block = nullptr,
                            bool check_replay_done = true,
                            rspace::DeployScope* scope = nullptr);

  // The invalid-blocks map for rho:casper:invalidBlocks (null: empty map).
  void SetInvalidBlocks(ir::ParPtr blocks) { invalid_blocks_ = blocks; }

  const rspace::Matcher& matcher() const { return matcher_; }
  rspace::Space* space() const { return space_; }
  // For SpaceNative over this runtime's space. Thread-safe.
  ChannelTermCache* channel_terms() { return &channel_terms_; }

  // With track_channels: every channel produced or consumed on so far, by
  // channel term hash.
  const std::map<Hash32, ir::ParPtr>& TrackedChannels() const {
    return tracked_;
  }

  class Impl;

 private:
  Runtime(rspace::Space* space, RuntimeOptions options);

  rspace::Space* space_;
  RuntimeOptions options_;
  StoredMatcher matcher_;
  ir::ParPtr invalid_blocks_;
  std::map<Hash32, ir::ParPtr> tracked_;
  ChannelTermCache channel_terms_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rnode::rholang::interp

#endif  // RNODE_RHOLANG_INTERPRETER_REDUCER_H_

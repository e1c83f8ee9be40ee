// Evaluates test programs on a fresh space (see program_runner.h).
#include "tests/rholang/interpreter/program_runner.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "rholang/interpreter/reducer.h"
#include "rholang/interpreter/system_processes.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/space.h"
#include "rspace/storage/kv_store.h"
#include "util/status_macros.h"

namespace rnode::rholang::interp::testing {
namespace {

// Column families of the history store (as the rspace tests open it).
constexpr size_t kStoreColumns = 3;

class CapturingSink final : public OutputSink {
 public:
  explicit CapturingSink(RunResult* result) : result_(result) {}
  void Stdout(std::string_view line) override {
    result_->stdout_lines.emplace_back(line);
  }
  void Stderr(std::string_view line) override {
    result_->stderr_lines.emplace_back(line);
  }

 private:
  RunResult* result_;
};

DeployInfo TestDeploy() {
  DeployInfo deploy;
  deploy.timestamp = 1'700'000'000'000;
  deploy.deploy_id = Bytes(64, 0x5a);
  deploy.deployer_public_key = Bytes(65, 0x04);
  return deploy;
}

}  // namespace

absl::StatusOr<RunResult> RunProgram(std::string_view source,
                                     const RunConfig& config) {
  RunResult result;
  CapturingSink sink(&result);
  rspace::InMemoryStore store(kStoreColumns);
  rspace::SpaceOptions space_options;
  space_options.term_factory = StoredTermFactory();
  ASSIGN_OR_RETURN(std::unique_ptr<rspace::Space> space,
                   rspace::Space::Open(&store, std::move(space_options)));
  RuntimeOptions options;
  options.threads = config.threads;
  options.min_parallel_tasks = config.min_parallel_tasks;
  options.output = &sink;
  ASSIGN_OR_RETURN(std::unique_ptr<Runtime> runtime,
                   Runtime::Create(space.get(), options));
  std::unique_ptr<rspace::EventLog> log;
  if (config.replay != nullptr) {
    ASSIGN_OR_RETURN(log, rspace::EventLog::ForReplay(*config.replay));
  } else {
    log = std::make_unique<rspace::EventLog>();
  }
  EvalResult eval =
      runtime->EvaluateSource(source, TestDeploy(), config.phlo, log.get());
  result.cost = eval.cost;
  result.rounds = eval.rounds;
  result.parallel_rounds = eval.parallel_rounds;
  result.error = eval.error;
  if (config.replay == nullptr) result.events = log->Take();
  ASSIGN_OR_RETURN(result.root, space->CreateCheckpoint());
  return result;
}

int64_t PhloDirective(std::string_view source, int64_t fallback) {
  constexpr std::string_view kPrefix = "// phlo:";
  if (source.substr(0, kPrefix.size()) != kPrefix) return fallback;
  std::string_view rest = source.substr(kPrefix.size());
  rest = rest.substr(0, rest.find('\n'));
  int64_t value = 0;
  if (!absl::SimpleAtoi(std::string(rest), &value) || value <= 0) {
    return fallback;
  }
  return value;
}

}  // namespace rnode::rholang::interp::testing

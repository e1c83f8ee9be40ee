// libFuzzer target over the interpreter: any source is evaluated with a
// small phlo limit on a fresh in-memory space, then replayed from its
// recorded log on another fresh space. Nothing may crash; an internal error
// (kInternal) is a bug; play and replay must agree on cost, error code and
// state root.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "rholang/interpreter/reducer.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/event_log.h"
#include "rspace/space.h"
#include "rspace/storage/kv_store.h"

namespace {

using rnode::rholang::interp::DeployInfo;
using rnode::rholang::interp::EvalResult;
using rnode::rholang::interp::Runtime;

// Small enough that one input runs in milliseconds.
constexpr int64_t kFuzzPhlo = 200000;
constexpr size_t kStoreColumns = 3;

struct Outcome {
  EvalResult eval;
  rnode::Hash32 root{};
  std::vector<rnode::rspace::Event> events;
};

Outcome Run(std::string_view source,
            const std::vector<rnode::rspace::Event>* replay) {
  rnode::rspace::InMemoryStore store(kStoreColumns);
  rnode::rspace::SpaceOptions options;
  options.term_factory = rnode::rholang::interp::StoredTermFactory();
  auto space = rnode::rspace::Space::Open(&store, std::move(options));
  if (!space.ok()) std::abort();
  auto runtime = Runtime::Create(space->get());
  if (!runtime.ok()) std::abort();
  std::unique_ptr<rnode::rspace::EventLog> log;
  if (replay != nullptr) {
    auto rigged = rnode::rspace::EventLog::ForReplay(*replay);
    if (!rigged.ok()) std::abort();
    log = *std::move(rigged);
  } else {
    log = std::make_unique<rnode::rspace::EventLog>();
  }
  DeployInfo deploy;
  deploy.timestamp = 1;
  deploy.deploy_id = rnode::Bytes(64, 0x11);
  deploy.deployer_public_key = rnode::Bytes(65, 0x04);
  Outcome out;
  out.eval = (*runtime)->EvaluateSource(source, deploy, kFuzzPhlo, log.get());
  if (replay == nullptr) out.events = log->Take();
  auto root = (*space)->CreateCheckpoint();
  if (!root.ok()) std::abort();
  out.root = *root;
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view source(reinterpret_cast<const char*>(data), size);
  Outcome play = Run(source, nullptr);
  if (play.eval.error.code() == absl::StatusCode::kInternal) std::abort();
  Outcome again = Run(source, &play.events);
  if (again.eval.cost != play.eval.cost ||
      again.eval.error.code() != play.eval.error.code() ||
      again.root != play.root) {
    std::abort();
  }
  return 0;
}

// System processes: the built-in contracts reachable through `rho:` URIs.
//
// Each process is a persistent continuation installed on a fixed channel
// `Unforgeable(kPrivate, {byte})` whose pattern is `arity` free variables;
// ``new x(`uri`)`` binds x to `bundle+{fixed channel}` (send only). The
// fixed bytes, body refs, arities and URIs are the public node's
// (../shared/reference/rholang.md §5) because those continuations are part
// of state and replay logs.
#ifndef RNODE_RHOLANG_INTERPRETER_SYSTEM_PROCESSES_H_
#define RNODE_RHOLANG_INTERPRETER_SYSTEM_PROCESSES_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "rholang/interpreter/cost.h"
#include "rholang/ir.h"
#include "util/bytes.h"

namespace rnode::rholang::interp {

// The deploy being evaluated (rho:deploy:data, deployerId ops).
struct DeployInfo {
  int64_t timestamp = 0;
  Bytes deployer_public_key;  // uncompressed secp256k1, 65 bytes
  Bytes deploy_id;            // the deploy signature
};

// The block being built or replayed (rho:block:data).
struct BlockInfo {
  int64_t block_number = 0;
  int64_t timestamp = 0;
  Bytes sender_public_key;
};

// Where stdout / stderr lines go. Called from the reducer's deterministic
// sequential phase, in a deterministic order; implementations need not be
// thread-safe.
class OutputSink {
 public:
  virtual ~OutputSink() = default;
  virtual void Stdout(std::string_view line) = 0;
  virtual void Stderr(std::string_view line) = 0;
};

// Everything a handler may read. Pointers may be null when absent (e.g. no
// block outside block processing: block data then replies with zeros and an
// empty key).
struct ProcessContext {
  const DeployInfo* deploy = nullptr;
  const BlockInfo* block = nullptr;
  // The invalid-blocks map set by Casper (rho:casper:invalidBlocks);
  // nullptr means the empty map.
  ir::ParPtr invalid_blocks;
  OutputSink* output = nullptr;
  PhloMeter* meter = nullptr;  // required
};

// A send a handler asks for: `channel!(data...)`, produced by the reducer
// with the COMM's random generator (a reply to an ack channel).
struct Reply {
  ir::ParPtr channel;
  std::vector<ir::ParPtr> data;
};

// Runs one call. `args` has exactly `arity` closed, evaluated values (the
// matched data). Wrong argument kinds give InvalidArgument naming the
// process and the argument; rho:execution:abort gives UserAbortError().
using ProcessHandler = std::function<absl::StatusOr<std::vector<Reply>>(
    std::span<const ir::ParPtr> args, ProcessContext& ctx)>;

struct SystemProcessDef {
  std::string uri;
  uint8_t channel_byte = 0;
  uint32_t body_ref = 0;
  uint32_t arity = 0;
  ProcessHandler handler;  // empty for fixed channels without a process
};

// The fixed channel of `byte`: Unforgeable(kPrivate, {byte}).
ir::ParPtr FixedChannel(uint8_t byte);

// The standard table (deterministic processes of §5 that a validator runs;
// the registry's fixed channels lookup / insertArbitrary / insertSigned are
// listed with an empty handler). Built once; thread-safe.
const std::vector<SystemProcessDef>& StandardSystemProcesses();

// Test-only processes (rho:test:*), never installed by the node.
const std::vector<SystemProcessDef>& TestSystemProcesses();

// The value ``new x(`uri`)`` binds for a URI of `table`:
// bundle+{FixedChannel} (write only), or nullopt if `uri` is not in it.
std::optional<ir::ParPtr> SystemUriValue(
    std::string_view uri, std::span<const SystemProcessDef> table);

}  // namespace rnode::rholang::interp

#endif  // RNODE_RHOLANG_INTERPRETER_SYSTEM_PROCESSES_H_

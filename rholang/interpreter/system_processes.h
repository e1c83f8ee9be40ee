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

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "crypto/rng.h"
#include "rholang/frontend/ir.h"
#include "rholang/interpreter/cost.h"
#include "util/bytes.h"
#include "util/mutex.h"

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

// Synchronous tuple-space access for native contracts: handlers running in
// the reducer's sequential phase, and Casper's precharge and refund. Each
// operation is an ordinary RSpace operation recorded in the deploy's event
// log (so replay checks it and the merger sees it) and is undone with the
// deploy's soft checkpoint. Meant for channels only native code can name
// (unforgeable ids no program can create); not thread-safe.
class NativeSpace {
 public:
  virtual ~NativeSpace() = default;
  // The values of the first datum on `channel` (it stays), recorded as a
  // peek COMM; nullopt when the channel holds no datum (nothing recorded).
  virtual absl::StatusOr<std::optional<std::vector<ir::ParPtr>>> Peek(
      const ir::ParPtr& channel) = 0;
  // As Peek, but nothing is recorded: for number channels (REV balances),
  // whose reads the merger tracks through their diffs, never their events.
  virtual absl::StatusOr<std::optional<std::vector<ir::ParPtr>>> ReadUnrecorded(
      const ir::ParPtr& channel) = 0;
  // As Peek, but the datum is consumed.
  virtual absl::StatusOr<std::optional<std::vector<ir::ParPtr>>> Take(
      const ir::ParPtr& channel) = 0;
  // Stores the datum `values` on `channel`. FailedPrecondition if a
  // continuation was waiting there (native channels never have one).
  virtual absl::Status Put(const ir::ParPtr& channel,
                           std::vector<ir::ParPtr> values) = 0;
};

// An OutputSink that keeps every line, in order (tools and tests).
class CollectingSink final : public OutputSink {
 public:
  void Stdout(std::string_view line) override { out.emplace_back(line); }
  void Stderr(std::string_view line) override { err.emplace_back(line); }
  std::vector<std::string> out;
  std::vector<std::string> err;
};

// What the test processes rho:test:block:data:set and
// rho:test:casper:invalidBlocks:set change, for every later call of the
// runtimes that share it (the spec runner's: RhoSpec-style tests set the
// block data and the invalid blocks a PoS test runs with). Null in a node.
// Thread-safe.
class TestOverrides {
 public:
  void SetSender(ByteView key);
  void SetBlockNumber(int64_t number);
  void SetInvalidBlocks(ir::ParPtr blocks);
  // Whether anything was set (the reducer then applies the overrides).
  bool active() const;
  // `base` (null: the empty block data) with the set fields replaced.
  BlockInfo Block(const BlockInfo* base) const;
  // The set invalid blocks, else `base`.
  ir::ParPtr InvalidBlocks(const ir::ParPtr& base) const;

 private:
  mutable Mutex mu_;
  std::optional<Bytes> sender_ ABSL_GUARDED_BY(mu_);
  std::optional<int64_t> number_ ABSL_GUARDED_BY(mu_);
  ir::ParPtr invalid_blocks_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> active_{false};
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
  // Space access for native contracts; null for the pure processes'
  // callers (tools and unit tests that run handlers directly).
  NativeSpace* space = nullptr;
  // The test processes' state (RuntimeOptions::test_overrides); null when
  // the runtime has none.
  TestOverrides* test = nullptr;
  // A generator for the names a native contract creates (set by the
  // reducer: the COMM's generator split at kHandlerRngIndex); null outside
  // a deploy.
  crypto::SplittableRng* rng = nullptr;
};

// The split index of ProcessContext::rng (replies use indexes 0..n-1).
inline constexpr uint64_t kHandlerRngIndex = uint64_t{1} << 32;

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

// Why ``new x(`uri`)`` is refused for a URI the public nodes answer and this
// node does not serve (the versioned registry's channels, which no contract
// here serves, and the public nodes' external, non-deterministic services),
// so that a program fails at `new` instead of waiting forever on a channel
// no one reads. nullopt for every other URI. Thread-safe.
std::optional<std::string_view> UnservedUriReason(std::string_view uri);

// The value ``new x(`uri`)`` binds for a URI of `table`:
// bundle+{FixedChannel} (write only), or nullopt if `uri` is not in it.
std::optional<ir::ParPtr> SystemUriValue(
    std::string_view uri, std::span<const SystemProcessDef> table);

// ---------------------------------------------------------------------------
// Native objects: names whose sends are served by C++ for any arity (a
// contract that answers several method shapes, one name per vault, ...).
//
// An object name is Unforgeable(GPrivate, 0xFE || kind || key), plus one
// 0x00 byte when that id would be 32 bytes long: ids made by `new` are always
// 32 bytes and fixed channels 1 byte, so no program can create or guess one;
// programs only receive them (write-only bundles) from native contracts. A
// send on an object name whose kind is in RuntimeOptions::objects does not
// reach the space: the reducer calls the handler in its sequential phase (in
// task order, like a system process) with the send's data, and produces the
// replies in the next round. A persistent send to an object is an error.

// The object name of (kind, key), without a bundle.
ir::ParPtr ObjectName(uint8_t kind, ByteView key);
// Whether `p` is exactly one object name; sets kind and key (key includes
// the pad byte if one was added).
bool AsObjectName(const ir::Par& p, uint8_t& kind, ByteView& key);

// Runs one call on object (kind, key) with the send's data.
using ObjectHandler = std::function<absl::StatusOr<std::vector<Reply>>(
    ByteView key, std::span<const ir::ParPtr> args, ProcessContext& ctx)>;

struct NativeObjectDef {
  uint8_t kind = 0;
  std::string name;  // for errors and docs, e.g. "rev vault"
  ObjectHandler handler;
};

}  // namespace rnode::rholang::interp

#endif  // RNODE_RHOLANG_INTERPRETER_SYSTEM_PROCESSES_H_

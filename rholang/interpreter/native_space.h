// NativeSpace over an rspace::Space: what the reducer hands to native
// contracts, and what Casper uses for precharge and refund outside any
// program.
#ifndef RNODE_RHOLANG_INTERPRETER_NATIVE_SPACE_H_
#define RNODE_RHOLANG_INTERPRETER_NATIVE_SPACE_H_

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rholang/frontend/ir.h"
#include "rholang/interpreter/cost.h"
#include "rholang/interpreter/system_processes.h"
#include "rspace/space.h"
#include "util/bounded_cache.h"

namespace rnode::rholang::interp {

// Channel terms of native code's channels by IR hash (native code uses few
// channels per deploy, a balance each for the deployer and the PoS vault
// being the hot ones), so their encoding and hash are computed once.
using ChannelTermCache = BoundedCache<Hash32, rspace::TermPtr, Hash32Hasher>;

// Costs of the operations, charged to `meter` before each one: a read
// (Peek / Take) kReceive + one event; a write kSend + kStoragePerByte per
// stored byte + one event. A datum written here carries the all-zero
// generator state (its names never spawn anything).
//
// The consume behind Peek / Take uses a pattern of n free variables (n =
// the arity of the first datum) and a system continuation with
// kNativeBodyRef, so the same read gives the same event in play and replay.
class SpaceNative final : public NativeSpace {
 public:
  // Body ref of the continuation recorded by native reads. No system
  // process uses it.
  static constexpr uint32_t kNativeBodyRef = 0xFFFF'FFF0;

  // No pointer is owned. `ctx` must carry the deploy's log and a
  // StoredMatcher; `meter` may be null (nothing charged); `terms` may be
  // null (every channel term is built anew; a runtime owns one:
  // Runtime::channel_terms()).
  SpaceNative(rspace::Space* space, rspace::OpContext ctx, PhloMeter* meter,
              ChannelTermCache* terms = nullptr)
      : space_(space), ctx_(ctx), meter_(meter), terms_(terms) {}

  absl::StatusOr<std::optional<std::vector<ir::ParPtr>>> Peek(
      const ir::ParPtr& channel) override;
  absl::StatusOr<std::optional<std::vector<ir::ParPtr>>> ReadUnrecorded(
      const ir::ParPtr& channel) override;
  absl::StatusOr<std::optional<std::vector<ir::ParPtr>>> Take(
      const ir::ParPtr& channel) override;
  absl::Status Put(const ir::ParPtr& channel,
                   std::vector<ir::ParPtr> values) override;

 private:
  absl::StatusOr<std::optional<std::vector<ir::ParPtr>>> Read(
      const ir::ParPtr& channel, bool peek);
  absl::Status Charge(int64_t amount);
  // The values of the first datum on `chan`, nullopt if none (unrecorded).
  absl::StatusOr<std::optional<std::vector<ir::ParPtr>>> FirstDatum(
      const rspace::TermPtr& chan);
  // The channel's term, from terms_ when it is there.
  absl::StatusOr<rspace::TermPtr> ChannelTerm(const ir::ParPtr& channel);

  rspace::Space* space_;
  rspace::OpContext ctx_;
  PhloMeter* meter_;
  ChannelTermCache* terms_;
};

}  // namespace rnode::rholang::interp

#endif  // RNODE_RHOLANG_INTERPRETER_NATIVE_SPACE_H_

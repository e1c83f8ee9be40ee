// What the interpreter and the engine tell the node: deploy output goes to
// the log (rate-limited, muted while this node validates its own block),
// and the engine's events become the node's hooks, metrics and
// bookkeeping.
#ifndef RNODE_NODE_CORE_ENGINE_EVENTS_H_
#define RNODE_NODE_CORE_ENGINE_EVENTS_H_

#include <atomic>
#include <functional>
#include <span>
#include <string_view>

#include "casper/block/block.h"
#include "casper/dag/dag_store.h"
#include "casper/engine/engine.h"
#include "node/core/node.h"
#include "node/core/node_metrics.h"
#include "rholang/interpreter/reducer.h"
#include "util/logging.h"

namespace rnode::node {

// Lines of deploy output (rho:io:stdout) logged per second at most.
inline constexpr double kDeployOutputLinesPerSecond = 50;

// Deploy output to the log, rate-limited (a deploy can print a lot).
// Muted while this node validates its own block: the lines were logged
// when the block was made. Thread-safe.
class LogSink final : public rholang::interp::OutputSink {
 public:
  void Stdout(std::string_view line) override { Write("stdout", line); }
  void Stderr(std::string_view line) override { Write("stderr", line); }
  void set_muted(bool muted) { muted_.store(muted, std::memory_order_relaxed); }

 private:
  void Write(std::string_view stream, std::string_view line);
  LogRateLimiter limiter_{kDeployOutputLinesPerSecond};
  std::atomic<bool> muted_{false};
};

// The engine's events. Runs on the consensus thread.
class NodeListener final : public casper::engine::EngineListener {
 public:
  // None owned; all outlive the listener. `on_added` / `on_finalized`
  // keep the node's own bookkeeping.
  NodeListener(casper::dag::DagStore* dag, NodeMetrics* metrics,
               const NodeHooks* hooks, LogSink* output,
               std::function<void(const casper::block::Block&)> on_added,
               std::function<void(std::span<const Hash32>)> on_finalized)
      : dag_(dag),
        metrics_(metrics),
        hooks_(hooks),
        output_(output),
        on_added_(std::move(on_added)),
        on_finalized_(std::move(on_finalized)) {}

  void OnBlockCreated(const casper::block::Block& block) override;
  void OnBlockValidated(const casper::block::Block& block,
                        const casper::validation::Verdict& verdict,
                        double seconds) override;
  void OnBlockAdded(const casper::block::Block& block) override;
  void OnFinalized(const Hash32& last, std::span<const Hash32> blocks,
                   std::span<const Bytes> deploys) override;

 private:
  casper::dag::DagStore* dag_;
  NodeMetrics* metrics_;
  const NodeHooks* hooks_;
  LogSink* output_;
  std::function<void(const casper::block::Block&)> on_added_;
  std::function<void(std::span<const Hash32>)> on_finalized_;
};

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_ENGINE_EVENTS_H_

#include "node/cli/run.h"

#include <signal.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "crypto/rev_address.h"
#include "node/api/grpc_api.h"
#include "node/api/http_api.h"
#include "node/core/node.h"
#include "node/http/event_hub.h"
#include "node/metrics/metrics.h"
#include "node/views/block_views.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace rnode::node {
namespace {

absl::Status RegisterApiMetrics(metrics::Registry& r, const HttpApi* http,
                                const http::EventHub* events) {
  struct Stat {
    const char* name;
    const char* help;
    uint64_t http::HttpServerStats::*field;
    bool counter;
  };
  static constexpr Stat kStats[] = {
      {"rnode_http_requests_total", "HTTP API requests handled",
       &http::HttpServerStats::requests_served, true},
      {"rnode_http_busy_total",
       "HTTP API requests answered 503 busy (in-flight budget spent)",
       &http::HttpServerStats::busy_refusals, true},
      {"rnode_http_body_too_large_total", "HTTP API requests refused 413",
       &http::HttpServerStats::body_too_large_refusals, true},
      {"rnode_http_open_connections", "Open HTTP API connections",
       &http::HttpServerStats::open_connections, false},
      {"rnode_http_in_flight", "HTTP API requests being handled",
       &http::HttpServerStats::in_flight, false},
      {"rnode_events_subscribers", "Open /ws/events subscriptions",
       &http::HttpServerStats::open_websockets, false},
  };
  for (const Stat& stat : kStats) {
    metrics::ValueCallback fn =
        [http, field = stat.field]() -> absl::StatusOr<double> {
      return static_cast<double>(http->public_server().stats().*field);
    };
    RETURN_IF_ERROR(stat.counter
                        ? r.AddCallbackCounter(stat.name, stat.help, fn)
                        : r.AddCallbackGauge(stat.name, stat.help, fn));
  }
  return r.AddCallbackCounter(
      "rnode_events_dropped_subscribers_total",
      "Event subscribers closed because they fell too far behind",
      [events]() -> absl::StatusOr<double> {
        return static_cast<double>(events->dropped_subscribers());
      });
}

// SIGTERM and SIGINT: what stops the node.
sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

void BlockTerminationSignals() {
  const sigset_t set = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

namespace {

// Waits for SIGTERM or SIGINT (blocked in every thread), looking every
// 200 ms whether the node asks to join the shard again. True for a
// signal, false for the request.
bool WaitForSignalOrRejoin(const Node& node) {
  const sigset_t set = TerminationSignals();
  const timespec look = {.tv_sec = 0, .tv_nsec = 200'000'000};
  for (;;) {
    const int signal = sigtimedwait(&set, nullptr, &look);
    if (signal > 0) {
      Log("node")->info("signal {}: shutting down", signal);
      return true;
    }
    if (node.rejoin_requested()) return false;
  }
}

// One life of the node: opens it, serves until a termination signal or
// its request to join the shard again (*rejoin), closes it. The exit code.
int RunOnce(const NodeConfig& config, std::ostream& out, std::ostream& err,
            bool* rejoin) {
  const auto started = std::chrono::steady_clock::now();
  *rejoin = false;
  metrics::Registry registry;
  if (absl::Status s = metrics::RegisterProcessMetrics(registry); !s.ok()) {
    err << "internal error: " << s.message() << "\n";
    return 2;
  }
  http::EventHub events;
  NodeHooks hooks;
  hooks.block_created = [&events](const casper::block::Block& b) {
    events.Publish(views::BlockEventJson("block-created", b));
  };
  hooks.block_added = [&events](const casper::block::Block& b) {
    events.Publish(views::BlockEventJson("block-added", b));
    for (const casper::block::RejectedDeploy& r : b.body.rejected) {
      events.Publish(views::DeployEventJson("deploy-rejected", r.sig, b));
    }
  };
  hooks.deploys_again = [&events](const casper::block::Block& b,
                                  std::span<const Bytes> again) {
    for (const Bytes& sig : again) {
      events.Publish(views::DeployEventJson("deploy-reproposed", sig, b));
    }
  };
  hooks.block_finalized = [&events](const casper::block::Block& b,
                                    std::span<const Bytes> rejected) {
    events.Publish(views::BlockEventJson("block-finalised", b, rejected));
  };
  absl::StatusOr<std::unique_ptr<Node>> node =
      Node::Open(config, hooks, &registry, out);
  if (!node.ok()) {
    err << "error: " << node.status().message() << "\n";
    return node.status().code() == absl::StatusCode::kInternal ? 2 : 1;
  }
  absl::StatusOr<std::unique_ptr<GrpcApi>> grpc =
      GrpcApi::Start(node->get(), (*node)->config());
  if (!grpc.ok()) {
    err << "error: " << grpc.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<std::unique_ptr<HttpApi>> http_api =
      HttpApi::Start(node->get(), (*node)->config(), &registry, &events);
  if (!http_api.ok()) {
    err << "error: " << http_api.status().message() << "\n";
    return 1;
  }
  if (absl::Status s = RegisterApiMetrics(registry, http_api->get(), &events);
      !s.ok()) {
    err << "internal error: " << s.message() << "\n";
    return 2;
  }
  const NodeConfig& c = (*node)->config();
  events.Publish(views::SimpleEventJson(
      "node-started",
      {{"address", absl::StrCat(c.api_host, ":", (*grpc)->external_port())}}));
  if (std::optional<casper::block::Block> lfb = [&] {
        absl::StatusOr<casper::block::Block> b = (*node)->LastFinalizedBlock();
        return b.ok() ? std::optional<casper::block::Block>(*b) : std::nullopt;
      }()) {
    events.Publish(views::SimpleEventJson(
        "entered-running-state", {{"block-hash", HexEncode(lfb->hash)}}));
  }
  const double ready_ms = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - started)
                              .count();
  out << "rnode: " << (c.standalone ? "standalone validator" : "node")
      << " ready in " << static_cast<int64_t>(ready_ms) << " ms (shard "
      << c.shard_name << ", data " << DataDir(c) << ")\n";
  if ((*node)->is_validator()) {
    out << "rnode: validator " << HexEncode((*node)->public_key()) << "\n"
        << "rnode: its REV address "
        << crypto::RevAddressFromPublicKey((*node)->public_key()) << "\n";
  }
  out << "rnode: gRPC " << c.api_host << ":" << (*grpc)->external_port()
      << " (deploys), " << c.api_admin_host << ":" << (*grpc)->internal_port()
      << " (propose); HTTP http://" << c.api_host << ":"
      << (*http_api)->public_port() << "/api/status, /metrics, /ws/events\n"
      << std::flush;
  Log("node")->info("ready in {:.0f} ms", ready_ms);

  *rejoin = !WaitForSignalOrRejoin(**node);
  (*http_api)->Stop();
  (*grpc)->Stop();
  (*node)->Stop();
  node->reset();
  if (!*rejoin) out << "rnode: stopped\n" << std::flush;
  return 0;
}

}  // namespace

int RunNode(const NodeConfig& config, std::ostream& out, std::ostream& err) {
  if (absl::Status s = SetLogLevel(config.log_level); !s.ok()) {
    err << "error: logging.level: " << s.message() << "\n";
    return 1;
  }
  // A life that ends in a request to join again is followed by one that
  // forgets the chain as it opens (node/core/rejoin.h).
  for (;;) {
    bool rejoin = false;
    const int code = RunOnce(config, out, err, &rejoin);
    if (!rejoin) return code;
    out << "rnode: further behind than the peers keep blocks: joining the "
           "shard again from its last finalized state\n"
        << std::flush;
  }
}

}  // namespace rnode::node

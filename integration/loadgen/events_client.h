// A client of a node's /ws/events stream: parses its block events and hands
// them to callbacks from a reader thread of its own.
#ifndef RNODE_INTEGRATION_LOADGEN_EVENTS_CLIENT_H_
#define RNODE_INTEGRATION_LOADGEN_EVENTS_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "integration/loadgen/run_clock.h"
#include "util/mutex.h"

namespace rnode::loadgen {

// The event schema this client reads (the envelope's "schema-version").
inline constexpr int kEventSchemaVersion = 1;

// Largest event message read. A block event carries about 350 bytes per
// deploy; 16 MiB is a block of over 40,000 deploys, beyond what a node
// packs into one block, and bounds what a broken peer can make us buffer.
inline constexpr size_t kMaxEventBytes = 16u << 20;

// How long Start waits for the connection and the "started" handshake. The
// node is local, so a healthy one answers in milliseconds.
inline constexpr std::chrono::milliseconds kDefaultEventsConnectTimeout{5000};

enum class EventKind {
  kStarted,           // {"event":"started"}: the stream's first message.
  kBlockCreated,      // This node made a block.
  kBlockAdded,        // A valid block was stored.
  kBlockFinalised,    // A block was finalized.
  kDeployRejected,    // A merge rejected a deploy (a copy of it).
  kDeployReproposed,  // A block holds a deploy a merge had rejected.
  kOther,             // Any other name (e.g. "node-started"); not an error, so
                      // that a node adding events does not break the client.
};

struct EventDeploy {
  std::string id;  // Hex of the deploy signature.
  int64_t cost = 0;
  std::string deployer;  // Hex public key.
  bool errored = false;
  // In block-finalised: true when this copy is not the one the finalized
  // state holds (a merge rejected it). Absent from older nodes' events.
  bool rejected = false;
};

// The payload of the three block events.
struct BlockPayload {
  std::string block_hash;  // Hex.
  int64_t number = 0;
  int64_t timestamp = 0;  // Milliseconds since the epoch.
  int64_t seq_num = 0;
  std::string creator;  // Hex public key.
  std::vector<std::string> parent_hashes;
  std::vector<EventDeploy> deploys;  // User deploys only.
  // Hex ids of the deploys this block's merge rejected.
  std::vector<std::string> rejected_deploys;
};

struct Event {
  EventKind kind = EventKind::kOther;
  std::string name;    // The "event" field as sent.
  BlockPayload block;  // Set for the three block kinds only.
  // Set for the two deploy kinds: the deploy's hex id, and the block
  // (its hash and number in `block`).
  std::string deploy_id;
};

// Parses one message of the stream: {"event": NAME, "schema-version": 1,
// "payload": {...}}. For the block events the payload must hold
// "block-hash" (string), "block-number" (integer) and "deploys" (array of
// objects with a string "id"); "cost", "deployer", "errored", "creator",
// "seq-num", "timestamp", "parent-hashes", "rejected-deploys" and each
// deploy's "rejected" are read when present. The deploy events need
// "deploy-id", "block-hash" and "block-number".
// InvalidArgument naming the problem for text that is not JSON, not an
// object, lacks "event", has a schema-version other than
// kEventSchemaVersion, or a block payload with a missing or mistyped field.
// Unknown event names parse as kOther; their payload is not read.
absl::StatusOr<Event> ParseEvent(std::string_view text);

struct EventsClientOptions {
  std::string host = "127.0.0.1";  // An IP address.
  uint16_t port = 0;               // The node's HTTP port.
  std::string path = "/ws/events";
  std::chrono::milliseconds connect_timeout = kDefaultEventsConnectTimeout;
};

struct EventCounts {
  int64_t blocks_added = 0;
  int64_t empty_blocks_added = 0;  // Added with no user deploys.
  int64_t blocks_created = 0;
  int64_t blocks_finalised = 0;
  int64_t deploys_rejected = 0;    // deploy-rejected events.
  int64_t deploys_reproposed = 0;  // deploy-reproposed events.
  int64_t other_events = 0;
  int64_t parse_errors = 0;  // Messages ParseEvent refused (skipped).
  // Highest number of a block added or created; -1 before any.
  int64_t latest_block_number = -1;
};

// `t` is the time the message was read, in RunClock seconds.
using BlockCallback = std::function<void(const BlockPayload& block, double t)>;

// A deploy event: the deploy's hex id and the block's number.
using DeployCallback =
    std::function<void(const std::string& id, int64_t block_number, double t)>;

struct EventCallbacks {
  BlockCallback on_added;        // For each block-added; may be empty.
  BlockCallback on_finalised;    // For each block-finalised; may be empty.
  DeployCallback on_rejected;    // For each deploy-rejected; may be empty.
  DeployCallback on_reproposed;  // For each deploy-reproposed; may be empty.
};

// Follows ws://host:port/path. The reader thread reads each message as it
// comes (the node closes a subscriber 1024 events behind) and runs the
// callbacks on it, so callbacks must be quick and must not call Stop.
//
// Thread-safe: status, Counts and Stop may be called from any thread (Stop
// from one thread at a time, never from a callback).
class EventsClient {
 public:
  // Connects, then waits for the "started" handshake. Unavailable if the
  // connection or the WebSocket upgrade fails, FailedPrecondition if the
  // first message is not "started", DeadlineExceeded if it does not come
  // within options.connect_timeout.
  static absl::StatusOr<std::unique_ptr<EventsClient>> Start(
      EventsClientOptions options, EventCallbacks callbacks, RunClock clock);

  // Stops (see Stop).
  ~EventsClient();
  EventsClient(const EventsClient&) = delete;
  EventsClient& operator=(const EventsClient&) = delete;

  // Shuts the connection down and joins the reader thread. Returns as soon
  // as a running callback does. Idempotent.
  void Stop();

  // OK while the stream runs; once it ended, why: Unavailable when the node
  // closed it or the connection failed, Cancelled after Stop.
  absl::Status status() const;

  EventCounts Counts() const;

  // Waits until the stream has ended (status() is then final) or
  // `deadline` passes; true if it ended.
  bool AwaitEnd(std::chrono::steady_clock::time_point deadline);

 private:
  enum class State { kConnecting, kRunning, kEnded };

  EventsClient(EventsClientOptions options, EventCallbacks callbacks,
               RunClock clock);
  void Run();
  // Parses and dispatches one message read at `t`.
  void Handle(std::string_view text, double t);
  // The stream ended with `status` (kept only if none was set).
  void End(absl::Status status);
  // Publishes the connected socket so that Stop can shut it down; false if
  // Stop came first.
  bool Publish(int fd);
  // Withdraws the socket before it is closed.
  void Withdraw();

  const EventsClientOptions options_;
  const EventCallbacks callbacks_;
  const RunClock clock_;
  std::thread thread_;

  mutable Mutex mu_;
  CondVar state_changed_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kConnecting;
  // The "started" event came (the stream may have ended since).
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  bool stop_requested_ ABSL_GUARDED_BY(mu_) = false;
  // The connected socket while the reader may block on it, else -1. Stop
  // shuts it down under mu_, and the reader withdraws it under mu_ before
  // closing it, so a descriptor number is never shut down after reuse.
  int fd_ ABSL_GUARDED_BY(mu_) = -1;
  EventCounts counts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rnode::loadgen

#endif  // RNODE_INTEGRATION_LOADGEN_EVENTS_CLIENT_H_

// The node's event stream for /ws/events: a bounded start-up replay buffer
// and one bounded queue per subscriber; a subscriber that falls behind is
// closed with a reason instead of slowing the publisher or losing events.
#ifndef RNODE_NODE_HTTP_EVENT_HUB_H_
#define RNODE_NODE_HTTP_EVENT_HUB_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rnode::node::http {

// The first event every subscriber receives, before any replayed or live
// event (the public node's /ws/events contract).
inline constexpr std::string_view kStartedEvent =
    R"({"event":"started","schema-version":1})";

// Events kept for subscribers that connect later. The public node replays
// what happened since start-up so a client that connects a moment after the
// node still sees the first blocks; 256 covers the first minutes of a node
// (a handful of events per block) at a few hundred KiB.
inline constexpr size_t kDefaultReplayEvents = 256;

// Events a subscriber may have waiting before it is closed as too slow. It
// must hold the started event plus a full replay and still leave room for a
// burst of live events (a block with many deploys); 1024 is four replays.
inline constexpr size_t kDefaultSubscriberQueueEvents = 1024;

// Subscribers at once. Each costs a connection and up to a full queue of
// memory; 256 matches the HTTP server's default connection bound.
inline constexpr size_t kDefaultMaxSubscribers = 256;

struct EventHubOptions {
  // The most recent events kept for new subscribers (0: none).
  size_t replay_events = kDefaultReplayEvents;
  // Queue bound of each subscriber, counting the started event (0 is taken
  // as 1).
  // A new subscriber gets the started event and the newest
  // min(replay, subscriber_queue_events - 1) replayed events.
  size_t subscriber_queue_events = kDefaultSubscriberQueueEvents;
  // Subscribe beyond this returns ResourceExhausted.
  size_t max_subscribers = kDefaultMaxSubscribers;
};

// One subscriber's view of the hub. Closing it (Close or destruction)
// unsubscribes. The subscription keeps the hub's shared state alive, so it
// may outlive the EventHub (it is then closed with Unavailable).
//
// Thread-safe: the wake callback, TryPop and status may run on different
// threads; a single consumer is expected (events are handed out once).
class EventSubscription {
 public:
  ~EventSubscription();
  EventSubscription(const EventSubscription&) = delete;
  EventSubscription& operator=(const EventSubscription&) = delete;

  // The oldest waiting event, or null if none is waiting (the wake callback
  // runs when one arrives) or the subscription is closed (see status()).
  // Events come once each, in publish order.
  std::shared_ptr<const std::string> TryPop();

  // OK while open. Once closed, why: ResourceExhausted("too slow: N events
  // behind") if the queue overflowed (its events are discarded), Unavailable
  // if the hub was destroyed, Cancelled after Close().
  absl::Status status() const;

  // Unsubscribes and discards waiting events. After it returns the wake
  // callback is never called again. Idempotent.
  void Close();

 private:
  friend class EventHub;
  class State;
  explicit EventSubscription(std::shared_ptr<State> state);

  std::shared_ptr<State> state_;
};

// Fans published events out to subscribers.
//
// Thread-safe: Publish, Subscribe and the counters may run concurrently from
// any threads. Publish never waits for a subscriber: it takes the hub's lock
// for the time of appending to each queue. Lock order: the hub's lock is
// taken before anything a wake callback takes.
class EventHub {
 public:
  explicit EventHub(EventHubOptions options = {});
  // Closes every subscription with Unavailable (and wakes it).
  ~EventHub();
  EventHub(const EventHub&) = delete;
  EventHub& operator=(const EventHub&) = delete;

  // Publishes one event (serialized JSON text, not checked) to every
  // subscriber and to the replay buffer. A subscriber whose queue is full is
  // closed with ResourceExhausted and counted in dropped_subscribers().
  void Publish(std::string event_json);

  // Subscribes. The queue starts with kStartedEvent and the replay buffer;
  // live events follow. `wake` (may be empty) is called when the queue goes
  // from empty to non-empty and when the subscription closes; it is called
  // with the hub's lock held, from the publishing thread, so it must return
  // quickly and must not call into the hub (post to an executor instead).
  // The queue is not empty on return (it holds the started event), so the
  // caller drains it with TryPop before waiting for a wake.
  // ResourceExhausted when max_subscribers are subscribed.
  absl::StatusOr<std::unique_ptr<EventSubscription>> Subscribe(
      std::function<void()> wake);

  // Subscribers closed because their queue overflowed, since construction.
  uint64_t dropped_subscribers() const;
  // Subscriptions currently open.
  size_t subscribers() const;
  // Events published since construction.
  uint64_t published() const;

 private:
  friend class EventSubscription;
  class Shared;
  std::shared_ptr<Shared> shared_;
};

}  // namespace rnode::node::http

#endif  // RNODE_NODE_HTTP_EVENT_HUB_H_

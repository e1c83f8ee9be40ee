// EventHub: fan-out of published events to bounded subscriber queues.
#include "node/http/event_hub.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "util/mutex.h"

namespace rnode::node::http {
namespace {

using EventPtr = std::shared_ptr<const std::string>;

// One subscriber's queue and state. Every field is guarded by the mutex of
// the hub (EventHub::Shared::mu_) that created it; only Shared touches them.
struct Subscriber {
  std::deque<EventPtr> queue;
  // OK while subscribed; the reason once closed.
  absl::Status status;
  std::function<void()> wake;
};

}  // namespace

class EventHub::Shared {
 public:
  explicit Shared(EventHubOptions options)
      : options_(options),
        started_(std::make_shared<const std::string>(kStartedEvent)) {
    options_.subscriber_queue_events =
        std::max<size_t>(options_.subscriber_queue_events, 1);
  }

  absl::StatusOr<std::shared_ptr<Subscriber>> Subscribe(
      std::function<void()> wake) {
    MutexLock lock(&mu_);
    if (shut_down_) return absl::UnavailableError("event hub shut down");
    if (subscribers_.size() >= options_.max_subscribers) {
      return absl::ResourceExhaustedError(
          "event hub: " + std::to_string(subscribers_.size()) +
          " subscribers, the limit");
    }
    auto subscriber = std::make_shared<Subscriber>();
    subscriber->queue.push_back(started_);
    const size_t replayed =
        std::min(replay_.size(), options_.subscriber_queue_events - 1);
    subscriber->queue.insert(subscriber->queue.end(), replay_.end() - replayed,
                             replay_.end());
    subscriber->wake = std::move(wake);
    subscribers_.push_back(subscriber);
    return subscriber;
  }

  void Publish(std::string event_json) {
    auto event = std::make_shared<const std::string>(std::move(event_json));
    // Callbacks of closed subscribers, destroyed after the lock is released
    // (their captures may take other locks when they die).
    std::vector<std::function<void()>> released;
    MutexLock lock(&mu_);
    published_.fetch_add(1, std::memory_order_relaxed);
    if (options_.replay_events > 0) {
      replay_.push_back(event);
      if (replay_.size() > options_.replay_events) replay_.pop_front();
    }
    for (size_t i = 0; i < subscribers_.size();) {
      Subscriber& subscriber = *subscribers_[i];
      if (subscriber.queue.size() >= options_.subscriber_queue_events) {
        // The event that did not fit is behind too.
        const size_t behind = subscriber.queue.size() + 1;
        dropped_.fetch_add(1, std::memory_order_relaxed);
        released.push_back(CloseLocked(
            i,
            absl::ResourceExhaustedError("too slow: " + std::to_string(behind) +
                                         " events behind"),
            /*wake=*/true));
        continue;
      }
      const bool was_empty = subscriber.queue.empty();
      subscriber.queue.push_back(event);
      if (was_empty && subscriber.wake) subscriber.wake();
      ++i;
    }
  }

  EventPtr Pop(Subscriber* subscriber) {
    MutexLock lock(&mu_);
    if (subscriber->queue.empty()) return nullptr;
    EventPtr event = std::move(subscriber->queue.front());
    subscriber->queue.pop_front();
    return event;
  }

  absl::Status Status(const Subscriber* subscriber) const {
    MutexLock lock(&mu_);
    return subscriber->status;
  }

  // Unsubscribes `subscriber` with `reason` if it is still subscribed.
  void Close(Subscriber* subscriber, absl::Status reason) {
    std::function<void()> released;
    MutexLock lock(&mu_);
    for (size_t i = 0; i < subscribers_.size(); ++i) {
      if (subscribers_[i].get() == subscriber) {
        released = CloseLocked(i, std::move(reason), /*wake=*/false);
        return;
      }
    }
  }

  // Closes every subscriber with Unavailable; Subscribe fails from now on.
  void ShutDown() {
    std::vector<std::function<void()>> released;
    MutexLock lock(&mu_);
    shut_down_ = true;
    while (!subscribers_.empty()) {
      released.push_back(CloseLocked(
          subscribers_.size() - 1,
          absl::UnavailableError("event hub shut down"), /*wake=*/true));
    }
  }

  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  uint64_t published() const {
    return published_.load(std::memory_order_relaxed);
  }
  size_t subscribers() const {
    MutexLock lock(&mu_);
    return subscribers_.size();
  }

 private:
  // Closes subscribers_[index] with `reason`, discards its queue, removes it
  // (the last subscriber takes its index) and returns its wake callback for
  // the caller to destroy after unlocking. Calls the callback first if
  // `wake`.
  std::function<void()> CloseLocked(size_t index, absl::Status reason,
                                    bool wake)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::shared_ptr<Subscriber> subscriber = std::move(subscribers_[index]);
    subscribers_[index] = std::move(subscribers_.back());
    subscribers_.pop_back();
    subscriber->status = std::move(reason);
    subscriber->queue.clear();
    if (wake && subscriber->wake) subscriber->wake();
    return std::exchange(subscriber->wake, nullptr);
  }

  EventHubOptions options_;
  const EventPtr started_;
  mutable Mutex mu_;
  // The newest options_.replay_events events, oldest first.
  std::deque<EventPtr> replay_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<Subscriber>> subscribers_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> published_{0};
};

class EventSubscription::State {
 public:
  State(std::shared_ptr<EventHub::Shared> hub,
        std::shared_ptr<Subscriber> subscriber)
      : hub(std::move(hub)), subscriber(std::move(subscriber)) {}

  const std::shared_ptr<EventHub::Shared> hub;
  const std::shared_ptr<Subscriber> subscriber;
};

EventSubscription::EventSubscription(std::shared_ptr<State> state)
    : state_(std::move(state)) {}

EventSubscription::~EventSubscription() { Close(); }

std::shared_ptr<const std::string> EventSubscription::TryPop() {
  return state_->hub->Pop(state_->subscriber.get());
}

absl::Status EventSubscription::status() const {
  return state_->hub->Status(state_->subscriber.get());
}

void EventSubscription::Close() {
  state_->hub->Close(state_->subscriber.get(),
                     absl::CancelledError("unsubscribed"));
}

EventHub::EventHub(EventHubOptions options)
    : shared_(std::make_shared<Shared>(options)) {}

EventHub::~EventHub() { shared_->ShutDown(); }

void EventHub::Publish(std::string event_json) {
  shared_->Publish(std::move(event_json));
}

absl::StatusOr<std::unique_ptr<EventSubscription>> EventHub::Subscribe(
    std::function<void()> wake) {
  auto subscriber = shared_->Subscribe(std::move(wake));
  if (!subscriber.ok()) return subscriber.status();
  return std::unique_ptr<EventSubscription>(
      new EventSubscription(std::make_shared<EventSubscription::State>(
          shared_, *std::move(subscriber))));
}

uint64_t EventHub::dropped_subscribers() const { return shared_->dropped(); }

size_t EventHub::subscribers() const { return shared_->subscribers(); }

uint64_t EventHub::published() const { return shared_->published(); }

}  // namespace rnode::node::http

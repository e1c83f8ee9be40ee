// Events (Produce, Consume, COMM), their hashes, per-deploy event logs and the
// replay rig built from a recorded log.
#ifndef RNODE_RSPACE_EVENT_LOG_H_
#define RNODE_RSPACE_EVENT_LOG_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rspace/term.h"
#include "util/bytes.h"
#include "util/mutex.h"

namespace rnode::rspace {

// Replay divergence: a replayed execution did not reproduce the recorded
// log. A validator rejects the block that claimed the log; nothing else (a
// malformed contract state, a misuse of the space, a storage fault) is a
// divergence. A replay log keeps the first divergence it meets
// (EventLog::divergence()); the operation that met it fails with the status
// EventLog::Diverge returns, which only stops the evaluation: callers decide
// by the log, never by the status.
struct Divergence {
  enum class Kind : uint8_t {
    kUnrecordedProduce,  // a produce the log does not hold
    kUnrecordedConsume,  // a consume the log does not hold
    kCommRejected,       // a recorded COMM whose datum the pattern rejects
    kUnexpectedComm,     // a COMM other than the recorded one fired
    kCommOverused,       // a COMM fired more often than recorded
    kUnusedComm,         // recorded COMMs the replay never reproduced
    kMalformedLog,       // the recorded log itself is malformed (a wrong
                         // hash, an empty COMM, too many events)
  };
  Kind kind = Kind::kUnrecordedProduce;
  Hash32 event{};        // the event the replay made (kUnusedComm: recorded)
  std::string recorded;  // what the log recorded there
  std::string happened;  // what the replay did
  bool operator==(const Divergence&) const = default;
  // "<kind> <event hex>: recorded ..., replay ...", for logs and errors.
  std::string ToString() const;
};
std::string_view DivergenceKindName(Divergence::Kind kind);

// Formats and hash preimages: docs/formats/rspace.md.
struct ProduceEvent {
  Hash32 hash{};
  Hash32 channel{};
  Hash32 data{};  // Hash of the datum's canonical bytes.
  bool persist = false;
  uint32_t repeat = 0;  // Earlier identical produces in the same log.
  bool operator==(const ProduceEvent&) const = default;
};

struct ConsumeEvent {
  Hash32 hash{};
  std::vector<Hash32> channels;  // Bind order.
  std::vector<Hash32> patterns;  // Bind order.
  Hash32 continuation{};
  bool persist = false;
  bool peek = false;
  uint32_t repeat = 0;
  bool operator==(const ConsumeEvent&) const = default;
};

struct CommBind {
  Hash32 channel{};
  Hash32 produce{};
  bool persist = false;  // The datum's persist flag.
  bool operator==(const CommBind&) const = default;
};

struct CommEvent {
  Hash32 hash{};
  Hash32 consume{};
  bool consume_persist = false;
  bool peek = false;
  std::vector<CommBind> binds;  // The consume's bind order.
  bool operator==(const CommEvent&) const = default;
};

using Event = std::variant<ProduceEvent, ConsumeEvent, CommEvent>;

const Hash32& EventHash(const Event& e);

// Hash preimages (docs/formats/rspace.md). Pure functions.
Hash32 HashProduce(const Hash32& channel, const Hash32& data, bool persist,
                   uint32_t repeat);
// The repeat-independent part of a consume's identity.
Hash32 HashConsumeBase(std::span<const Hash32> channels,
                       std::span<const Hash32> patterns,
                       const Hash32& continuation, bool persist, bool peek);
Hash32 HashConsume(const Hash32& base, uint32_t repeat);
Hash32 HashComm(const Hash32& consume, bool consume_persist, bool peek,
                std::span<const CommBind> binds);

// Recomputes every hash of `event` from its fields; InvalidArgument naming the
// event if a stored hash is wrong.
absl::Status VerifyEventHash(const Event& event);

// Number of independent stripes an event log is split into: operations on
// different channels append to different stripes, so workers of one deploy
// rarely contend. 16 covers the worker counts of a 2-32 core node.
inline constexpr size_t kEventLogStripes = 16;

// Largest number of events one log accepts (play) or is rigged with (replay).
// A deploy is bounded by its phlo limit well below this; the bound keeps a
// malicious block from making replay allocate without limit.
inline constexpr size_t kMaxEventsPerLog = 1u << 24;

// The log of one deploy (or one worker's share of it). In play mode it
// records events; in replay mode it also holds the recorded log to enforce.
// Thread-safe: operations of one deploy may run on several threads at once.
class EventLog {
 public:
  EventLog();  // Play mode.
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // A replay log rigged with `recorded`. InvalidArgument if an event's hash
  // does not match its fields, if a COMM is empty, or if the log is larger
  // than kMaxEventsPerLog (ResourceExhausted).
  static absl::StatusOr<std::unique_ptr<EventLog>> ForReplay(
      std::span<const Event> recorded);

  bool replay() const { return replay_ != nullptr; }

  // Returns the events recorded so far in canonical order (by event hash,
  // then kind) and empties the log; the repeat counters restart. The order
  // does not depend on thread scheduling.
  std::vector<Event> Take();
  // Number of events recorded so far.
  size_t size() const;

  // Replay only: OK when every recorded COMM has been used; otherwise a
  // kUnusedComm divergence naming the first unused COMM (by hash) and the
  // count (recorded as with Diverge).
  absl::Status CheckReplayDone();

  // Replay only: keeps `d` as this log's divergence unless one is already
  // kept, and returns the FailedPrecondition that stops the operation.
  // Thread-safe.
  absl::Status Diverge(Divergence d);
  // The first divergence this log met, if any. With several workers the
  // first one by time is kept; whether there is one does not depend on
  // scheduling. Thread-safe.
  std::optional<Divergence> divergence() const;

  // --- Used by Space (REQUIRES: the caller holds the locks of the channels
  // involved, so the same COMM is never examined by two threads at once). ---

  // Returns the produce event (with its repeat count) and records it.
  // In replay, a kUnrecordedProduce divergence if it was not recorded (and
  // kUnrecordedConsume for RecordConsume).
  absl::StatusOr<ProduceEvent> RecordProduce(const Hash32& channel,
                                             const Hash32& data, bool persist);
  absl::StatusOr<ConsumeEvent> RecordConsume(std::vector<Hash32> channels,
                                             std::vector<Hash32> patterns,
                                             const Hash32& continuation,
                                             bool persist, bool peek);
  void RecordComm(CommEvent comm);

  // Replay: the recorded COMMs (not yet used up) involving this produce or
  // consume, in recorded order. Empty in play mode.
  std::vector<const CommEvent*> RecordedCommsForProduce(const Hash32& p) const;
  std::vector<const CommEvent*> RecordedCommsForConsume(const Hash32& c) const;
  // Replay: marks one use of `comm`; a kCommOverused divergence if it is
  // used up (kUnexpectedComm if it was never recorded).
  absl::Status UseComm(const CommEvent& comm);

 private:
  struct Stripe {
    Mutex mu;
    std::deque<Event> events ABSL_GUARDED_BY(mu);  // No moves on growth.
    absl::flat_hash_map<Hash32, uint32_t, Hash32Hasher> counters
        ABSL_GUARDED_BY(mu);
  };
  struct Rig;

  Stripe& StripeFor(const Hash32& h) {
    return stripes_[h[1] % kEventLogStripes];
  }
  void Append(const Hash32& stripe_key, Event e);

  mutable std::array<Stripe, kEventLogStripes> stripes_;
  std::unique_ptr<Rig> replay_;
  mutable Mutex divergence_mu_;
  std::optional<Divergence> divergence_ ABSL_GUARDED_BY(divergence_mu_);
};

}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_EVENT_LOG_H_

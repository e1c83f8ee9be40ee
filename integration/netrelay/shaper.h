// What a link between two test hosts does to a packet: the rules of a links
// file (delay, jitter, loss, bandwidth, a cut) and the per-link state that
// turns them into a delivery time or a drop. Pure: no sockets, no clock.
#ifndef RNODE_INTEGRATION_NETRELAY_SHAPER_H_
#define RNODE_INTEGRATION_NETRELAY_SHAPER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace rnode::netrelay {

// What one direction of a link does. Times in microseconds.
struct LinkParams {
  int64_t delay_us = 0;   // one way, added to every packet
  int64_t jitter_us = 0;  // uniform in [-jitter, +jitter]; order is kept
  double loss = 0;        // probability in [0, 1] that a packet is dropped
  int64_t rate_bps = 0;   // bits per second; 0: no limit
  bool cut = false;       // every packet is dropped (a partition)

  bool operator==(const LinkParams&) const = default;
};

// One line of a links file:
//   <from> <to> [delay=MS] [jitter=MS] [loss=PCT] [rate=KBIT] [cut|up]
// `from` and `to` are host names, or "*" for any. A rule sets only the
// fields it names; the rules matching a packet apply in file order, so a
// later line refines an earlier one ("* * delay=50" then "a * loss=1").
// Blank lines and text from '#' on are ignored.
struct LinkRule {
  std::string from;
  std::string to;
  std::optional<int64_t> delay_us;
  std::optional<int64_t> jitter_us;
  std::optional<double> loss;
  std::optional<int64_t> rate_bps;
  std::optional<bool> cut;
};

// Limits of a rule's fields, so that a typo cannot hold packets for hours.
inline constexpr int64_t kMaxDelayUs = 10'000'000;  // 10 s one way
inline constexpr int64_t kMinRateBps = 8'000;       // 1 kB/s

// The rules of `text`; InvalidArgument naming the line for a malformed one
// (unknown field, a number out of range, missing endpoints).
absl::StatusOr<std::vector<LinkRule>> ParseLinks(std::string_view text);

// What packets from `from` to `to` meet: the matching rules applied in
// order over LinkParams{} (nothing: a perfect link).
LinkParams Resolve(const std::vector<LinkRule>& rules, std::string_view from,
                   std::string_view to);

// Bytes a rate-limited link holds in its queue before it drops what comes
// (a router's buffer: about 80 ms at 100 Mbit/s).
inline constexpr int64_t kLinkQueueBytes = 1 << 20;

// One direction of a link: its serializer (rate), its last delivery (order
// is kept, as on a single path) and its counters. Not thread-safe.
class Link {
 public:
  enum class Fate { kDelivered, kLost, kCut, kQueueFull };

  // The time (µs, on the caller's clock) at which a packet of `bytes` that
  // arrives at `now_us` is to be delivered, or nullopt if it is dropped
  // (then `*why` says why when given). `rng` draws loss and jitter.
  std::optional<int64_t> Admit(const LinkParams& params, int64_t now_us,
                               size_t bytes, std::mt19937_64& rng,
                               Fate* why = nullptr);

  uint64_t delivered() const { return delivered_; }
  uint64_t lost() const { return lost_; }
  uint64_t cut() const { return cut_; }
  uint64_t queue_full() const { return queue_full_; }

 private:
  int64_t free_at_us_ = 0;        // the serializer is busy until then
  int64_t last_delivery_us_ = 0;  // no packet is delivered before it
  uint64_t delivered_ = 0;
  uint64_t lost_ = 0;
  uint64_t cut_ = 0;
  uint64_t queue_full_ = 0;
};

}  // namespace rnode::netrelay

#endif  // RNODE_INTEGRATION_NETRELAY_SHAPER_H_

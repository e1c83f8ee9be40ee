// What a deploy did, for the merger: per-channel added/removed data,
// continuations and joins, and the index of its event log.
#ifndef RNODE_RSPACE_STATE_CHANGE_H_
#define RNODE_RSPACE_STATE_CHANGE_H_

#include <map>
#include <set>
#include <span>
#include <vector>

#include "rspace/event_log.h"
#include "rspace/types.h"
#include "util/bytes.h"

namespace rnode::rspace {

// The multiset difference between a channel's state before and after a
// deploy. Data are identified by (source produce, persist, value hash),
// continuations by their source consume, joins by their group. An item both
// removed and re-added is in neither list.
struct ChannelChange {
  Hash32 channel{};
  std::vector<Datum> added_data;
  std::vector<Datum> removed_data;
  std::vector<WaitingContinuation> added_continuations;
  std::vector<WaitingContinuation> removed_continuations;
  std::vector<JoinGroup> added_joins;
  std::vector<JoinGroup> removed_joins;

  bool empty() const {
    return added_data.empty() && removed_data.empty() &&
           added_continuations.empty() && removed_continuations.empty() &&
           added_joins.empty() && removed_joins.empty();
  }
};

// Channels with a non-empty change, ascending by channel hash.
struct StateChanges {
  std::vector<ChannelChange> channels;
};

ChannelChange DiffChannelState(const Hash32& channel,
                               const ChannelState& before,
                               const ChannelState& after);

// The net change of a channel to which `added`'s items were added and
// `removed`'s removed (in any interleaving, each removed item present when
// it was removed): added minus removed and removed minus added as multisets
// by the ids above, data and continuations stably sorted by source, joins
// ascending. Equals DiffChannelState(before, after) for such a change.
ChannelChange NetChannelChange(const Hash32& channel,
                               const ChannelState& added,
                               const ChannelState& removed);

// The change of applying `first` then `second` (each ascending by channel,
// as DeployScope::ChangesSince returns them): per channel, an item added
// by one and removed by the other (or removed then added back) cancels;
// channels whose composed change is empty are dropped. Used to join the
// phases of one deploy (precharge, program, refund) into its state change.
StateChanges ComposeChanges(const StateChanges& first,
                            const StateChanges& second);

// The per-deploy event-log index the merger's conflict rules read
// (docs/rspace.md "State changes and the event-log index"). Sets are ordered
// so iteration is deterministic.
struct EventLogIndex {
  std::set<Hash32> produces_linear;      // Produce events, persist = false
  std::set<Hash32> produces_persistent;  // Produce events, persist = true
  std::set<Hash32> produces_consumed;    // in a COMM without peek
  std::set<Hash32> produces_peeked;      // in a COMM with peek
  std::set<Hash32> consumes_linear;      // Consume events, persist = false
  std::set<Hash32> consumes_persistent;  // Consume events, persist = true
  std::set<Hash32> consumes_peek;        // Consume events with peek
  std::set<Hash32> consumes_produced;    // consumes that fired in a COMM
  std::map<Hash32, std::set<Hash32>>
      produces_by_channel;  // channel -> produces
  std::map<Hash32, std::set<Hash32>>
      consumes_by_channel;  // channel -> consumes
  std::set<Hash32> comms;

  // Produces created here and still present afterwards:
  // (linear - consumed) + persistent.
  std::set<Hash32> ProducesCreatedAndNotDestroyed() const;
  // Consumes created here and still waiting afterwards:
  // (linear + peek - produced) + persistent.
  std::set<Hash32> ConsumesCreatedAndNotDestroyed() const;
  // The channels this deploy touched.
  std::set<Hash32> Channels() const;
};

EventLogIndex BuildEventLogIndex(std::span<const Event> log);

// Union of two indexes (commutative and associative).
EventLogIndex Combine(const EventLogIndex& a, const EventLogIndex& b);

}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_STATE_CHANGE_H_

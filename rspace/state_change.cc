// Per-deploy state changes and the event-log index.
#include "rspace/state_change.h"

#include <algorithm>
#include <tuple>
#include <variant>

namespace rnode::rspace {
namespace {

using DatumId = std::tuple<Hash32, bool, Hash32>;

DatumId IdOf(const Datum& d) { return {d.source, d.persist, d.value->hash()}; }

// Items of `a` not matched (as a multiset, by id) in `b`, in `a`'s order.
template <typename T, typename IdFn>
std::vector<T> Minus(const std::vector<T>& a, const std::vector<T>& b,
                     IdFn id) {
  using Id = decltype(id(a.front()));
  std::map<Id, int> counts;
  for (const T& x : b) ++counts[id(x)];
  std::vector<T> out;
  for (const T& x : a) {
    auto it = counts.find(id(x));
    if (it != counts.end() && it->second > 0) {
      --it->second;
    } else {
      out.push_back(x);
    }
  }
  return out;
}

template <typename T>
void Union(std::set<T>& into, const std::set<T>& from) {
  into.insert(from.begin(), from.end());
}

}  // namespace

ChannelChange DiffChannelState(const Hash32& channel,
                               const ChannelState& before,
                               const ChannelState& after) {
  ChannelChange c;
  c.channel = channel;
  if (!before.data.empty() || !after.data.empty()) {
    c.added_data = Minus(after.data, before.data, IdOf);
    c.removed_data = Minus(before.data, after.data, IdOf);
  }
  auto kid = [](const WaitingContinuation& k) { return k.source; };
  if (!before.continuations.empty() || !after.continuations.empty()) {
    c.added_continuations =
        Minus(after.continuations, before.continuations, kid);
    c.removed_continuations =
        Minus(before.continuations, after.continuations, kid);
  }
  auto jid = [](const JoinGroup& g) { return g; };
  if (!before.joins.empty() || !after.joins.empty()) {
    c.added_joins = Minus(after.joins, before.joins, jid);
    c.removed_joins = Minus(before.joins, after.joins, jid);
  }
  return c;
}

namespace {

template <typename T>
void SortBySource(std::vector<T>& items) {
  std::stable_sort(items.begin(), items.end(),
                   [](const T& a, const T& b) { return a.source < b.source; });
}

}  // namespace

ChannelChange NetChannelChange(const Hash32& channel,
                               const ChannelState& added,
                               const ChannelState& removed) {
  ChannelChange c;
  c.channel = channel;
  c.added_data = Minus(added.data, removed.data, IdOf);
  c.removed_data = Minus(removed.data, added.data, IdOf);
  SortBySource(c.added_data);
  SortBySource(c.removed_data);
  auto kid = [](const WaitingContinuation& k) { return k.source; };
  c.added_continuations =
      Minus(added.continuations, removed.continuations, kid);
  c.removed_continuations =
      Minus(removed.continuations, added.continuations, kid);
  SortBySource(c.added_continuations);
  SortBySource(c.removed_continuations);
  auto jid = [](const JoinGroup& g) { return g; };
  c.added_joins = Minus(added.joins, removed.joins, jid);
  c.removed_joins = Minus(removed.joins, added.joins, jid);
  std::sort(c.added_joins.begin(), c.added_joins.end());
  std::sort(c.removed_joins.begin(), c.removed_joins.end());
  return c;
}

namespace {

// (a1, r1) then (a2, r2) as one change: an item added then removed, or
// removed then added back, cancels (as a multiset, by id).
template <typename T, typename IdFn>
void ComposeLists(const std::vector<T>& a1, const std::vector<T>& r1,
                  const std::vector<T>& a2, const std::vector<T>& r2,
                  std::vector<T>& added, std::vector<T>& removed, IdFn id) {
  if (a1.empty() && r1.empty() && a2.empty() && r2.empty()) return;
  added = Minus(a1, r2, id);
  std::vector<T> a2_kept = Minus(a2, r1, id);
  added.insert(added.end(), a2_kept.begin(), a2_kept.end());
  removed = Minus(r1, a2, id);
  std::vector<T> r2_kept = Minus(r2, a1, id);
  removed.insert(removed.end(), r2_kept.begin(), r2_kept.end());
}

ChannelChange ComposeChannel(const ChannelChange& x, const ChannelChange& y) {
  ChannelChange c;
  c.channel = x.channel;
  ComposeLists(x.added_data, x.removed_data, y.added_data, y.removed_data,
               c.added_data, c.removed_data, IdOf);
  auto kid = [](const WaitingContinuation& k) { return k.source; };
  ComposeLists(x.added_continuations, x.removed_continuations,
               y.added_continuations, y.removed_continuations,
               c.added_continuations, c.removed_continuations, kid);
  auto jid = [](const JoinGroup& g) { return g; };
  ComposeLists(x.added_joins, x.removed_joins, y.added_joins, y.removed_joins,
               c.added_joins, c.removed_joins, jid);
  return c;
}

}  // namespace

StateChanges ComposeChanges(const StateChanges& first,
                            const StateChanges& second) {
  StateChanges out;
  size_t i = 0;
  size_t j = 0;
  const auto& a = first.channels;
  const auto& b = second.channels;
  while (i < a.size() || j < b.size()) {
    ChannelChange c;
    if (j == b.size() || (i < a.size() && a[i].channel < b[j].channel)) {
      c = a[i++];
    } else if (i == a.size() || b[j].channel < a[i].channel) {
      c = b[j++];
    } else {
      c = ComposeChannel(a[i++], b[j++]);
    }
    if (!c.empty()) out.channels.push_back(std::move(c));
  }
  return out;
}

EventLogIndex BuildEventLogIndex(std::span<const Event> log) {
  EventLogIndex x;
  for (const Event& e : log) {
    if (const auto* p = std::get_if<ProduceEvent>(&e)) {
      (p->persist ? x.produces_persistent : x.produces_linear).insert(p->hash);
      x.produces_by_channel[p->channel].insert(p->hash);
    } else if (const auto* c = std::get_if<ConsumeEvent>(&e)) {
      if (c->persist) {
        x.consumes_persistent.insert(c->hash);
      } else if (c->peek) {
        x.consumes_peek.insert(c->hash);
      } else {
        x.consumes_linear.insert(c->hash);
      }
      for (const auto& ch : c->channels)
        x.consumes_by_channel[ch].insert(c->hash);
    } else {
      const auto& m = std::get<CommEvent>(e);
      x.comms.insert(m.hash);
      x.consumes_produced.insert(m.consume);
      for (const auto& b : m.binds) {
        (m.peek ? x.produces_peeked : x.produces_consumed).insert(b.produce);
      }
    }
  }
  return x;
}

std::set<Hash32> EventLogIndex::ProducesCreatedAndNotDestroyed() const {
  std::set<Hash32> out;
  std::set_difference(produces_linear.begin(), produces_linear.end(),
                      produces_consumed.begin(), produces_consumed.end(),
                      std::inserter(out, out.end()));
  out.insert(produces_persistent.begin(), produces_persistent.end());
  return out;
}

std::set<Hash32> EventLogIndex::ConsumesCreatedAndNotDestroyed() const {
  std::set<Hash32> created = consumes_linear;
  created.insert(consumes_peek.begin(), consumes_peek.end());
  std::set<Hash32> out;
  std::set_difference(created.begin(), created.end(), consumes_produced.begin(),
                      consumes_produced.end(), std::inserter(out, out.end()));
  out.insert(consumes_persistent.begin(), consumes_persistent.end());
  return out;
}

std::set<Hash32> EventLogIndex::Channels() const {
  std::set<Hash32> out;
  for (const auto& [ch, _] : produces_by_channel) out.insert(ch);
  for (const auto& [ch, _] : consumes_by_channel) out.insert(ch);
  return out;
}

EventLogIndex Combine(const EventLogIndex& a, const EventLogIndex& b) {
  EventLogIndex x = a;
  Union(x.produces_linear, b.produces_linear);
  Union(x.produces_persistent, b.produces_persistent);
  Union(x.produces_consumed, b.produces_consumed);
  Union(x.produces_peeked, b.produces_peeked);
  Union(x.consumes_linear, b.consumes_linear);
  Union(x.consumes_persistent, b.consumes_persistent);
  Union(x.consumes_peek, b.consumes_peek);
  Union(x.consumes_produced, b.consumes_produced);
  Union(x.comms, b.comms);
  for (const auto& [ch, s] : b.produces_by_channel)
    Union(x.produces_by_channel[ch], s);
  for (const auto& [ch, s] : b.consumes_by_channel)
    Union(x.consumes_by_channel[ch], s);
  return x;
}

}  // namespace rnode::rspace

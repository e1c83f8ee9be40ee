// Builders of hand-made merge inputs (deploys with events consistent with
// their channel changes), shared by the merger's rule tests and the per-step
// tests.
#ifndef RNODE_TESTS_CASPER_MERGE_SCOPE_BUILDERS_H_
#define RNODE_TESTS_CASPER_MERGE_SCOPE_BUILDERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "casper/merge/block_index.h"
#include "rspace/state_change.h"
#include "rspace/types.h"
#include "tests/casper/merge/merge_test_util.h"

namespace rnode::casper::merge::testing {

// Channel i of a test scope.
inline rspace::TermPtr Chan(int i) {
  return MakeTerm(1000 + static_cast<uint64_t>(i));
}
inline Hash32 C(int i) { return Chan(i)->hash(); }

inline rspace::Datum MakeDatum(uint64_t v, uint64_t src, bool persist = false) {
  return rspace::Datum{MakeTerm(v), persist, HashOf(200, src)};
}

// The deploy's change of `ch`, added if it has none yet.
inline rspace::ChannelChange& Change(DeployInput& d, const Hash32& ch) {
  for (auto& c : d.changes.channels) {
    if (c.channel == ch) return c;
  }
  d.changes.channels.push_back(rspace::ChannelChange{});
  d.changes.channels.back().channel = ch;
  return d.changes.channels.back();
}

inline DeployInput Deploy(const std::string& id, uint64_t cost) {
  DeployInput d;
  d.id.assign(id.begin(), id.end());
  d.cost = cost;
  return d;
}

// A consume, fired here, that takes `datum` from `ch` (a persistent datum
// is read and stays).
inline void TakeDatum(DeployInput& d, const Hash32& ch,
                      const rspace::Datum& datum, uint64_t salt) {
  Hash32 k = HashOf(300, salt);
  d.events.push_back(
      rspace::ConsumeEvent{k, {ch}, {HashOf(7)}, HashOf(8), false, false, 0});
  d.events.push_back(rspace::CommEvent{
      HashOf(301, salt), k, false, false, {{ch, datum.source, datum.persist}}});
  if (!datum.persist) Change(d, ch).removed_data.push_back(datum);
}

// A produce that leaves `datum` on `ch`.
inline void StoreDatum(DeployInput& d, const Hash32& ch,
                       const rspace::Datum& datum) {
  d.events.push_back(rspace::ProduceEvent{datum.source, ch, datum.value->hash(),
                                          datum.persist, 0});
  Change(d, ch).added_data.push_back(datum);
}

// A waiting continuation on `chans` (a join when there are several).
inline rspace::WaitingContinuation Continuation(std::vector<int> chans,
                                                uint64_t src) {
  rspace::WaitingContinuation k;
  for (int c : chans) {
    k.channels.push_back(Chan(c));
    k.patterns.push_back(MakeTerm(7));
  }
  k.continuation = MakeTerm(8);
  k.source = HashOf(400, src);
  k.group = rspace::MakeJoinGroup(k.channels);
  return k;
}

// A consume that leaves `k` waiting (and its join on every channel).
inline void StoreContinuation(DeployInput& d,
                              const rspace::WaitingContinuation& k) {
  d.events.push_back(rspace::ConsumeEvent{k.source, k.group,
                                          std::vector<Hash32>(k.group.size()),
                                          HashOf(8), k.persist, k.peek, 0});
  Change(d, k.group.front()).added_continuations.push_back(k);
  for (const auto& h : k.group) Change(d, h).added_joins.push_back(k.group);
}

}  // namespace rnode::casper::merge::testing

#endif  // RNODE_TESTS_CASPER_MERGE_SCOPE_BUILDERS_H_

// The Space's half of DeployScope::RevertTo: the inverses of a deploy's
// changes, per channel for data and per join group for continuations.
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "rspace/internal/overlay.h"
#include "rspace/space.h"
#include "util/status_macros.h"

namespace rnode::rspace {

using internal::Hex;
using internal::InsertContinuation;
using internal::InsertDatum;
using internal::SameGroup;
using internal::SourceRange;

absl::Status Space::Revert(const std::vector<DeployScope::Record>& records) {
  using Kind = DeployScope::Record::Kind;
  // Data by channel; continuations by join group, whose joins are then
  // recomputed. Join records need no inverse of their own: each came with
  // a continuation record of its group in the same operation.
  std::map<Hash32, std::vector<const DeployScope::Record*>> data;
  std::map<JoinGroup, std::vector<const DeployScope::Record*>> groups;
  for (const DeployScope::Record& r : records) {
    switch (r.kind) {
      case Kind::kAddDatum:
      case Kind::kRemoveDatum:
        data[r.channel].push_back(&r);
        break;
      case Kind::kAddContinuation:
      case Kind::kRemoveContinuation:
        groups[std::get<WaitingContinuation>(r.item).group].push_back(&r);
        break;
      case Kind::kAddJoin:
      case Kind::kRemoveJoin:
        groups[std::get<JoinGroup>(r.item)];
        break;
    }
  }
  for (const auto& [channel, recs] : data) {
    RETURN_IF_ERROR(RevertData(channel, recs));
  }
  for (const auto& [group, recs] : groups) {
    RETURN_IF_ERROR(RevertGroup(group, recs));
  }
  return absl::OkStatus();
}

namespace {

absl::Status Interference(const char* what, const Hash32& channel) {
  return absl::FailedPreconditionError(
      std::string("revert: a ") + what + " this deploy added on channel " +
      Hex(channel) +
      " is gone (another deploy consumed it: deploy interference)");
}

}  // namespace

absl::Status Space::RevertData(
    const Hash32& channel,
    const std::vector<const DeployScope::Record*>& recs) {
  Entry* e = GetEntry(channel);
  LockedSet locks({e});
  e->mu.AssertHeld();
  RETURN_IF_ERROR(EnsureLoaded(*e));
  // Applied to a copy, committed only if every inverse applies.
  std::vector<Datum> data = e->state.data;
  for (auto it = recs.rbegin(); it != recs.rend(); ++it) {
    const Datum& d = std::get<Datum>((*it)->item);
    if ((*it)->kind == DeployScope::Record::Kind::kRemoveDatum) {
      InsertDatum(data, d);
      continue;
    }
    auto [first, last] = SourceRange(data, d.source);
    size_t found = last;
    for (size_t i = first; i < last && found == last; ++i) {
      if (data[i].persist == d.persist &&
          data[i].value->hash() == d.value->hash()) {
        found = i;
      }
    }
    if (found == last) return Interference("datum", channel);
    data.erase(data.begin() + static_cast<std::ptrdiff_t>(found));
  }
  e->state.data = std::move(data);
  e->dirty = true;
  return absl::OkStatus();
}

absl::Status Space::RevertGroup(
    const JoinGroup& group,
    const std::vector<const DeployScope::Record*>& recs) {
  std::vector<Entry*> entries;
  for (const Hash32& h : group) entries.push_back(GetEntry(h));
  LockedSet locks(std::move(entries));
  for (Entry* x : locks.entries()) RETURN_IF_ERROR(EnsureLoaded(*x));
  Entry* owner = locks.Find(group.front());
  owner->mu.AssertHeld();
  std::vector<WaitingContinuation> conts = owner->state.continuations;
  for (auto it = recs.rbegin(); it != recs.rend(); ++it) {
    const WaitingContinuation& k = std::get<WaitingContinuation>((*it)->item);
    if ((*it)->kind == DeployScope::Record::Kind::kRemoveContinuation) {
      InsertContinuation(conts, k);
      continue;
    }
    auto [first, last] = SourceRange(conts, k.source);
    if (first == last) return Interference("continuation", owner->hash);
    conts.erase(conts.begin() + static_cast<std::ptrdiff_t>(first));
  }
  if (!recs.empty()) {
    owner->state.continuations = std::move(conts);
    owner->dirty = true;
  }
  // The join is on every channel of the group iff a continuation of the
  // group still waits, whoever stored it: a blind inverse of this deploy's
  // join records would orphan another deploy's continuation.
  bool waiting = false;
  for (const auto& k : owner->state.continuations) {
    waiting = waiting || SameGroup(k.group, group);
  }
  for (Entry* x : locks.entries()) {
    x->mu.AssertHeld();
    auto& joins = x->state.joins;
    auto it = std::lower_bound(joins.begin(), joins.end(), group);
    bool present = it != joins.end() && *it == group;
    if (waiting && !present) {
      joins.insert(it, group);
      x->dirty = true;
    } else if (!waiting && present) {
      joins.erase(it);
      x->dirty = true;
    }
  }
  return absl::OkStatus();
}

}  // namespace rnode::rspace

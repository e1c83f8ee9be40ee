// The Space's matching and COMMs: a continuation's match over the locked
// channels, firing it, and Produce and Consume in play and in replay.
#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "rspace/internal/overlay.h"
#include "rspace/space.h"
#include "util/status_macros.h"

namespace rnode::rspace {

using internal::AddJoin;
using internal::BindHashes;
using internal::CheckBinds;
using internal::Hex;
using internal::InsertContinuation;
using internal::InsertDatum;
using internal::SameGroup;
using internal::SourceRange;

namespace {

// What a produce does after `comm` fired with its datum.
enum class AfterComm {
  kDone,   // the COMM took the datum, or it is persistent (the reducer
           // sends a persistent datum again itself)
  kNext,   // a peek left it: match it against the next waiting continuation
  kStore,  // a persistent peek left it: it would match the same one again,
           // so store the datum now
};

AfterComm AfterProduceComm(const Comm& comm, bool datum_persist) {
  if (!comm.peek || datum_persist) return AfterComm::kDone;
  return comm.continuation_persist ? AfterComm::kStore : AfterComm::kNext;
}

// A produce's COMMs in the order its caller runs their bodies: the peeks by
// consume hash, then the take if any. Play finds them in the order of the
// waiting continuations and replay in the order of the recorded COMMs; this
// order is the same in both.
std::vector<Comm> InRunOrder(std::vector<Comm> comms) {
  if (comms.size() > 1) {
    std::sort(comms.begin(), comms.end(), [](const Comm& a, const Comm& b) {
      if (a.peek != b.peek) return a.peek;
      return a.consume < b.consume;
    });
  }
  return comms;
}

// The hash of the COMM of `k` with the data `chosen` names; a bind that
// chose the datum being produced (index -1) names `*new_datum`.
Hash32 CommHashOf(const WaitingContinuation& k,
                  const std::vector<Space::Chosen>& chosen,
                  const Datum* new_datum) {
  std::vector<CommBind> binds;
  binds.reserve(chosen.size());
  for (size_t i = 0; i < chosen.size(); ++i) {
    const Space::Chosen& c = chosen[i];
    c.entry->mu.AssertHeld();
    const Datum& d = c.index < 0 ? *new_datum : c.entry->state.data[c.index];
    binds.push_back(CommBind{k.channels[i]->hash(), d.source, d.persist});
  }
  return HashComm(k.source, k.persist, k.peek, binds);
}

// The waiting continuation the recorded COMM `rec` names, found on the
// entry owning its join group (`*owner`), installed ones first
// (`*installed`). Null when a channel of the group is not in `locks` or no
// such continuation waits.
const WaitingContinuation* RecordedContinuation(const CommEvent& rec,
                                                const Space::LockedSet& locks,
                                                Space::Entry** owner,
                                                bool* installed) {
  JoinGroup g;
  for (const auto& b : rec.binds) g.push_back(b.channel);
  std::sort(g.begin(), g.end());
  *owner = locks.Find(g.front());
  if (*owner == nullptr) return nullptr;
  (*owner)->mu.AssertHeld();
  bool all_locked = true;
  for (const auto& h : g) all_locked = all_locked && locks.Find(h) != nullptr;
  if (!all_locked) return nullptr;
  *installed = false;
  for (const auto& x : (*owner)->installed) {
    if (x.source == rec.consume) {
      *installed = true;
      return &x;
    }
  }
  const auto& ks = (*owner)->state.continuations;
  auto [first, last] = SourceRange(ks, rec.consume);
  return first < last ? &ks[first] : nullptr;
}

}  // namespace

template <typename Item>
void Space::Record(const OpContext& ctx, Entry& e,
                   DeployScope::Record::Kind kind, const Item& item) {
  e.mu.AssertHeld();
  e.dirty = true;
  if (ctx.scope == nullptr) return;
  ctx.scope->Append(DeployScope::Record{kind, e.hash, item});
}

absl::StatusOr<std::optional<std::vector<Space::Chosen>>> Space::TryMatch(
    const OpContext& ctx, const WaitingContinuation& k, LockedSet& locks,
    const Hash32* new_channel, const Datum* new_datum,
    const CommEvent* recorded) {
  using Result = std::optional<std::vector<Chosen>>;
  std::vector<Chosen> chosen;
  chosen.reserve(k.channels.size());
  bool new_taken = false;
  for (size_t i = 0; i < k.channels.size(); ++i) {
    const Hash32& ch = k.channels[i]->hash();
    Entry* entry = locks.Find(ch);
    if (entry == nullptr) {
      return absl::InternalError("channel " + Hex(ch) + " is not locked");
    }
    entry->mu.AssertHeld();
    const Term& pattern = *k.patterns[i];
    const Hash32* want =
        recorded != nullptr ? &recorded->binds[i].produce : nullptr;
    bool found = false;
    auto try_one = [&](const Datum& d, int index) -> absl::StatusOr<bool> {
      if (want != nullptr &&
          (d.source != *want || d.persist != recorded->binds[i].persist)) {
        return false;
      }
      ASSIGN_OR_RETURN(std::optional<MatchResult> m,
                       ctx.matcher->Match(pattern, d.value));
      if (!m.has_value()) {
        if (want != nullptr) {
          return ctx.log->Diverge(
              {Divergence::Kind::kCommRejected, recorded->hash,
               "COMM of produce " + Hex(*want) + " with consume " +
                   Hex(recorded->consume),
               "pattern rejected the datum on channel " + Hex(ch)});
        }
        return false;
      }
      chosen.push_back(Chosen{entry, index, *std::move(m)});
      return true;
    };
    if (new_datum != nullptr && !new_taken && *new_channel == ch) {
      ASSIGN_OR_RETURN(found, try_one(*new_datum, -1));
      if (found && !new_datum->persist) new_taken = true;
    }
    if (!found) {
      const auto& data = entry->state.data;
      auto [first, last] = want != nullptr
                               ? SourceRange(data, *want)
                               : std::pair<size_t, size_t>(0, data.size());
      for (size_t j = first; j < last && !found; ++j) {
        bool taken = false;
        for (const Chosen& c : chosen) {
          if (c.entry == entry && c.index == static_cast<int>(j) &&
              !data[j].persist) {
            taken = true;
            break;
          }
        }
        if (taken) continue;
        ASSIGN_OR_RETURN(found, try_one(data[j], static_cast<int>(j)));
      }
    }
    if (!found) return Result();
  }
  if (new_datum != nullptr) {
    // A produce fires only a COMM that takes its own datum, so every COMM
    // names the operation that triggered it and replay can find it by that
    // operation's hash.
    bool uses_new = false;
    for (const Chosen& c : chosen) uses_new = uses_new || c.index < 0;
    if (!uses_new) return Result();
  }
  return Result(std::move(chosen));
}

Comm Space::Fire(const OpContext& ctx, const WaitingContinuation& k,
                 bool installed, Entry* owner, LockedSet& locks,
                 std::vector<Chosen>& chosen, const Datum* new_datum,
                 const Hash32& comm_hash) {
  Comm comm;
  comm.continuation = k.continuation;
  comm.continuation_persist = k.persist;
  comm.peek = k.peek;
  comm.installed = installed;
  comm.consume = k.source;
  comm.comm_hash = comm_hash;
  comm.binds.reserve(chosen.size());
  for (size_t i = 0; i < chosen.size(); ++i) {
    const Chosen& c = chosen[i];
    c.entry->mu.AssertHeld();
    const Datum& d = c.index < 0 ? *new_datum : c.entry->state.data[c.index];
    BindResult b;
    b.channel = k.channels[i];
    b.pattern = k.patterns[i];
    b.matched = c.matched;
    b.datum = d.value;
    b.datum_persist = d.persist;
    b.removed = !d.persist && !k.peek;
    b.produce = d.source;
    comm.binds.push_back(std::move(b));
  }
  // Remove consumed stored data, per entry in descending index order so an
  // earlier removal never shifts a later one.
  if (!k.peek) {
    std::vector<std::pair<Entry*, int>> removals;
    for (const Chosen& c : chosen) {
      c.entry->mu.AssertHeld();
      if (c.index >= 0 && !c.entry->state.data[c.index].persist) {
        removals.emplace_back(c.entry, c.index);
      }
    }
    std::sort(removals.begin(), removals.end(),
              [](const auto& a, const auto& b) {
                if (a.first != b.first) return a.first < b.first;
                return a.second > b.second;
              });
    removals.erase(std::unique(removals.begin(), removals.end()),
                   removals.end());
    for (const auto& [entry, index] : removals) {
      entry->mu.AssertHeld();
      Record(ctx, *entry, DeployScope::Record::Kind::kRemoveDatum,
             entry->state.data[index]);
      entry->state.data.erase(entry->state.data.begin() + index);
    }
  }
  // A peeked new datum is not stored here: Produce goes on matching it
  // against the other waiting continuations and stores it after them.
  if (!installed && !k.persist && owner != nullptr) {
    owner->mu.AssertHeld();
    auto& conts = owner->state.continuations;
    for (size_t i = 0; i < conts.size(); ++i) {
      if (conts[i].source == k.source) {
        Record(ctx, *owner, DeployScope::Record::Kind::kRemoveContinuation,
               conts[i]);
        JoinGroup group = conts[i].group;
        conts.erase(conts.begin() + i);
        bool still_waiting = false;
        for (const auto& other : conts) {
          still_waiting = still_waiting || SameGroup(other.group, group);
        }
        if (!still_waiting) {
          for (size_t j = 0; j < group.size(); ++j) {
            if (j > 0 && group[j] == group[j - 1]) continue;
            Entry* e = locks.Find(group[j]);
            e->mu.AssertHeld();
            auto& joins = e->state.joins;
            auto it = std::find(joins.begin(), joins.end(), group);
            if (it != joins.end()) {
              Record(ctx, *e, DeployScope::Record::Kind::kRemoveJoin, group);
              joins.erase(it);
            }
          }
        }
        break;
      }
    }
  }
  CommEvent ev;
  ev.hash = comm_hash;
  ev.consume = k.source;
  ev.consume_persist = k.persist;
  ev.peek = k.peek;
  for (const auto& b : comm.binds) {
    ev.binds.push_back(CommBind{b.channel->hash(), b.produce, b.datum_persist});
  }
  ctx.log->RecordComm(std::move(ev));
  return comm;
}

absl::StatusOr<std::unique_ptr<Space::LockedSet>> Space::LockWithJoins(
    Entry* e) {
  std::vector<Entry*> want = {e};
  std::unique_ptr<LockedSet> locks;
  while (true) {
    locks = std::make_unique<LockedSet>(want);
    for (Entry* x : locks->entries()) RETURN_IF_ERROR(EnsureLoaded(*x));
    std::vector<Hash32> missing;
    auto scan = [&](const std::vector<JoinGroup>& groups) {
      for (const auto& g : groups) {
        for (const auto& h : g) {
          if (locks->Find(h) == nullptr) missing.push_back(h);
        }
      }
    };
    e->mu.AssertHeld();
    scan(e->installed_joins);
    scan(e->state.joins);
    if (missing.empty()) return locks;
    want = locks->entries();
    locks.reset();
    for (const auto& h : missing) want.push_back(GetEntry(h));
  }
}

absl::StatusOr<std::optional<Comm>> Space::FireFirstWaiting(
    const OpContext& ctx, const std::vector<JoinGroup>& groups, bool installed,
    const Hash32& ch, LockedSet& locks, const Datum& datum) {
  for (const auto& g : groups) {
    Entry* owner = locks.Find(g.front());
    owner->mu.AssertHeld();
    const auto& conts =
        installed ? owner->installed : owner->state.continuations;
    for (size_t i = 0; i < conts.size(); ++i) {
      if (!SameGroup(conts[i].group, g)) continue;
      ASSIGN_OR_RETURN(auto chosen,
                       TryMatch(ctx, conts[i], locks, &ch, &datum, nullptr));
      if (!chosen.has_value()) continue;
      WaitingContinuation k = conts[i];
      Hash32 h = CommHashOf(k, *chosen, &datum);
      return std::optional<Comm>(
          Fire(ctx, k, installed, owner, locks, *chosen, &datum, h));
    }
  }
  return std::optional<Comm>();
}

absl::StatusOr<bool> Space::FireWaiting(const OpContext& ctx, Entry* e,
                                        LockedSet& locks, const Datum& datum,
                                        std::vector<Comm>* comms) {
  e->mu.AssertHeld();
  while (true) {
    ASSIGN_OR_RETURN(
        std::optional<Comm> c,
        FireFirstWaiting(ctx, e->installed_joins, true, e->hash, locks, datum));
    if (!c.has_value()) {
      std::vector<JoinGroup> joins = e->state.joins;
      ASSIGN_OR_RETURN(
          c, FireFirstWaiting(ctx, joins, false, e->hash, locks, datum));
    }
    if (!c.has_value()) return false;
    const AfterComm after = AfterProduceComm(*c, datum.persist);
    comms->push_back(*std::move(c));
    if (after == AfterComm::kDone) return true;
    if (after == AfterComm::kStore) return false;
  }
}

absl::StatusOr<bool> Space::FireRecorded(const OpContext& ctx, const Hash32& ch,
                                         LockedSet& locks, const Datum& datum,
                                         std::vector<Comm>* comms) {
  // Play fires the peeks of this datum before the one COMM that may take
  // it; replay follows that order.
  std::vector<const CommEvent*> recs =
      ctx.log->RecordedCommsForProduce(datum.source);
  std::stable_partition(recs.begin(), recs.end(),
                        [](const CommEvent* r) { return r->peek; });
  for (const CommEvent* rec : recs) {
    Entry* owner = nullptr;
    bool inst = false;
    const WaitingContinuation* k =
        RecordedContinuation(*rec, locks, &owner, &inst);
    if (k == nullptr || k->channels.size() != rec->binds.size()) continue;
    ASSIGN_OR_RETURN(auto chosen, TryMatch(ctx, *k, locks, &ch, &datum, rec));
    if (!chosen.has_value()) continue;
    WaitingContinuation kc = *k;
    Hash32 h = CommHashOf(kc, *chosen, &datum);
    if (h != rec->hash) {
      return ctx.log->Diverge({Divergence::Kind::kUnexpectedComm, h,
                               "COMM " + Hex(rec->hash), "fired this one"});
    }
    RETURN_IF_ERROR(ctx.log->UseComm(*rec));
    comms->push_back(Fire(ctx, kc, inst, owner, locks, *chosen, &datum, h));
    const AfterComm after = AfterProduceComm(comms->back(), datum.persist);
    if (after == AfterComm::kDone) return true;
    if (after == AfterComm::kStore) return false;
  }
  return false;
}

absl::StatusOr<std::vector<Comm>> Space::Produce(const OpContext& ctx,
                                                 const TermPtr& channel,
                                                 const TermPtr& data,
                                                 bool persist) {
  if (ctx.log == nullptr || ctx.matcher == nullptr || channel == nullptr ||
      data == nullptr) {
    return absl::InvalidArgumentError("produce: missing argument");
  }
  const Hash32& ch = channel->hash();
  Entry* e = GetEntry(ch);
  ASSIGN_OR_RETURN(std::unique_ptr<LockedSet> locks, LockWithJoins(e));
  TouchAll(ctx, *locks);
  e->mu.AssertHeld();

  ASSIGN_OR_RETURN(ProduceEvent pe,
                   ctx.log->RecordProduce(ch, data->hash(), persist));
  Datum datum{data, persist, pe.hash};
  std::vector<Comm> comms;
  bool taken = false;
  if (!ctx.log->replay()) {
    ASSIGN_OR_RETURN(taken, FireWaiting(ctx, e, *locks, datum, &comms));
  } else {
    ASSIGN_OR_RETURN(taken, FireRecorded(ctx, ch, *locks, datum, &comms));
  }
  if (taken) return InRunOrder(std::move(comms));
  e->mu.AssertHeld();
  Record(ctx, *e, DeployScope::Record::Kind::kAddDatum, datum);
  InsertDatum(e->state.data, std::move(datum));
  return InRunOrder(std::move(comms));
}

absl::StatusOr<std::optional<Comm>> Space::Consume(
    const OpContext& ctx, const std::vector<TermPtr>& channels,
    const std::vector<TermPtr>& patterns, const TermPtr& continuation,
    bool persist, bool peek) {
  if (ctx.log == nullptr || ctx.matcher == nullptr || continuation == nullptr) {
    return absl::InvalidArgumentError("consume: missing argument");
  }
  ASSIGN_OR_RETURN(BindHashes binds, CheckBinds("consume", channels, patterns));
  std::vector<Entry*> entries;
  for (const Hash32& h : binds.channels) entries.push_back(GetEntry(h));
  LockedSet locks(std::move(entries));
  for (Entry* x : locks.entries()) RETURN_IF_ERROR(EnsureLoaded(*x));
  TouchAll(ctx, locks);

  ASSIGN_OR_RETURN(ConsumeEvent ce,
                   ctx.log->RecordConsume(std::move(binds.channels),
                                          std::move(binds.patterns),
                                          continuation->hash(), persist, peek));
  WaitingContinuation k;
  k.channels = channels;
  k.patterns = patterns;
  k.continuation = continuation;
  k.persist = persist;
  k.peek = peek;
  k.source = ce.hash;
  k.group = MakeJoinGroup(channels);

  if (!ctx.log->replay()) {
    ASSIGN_OR_RETURN(auto chosen,
                     TryMatch(ctx, k, locks, nullptr, nullptr, nullptr));
    if (chosen.has_value()) {
      Hash32 h = CommHashOf(k, *chosen, nullptr);
      return std::optional<Comm>(
          Fire(ctx, k, false, nullptr, locks, *chosen, nullptr, h));
    }
  } else {
    for (const CommEvent* rec : ctx.log->RecordedCommsForConsume(ce.hash)) {
      if (rec->binds.size() != channels.size()) continue;
      ASSIGN_OR_RETURN(auto chosen,
                       TryMatch(ctx, k, locks, nullptr, nullptr, rec));
      if (!chosen.has_value()) continue;
      Hash32 h = CommHashOf(k, *chosen, nullptr);
      if (h != rec->hash) {
        return ctx.log->Diverge({Divergence::Kind::kUnexpectedComm, h,
                                 "COMM " + Hex(rec->hash), "fired this one"});
      }
      RETURN_IF_ERROR(ctx.log->UseComm(*rec));
      return std::optional<Comm>(
          Fire(ctx, k, false, nullptr, locks, *chosen, nullptr, h));
    }
  }
  Entry* owner = locks.Find(k.group.front());
  for (size_t j = 0; j < k.group.size(); ++j) {
    if (j > 0 && k.group[j] == k.group[j - 1]) continue;
    Entry* x = locks.Find(k.group[j]);
    x->mu.AssertHeld();
    if (AddJoin(x->state.joins, k.group)) {
      Record(ctx, *x, DeployScope::Record::Kind::kAddJoin, k.group);
    }
  }
  owner->mu.AssertHeld();
  Record(ctx, *owner, DeployScope::Record::Kind::kAddContinuation, k);
  InsertContinuation(owner->state.continuations, std::move(k));
  return std::optional<Comm>();
}

}  // namespace rnode::rspace

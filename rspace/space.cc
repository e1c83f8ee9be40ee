// Space: overlay entries, channel locking, matching, COMMs, checkpoints.
#include "rspace/space.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "crypto/hash.h"
#include "rspace/channel_codec.h"
#include "util/status_macros.h"

namespace rnode::rspace {

JoinGroup MakeJoinGroup(const std::vector<TermPtr>& channels) {
  JoinGroup g;
  g.reserve(channels.size());
  for (const auto& c : channels) g.push_back(c->hash());
  std::sort(g.begin(), g.end());
  return g;
}

// One channel's state in the overlay; entries live until the overlay is
// dropped. Its fields are guarded by `mu`, which an operation holds through
// a LockedSet (entry locks are a dynamic set: code that reaches an entry
// through the set states that its lock is held with mu.AssertHeld(), which
// the clang analysis takes as given) and the quiescent calls take one at a
// time.
struct Space::Entry {
  explicit Entry(const Hash32& h) : hash(h) {}
  Entry(const Hash32& h, std::vector<WaitingContinuation> k,
        std::vector<JoinGroup> joins)
      : hash(h), installed(std::move(k)), installed_joins(std::move(joins)) {}
  const Hash32 hash;
  Mutex mu;
  bool loaded ABSL_GUARDED_BY(mu) = false;
  // Blob hash in history when loaded.
  std::optional<Hash32> base_leaf ABSL_GUARDED_BY(mu);
  ChannelState state ABSL_GUARDED_BY(mu);
  bool dirty ABSL_GUARDED_BY(mu) = false;
  std::vector<WaitingContinuation> installed
      ABSL_GUARDED_BY(mu);  // group[0] == hash
  std::vector<JoinGroup> installed_joins ABSL_GUARDED_BY(mu);
};

struct Space::Shard {
  Mutex mu;
  absl::flat_hash_map<Hash32, std::unique_ptr<Entry>, Hash32Hasher> map
      ABSL_GUARDED_BY(mu);
};

// Locks a set of entries in ascending channel-hash order (the only order in
// which entry locks are ever taken), unlocking in reverse on destruction.
class Space::LockedSet {
 public:
  explicit LockedSet(std::vector<Entry*> entries)
      : entries_(std::move(entries)) {
    std::sort(entries_.begin(), entries_.end(),
              [](const Entry* a, const Entry* b) { return a->hash < b->hash; });
    entries_.erase(std::unique(entries_.begin(), entries_.end()),
                   entries_.end());
    for (Entry* e : entries_) e->mu.Lock();
  }
  ~LockedSet() {
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
      (*it)->mu.Unlock();
    }
  }
  LockedSet(const LockedSet&) = delete;
  LockedSet& operator=(const LockedSet&) = delete;

  Entry* Find(const Hash32& h) const {
    auto it = std::lower_bound(
        entries_.begin(), entries_.end(), h,
        [](const Entry* e, const Hash32& k) { return e->hash < k; });
    return it != entries_.end() && (*it)->hash == h ? *it : nullptr;
  }
  const std::vector<Entry*>& entries() const { return entries_; }

 private:
  std::vector<Entry*> entries_;
};

// The datum chosen for one bind: index into the entry's data, or -1 for the
// datum being produced.
struct Space::Chosen {
  Entry* entry;
  int index;
  MatchResult matched;
};

namespace {

std::string Hex(const Hash32& h) { return HexEncode(h); }

bool SameGroup(const JoinGroup& a, const JoinGroup& b) { return a == b; }

// Joins are kept sorted and unique. Returns whether `g` was inserted.
bool AddJoin(std::vector<JoinGroup>& joins, const JoinGroup& g) {
  auto it = std::lower_bound(joins.begin(), joins.end(), g);
  if (it != joins.end() && *it == g) return false;
  joins.insert(it, g);
  return true;
}

// Data and continuations are kept in ascending order of their source event
// hash (equal hashes in insertion order): the candidate order, and the order
// in the stored blob, so neither depends on thread scheduling or on whether
// the channel was reloaded from history.
void InsertDatum(std::vector<Datum>& data, Datum d) {
  auto it = std::upper_bound(
      data.begin(), data.end(), d.source,
      [](const Hash32& s, const Datum& x) { return s < x.source; });
  data.insert(it, std::move(d));
}

// The channel and pattern hashes of a consume's or install's binds.
struct BindHashes {
  std::vector<Hash32> channels;
  std::vector<Hash32> patterns;
};

// Checks the binds of `op` ("consume", "install"): one pattern per channel,
// 1..kMaxJoinArity binds, no null term. InvalidArgument / ResourceExhausted
// naming the operation otherwise.
absl::StatusOr<BindHashes> CheckBinds(const char* op,
                                      const std::vector<TermPtr>& channels,
                                      const std::vector<TermPtr>& patterns) {
  if (channels.empty() || channels.size() != patterns.size()) {
    return absl::InvalidArgumentError(
        std::string(op) +
        ": needs one pattern per channel and at least one channel (" +
        std::to_string(channels.size()) + " channels, " +
        std::to_string(patterns.size()) + " patterns)");
  }
  if (channels.size() > kMaxJoinArity) {
    return absl::ResourceExhaustedError(std::string(op) + ": more than " +
                                        std::to_string(kMaxJoinArity) +
                                        " binds");
  }
  BindHashes h;
  for (size_t i = 0; i < channels.size(); ++i) {
    if (channels[i] == nullptr || patterns[i] == nullptr) {
      return absl::InvalidArgumentError(std::string(op) +
                                        ": null channel or pattern");
    }
    h.channels.push_back(channels[i]->hash());
    h.patterns.push_back(patterns[i]->hash());
  }
  return h;
}

// The index range of `items` (kept sorted by source, above) whose source is
// `source`: how replay finds a recorded datum or continuation in O(log n).
template <typename T>
std::pair<size_t, size_t> SourceRange(const std::vector<T>& items,
                                      const Hash32& source) {
  auto lo = std::lower_bound(
      items.begin(), items.end(), source,
      [](const T& x, const Hash32& s) { return x.source < s; });
  auto hi = std::upper_bound(
      lo, items.end(), source,
      [](const Hash32& s, const T& x) { return s < x.source; });
  return {static_cast<size_t>(lo - items.begin()),
          static_cast<size_t>(hi - items.begin())};
}

void InsertContinuation(std::vector<WaitingContinuation>& ks,
                        WaitingContinuation k) {
  auto it = std::upper_bound(ks.begin(), ks.end(), k.source,
                             [](const Hash32& s, const WaitingContinuation& x) {
                               return s < x.source;
                             });
  ks.insert(it, std::move(k));
}

}  // namespace

Space::Space(std::unique_ptr<History> history, SpaceOptions options)
    : history_(std::move(history)),
      options_(std::move(options)),
      root_(history_->last_root()),
      shards_(new Shard[kOverlayShards]) {
  SetRoot(root_);
  auto empty = std::make_unique<const InstallTable>();
  installs_.store(empty.get(), std::memory_order_release);
  MutexLock lock(&install_mu_);
  install_versions_.push_back(std::move(empty));
  if (!options_.term_factory) {
    options_.term_factory = [](Bytes b) -> absl::StatusOr<TermPtr> {
      return Term::Make(std::move(b));
    };
  }
}

Space::~Space() = default;

absl::StatusOr<std::unique_ptr<Space>> Space::Open(KeyValueStore* store,
                                                   SpaceOptions options) {
  ASSIGN_OR_RETURN(std::unique_ptr<History> history,
                   History::Open(store, options.history));
  return std::unique_ptr<Space>(
      new Space(std::move(history), std::move(options)));
}

Space::Shard& Space::ShardFor(const Hash32& channel) {
  return shards_[channel[2] % kOverlayShards];
}

Space::Entry* Space::GetEntry(const Hash32& channel) {
  Shard& s = ShardFor(channel);
  MutexLock lock(&s.mu);
  auto& slot = s.map[channel];
  if (slot == nullptr) {
    const InstallTable* installs = installs_.load(std::memory_order_acquire);
    auto it = installs->find(channel);
    slot = it == installs->end()
               ? std::make_unique<Entry>(channel)
               : std::make_unique<Entry>(channel, it->second.continuations,
                                         it->second.joins);
  }
  return slot.get();
}

absl::Status Space::EnsureLoaded(Entry& e) {
  e.mu.AssertHeld();
  if (e.loaded) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::optional<TrieLeaf> leaf,
                   root_node_ != nullptr
                       ? history_->trie().GetLeaf(*root_node_, e.hash)
                       : history_->trie().GetLeaf(root_, e.hash));
  if (leaf.has_value()) {
    if (leaf->blob != nullptr) {
      ASSIGN_OR_RETURN(e.state,
                       DecodeChannelState(*leaf->blob, options_.term_factory));
    } else {
      ASSIGN_OR_RETURN(Bytes blob, history_->LeafBlob(e.hash, *leaf));
      ASSIGN_OR_RETURN(e.state,
                       DecodeChannelState(blob, options_.term_factory));
    }
    e.base_leaf = leaf->hash;
  }
  e.loaded = true;
  return absl::OkStatus();
}

template <typename Item>
void Space::Record(const OpContext& ctx, Entry& e,
                   DeployScope::Record::Kind kind, const Item& item) {
  e.mu.AssertHeld();
  e.dirty = true;
  if (ctx.scope == nullptr) return;
  ctx.scope->Append(DeployScope::Record{kind, e.hash, item});
}

void Space::TouchAll(const OpContext& ctx, const LockedSet& locks) {
  if (ctx.scope == nullptr) return;
  for (const Entry* e : locks.entries()) ctx.scope->Touch(e->hash);
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

Hash32 CommHashOf(
    const WaitingContinuation& k, const std::vector<Space::Chosen>& chosen,
    const std::function<const Datum&(const Space::Chosen&)>& get) {
  std::vector<CommBind> binds;
  binds.reserve(chosen.size());
  for (size_t i = 0; i < chosen.size(); ++i) {
    const Datum& d = get(chosen[i]);
    binds.push_back(CommBind{k.channels[i]->hash(), d.source, d.persist});
  }
  return HashComm(k.source, k.persist, k.peek, binds);
}

}  // namespace

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
  std::vector<Entry*> want = {e};
  std::unique_ptr<LockedSet> locks;
  // Lock the channel, read its joins, and widen to every channel of every
  // join (in sorted order) until the set covers them; joins on `ch` only
  // grow under ch's own lock, so this settles.
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
    if (missing.empty()) break;
    want = locks->entries();
    locks.reset();
    for (const auto& h : missing) want.push_back(GetEntry(h));
  }
  TouchAll(ctx, *locks);
  e->mu.AssertHeld();

  ASSIGN_OR_RETURN(ProduceEvent pe,
                   ctx.log->RecordProduce(ch, data->hash(), persist));
  Datum datum{data, persist, pe.hash};

  auto get = [&](const Chosen& c) -> const Datum& {
    c.entry->mu.AssertHeld();
    return c.index < 0 ? datum : c.entry->state.data[c.index];
  };
  std::vector<Comm> comms;

  if (!ctx.log->replay()) {
    auto try_groups = [&](const std::vector<JoinGroup>& groups,
                          bool inst) -> absl::StatusOr<std::optional<Comm>> {
      for (const auto& g : groups) {
        Entry* owner = locks->Find(g.front());
        owner->mu.AssertHeld();
        const auto& conts =
            inst ? owner->installed : owner->state.continuations;
        for (size_t i = 0; i < conts.size(); ++i) {
          if (!SameGroup(conts[i].group, g)) continue;
          ASSIGN_OR_RETURN(auto chosen, TryMatch(ctx, conts[i], *locks, &ch,
                                                 &datum, nullptr));
          if (!chosen.has_value()) continue;
          WaitingContinuation k = conts[i];
          Hash32 h = CommHashOf(k, *chosen, get);
          return std::optional<Comm>(
              Fire(ctx, k, inst, owner, *locks, *chosen, &datum, h));
        }
      }
      return std::optional<Comm>();
    };
    while (true) {
      ASSIGN_OR_RETURN(std::optional<Comm> c,
                       try_groups(e->installed_joins, true));
      if (!c.has_value()) {
        std::vector<JoinGroup> joins = e->state.joins;
        ASSIGN_OR_RETURN(c, try_groups(joins, false));
      }
      if (!c.has_value()) break;
      const AfterComm after = AfterProduceComm(*c, persist);
      comms.push_back(*std::move(c));
      if (after == AfterComm::kDone) return InRunOrder(std::move(comms));
      if (after == AfterComm::kStore) break;
    }
  } else {
    // Play fires the peeks of this datum before the one COMM that may take
    // it; replay follows that order.
    std::vector<const CommEvent*> recs =
        ctx.log->RecordedCommsForProduce(pe.hash);
    std::stable_partition(recs.begin(), recs.end(),
                          [](const CommEvent* r) { return r->peek; });
    for (const CommEvent* rec : recs) {
      JoinGroup g;
      for (const auto& b : rec->binds) g.push_back(b.channel);
      std::sort(g.begin(), g.end());
      Entry* owner = locks->Find(g.front());
      if (owner == nullptr) continue;
      owner->mu.AssertHeld();
      bool all_locked = true;
      for (const auto& h : g)
        all_locked = all_locked && locks->Find(h) != nullptr;
      if (!all_locked) continue;
      const WaitingContinuation* k = nullptr;
      bool inst = false;
      for (const auto& x : owner->installed) {
        if (x.source == rec->consume) {
          k = &x;
          inst = true;
          break;
        }
      }
      if (k == nullptr) {
        const auto& ks = owner->state.continuations;
        auto [first, last] = SourceRange(ks, rec->consume);
        if (first < last) k = &ks[first];
      }
      if (k == nullptr || k->channels.size() != rec->binds.size()) continue;
      ASSIGN_OR_RETURN(auto chosen,
                       TryMatch(ctx, *k, *locks, &ch, &datum, rec));
      if (!chosen.has_value()) continue;
      WaitingContinuation kc = *k;
      Hash32 h = CommHashOf(kc, *chosen, get);
      if (h != rec->hash) {
        return ctx.log->Diverge({Divergence::Kind::kUnexpectedComm, h,
                                 "COMM " + Hex(rec->hash), "fired this one"});
      }
      RETURN_IF_ERROR(ctx.log->UseComm(*rec));
      comms.push_back(Fire(ctx, kc, inst, owner, *locks, *chosen, &datum, h));
      const AfterComm after = AfterProduceComm(comms.back(), persist);
      if (after == AfterComm::kDone) return InRunOrder(std::move(comms));
      if (after == AfterComm::kStore) break;
    }
  }
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

  auto get = [](const Chosen& c) -> const Datum& {
    c.entry->mu.AssertHeld();
    return c.entry->state.data[c.index];
  };
  if (!ctx.log->replay()) {
    ASSIGN_OR_RETURN(auto chosen,
                     TryMatch(ctx, k, locks, nullptr, nullptr, nullptr));
    if (chosen.has_value()) {
      Hash32 h = CommHashOf(k, *chosen, get);
      return std::optional<Comm>(
          Fire(ctx, k, false, nullptr, locks, *chosen, nullptr, h));
    }
  } else {
    for (const CommEvent* rec : ctx.log->RecordedCommsForConsume(ce.hash)) {
      if (rec->binds.size() != channels.size()) continue;
      ASSIGN_OR_RETURN(auto chosen,
                       TryMatch(ctx, k, locks, nullptr, nullptr, rec));
      if (!chosen.has_value()) continue;
      Hash32 h = CommHashOf(k, *chosen, get);
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

std::vector<std::pair<Hash32, Hash32>> Space::InstalledSources() const {
  const InstallTable* installs = installs_.load(std::memory_order_acquire);
  std::vector<std::pair<Hash32, Hash32>> out;
  for (const auto& [channel, installed] : *installs) {
    for (const WaitingContinuation& k : installed.continuations) {
      out.emplace_back(channel, k.source);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::Status Space::Install(const Matcher& matcher,
                            const std::vector<TermPtr>& channels,
                            const std::vector<TermPtr>& patterns,
                            const TermPtr& continuation) {
  if (continuation == nullptr) {
    return absl::InvalidArgumentError("install: missing continuation");
  }
  ASSIGN_OR_RETURN(BindHashes binds, CheckBinds("install", channels, patterns));
  std::vector<Entry*> entries;
  for (const Hash32& h : binds.channels) entries.push_back(GetEntry(h));
  LockedSet locks(std::move(entries));
  for (Entry* x : locks.entries()) RETURN_IF_ERROR(EnsureLoaded(*x));
  WaitingContinuation k;
  k.channels = channels;
  k.patterns = patterns;
  k.continuation = continuation;
  k.persist = true;
  k.peek = false;
  k.source = HashConsume(HashConsumeBase(binds.channels, binds.patterns,
                                         continuation->hash(), true, false),
                         0);
  k.group = MakeJoinGroup(channels);
  EventLog scratch;
  OpContext ctx{&scratch, &matcher};
  ASSIGN_OR_RETURN(auto chosen,
                   TryMatch(ctx, k, locks, nullptr, nullptr, nullptr));
  if (chosen.has_value()) {
    return absl::FailedPreconditionError(
        "install: stored data already matches; installing can only be done "
        "at startup");
  }
  Entry* owner = locks.Find(k.group.front());
  MutexLock ilock(&install_mu_);
  auto next = std::make_unique<InstallTable>(
      *installs_.load(std::memory_order_acquire));
  for (size_t j = 0; j < k.group.size(); ++j) {
    if (j > 0 && k.group[j] == k.group[j - 1]) continue;
    Entry* x = locks.Find(k.group[j]);
    x->mu.AssertHeld();
    AddJoin(x->installed_joins, k.group);
    AddJoin((*next)[k.group[j]].joins, k.group);
  }
  owner->mu.AssertHeld();
  owner->installed.push_back(k);
  (*next)[k.group.front()].continuations.push_back(std::move(k));
  // An entry created before this store (under its shard lock) is updated
  // above under its entry lock; one created after sees the new table.
  installs_.store(next.get(), std::memory_order_release);
  install_versions_.push_back(std::move(next));
  return absl::OkStatus();
}

void Space::DropOverlay() {
  for (size_t i = 0; i < kOverlayShards; ++i) {
    Shard& s = shards_[i];
    MutexLock lock(&s.mu);
    s.map.clear();
  }
  {
    // Quiescent: no reader holds an older install table.
    MutexLock lock(&install_mu_);
    if (install_versions_.size() > 1) {
      install_versions_.erase(install_versions_.begin(),
                              install_versions_.end() - 1);
    }
  }
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

absl::StatusOr<Hash32> Space::CreateCheckpoint() {
  // Entry locks are never taken under a shard lock (an operation takes the
  // shard lock under its entry locks): collect, then look at each entry.
  std::vector<Entry*> dirty;
  for (size_t i = 0; i < kOverlayShards; ++i) {
    Shard& s = shards_[i];
    MutexLock lock(&s.mu);
    for (auto& [h, e] : s.map) dirty.push_back(e.get());
  }
  dirty.erase(std::remove_if(dirty.begin(), dirty.end(),
                             [](Entry* e) {
                               MutexLock lock(&e->mu);
                               return !e->dirty;
                             }),
              dirty.end());
  std::sort(dirty.begin(), dirty.end(),
            [](const Entry* a, const Entry* b) { return a->hash < b->hash; });
  std::vector<LeafUpdate> updates;
  updates.reserve(dirty.size());
  for (Entry* e : dirty) {
    MutexLock lock(&e->mu);
    if (e->state.empty()) {
      if (e->base_leaf.has_value())
        updates.push_back(LeafUpdate{e->hash, {}, {}});
      continue;
    }
    Bytes blob = EncodeChannelState(e->state);
    Hash32 h = crypto::Blake2b256(blob);
    if (e->base_leaf == h) continue;
    updates.push_back(LeafUpdate{e->hash, std::move(blob), h});
  }
  ASSIGN_OR_RETURN(Hash32 root, history_->Commit(root_, updates));
  DropOverlay();
  SetRoot(root);
  return root;
}

absl::Status Space::Reset(const Hash32& root) {
  ASSIGN_OR_RETURN(bool known, history_->HasRoot(root));
  if (!known) {
    return absl::NotFoundError("reset: root " + Hex(root) +
                               " is not in the roots table");
  }
  DropOverlay();
  SetRoot(root);
  return absl::OkStatus();
}

void Space::SetRoot(const Hash32& root) {
  root_ = root;
  absl::StatusOr<std::shared_ptr<const TrieNode>> node =
      history_->trie().Node(root);
  root_node_ = node.ok() ? *std::move(node) : nullptr;
}

absl::Status Space::Clear() { return Reset(kEmptyRoot); }

Hash32 Space::root() const { return root_; }

absl::StatusOr<std::vector<Datum>> Space::GetData(const Hash32& channel,
                                                  DeployScope* scope) {
  Entry* e = GetEntry(channel);
  MutexLock lock(&e->mu);
  RETURN_IF_ERROR(EnsureLoaded(*e));
  if (scope != nullptr) scope->Touch(channel);
  return e->state.data;
}

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

absl::StatusOr<std::vector<WaitingContinuation>> Space::GetContinuations(
    const std::vector<TermPtr>& channels) {
  if (channels.empty()) return absl::InvalidArgumentError("no channels");
  JoinGroup g = MakeJoinGroup(channels);
  Entry* e = GetEntry(g.front());
  MutexLock lock(&e->mu);
  RETURN_IF_ERROR(EnsureLoaded(*e));
  std::vector<WaitingContinuation> out;
  for (const auto& k : e->installed) {
    if (k.group == g) out.push_back(k);
  }
  for (const auto& k : e->state.continuations) {
    if (k.group == g) out.push_back(k);
  }
  return out;
}

absl::StatusOr<std::vector<JoinGroup>> Space::GetJoins(const Hash32& channel) {
  Entry* e = GetEntry(channel);
  MutexLock lock(&e->mu);
  RETURN_IF_ERROR(EnsureLoaded(*e));
  std::vector<JoinGroup> out = e->installed_joins;
  out.insert(out.end(), e->state.joins.begin(), e->state.joins.end());
  return out;
}

size_t Space::OverlaySize() const {
  size_t n = 0;
  for (size_t i = 0; i < kOverlayShards; ++i) {
    Shard& s = shards_[i];
    MutexLock lock(&s.mu);
    n += s.map.size();
  }
  return n;
}

}  // namespace rnode::rspace

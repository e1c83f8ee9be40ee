// Event hashing, the striped per-deploy event log and the replay rig.
#include "rspace/event_log.h"

#include <algorithm>
#include <utility>

#include "crypto/hash.h"

namespace rnode::rspace {

std::string_view DivergenceKindName(Divergence::Kind kind) {
  switch (kind) {
    case Divergence::Kind::kUnrecordedProduce:
      return "unrecorded produce";
    case Divergence::Kind::kUnrecordedConsume:
      return "unrecorded consume";
    case Divergence::Kind::kCommRejected:
      return "recorded COMM rejected";
    case Divergence::Kind::kUnexpectedComm:
      return "unexpected COMM";
    case Divergence::Kind::kCommOverused:
      return "COMM overused";
    case Divergence::Kind::kUnusedComm:
      return "unused COMM";
    case Divergence::Kind::kMalformedLog:
      return "malformed log";
  }
  return "unknown";
}

std::string Divergence::ToString() const {
  return std::string(DivergenceKindName(kind)) + " " + HexEncode(event) +
         ": recorded " + recorded + "; replay " + happened;
}

absl::Status EventLog::Diverge(Divergence d) {
  std::string text = "replay diverged: " + d.ToString();
  {
    MutexLock lock(&divergence_mu_);
    if (!divergence_.has_value()) divergence_ = std::move(d);
  }
  return absl::FailedPreconditionError(std::move(text));
}

std::optional<Divergence> EventLog::divergence() const {
  MutexLock lock(&divergence_mu_);
  return divergence_;
}

namespace {

enum : uint8_t {
  kTagProduce = 0x01,
  kTagConsumeBase = 0x02,
  kTagConsume = 0x03,
  kTagComm = 0x04,
};

void PutU32(crypto::Blake2b256Hasher& h, uint32_t v) {
  uint8_t b[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                  static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
  h.Update(ByteView(b, 4));
}

void PutByte(crypto::Blake2b256Hasher& h, uint8_t v) {
  h.Update(ByteView(&v, 1));
}

std::string Hex(const Hash32& h) { return HexEncode(h); }

}  // namespace

const Hash32& EventHash(const Event& e) {
  return std::visit([](const auto& ev) -> const Hash32& { return ev.hash; }, e);
}

Hash32 HashProduce(const Hash32& channel, const Hash32& data, bool persist,
                   uint32_t repeat) {
  uint8_t buf[1 + 32 + 32 + 1 + 4];
  buf[0] = kTagProduce;
  std::copy(channel.begin(), channel.end(), buf + 1);
  std::copy(data.begin(), data.end(), buf + 33);
  buf[65] = persist ? 1 : 0;
  buf[66] = static_cast<uint8_t>(repeat);
  buf[67] = static_cast<uint8_t>(repeat >> 8);
  buf[68] = static_cast<uint8_t>(repeat >> 16);
  buf[69] = static_cast<uint8_t>(repeat >> 24);
  return crypto::Blake2b256(ByteView(buf, sizeof(buf)));
}

Hash32 HashConsumeBase(std::span<const Hash32> channels,
                       std::span<const Hash32> patterns,
                       const Hash32& continuation, bool persist, bool peek) {
  crypto::Blake2b256Hasher h;
  PutByte(h, kTagConsumeBase);
  PutU32(h, static_cast<uint32_t>(channels.size()));
  for (size_t i = 0; i < channels.size(); ++i) {
    h.Update(channels[i]);
    h.Update(i < patterns.size() ? ByteView(patterns[i]) : ByteView());
  }
  h.Update(continuation);
  PutByte(h, persist ? 1 : 0);
  PutByte(h, peek ? 1 : 0);
  return h.Finish();
}

Hash32 HashConsume(const Hash32& base, uint32_t repeat) {
  crypto::Blake2b256Hasher h;
  PutByte(h, kTagConsume);
  h.Update(base);
  PutU32(h, repeat);
  return h.Finish();
}

Hash32 HashComm(const Hash32& consume, bool consume_persist, bool peek,
                std::span<const CommBind> binds) {
  crypto::Blake2b256Hasher h;
  PutByte(h, kTagComm);
  h.Update(consume);
  PutByte(h, consume_persist ? 1 : 0);
  PutByte(h, peek ? 1 : 0);
  PutU32(h, static_cast<uint32_t>(binds.size()));
  for (const auto& b : binds) {
    h.Update(b.channel);
    h.Update(b.produce);
    PutByte(h, b.persist ? 1 : 0);
  }
  return h.Finish();
}

absl::Status VerifyEventHash(const Event& event) {
  Hash32 expected{};
  const char* kind = "";
  if (const auto* p = std::get_if<ProduceEvent>(&event)) {
    expected = HashProduce(p->channel, p->data, p->persist, p->repeat);
    kind = "produce";
  } else if (const auto* c = std::get_if<ConsumeEvent>(&event)) {
    if (c->channels.size() != c->patterns.size() || c->channels.empty()) {
      return absl::InvalidArgumentError("consume " + Hex(c->hash) +
                                        " has mismatched binds");
    }
    expected =
        HashConsume(HashConsumeBase(c->channels, c->patterns, c->continuation,
                                    c->persist, c->peek),
                    c->repeat);
    kind = "consume";
  } else {
    const auto& m = std::get<CommEvent>(event);
    if (m.binds.empty()) {
      return absl::InvalidArgumentError("COMM " + Hex(m.hash) +
                                        " has no binds");
    }
    expected = HashComm(m.consume, m.consume_persist, m.peek, m.binds);
    kind = "COMM";
  }
  if (expected != EventHash(event)) {
    return absl::InvalidArgumentError(std::string(kind) + " " +
                                      Hex(EventHash(event)) +
                                      " does not match its fields");
  }
  return absl::OkStatus();
}

struct EventLog::Rig {
  std::vector<CommEvent> comms;
  std::unique_ptr<std::atomic<uint32_t>[]> remaining;
  absl::flat_hash_map<Hash32, std::vector<uint32_t>, Hash32Hasher> by_produce;
  absl::flat_hash_map<Hash32, std::vector<uint32_t>, Hash32Hasher> by_consume;
  absl::flat_hash_map<Hash32, uint32_t, Hash32Hasher> comm_index;
  absl::flat_hash_set<Hash32, Hash32Hasher> produces;
  absl::flat_hash_set<Hash32, Hash32Hasher> consumes;
};

EventLog::EventLog() = default;
EventLog::~EventLog() = default;

absl::StatusOr<std::unique_ptr<EventLog>> EventLog::ForReplay(
    std::span<const Event> recorded) {
  if (recorded.size() > kMaxEventsPerLog) {
    return absl::ResourceExhaustedError("replay log has too many events");
  }
  auto rig = std::make_unique<Rig>();
  for (const Event& e : recorded) {
    absl::Status s = VerifyEventHash(e);
    if (!s.ok()) return s;
    if (const auto* p = std::get_if<ProduceEvent>(&e)) {
      rig->produces.insert(p->hash);
    } else if (const auto* c = std::get_if<ConsumeEvent>(&e)) {
      rig->consumes.insert(c->hash);
    }
  }
  // Identical COMMs are counted, not duplicated, so a lookup stays O(1).
  for (const Event& e : recorded) {
    const auto* m = std::get_if<CommEvent>(&e);
    if (m == nullptr) continue;
    auto [it, inserted] = rig->comm_index.try_emplace(
        m->hash, static_cast<uint32_t>(rig->comms.size()));
    if (inserted) rig->comms.push_back(*m);
  }
  rig->remaining.reset(new std::atomic<uint32_t>[rig->comms.size()]);
  for (size_t i = 0; i < rig->comms.size(); ++i) rig->remaining[i] = 0;
  for (const Event& e : recorded) {
    const auto* m = std::get_if<CommEvent>(&e);
    if (m == nullptr) continue;
    rig->remaining[rig->comm_index[m->hash]].fetch_add(1);
  }
  for (uint32_t i = 0; i < rig->comms.size(); ++i) {
    const CommEvent& m = rig->comms[i];
    rig->by_consume[m.consume].push_back(i);
    for (size_t b = 0; b < m.binds.size(); ++b) {
      bool seen = false;
      for (size_t j = 0; j < b; ++j) {
        seen = seen || m.binds[j].produce == m.binds[b].produce;
      }
      if (!seen) rig->by_produce[m.binds[b].produce].push_back(i);
    }
  }
  auto log = std::make_unique<EventLog>();
  log->replay_ = std::move(rig);
  return log;
}

void EventLog::Append(const Hash32& stripe_key, Event e) {
  Stripe& s = StripeFor(stripe_key);
  MutexLock lock(&s.mu);
  s.events.push_back(std::move(e));
}

absl::StatusOr<ProduceEvent> EventLog::RecordProduce(const Hash32& channel,
                                                     const Hash32& data,
                                                     bool persist) {
  ProduceEvent p;
  p.channel = channel;
  p.data = data;
  p.persist = persist;
  Hash32 first = HashProduce(channel, data, persist, 0);
  Stripe& s = StripeFor(channel);
  {
    MutexLock lock(&s.mu);
    if (s.events.size() >= kMaxEventsPerLog / kEventLogStripes) {
      return absl::ResourceExhaustedError("event log stripe is full");
    }
    p.repeat = s.counters[first]++;
    p.hash =
        p.repeat == 0 ? first : HashProduce(channel, data, persist, p.repeat);
    if (replay_ != nullptr && !replay_->produces.contains(p.hash)) {
      --s.counters[first];
      return Diverge({Divergence::Kind::kUnrecordedProduce, p.hash,
                      "no such produce",
                      "produced on channel " + Hex(channel)});
    }
    s.events.push_back(p);
  }
  return p;
}

absl::StatusOr<ConsumeEvent> EventLog::RecordConsume(
    std::vector<Hash32> channels, std::vector<Hash32> patterns,
    const Hash32& continuation, bool persist, bool peek) {
  ConsumeEvent c;
  Hash32 base =
      HashConsumeBase(channels, patterns, continuation, persist, peek);
  c.channels = std::move(channels);
  c.patterns = std::move(patterns);
  c.continuation = continuation;
  c.persist = persist;
  c.peek = peek;
  Stripe& s = StripeFor(base);
  MutexLock lock(&s.mu);
  if (s.events.size() >= kMaxEventsPerLog / kEventLogStripes) {
    return absl::ResourceExhaustedError("event log stripe is full");
  }
  c.repeat = s.counters[base]++;
  c.hash = HashConsume(base, c.repeat);
  if (replay_ != nullptr && !replay_->consumes.contains(c.hash)) {
    --s.counters[base];
    return Diverge(
        {Divergence::Kind::kUnrecordedConsume, c.hash, "no such consume",
         "consumed on " + std::to_string(c.channels.size()) + " channel(s)"});
  }
  s.events.push_back(c);
  return c;
}

void EventLog::RecordComm(CommEvent comm) {
  Hash32 key = comm.hash;
  Append(key, std::move(comm));
}

std::vector<Event> EventLog::Take() {
  std::deque<Event> taken[kEventLogStripes];
  size_t total = 0;
  for (size_t i = 0; i < kEventLogStripes; ++i) {
    Stripe& s = stripes_[i];
    MutexLock lock(&s.mu);
    taken[i].swap(s.events);
    s.counters.clear();
    total += taken[i].size();
  }
  // Sort light keys, then move each event once.
  struct Key {
    Hash32 hash;
    size_t kind;
    Event* event;
  };
  std::vector<Key> keys;
  keys.reserve(total);
  for (auto& stripe : taken) {
    for (Event& e : stripe) keys.push_back(Key{EventHash(e), e.index(), &e});
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.hash != b.hash) return a.hash < b.hash;
    return a.kind < b.kind;
  });
  std::vector<Event> all;
  all.reserve(total);
  for (const Key& k : keys) all.push_back(std::move(*k.event));
  return all;
}

size_t EventLog::size() const {
  size_t n = 0;
  for (Stripe& s : stripes_) {
    MutexLock lock(&s.mu);
    n += s.events.size();
  }
  return n;
}

absl::Status EventLog::CheckReplayDone() {
  if (replay_ == nullptr) return absl::OkStatus();
  size_t unused = 0;
  const CommEvent* first = nullptr;
  for (size_t i = 0; i < replay_->comms.size(); ++i) {
    uint32_t left = replay_->remaining[i].load(std::memory_order_acquire);
    if (left == 0) continue;
    unused += left;
    if (first == nullptr || replay_->comms[i].hash < first->hash) {
      first = &replay_->comms[i];
    }
  }
  if (unused == 0) return absl::OkStatus();
  return Diverge(
      {Divergence::Kind::kUnusedComm, first->hash,
       "COMM of consume " + Hex(first->consume),
       "left " + std::to_string(unused) + " recorded COMM(s) unused"});
}

std::vector<const CommEvent*> EventLog::RecordedCommsForProduce(
    const Hash32& p) const {
  std::vector<const CommEvent*> out;
  if (replay_ == nullptr) return out;
  auto it = replay_->by_produce.find(p);
  if (it == replay_->by_produce.end()) return out;
  for (uint32_t i : it->second) {
    if (replay_->remaining[i].load(std::memory_order_acquire) > 0) {
      out.push_back(&replay_->comms[i]);
    }
  }
  return out;
}

std::vector<const CommEvent*> EventLog::RecordedCommsForConsume(
    const Hash32& c) const {
  std::vector<const CommEvent*> out;
  if (replay_ == nullptr) return out;
  auto it = replay_->by_consume.find(c);
  if (it == replay_->by_consume.end()) return out;
  for (uint32_t i : it->second) {
    if (replay_->remaining[i].load(std::memory_order_acquire) > 0) {
      out.push_back(&replay_->comms[i]);
    }
  }
  return out;
}

absl::Status EventLog::UseComm(const CommEvent& comm) {
  if (replay_ == nullptr) return absl::OkStatus();
  auto it = replay_->comm_index.find(comm.hash);
  if (it == replay_->comm_index.end()) {
    return Diverge({Divergence::Kind::kUnexpectedComm, comm.hash,
                    "no such COMM", "fired it"});
  }
  std::atomic<uint32_t>& left = replay_->remaining[it->second];
  uint32_t cur = left.load(std::memory_order_acquire);
  while (cur > 0 &&
         !left.compare_exchange_weak(cur, cur - 1, std::memory_order_acq_rel)) {
  }
  if (cur == 0) {
    return Diverge({Divergence::Kind::kCommOverused, comm.hash, "fewer firings",
                    "fired it once more"});
  }
  return absl::OkStatus();
}

}  // namespace rnode::rspace

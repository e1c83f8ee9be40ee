// libFuzzer target over event logs: their wire form in blocks
// (casper.EventProto, block::EventFromProto / EventToProto), the replay rig
// built from a recorded log (rspace::EventLog::ForReplay) and the merger's
// index of a log (rspace::BuildEventLogIndex). The first input byte picks
// how the rest is read:
//  - even: a casper.ProcessedSystemDeployProto whose deployLog is decoded
//    event by event, as a block's logs are;
//  - odd: operations (produce, consume, COMM) recorded on a play-mode
//    EventLog, whose canonical log (Take) is then checked and replayed.
// Asserted for every log that decodes (and every played log):
//  - each event's hash matches its fields; the log re-encodes to bytes that
//    decode to an equal log and encode to the same bytes;
//  - a replay rig accepts it; every recorded COMM is found from its consume
//    and from each of its produces and can be used exactly as often as it
//    was recorded, after which the replay is done with no divergence, and
//    one use more is a kCommOverused divergence;
//  - the index of the log is the Combine of the indexes of its two halves,
//    and Combine is commutative.
// For played logs, also: Take returns every event once, in canonical order
// (hash, then kind) and empties the log; replaying the same operations on
// the rig reproduces every event without divergence; a produce that was
// never recorded diverges as kUnrecordedProduce. Any broken property traps.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "CasperMessage.pb.h"
#include "casper/block/block_codec.h"
#include "rspace/event_log.h"
#include "rspace/state_change.h"
#include "util/bytes.h"

namespace {

using rnode::Hash32;
using rnode::rspace::CommBind;
using rnode::rspace::CommEvent;
using rnode::rspace::ConsumeEvent;
using rnode::rspace::Divergence;
using rnode::rspace::Event;
using rnode::rspace::EventLog;
using rnode::rspace::EventLogIndex;
using rnode::rspace::ProduceEvent;

// Bounds that keep one input to milliseconds: events decoded from the
// wire, operations played, and the pools operations pick hashes from
// (small, so that repeats and shared channels are common).
constexpr int kMaxWireEvents = 4096;
constexpr size_t kMaxOps = 64;
constexpr uint8_t kChannelPool = 8;
constexpr uint8_t kDataPool = 4;
constexpr uint8_t kPatternPool = 3;
constexpr size_t kMaxBinds = 3;

// The log in the wrapper a block carries system deploy logs in.
std::string EncodeLog(std::span<const Event> log) {
  ::casper::ProcessedSystemDeployProto p;
  p.mutable_systemdeploy()->mutable_closeblocksystemdeploy();
  for (const Event& e : log) {
    rnode::casper::block::EventToProto(e, p.add_deploylog());
  }
  return p.SerializeAsString();
}

// Decodes every event of `p`'s log; false when one is refused.
bool DecodeLog(const ::casper::ProcessedSystemDeployProto& p,
               std::vector<Event>* out) {
  out->clear();
  for (const auto& e : p.deploylog()) {
    auto event = rnode::casper::block::EventFromProto(e);
    if (!event.ok()) return false;
    out->push_back(*std::move(event));
  }
  return true;
}

bool SameIndex(const EventLogIndex& a, const EventLogIndex& b) {
  return a.produces_linear == b.produces_linear &&
         a.produces_persistent == b.produces_persistent &&
         a.produces_consumed == b.produces_consumed &&
         a.produces_peeked == b.produces_peeked &&
         a.consumes_linear == b.consumes_linear &&
         a.consumes_persistent == b.consumes_persistent &&
         a.consumes_peek == b.consumes_peek &&
         a.consumes_produced == b.consumes_produced &&
         a.produces_by_channel == b.produces_by_channel &&
         a.consumes_by_channel == b.consumes_by_channel && a.comms == b.comms;
}

bool Contains(const std::vector<const CommEvent*>& comms, const Hash32& h) {
  return std::any_of(comms.begin(), comms.end(),
                     [&](const CommEvent* c) { return c->hash == h; });
}

void CheckWireRoundTrip(std::span<const Event> log) {
  for (const Event& e : log) {
    if (!rnode::rspace::VerifyEventHash(e).ok()) __builtin_trap();
  }
  const std::string bytes = EncodeLog(log);
  ::casper::ProcessedSystemDeployProto p;
  if (!p.ParseFromString(bytes)) __builtin_trap();
  std::vector<Event> again;
  if (!DecodeLog(p, &again)) __builtin_trap();
  if (!std::equal(log.begin(), log.end(), again.begin(), again.end())) {
    __builtin_trap();
  }
  if (EncodeLog(again) != bytes) __builtin_trap();
}

// Uses every recorded COMM as often as recorded, then once more.
void CheckReplayRig(std::span<const Event> log) {
  auto rig = EventLog::ForReplay(log);
  if (!rig.ok()) __builtin_trap();
  const CommEvent* any_comm = nullptr;
  for (const Event& e : log) {
    const auto* m = std::get_if<CommEvent>(&e);
    if (m == nullptr) continue;
    any_comm = m;
    if (!Contains((*rig)->RecordedCommsForConsume(m->consume), m->hash)) {
      __builtin_trap();
    }
    for (const CommBind& b : m->binds) {
      if (!Contains((*rig)->RecordedCommsForProduce(b.produce), m->hash)) {
        __builtin_trap();
      }
    }
    if (!(*rig)->UseComm(*m).ok()) __builtin_trap();
  }
  if (!(*rig)->CheckReplayDone().ok() || (*rig)->divergence().has_value()) {
    __builtin_trap();
  }
  if (any_comm == nullptr) return;
  if ((*rig)->UseComm(*any_comm).ok()) __builtin_trap();
  const auto d = (*rig)->divergence();
  if (!d.has_value() || d->kind != Divergence::Kind::kCommOverused) {
    __builtin_trap();
  }
}

void CheckIndex(std::span<const Event> log) {
  const size_t half = log.size() / 2;
  const EventLogIndex whole = rnode::rspace::BuildEventLogIndex(log);
  const EventLogIndex a = rnode::rspace::BuildEventLogIndex(log.first(half));
  const EventLogIndex b = rnode::rspace::BuildEventLogIndex(log.subspan(half));
  const EventLogIndex ab = rnode::rspace::Combine(a, b);
  if (!SameIndex(whole, ab)) __builtin_trap();
  if (!SameIndex(ab, rnode::rspace::Combine(b, a))) __builtin_trap();
}

void CheckLog(std::span<const Event> log) {
  CheckWireRoundTrip(log);
  CheckReplayRig(log);
  CheckIndex(log);
}

void RunWire(const uint8_t* data, size_t size) {
  ::casper::ProcessedSystemDeployProto p;
  if (!p.ParseFromArray(data, static_cast<int>(size))) return;
  if (p.deploylog_size() > kMaxWireEvents) return;
  std::vector<Event> log;
  if (!DecodeLog(p, &log)) return;
  CheckLog(log);
}

// ---- Played logs ----

Hash32 PoolHash(uint8_t kind, uint8_t index) {
  Hash32 h{};
  h[0] = kind;
  h[1] = static_cast<uint8_t>(index * 37);  // Spreads over the log's stripes.
  h[31] = index;
  return h;
}

// One operation as played, with the event play recorded for it.
struct Op {
  enum class Kind : uint8_t { kProduce, kConsume, kComm };
  Kind kind = Kind::kProduce;
  Hash32 channel{};              // kProduce
  Hash32 data{};                 // kProduce
  std::vector<Hash32> channels;  // kConsume
  std::vector<Hash32> patterns;  // kConsume
  Hash32 continuation{};         // kConsume
  bool persist = false;          // kProduce, kConsume
  bool peek = false;             // kConsume
  Event recorded;
};

// Records one operation chosen by `in` on `log`; false when none could be.
bool PlayOne(FuzzedDataProvider& in, EventLog& log,
             const std::vector<ProduceEvent>& produces,
             const std::vector<ConsumeEvent>& consumes, Op* op) {
  switch (in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: {
      op->kind = Op::Kind::kProduce;
      op->channel = PoolHash(
          'c', in.ConsumeIntegralInRange<uint8_t>(0, kChannelPool - 1));
      op->data =
          PoolHash('d', in.ConsumeIntegralInRange<uint8_t>(0, kDataPool - 1));
      op->persist = in.ConsumeBool();
      auto p = log.RecordProduce(op->channel, op->data, op->persist);
      if (!p.ok()) __builtin_trap();
      op->recorded = *p;
      return true;
    }
    case 1: {
      op->kind = Op::Kind::kConsume;
      const size_t n = in.ConsumeIntegralInRange<size_t>(1, kMaxBinds);
      for (size_t i = 0; i < n; ++i) {
        op->channels.push_back(PoolHash(
            'c', in.ConsumeIntegralInRange<uint8_t>(0, kChannelPool - 1)));
        op->patterns.push_back(PoolHash(
            'q', in.ConsumeIntegralInRange<uint8_t>(0, kPatternPool - 1)));
      }
      op->continuation = PoolHash(
          'k', in.ConsumeIntegralInRange<uint8_t>(0, kPatternPool - 1));
      op->persist = in.ConsumeBool();
      op->peek = in.ConsumeBool();
      auto c = log.RecordConsume(op->channels, op->patterns, op->continuation,
                                 op->persist, op->peek);
      if (!c.ok()) __builtin_trap();
      op->recorded = *c;
      return true;
    }
    default: {
      if (consumes.empty() || produces.empty()) return false;
      const ConsumeEvent& c =
          consumes[in.ConsumeIntegralInRange<size_t>(0, consumes.size() - 1)];
      CommEvent m;
      m.consume = c.hash;
      m.consume_persist = c.persist;
      m.peek = c.peek;
      for (const Hash32& channel : c.channels) {
        const ProduceEvent& p =
            produces[in.ConsumeIntegralInRange<size_t>(0, produces.size() - 1)];
        m.binds.push_back(CommBind{channel, p.hash, p.persist});
      }
      m.hash = rnode::rspace::HashComm(m.consume, m.consume_persist, m.peek,
                                       m.binds);
      op->kind = Op::Kind::kComm;
      op->recorded = m;
      log.RecordComm(std::move(m));
      return true;
    }
  }
}

bool CanonicalOrder(const Event& a, const Event& b) {
  const Hash32& ha = rnode::rspace::EventHash(a);
  const Hash32& hb = rnode::rspace::EventHash(b);
  if (ha != hb) return ha < hb;
  return a.index() < b.index();
}

// Plays `ops` again on a rig of `log`: each event must be the one recorded.
void Replay(std::span<const Event> log, const std::vector<Op>& ops) {
  auto rig = EventLog::ForReplay(log);
  if (!rig.ok()) __builtin_trap();
  EventLog& r = **rig;
  for (const Op& op : ops) {
    switch (op.kind) {
      case Op::Kind::kProduce: {
        auto p = r.RecordProduce(op.channel, op.data, op.persist);
        if (!p.ok() || !(Event(*p) == op.recorded)) __builtin_trap();
        break;
      }
      case Op::Kind::kConsume: {
        auto c = r.RecordConsume(op.channels, op.patterns, op.continuation,
                                 op.persist, op.peek);
        if (!c.ok() || !(Event(*c) == op.recorded)) __builtin_trap();
        break;
      }
      case Op::Kind::kComm: {
        const auto& m = std::get<CommEvent>(op.recorded);
        if (!Contains(r.RecordedCommsForConsume(m.consume), m.hash)) {
          __builtin_trap();
        }
        if (!r.UseComm(m).ok()) __builtin_trap();
        break;
      }
    }
  }
  if (!r.CheckReplayDone().ok() || r.divergence().has_value()) {
    __builtin_trap();
  }
  // A datum no operation produced cannot be in the log.
  auto fresh = EventLog::ForReplay(log);
  if (!fresh.ok()) __builtin_trap();
  if ((*fresh)->RecordProduce(PoolHash('c', 0), PoolHash('x', 0), false).ok()) {
    __builtin_trap();
  }
  const auto d = (*fresh)->divergence();
  if (!d.has_value() || d->kind != Divergence::Kind::kUnrecordedProduce) {
    __builtin_trap();
  }
}

void RunPlayed(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  EventLog play;
  std::vector<Op> ops;
  std::vector<ProduceEvent> produces;
  std::vector<ConsumeEvent> consumes;
  while (in.remaining_bytes() > 0 && ops.size() < kMaxOps) {
    Op op;
    if (!PlayOne(in, play, produces, consumes, &op)) continue;
    if (const auto* p = std::get_if<ProduceEvent>(&op.recorded)) {
      produces.push_back(*p);
    } else if (const auto* c = std::get_if<ConsumeEvent>(&op.recorded)) {
      consumes.push_back(*c);
    }
    ops.push_back(std::move(op));
  }
  if (play.size() != ops.size()) __builtin_trap();
  const std::vector<Event> log = play.Take();
  if (play.size() != 0 || log.size() != ops.size()) __builtin_trap();
  if (!std::is_sorted(log.begin(), log.end(), CanonicalOrder)) {
    __builtin_trap();
  }
  std::multiset<Hash32> played, taken;
  for (const Op& op : ops) played.insert(rnode::rspace::EventHash(op.recorded));
  for (const Event& e : log) taken.insert(rnode::rspace::EventHash(e));
  if (played != taken) __builtin_trap();
  CheckLog(log);
  Replay(log, ops);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    RunWire(data + 1, size - 1);
  } else {
    RunPlayed(data + 1, size - 1);
  }
  return 0;
}

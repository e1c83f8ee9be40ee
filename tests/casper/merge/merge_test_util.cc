// Test helpers for the merger.
#include "tests/casper/merge/merge_test_util.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "crypto/hash.h"
#include "rspace/channel_codec.h"
#include "rspace/state_change.h"
#include "util/status_macros.h"

namespace rnode::casper::merge::testing {
namespace {

using rspace::ChannelState;
using rspace::Datum;
using rspace::WaitingContinuation;

Bytes U64Bytes(uint64_t v) {
  Bytes b(8);
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  return b;
}

void Canonical(ChannelState& s) {
  std::stable_sort(
      s.data.begin(), s.data.end(),
      [](const Datum& a, const Datum& b) { return a.source < b.source; });
  std::stable_sort(
      s.continuations.begin(), s.continuations.end(),
      [](const WaitingContinuation& a, const WaitingContinuation& b) {
        return a.source < b.source;
      });
  std::sort(s.joins.begin(), s.joins.end());
  s.joins.erase(std::unique(s.joins.begin(), s.joins.end()), s.joins.end());
}

Hash32 Random32(std::mt19937_64& rng) {
  Hash32 h;
  for (size_t i = 0; i < 32; i += 8) {
    uint64_t v = rng();
    std::memcpy(h.data() + i, &v, 8);
  }
  return h;
}

bool Chance(std::mt19937_64& rng, double p) {
  return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}

int Uniform(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

Hash32 Derive(const Hash32& pre, uint64_t repeat) {
  Bytes b(pre.begin(), pre.end());
  Bytes r = U64Bytes(repeat);
  b.insert(b.end(), r.begin(), r.end());
  return crypto::Blake2b256(b);
}

struct World {
  std::vector<rspace::TermPtr> channels;  // channels[0] is the hot channel.
  std::vector<Hash32> vaults;
  std::map<Hash32, ChannelState> base;
  uint64_t salt = 0;
};

class DeploySim {
 public:
  DeploySim(const World& w, std::map<Hash32, ChannelState>& st,
            std::mt19937_64& rng, const ScopeShape& shape)
      : w_(w), st_(st), rng_(rng), shape_(shape) {}

  DeployInput Run() {
    DeployInput d;
    Hash32 id = Random32(rng_);
    d.id.assign(id.begin(), id.begin() + 8);
    d.cost =
        Chance(rng_, 0.1) ? 0 : static_cast<uint64_t>(Uniform(rng_, 1, 100));
    const int ops = Uniform(rng_, 1, shape_.max_ops);
    for (int i = 0; i < ops; ++i) {
      if (!w_.vaults.empty() && Chance(rng_, shape_.number_op)) {
        NumberOp(d);
      } else if (Chance(rng_, 0.45)) {
        Produce(d);
      } else {
        Consume(d);
      }
    }
    if (Chance(rng_, 0.03)) {
      // A removal of an item the base never had (an inconsistent block).
      const Hash32 ch = PickChannel()->hash();
      Touch(ch);
      Datum ghost{MakeTerm(77), false, Random32(rng_)};
      ghost_removals_[ch].push_back(ghost);
    }
    for (const auto& [ch, before] : before_) {
      rspace::ChannelChange c = rspace::DiffChannelState(ch, before, st_[ch]);
      auto g = ghost_removals_.find(ch);
      if (g != ghost_removals_.end()) {
        c.removed_data.insert(c.removed_data.end(), g->second.begin(),
                              g->second.end());
      }
      if (!c.empty()) d.changes.channels.push_back(std::move(c));
    }
    return d;
  }

 private:
  rspace::TermPtr PickChannel() {
    if (Chance(rng_, shape_.hot_channel)) return w_.channels[0];
    return w_
        .channels[Uniform(rng_, 0, static_cast<int>(w_.channels.size()) - 1)];
  }

  void Touch(const Hash32& ch) {
    if (!before_.count(ch)) before_[ch] = st_[ch];
  }

  uint32_t Repeat(const Hash32& base) { return repeats_[base]++; }

  void NumberOp(DeployInput& d) {
    const Hash32 v =
        w_.vaults[Uniform(rng_, 0, static_cast<int>(w_.vaults.size()) - 1)];
    const bool listed = !Chance(rng_, 0.1);
    if (listed) d.number_diffs[v] += Uniform(rng_, -120, 80);
    const ChannelState& s = st_[v];
    Hash32 k = HashOf(11, w_.salt, rng_());
    d.events.push_back(
        rspace::ConsumeEvent{k, {v}, {HashOf(7)}, HashOf(8), false, false, 0});
    if (!s.data.empty()) {
      rspace::CommEvent m;
      m.hash = HashOf(12, w_.salt, rng_());
      m.consume = k;
      m.binds.push_back(rspace::CommBind{v, s.data.front().source, false});
      d.events.push_back(m);
    }
    d.events.push_back(rspace::ProduceEvent{HashOf(13, w_.salt, rng_()), v,
                                            HashOf(9), false, 0});
  }

  void Produce(DeployInput& d) {
    rspace::TermPtr chan = PickChannel();
    const Hash32 ch = chan->hash();
    const uint64_t value = static_cast<uint64_t>(Uniform(rng_, 0, 3));
    const bool persist = Chance(rng_, 0.15);
    Hash32 pre = HashOf(3, value * 2 + persist, 0);
    for (size_t i = 0; i < 8; ++i) pre[i] ^= ch[i];
    const Hash32 p = Derive(pre, Repeat(pre));
    d.events.push_back(rspace::ProduceEvent{p, ch, HashOf(value), persist, 0});
    Touch(ch);
    ChannelState& s = st_[ch];
    const WaitingContinuation* k = nullptr;
    for (const auto& c : s.continuations) {
      if (c.group.size() == 1) {
        k = &c;
        break;
      }
    }
    Datum datum{MakeTerm(value), persist, p};
    if (k == nullptr) {
      s.data.push_back(datum);
      Canonical(s);
      return;
    }
    rspace::CommEvent m;
    m.consume = k->source;
    m.consume_persist = k->persist;
    m.peek = k->peek;
    m.binds.push_back(rspace::CommBind{ch, p, persist});
    m.hash = HashOf(14, w_.salt, rng_());
    d.events.push_back(m);
    const bool peek = k->peek;
    if (!k->persist) {
      const Hash32 src = k->source;
      auto it = std::find_if(
          s.continuations.begin(), s.continuations.end(),
          [&](const WaitingContinuation& c) { return c.source == src; });
      rspace::JoinGroup g = it->group;
      s.continuations.erase(it);
      bool other = false;
      for (const auto& c : s.continuations) other |= c.group == g;
      if (!other) {
        s.joins.erase(std::remove(s.joins.begin(), s.joins.end(), g),
                      s.joins.end());
      }
    }
    if (peek && !persist) {
      s.data.push_back(datum);
      Canonical(s);
    }
  }

  void Consume(DeployInput& d) {
    std::vector<rspace::TermPtr> chans{PickChannel()};
    if (Chance(rng_, 0.2)) {
      rspace::TermPtr other = PickChannel();
      if (other->hash() != chans[0]->hash()) chans.push_back(other);
    }
    const bool persist = Chance(rng_, 0.15);
    const bool peek = !persist && Chance(rng_, 0.15);
    std::vector<Hash32> hashes;
    for (const auto& c : chans) hashes.push_back(c->hash());
    Bytes pre_bytes = U64Bytes(persist * 2 + peek);
    for (const auto& h : hashes)
      pre_bytes.insert(pre_bytes.end(), h.begin(), h.end());
    const Hash32 pre = crypto::Blake2b256(pre_bytes);
    const Hash32 k = Derive(pre, Repeat(pre));
    d.events.push_back(rspace::ConsumeEvent{
        k, hashes, std::vector<Hash32>(hashes.size(), HashOf(7)), HashOf(8),
        persist, peek, 0});
    for (const auto& h : hashes) Touch(h);
    bool all = true;
    for (const auto& h : hashes) all &= !st_[h].data.empty();
    if (all) {
      rspace::CommEvent m;
      m.consume = k;
      m.consume_persist = persist;
      m.peek = peek;
      for (const auto& h : hashes) {
        const Datum& x = st_[h].data.front();
        m.binds.push_back(rspace::CommBind{h, x.source, x.persist});
      }
      m.hash = HashOf(15, w_.salt, rng_());
      d.events.push_back(m);
      if (!peek) {
        for (const auto& h : hashes) {
          auto& data = st_[h].data;
          if (!data.front().persist) data.erase(data.begin());
        }
      }
      return;
    }
    WaitingContinuation w;
    w.channels = chans;
    w.patterns.assign(chans.size(), MakeTerm(7));
    w.continuation = MakeTerm(8);
    w.persist = persist;
    w.peek = peek;
    w.source = k;
    w.group = rspace::MakeJoinGroup(chans);
    ChannelState& owner = st_[w.group.front()];
    owner.continuations.push_back(w);
    Canonical(owner);
    for (const auto& h : hashes) {
      auto& joins = st_[h].joins;
      if (std::find(joins.begin(), joins.end(), w.group) == joins.end()) {
        joins.push_back(w.group);
        Canonical(st_[h]);
      }
    }
  }

  const World& w_;
  std::map<Hash32, ChannelState>& st_;
  std::mt19937_64& rng_;
  const ScopeShape& shape_;
  std::map<Hash32, ChannelState> before_;
  std::map<Hash32, std::vector<Datum>> ghost_removals_;
  std::map<Hash32, uint32_t> repeats_;
};

}  // namespace

absl::StatusOr<int64_t> TestNumberCodec::Read(const ChannelState& state) const {
  if (state.empty()) return 0;
  if (state.data.size() != 1 || state.data[0].value->bytes().size() != 8) {
    return absl::InvalidArgumentError("not a number channel state");
  }
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) {
    v |= uint64_t{state.data[0].value->bytes()[i]} << (8 * i);
  }
  return static_cast<int64_t>(v);
}

absl::StatusOr<ChannelState> TestNumberCodec::Write(const Hash32& channel,
                                                    int64_t value) const {
  Bytes bytes = U64Bytes(static_cast<uint64_t>(value));
  Bytes pre(channel.begin(), channel.end());
  pre.insert(pre.end(), bytes.begin(), bytes.end());
  ChannelState s;
  s.data.push_back(
      Datum{rspace::Term::Make(bytes), false, crypto::Blake2b256(pre)});
  return s;
}

TestHistory::TestHistory() : store(3) {
  auto h = rspace::History::Open(&store, rspace::HistoryOptions{});
  if (!h.ok()) std::abort();
  history = std::move(*h);
}

absl::StatusOr<Hash32> CommitStates(
    rspace::History& history, const Hash32& base,
    const std::map<Hash32, ChannelState>& states) {
  std::vector<rspace::LeafUpdate> updates;
  for (const auto& [ch, s0] : states) {
    if (s0.empty()) continue;
    ChannelState s = s0;
    Canonical(s);
    Bytes blob = rspace::EncodeChannelState(s);
    Hash32 h = crypto::Blake2b256(blob);
    updates.push_back(rspace::LeafUpdate{ch, std::move(blob), h});
  }
  return history.Commit(base, updates);
}

absl::StatusOr<ChannelState> ReadState(rspace::History& history,
                                       const Hash32& root,
                                       const Hash32& channel) {
  ASSIGN_OR_RETURN(std::optional<Bytes> blob, history.ReadLeaf(root, channel));
  if (!blob.has_value()) return ChannelState{};
  return rspace::DecodeChannelState(*blob, [](Bytes b) {
    return absl::StatusOr<rspace::TermPtr>(rspace::Term::Make(std::move(b)));
  });
}

rspace::TermPtr MakeTerm(uint64_t v) {
  return rspace::Term::Make(U64Bytes(v ^ 0x5a5a0000u));
}

Hash32 HashOf(uint64_t a, uint64_t b, uint64_t c) {
  Bytes pre = U64Bytes(a);
  Bytes x = U64Bytes(b), y = U64Bytes(c);
  pre.insert(pre.end(), x.begin(), x.end());
  pre.insert(pre.end(), y.begin(), y.end());
  return crypto::Blake2b256(pre);
}

absl::StatusOr<Scope> RandomScope(rspace::History& history,
                                  std::mt19937_64& rng,
                                  const ScopeShape& shape) {
  World w;
  w.salt = rng();
  TestNumberCodec codec;
  for (int i = 0; i < shape.channels; ++i) {
    w.channels.push_back(rspace::Term::Make(
        U64Bytes(w.salt * 1000003u + static_cast<uint64_t>(i))));
  }
  for (int i = 0; i < shape.number_channels; ++i) {
    Hash32 v = HashOf(21, w.salt, static_cast<uint64_t>(i));
    w.vaults.push_back(v);
    ASSIGN_OR_RETURN(w.base[v], codec.Write(v, Uniform(rng, 0, 200)));
  }
  for (const auto& c : w.channels) {
    ChannelState& s = w.base[c->hash()];
    if (Chance(rng, 0.5)) {
      const int n = Uniform(rng, 1, 2);
      for (int i = 0; i < n; ++i) {
        s.data.push_back(
            Datum{MakeTerm(static_cast<uint64_t>(Uniform(rng, 0, 3))),
                  Chance(rng, 0.2), Random32(rng)});
      }
    }
    if (Chance(rng, 0.3)) {
      WaitingContinuation k;
      k.channels = {c};
      k.patterns = {MakeTerm(7)};
      k.continuation = MakeTerm(8);
      k.persist = Chance(rng, 0.3);
      k.peek = !k.persist && Chance(rng, 0.1);
      k.source = Random32(rng);
      k.group = rspace::MakeJoinGroup(k.channels);
      s.continuations.push_back(k);
      s.joins.push_back(k.group);
    }
    Canonical(s);
  }
  if (w.channels.size() >= 2 && Chance(rng, shape.join_in_base)) {
    int a = Uniform(rng, 0, static_cast<int>(w.channels.size()) - 1);
    int b = Uniform(rng, 0, static_cast<int>(w.channels.size()) - 1);
    if (a != b) {
      WaitingContinuation k;
      k.channels = {w.channels[a], w.channels[b]};
      k.patterns = {MakeTerm(7), MakeTerm(7)};
      k.continuation = MakeTerm(9);
      k.source = Random32(rng);
      k.group = rspace::MakeJoinGroup(k.channels);
      ChannelState& owner = w.base[k.group.front()];
      owner.continuations.push_back(k);
      for (const auto& h : k.group) {
        w.base[h].joins.push_back(k.group);
        Canonical(w.base[h]);
      }
      Canonical(owner);
    }
  }
  Scope scope;
  ASSIGN_OR_RETURN(scope.base_root,
                   CommitStates(history, rspace::kEmptyRoot, w.base));
  const int blocks = Uniform(rng, 1, shape.max_blocks);
  std::vector<const DeployInput*> earlier;
  for (int b = 0; b < blocks; ++b) {
    BlockInput block;
    block.hash = Random32(rng);
    block.number = static_cast<uint64_t>(Uniform(rng, 1, 10));
    std::map<Hash32, ChannelState> st = w.base;
    const int deploys = Uniform(rng, 1, shape.max_deploys);
    for (int i = 0; i < deploys; ++i) {
      std::vector<const DeployInput*> pool;
      for (const auto& blk : scope.blocks) {
        for (const auto& d : blk.deploys) pool.push_back(&d);
      }
      if (!pool.empty() && Chance(rng, shape.duplicate)) {
        block.deploys.push_back(
            *pool[Uniform(rng, 0, static_cast<int>(pool.size()) - 1)]);
        continue;
      }
      block.deploys.push_back(DeploySim(w, st, rng, shape).Run());
    }
    scope.blocks.push_back(std::move(block));
  }
  return scope;
}

}  // namespace rnode::casper::merge::testing

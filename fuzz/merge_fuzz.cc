// libFuzzer target over the multi-parent merger (casper::merge::Merge). The
// input drives a small simulation: a base state (channels with data,
// waiting continuations, joins, and number channels with a value) written to
// an in-memory history, and blocks that each ran a few deploys on it
// (produces, consumes, COMMs, number channel transfers, an occasional
// removal of an item the base never had, deploys repeated from an earlier
// block). Events carry the rspace hashes of their fields, and each deploy's
// state changes are the difference its operations made, as a node records
// them. Sizes are bounded (at most 16 channels, 4 blocks, 8 deploys, so at
// most 8 chains) so one run takes milliseconds. Asserted (docs/merge.md):
//  - every block indexes (BuildBlockIndex) and the merge never fails with
//    Internal (§5.1 rules out a removal the combine step cannot apply);
//  - merging again on the same context, and merging the blocks in reverse
//    order on a fresh context, give the same root, rejected deploys,
//    branches, conflicts and base-join branches (or the same error);
//  - every chain of the scope is in exactly one branch, chains ascending;
//  - no two kept branches conflict; a kept base-join branch is kept alone;
//  - the rejected deploys are exactly the ids of rejected branches that no
//    kept branch holds, ascending, each with the reason of the first
//    rejected branch holding it (§5.3);
//  - with every branch rejected the root is the base root;
//  - each number channel holds its base value plus the kept branches'
//    diffs, within [0, 2^63-1], and is untouched when they sum to zero.
// Any broken property traps.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "casper/merge/block_index.h"
#include "casper/merge/merge_context.h"
#include "casper/merge/merger.h"
#include "casper/merge/number_channel.h"
#include "crypto/hash.h"
#include "rspace/channel_codec.h"
#include "rspace/event_log.h"
#include "rspace/history/history.h"
#include "rspace/state_change.h"
#include "rspace/storage/kv_store.h"
#include "rspace/types.h"
#include "util/bytes.h"

namespace {

using rnode::Bytes;
using rnode::Hash32;
using rnode::casper::merge::BlockIndex;
using rnode::casper::merge::BlockInput;
using rnode::casper::merge::BranchInfo;
using rnode::casper::merge::ChainKey;
using rnode::casper::merge::DeployInput;
using rnode::casper::merge::MergeResult;
using rnode::casper::merge::RejectReason;
using rnode::rspace::ChannelState;
using rnode::rspace::Datum;
using rnode::rspace::TermPtr;
using rnode::rspace::WaitingContinuation;

// Bounds on one input's world (see the file comment).
constexpr int kMinChannels = 2;
constexpr int kMaxChannels = 16;
constexpr int kMaxNumberChannels = 2;
constexpr int kMaxBlocks = 4;
constexpr int kMaxDeploysPerBlock = 3;
constexpr int kMaxDeploys = 8;
constexpr int kMaxOpsPerDeploy = 4;
constexpr int kMaxBaseData = 2;
constexpr uint64_t kMaxValue = 3;
constexpr uint64_t kMaxBlockNumber = 10;
constexpr int64_t kMaxBaseBalance = 200;
constexpr int64_t kMinTransfer = -120;
constexpr int64_t kMaxTransfer = 80;
constexpr uint64_t kMaxCost = 100;
constexpr size_t kStoreColumns = 3;
// Terms that stand for patterns and continuation bodies.
constexpr uint64_t kPatternValue = 7;
constexpr uint64_t kBodyValue = 8;
constexpr uint64_t kJoinBodyValue = 9;

Bytes U64(uint64_t v) {
  Bytes b(8);
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  return b;
}

Hash32 HashOf(uint64_t a, uint64_t b = 0, uint64_t c = 0) {
  Bytes pre = U64(a);
  for (uint64_t v : {b, c}) {
    const Bytes x = U64(v);
    pre.insert(pre.end(), x.begin(), x.end());
  }
  return rnode::crypto::Blake2b256(pre);
}

TermPtr MakeTerm(uint64_t v) {
  return rnode::rspace::Term::Make(U64(v ^ 0x5a5a0000u));
}

// True with probability num/den; false once the input is used up.
bool Chance(FuzzedDataProvider& in, uint8_t num, uint8_t den) {
  return in.ConsumeIntegralInRange<uint8_t>(0, den - 1) >= den - num;
}

// A number channel's state: one datum holding the value as 8 bytes,
// little-endian, whose source is Blake2b(channel ‖ value bytes).
class VaultCodec final : public rnode::casper::merge::NumberChannelCodec {
 public:
  absl::StatusOr<int64_t> Read(const ChannelState& state) const override {
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
  absl::StatusOr<ChannelState> Write(const Hash32& channel,
                                     int64_t value) const override {
    const Bytes bytes = U64(static_cast<uint64_t>(value));
    Bytes pre(channel.begin(), channel.end());
    pre.insert(pre.end(), bytes.begin(), bytes.end());
    ChannelState s;
    s.data.push_back(Datum{rnode::rspace::Term::Make(bytes), false,
                           rnode::crypto::Blake2b256(pre)});
    return s;
  }
};

// The canonical order of a stored state (docs/formats/rspace.md).
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

WaitingContinuation MakeContinuation(std::vector<TermPtr> channels,
                                     uint64_t body, bool persist, bool peek,
                                     const Hash32& source) {
  WaitingContinuation k;
  k.patterns.assign(channels.size(), MakeTerm(kPatternValue));
  k.channels = std::move(channels);
  k.continuation = MakeTerm(body);
  k.persist = persist;
  k.peek = peek;
  k.source = source;
  k.group = rnode::rspace::MakeJoinGroup(k.channels);
  return k;
}

// Stores `k` as the space does: on its group's first channel, its group
// on each of its channels.
void Wait(std::map<Hash32, ChannelState>& st, WaitingContinuation k) {
  const rnode::rspace::JoinGroup group = k.group;
  ChannelState& owner = st[group.front()];
  owner.continuations.push_back(std::move(k));
  Canonical(owner);
  for (const Hash32& h : group) {
    auto& joins = st[h].joins;
    if (std::find(joins.begin(), joins.end(), group) == joins.end()) {
      joins.push_back(group);
      Canonical(st[h]);
    }
  }
}

struct World {
  World() : store(kStoreColumns) {
    auto h =
        rnode::rspace::History::Open(&store, rnode::rspace::HistoryOptions{});
    if (!h.ok()) std::abort();
    history = *std::move(h);
  }
  rnode::rspace::InMemoryStore store;
  std::unique_ptr<rnode::rspace::History> history;
  std::vector<TermPtr> channels;     // channels[0] is the hot channel.
  std::map<Hash32, int64_t> vaults;  // Number channel -> base value.
  std::map<Hash32, ChannelState> base;
  Hash32 base_root{};
};

// Plays one deploy's operations on a block's running state, recording its
// event log and, at the end, its state changes.
class DeployPlayer {
 public:
  DeployPlayer(const World& w, std::map<Hash32, ChannelState>& st,
               FuzzedDataProvider& in, uint64_t serial)
      : w_(w), st_(st), in_(in), serial_(serial) {}

  DeployInput Run() {
    DeployInput d;
    const Hash32 id = HashOf(0x1d, serial_);
    d.id.assign(id.begin(), id.begin() + 8);
    d.cost = Chance(in_, 1, 10)
                 ? 0
                 : in_.ConsumeIntegralInRange<uint64_t>(1, kMaxCost);
    const int ops = in_.ConsumeIntegralInRange<int>(1, kMaxOpsPerDeploy);
    for (int i = 0; i < ops; ++i) {
      if (!w_.vaults.empty() && Chance(in_, 1, 4)) {
        NumberOp(d);
      } else if (in_.ConsumeBool()) {
        Produce(d);
      } else {
        Consume(d);
      }
    }
    if (Chance(in_, 1, 32)) {
      // A removal of a datum the base never had (an inconsistent block).
      const Hash32 ch = PickChannel()->hash();
      Touch(ch);
      ghosts_[ch].push_back(
          Datum{MakeTerm(77), false, HashOf(0x6057, serial_, ++events_)});
    }
    for (const auto& [ch, before] : before_) {
      rnode::rspace::ChannelChange c =
          rnode::rspace::DiffChannelState(ch, before, st_[ch]);
      auto g = ghosts_.find(ch);
      if (g != ghosts_.end()) {
        c.removed_data.insert(c.removed_data.end(), g->second.begin(),
                              g->second.end());
      }
      if (!c.empty()) d.changes.channels.push_back(std::move(c));
    }
    return d;
  }

 private:
  TermPtr PickChannel() {
    return w_.channels[in_.ConsumeIntegralInRange<size_t>(
        0, w_.channels.size() - 1)];
  }

  void Touch(const Hash32& ch) {
    if (!before_.contains(ch)) before_[ch] = st_[ch];
  }

  // Earlier identical events in this deploy's log (the event's repeat).
  uint32_t Repeat(const Hash32& preimage_key) {
    return repeats_[preimage_key]++;
  }

  void NumberOp(DeployInput& d) {
    auto it = w_.vaults.begin();
    std::advance(it,
                 in_.ConsumeIntegralInRange<size_t>(0, w_.vaults.size() - 1));
    const Hash32 v = it->first;
    // Most transfers list the channel; an unlisted touch is an ordinary,
    // non-mergeable use of it.
    if (!Chance(in_, 1, 10)) {
      d.number_diffs[v] +=
          in_.ConsumeIntegralInRange<int64_t>(kMinTransfer, kMaxTransfer);
    }
    const Hash32 pattern = MakeTerm(kPatternValue)->hash();
    const Hash32 body = MakeTerm(kBodyValue)->hash();
    const Hash32 consume_base = rnode::rspace::HashConsumeBase(
        std::vector<Hash32>{v}, std::vector<Hash32>{pattern}, body, false,
        false);
    rnode::rspace::ConsumeEvent k{
        rnode::rspace::HashConsume(consume_base, Repeat(consume_base)),
        {v},
        {pattern},
        body,
        false,
        false,
        0};
    d.events.push_back(k);
    const ChannelState& s = st_[v];
    if (!s.data.empty()) {
      rnode::rspace::CommEvent m;
      m.consume = k.hash;
      m.binds.push_back(
          rnode::rspace::CommBind{v, s.data.front().source, false});
      m.hash = rnode::rspace::HashComm(m.consume, false, false, m.binds);
      d.events.push_back(m);
    }
    const Hash32 data = HashOf(0xda7a, serial_, ++events_);
    const Hash32 first = rnode::rspace::HashProduce(v, data, false, 0);
    d.events.push_back(rnode::rspace::ProduceEvent{
        rnode::rspace::HashProduce(v, data, false, Repeat(first)), v, data,
        false, 0});
  }

  void Produce(DeployInput& d) {
    const TermPtr chan = PickChannel();
    const Hash32 ch = chan->hash();
    const uint64_t value = in_.ConsumeIntegralInRange<uint64_t>(0, kMaxValue);
    const bool persist = Chance(in_, 1, 7);
    const TermPtr term = MakeTerm(value);
    const Hash32 first =
        rnode::rspace::HashProduce(ch, term->hash(), persist, 0);
    const uint32_t repeat = Repeat(first);
    const Hash32 p =
        rnode::rspace::HashProduce(ch, term->hash(), persist, repeat);
    d.events.push_back(
        rnode::rspace::ProduceEvent{p, ch, term->hash(), persist, repeat});
    Touch(ch);
    ChannelState& s = st_[ch];
    const WaitingContinuation* k = nullptr;
    for (const auto& c : s.continuations) {
      if (c.group.size() == 1) {
        k = &c;
        break;
      }
    }
    const Datum datum{term, persist, p};
    if (k == nullptr) {
      s.data.push_back(datum);
      Canonical(s);
      return;
    }
    rnode::rspace::CommEvent m;
    m.consume = k->source;
    m.consume_persist = k->persist;
    m.peek = k->peek;
    m.binds.push_back(rnode::rspace::CommBind{ch, p, persist});
    m.hash =
        rnode::rspace::HashComm(m.consume, m.consume_persist, m.peek, m.binds);
    d.events.push_back(m);
    const bool peek = k->peek;
    if (!k->persist) {
      const Hash32 source = k->source;
      auto it = std::find_if(
          s.continuations.begin(), s.continuations.end(),
          [&](const WaitingContinuation& c) { return c.source == source; });
      const rnode::rspace::JoinGroup group = it->group;
      s.continuations.erase(it);
      const bool other = std::any_of(
          s.continuations.begin(), s.continuations.end(),
          [&](const WaitingContinuation& c) { return c.group == group; });
      if (!other) {
        s.joins.erase(std::remove(s.joins.begin(), s.joins.end(), group),
                      s.joins.end());
      }
    }
    if (peek && !persist) {
      s.data.push_back(datum);
      Canonical(s);
    }
  }

  void Consume(DeployInput& d) {
    std::vector<TermPtr> chans{PickChannel()};
    if (Chance(in_, 1, 5)) {
      TermPtr other = PickChannel();
      if (other->hash() != chans[0]->hash()) chans.push_back(other);
    }
    const bool persist = Chance(in_, 1, 7);
    const bool peek = !persist && Chance(in_, 1, 7);
    std::vector<Hash32> hashes;
    for (const auto& c : chans) hashes.push_back(c->hash());
    const std::vector<Hash32> patterns(hashes.size(),
                                       MakeTerm(kPatternValue)->hash());
    const Hash32 body = MakeTerm(kBodyValue)->hash();
    const Hash32 consume_base =
        rnode::rspace::HashConsumeBase(hashes, patterns, body, persist, peek);
    const uint32_t repeat = Repeat(consume_base);
    const Hash32 k = rnode::rspace::HashConsume(consume_base, repeat);
    d.events.push_back(rnode::rspace::ConsumeEvent{k, hashes, patterns, body,
                                                   persist, peek, repeat});
    for (const auto& h : hashes) Touch(h);
    const bool all =
        std::all_of(hashes.begin(), hashes.end(),
                    [&](const Hash32& h) { return !st_[h].data.empty(); });
    if (all) {
      rnode::rspace::CommEvent m;
      m.consume = k;
      m.consume_persist = persist;
      m.peek = peek;
      for (const auto& h : hashes) {
        const Datum& x = st_[h].data.front();
        m.binds.push_back(rnode::rspace::CommBind{h, x.source, x.persist});
      }
      m.hash = rnode::rspace::HashComm(m.consume, m.consume_persist, m.peek,
                                       m.binds);
      d.events.push_back(m);
      if (!peek) {
        for (const auto& h : hashes) {
          auto& data = st_[h].data;
          if (!data.front().persist) data.erase(data.begin());
        }
      }
      return;
    }
    Wait(st_, MakeContinuation(chans, kBodyValue, persist, peek, k));
  }

  const World& w_;
  std::map<Hash32, ChannelState>& st_;
  FuzzedDataProvider& in_;
  const uint64_t serial_;
  uint64_t events_ = 0;
  std::map<Hash32, ChannelState> before_;
  std::map<Hash32, std::vector<Datum>> ghosts_;
  std::map<Hash32, uint32_t> repeats_;
};

// Writes the base state chosen by `in` and returns false if it cannot be.
bool BuildBase(FuzzedDataProvider& in, World& w) {
  const VaultCodec codec;
  const int channels =
      in.ConsumeIntegralInRange<int>(kMinChannels, kMaxChannels);
  for (int i = 0; i < channels; ++i) {
    w.channels.push_back(
        rnode::rspace::Term::Make(U64(0xc4a0000u + static_cast<uint64_t>(i))));
  }
  const int vaults = in.ConsumeIntegralInRange<int>(0, kMaxNumberChannels);
  for (int i = 0; i < vaults; ++i) {
    const Hash32 v = HashOf(0x7a17, static_cast<uint64_t>(i));
    const int64_t value =
        in.ConsumeIntegralInRange<int64_t>(0, kMaxBaseBalance);
    auto state = codec.Write(v, value);
    if (!state.ok()) return false;
    w.vaults[v] = value;
    w.base[v] = *std::move(state);
  }
  uint64_t sources = 0;
  for (const TermPtr& c : w.channels) {
    ChannelState& s = w.base[c->hash()];
    const int data = in.ConsumeIntegralInRange<int>(0, kMaxBaseData);
    for (int i = 0; i < data; ++i) {
      s.data.push_back(
          Datum{MakeTerm(in.ConsumeIntegralInRange<uint64_t>(0, kMaxValue)),
                Chance(in, 1, 5), HashOf(0xba5e, ++sources)});
    }
    Canonical(s);
    if (Chance(in, 3, 10)) {
      const bool persist = Chance(in, 3, 10);
      const bool peek = !persist && Chance(in, 1, 10);
      Wait(w.base, MakeContinuation({c}, kBodyValue, persist, peek,
                                    HashOf(0xba5e, ++sources)));
    }
  }
  if (Chance(in, 3, 10)) {
    const size_t a =
        in.ConsumeIntegralInRange<size_t>(0, w.channels.size() - 1);
    const size_t b =
        in.ConsumeIntegralInRange<size_t>(0, w.channels.size() - 1);
    if (a != b) {
      Wait(w.base,
           MakeContinuation({w.channels[a], w.channels[b]}, kJoinBodyValue,
                            false, false, HashOf(0xba5e, ++sources)));
    }
  }
  std::vector<rnode::rspace::LeafUpdate> updates;
  for (const auto& [ch, s] : w.base) {
    if (s.empty()) continue;
    Bytes blob = rnode::rspace::EncodeChannelState(s);
    const Hash32 h = rnode::crypto::Blake2b256(blob);
    updates.push_back(rnode::rspace::LeafUpdate{ch, std::move(blob), h});
  }
  auto root = w.history->Commit(rnode::rspace::kEmptyRoot, updates);
  if (!root.ok()) return false;
  w.base_root = *root;
  return true;
}

// The blocks of the scope, each run on the base.
std::vector<BlockInput> BuildBlocks(FuzzedDataProvider& in, const World& w) {
  std::vector<BlockInput> blocks;
  std::vector<DeployInput> earlier;  // Deploys of the blocks before.
  uint64_t serial = 0;
  const int count = in.ConsumeIntegralInRange<int>(1, kMaxBlocks);
  for (int b = 0; b < count && serial < kMaxDeploys; ++b) {
    BlockInput block;
    block.hash = HashOf(0xb10c, static_cast<uint64_t>(b));
    block.number = in.ConsumeIntegralInRange<uint64_t>(1, kMaxBlockNumber);
    std::map<Hash32, ChannelState> st = w.base;
    const int deploys = in.ConsumeIntegralInRange<int>(1, kMaxDeploysPerBlock);
    for (int i = 0; i < deploys && serial < kMaxDeploys; ++i, ++serial) {
      if (!earlier.empty() && Chance(in, 1, 16)) {
        block.deploys.push_back(
            earlier[in.ConsumeIntegralInRange<size_t>(0, earlier.size() - 1)]);
        continue;
      }
      block.deploys.push_back(DeployPlayer(w, st, in, serial).Run());
    }
    blocks.push_back(std::move(block));
    earlier.insert(earlier.end(), blocks.back().deploys.begin(),
                   blocks.back().deploys.end());
  }
  return blocks;
}

bool SameResult(const MergeResult& a, const MergeResult& b) {
  return a.root == b.root && a.rejected == b.rejected &&
         a.branches == b.branches && a.conflicts == b.conflicts &&
         a.base_join_branches == b.base_join_branches;
}

void CheckSameOutcome(const absl::StatusOr<MergeResult>& a,
                      const absl::StatusOr<MergeResult>& b) {
  if (a.ok() != b.ok()) __builtin_trap();
  if (!a.ok()) {
    if (a.status().code() != b.status().code()) __builtin_trap();
    return;
  }
  if (!SameResult(*a, *b)) __builtin_trap();
}

// What the scope's blocks say about a chain.
struct ChainFacts {
  std::vector<Bytes> ids;
  std::map<Hash32, __int128> number_diffs;
};

std::map<ChainKey, ChainFacts> ChainsOf(
    const std::vector<std::shared_ptr<const BlockIndex>>& scope) {
  std::map<ChainKey, ChainFacts> out;
  for (const auto& idx : scope) {
    for (const auto& chain : idx->chains) {
      ChainFacts& f = out[ChainKey{idx->hash, chain.first_deploy}];
      for (uint32_t d : chain.deploys) f.ids.push_back(idx->deploys[d].id);
      f.number_diffs = chain.number_diffs;
    }
  }
  return out;
}

void CheckBranches(const std::map<ChainKey, ChainFacts>& chains,
                   const MergeResult& r) {
  std::set<ChainKey> seen;
  for (const BranchInfo& b : r.branches) {
    if (b.chains.empty()) __builtin_trap();
    for (size_t i = 0; i < b.chains.size(); ++i) {
      if (i > 0 && !(b.chains[i - 1] < b.chains[i])) __builtin_trap();
      if (!chains.contains(b.chains[i])) __builtin_trap();
      if (!seen.insert(b.chains[i]).second) __builtin_trap();
    }
  }
  if (seen.size() != chains.size()) __builtin_trap();
  const size_t n = r.branches.size();
  for (const auto& [i, j] : rnode::casper::merge::ExpandConflictPairs(r)) {
    if (i >= j || j >= n) __builtin_trap();
    if (!r.branches[i].rejected && !r.branches[j].rejected) __builtin_trap();
  }
  for (uint32_t j : r.base_join_branches) {
    if (j >= n) __builtin_trap();
    if (n == 1 || r.branches[j].rejected) continue;
    for (size_t i = 0; i < n; ++i) {
      if (i != j && !r.branches[i].rejected) __builtin_trap();
    }
  }
}

void CheckRejected(const std::map<ChainKey, ChainFacts>& chains,
                   const MergeResult& r) {
  std::set<Bytes> kept;
  std::map<Bytes, RejectReason> rejected;  // Reason of the first holder.
  for (const BranchInfo& b : r.branches) {
    for (const ChainKey& key : b.chains) {
      for (const Bytes& id : chains.at(key).ids) {
        if (b.rejected) {
          rejected.emplace(id, b.reason);
        } else {
          kept.insert(id);
        }
      }
    }
  }
  std::vector<rnode::casper::merge::RejectedDeploy> want;
  for (const auto& [id, reason] : rejected) {
    if (!kept.contains(id)) want.push_back({id, reason});
  }
  if (r.rejected != want) __builtin_trap();
}

void CheckState(const World& w, const std::map<ChainKey, ChainFacts>& chains,
                const MergeResult& r) {
  const bool all_rejected =
      std::all_of(r.branches.begin(), r.branches.end(),
                  [](const BranchInfo& b) { return b.rejected; });
  if (all_rejected && r.root != w.base_root) __builtin_trap();
  const VaultCodec codec;
  for (const auto& [vault, base_value] : w.vaults) {
    __int128 sum = 0;
    for (const BranchInfo& b : r.branches) {
      if (b.rejected) continue;
      for (const ChainKey& key : b.chains) {
        const auto& diffs = chains.at(key).number_diffs;
        auto it = diffs.find(vault);
        if (it != diffs.end()) sum += it->second;
      }
    }
    auto after = w.history->ReadLeaf(r.root, vault);
    auto before = w.history->ReadLeaf(w.base_root, vault);
    if (!after.ok() || !before.ok()) __builtin_trap();
    if (sum == 0) {
      if (*after != *before) __builtin_trap();
      continue;
    }
    const __int128 want = __int128{base_value} + sum;
    if (want < 0 || want > std::numeric_limits<int64_t>::max()) {
      __builtin_trap();
    }
    if (!after->has_value()) {
      if (want != 0) __builtin_trap();
      continue;
    }
    auto state = rnode::rspace::DecodeChannelState(
        **after,
        [](Bytes b) {
          return absl::StatusOr<TermPtr>(
              rnode::rspace::Term::Make(std::move(b)));
        },
        rnode::rspace::ValueHashes::kTrust);
    if (!state.ok()) __builtin_trap();
    auto value = codec.Read(*state);
    if (!value.ok() || __int128{*value} != want) __builtin_trap();
  }
}

// Reused across runs, as a node reuses its context: leftovers of one
// merge must not change the next.
rnode::casper::merge::MergeContext& Context() {
  static auto* context = new rnode::casper::merge::MergeContext();
  return *context;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  World w;
  if (!BuildBase(in, w)) __builtin_trap();
  std::vector<std::shared_ptr<const BlockIndex>> scope;
  for (BlockInput& block : BuildBlocks(in, w)) {
    auto idx = rnode::casper::merge::BuildBlockIndex(std::move(block));
    if (!idx.ok()) __builtin_trap();
    scope.push_back(*std::move(idx));
  }
  const VaultCodec codec;
  rnode::casper::merge::MergeOptions options;
  options.number_codec = &codec;

  auto first = rnode::casper::merge::Merge(*w.history, w.base_root, scope,
                                           options, Context());
  if (!first.ok() && first.status().code() == absl::StatusCode::kInternal) {
    __builtin_trap();
  }
  auto again = rnode::casper::merge::Merge(*w.history, w.base_root, scope,
                                           options, Context());
  CheckSameOutcome(first, again);
  std::vector<std::shared_ptr<const BlockIndex>> reversed(scope.rbegin(),
                                                          scope.rend());
  auto other_order =
      rnode::casper::merge::Merge(*w.history, w.base_root, reversed, options);
  CheckSameOutcome(first, other_order);
  if (!first.ok()) return 0;

  const std::map<ChainKey, ChainFacts> chains = ChainsOf(scope);
  CheckBranches(chains, *first);
  CheckRejected(chains, *first);
  CheckState(w, chains, *first);
  return 0;
}

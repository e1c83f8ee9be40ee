// The merge: branches, conflict groups, rejection, combined state, new root.
#include "casper/merge/merger.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "casper/merge/internal/depends.h"
#include "casper/merge/internal/hash_key.h"
#include "casper/merge/internal/rejection.h"
#include "crypto/hash.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/task_arena.h"
#include "rspace/internal/codec.h"
#include "rspace/term.h"
#include "util/status_macros.h"

namespace rnode::casper::merge {
namespace {

using rspace::ChannelState;
using rspace::Datum;
using rspace::JoinGroup;
using rspace::WaitingContinuation;
using Clock = std::chrono::steady_clock;

int64_t SinceNs(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0)
      .count();
}

struct BaseLeaf {
  ChannelState state;
  std::optional<Bytes> blob;
};

// Items per task when per-channel work is spread over threads: large enough
// that task overhead stays small against a leaf read or a blob hash.
constexpr size_t kParallelGrain = 256;

// Runs fn(i) for every i in [0, n) on up to `threads` threads (inline when
// 1). fn must only touch state of its own index.
template <typename Fn>
void ForEachIndex(size_t n, size_t threads, Fn&& fn) {
  if (threads <= 1 || n <= kParallelGrain) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  tbb::task_arena arena(static_cast<int>(threads));
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n, kParallelGrain),
                      [&](const tbb::blocked_range<size_t>& r) {
                        for (size_t i = r.begin(); i != r.end(); ++i) fn(i);
                      });
  });
}

// Base channel states read once per merge.
class BaseReader {
 public:
  BaseReader(rspace::History& history, const Hash32& root,
             rspace::TermFactory factory)
      : history_(history), root_(root), factory_(std::move(factory)) {}

  void Reserve(size_t channels) { cache_.reserve(channels); }

  absl::StatusOr<const BaseLeaf*> Get(const Hash32& channel) {
    auto it = cache_.find(channel);
    if (it != cache_.end()) return &leaves_[it->second];
    const auto t0 = Clock::now();
    ASSIGN_OR_RETURN(BaseLeaf leaf, Read(channel));
    read_ns_ += SinceNs(t0);
    cache_.emplace(channel, static_cast<uint32_t>(leaves_.size()));
    leaves_.push_back(std::move(leaf));
    return &leaves_.back();
  }

  size_t reads() const { return leaves_.size(); }

  absl::StatusOr<BaseLeaf> Read(const Hash32& channel) const {
    BaseLeaf leaf;
    ASSIGN_OR_RETURN(leaf.blob, history_.ReadLeaf(root_, channel));
    if (leaf.blob.has_value()) {
      ASSIGN_OR_RETURN(leaf.state, rspace::internal::DecodeChannelState(
                                       *leaf.blob, factory_));
    }
    return leaf;
  }

  int64_t read_ns() const { return read_ns_; }

 private:
  rspace::History& history_;
  const Hash32 root_;
  const rspace::TermFactory factory_;
  internal::Hash32Map<uint32_t> cache_;
  std::deque<BaseLeaf> leaves_;  // Stable addresses.
  int64_t read_ns_ = 0;
};

using DatumKey = std::tuple<Hash32, bool, Hash32>;
DatumKey KeyOf(const Datum& d) {
  return {d.source, d.persist, d.value->hash()};
}

int64_t BaseCount(const ChannelState& s, const ItemKey& item) {
  int64_t n = 0;
  if (item.continuation) {
    for (const auto& k : s.continuations) n += k.source == item.source;
  } else {
    for (const auto& d : s.data) {
      n += d.source == item.source && d.persist == item.persist &&
           d.value->hash() == item.value;
    }
  }
  return n;
}

bool HasMultiJoin(const ChannelState& s) {
  for (const JoinGroup& g : s.joins) {
    if (g.size() >= 2) return true;
  }
  return false;
}

// Items with equal keys are identical (the key is a hash of the content),
// so an unstable sort gives one order.
void Canonicalize(ChannelState& s) {
  auto data_less = [](const Datum& a, const Datum& b) {
    return KeyOf(a) < KeyOf(b);
  };
  if (!std::is_sorted(s.data.begin(), s.data.end(), data_less)) {
    std::sort(s.data.begin(), s.data.end(), data_less);
  }
  auto k_less = [](const WaitingContinuation& a, const WaitingContinuation& b) {
    return a.source < b.source;
  };
  if (!std::is_sorted(s.continuations.begin(), s.continuations.end(), k_less)) {
    std::sort(s.continuations.begin(), s.continuations.end(), k_less);
  }
  if (s.joins.size() > 1) {
    std::sort(s.joins.begin(), s.joins.end());
    s.joins.erase(std::unique(s.joins.begin(), s.joins.end()), s.joins.end());
  }
}

struct ChannelAcc {
  std::vector<const Datum*> added_data;
  std::vector<const Datum*> removed_data;
  std::vector<const WaitingContinuation*> added_k;
  std::vector<const WaitingContinuation*> removed_k;
};

// base + added - removed as a multiset; Internal if a removal finds nothing.
// Additions are counted before removals, so the result is a function of the
// three multisets; items come out in key order.
absl::StatusOr<ChannelState> ApplyAcc(const ChannelState& base,
                                      const ChannelAcc& acc) {
  ChannelState out;
  out.joins = base.joins;
  if (acc.removed_data.empty() && acc.removed_k.empty()) {
    out.data.reserve(base.data.size() + acc.added_data.size());
    out.data = base.data;
    for (const Datum* d : acc.added_data) out.data.push_back(*d);
    out.continuations.reserve(base.continuations.size() + acc.added_k.size());
    out.continuations = base.continuations;
    for (const WaitingContinuation* k : acc.added_k)
      out.continuations.push_back(*k);
    return out;
  }
  struct DatumEntry {
    DatumKey key;
    int64_t delta;
    const Datum* item;
  };
  std::vector<DatumEntry> data;
  data.reserve(base.data.size() + acc.added_data.size() +
               acc.removed_data.size());
  for (const auto& d : base.data) data.push_back({KeyOf(d), 1, &d});
  for (const Datum* d : acc.added_data) data.push_back({KeyOf(*d), 1, d});
  for (const Datum* d : acc.removed_data) data.push_back({KeyOf(*d), -1, d});
  std::sort(
      data.begin(), data.end(),
      [](const DatumEntry& x, const DatumEntry& y) { return x.key < y.key; });
  for (size_t i = 0; i < data.size();) {
    size_t j = i;
    int64_t n = 0;
    const Datum* item = nullptr;
    for (; j < data.size() && data[j].key == data[i].key; ++j) {
      n += data[j].delta;
      if (data[j].delta > 0) item = data[j].item;
    }
    if (n < 0) {
      return absl::InternalError(
          "merge: removal of a datum absent from the base");
    }
    for (int64_t r = 0; r < n; ++r) out.data.push_back(*item);
    i = j;
  }
  struct ContEntry {
    Hash32 key;
    int64_t delta;
    const WaitingContinuation* item;
  };
  std::vector<ContEntry> conts;
  conts.reserve(base.continuations.size() + acc.added_k.size() +
                acc.removed_k.size());
  for (const auto& k : base.continuations) conts.push_back({k.source, 1, &k});
  for (const WaitingContinuation* k : acc.added_k)
    conts.push_back({k->source, 1, k});
  for (const WaitingContinuation* k : acc.removed_k)
    conts.push_back({k->source, -1, k});
  std::sort(conts.begin(), conts.end(),
            [](const ContEntry& x, const ContEntry& y) {
              return internal::Hash32Less()(x.key, y.key);
            });
  for (size_t i = 0; i < conts.size();) {
    size_t j = i;
    int64_t n = 0;
    const WaitingContinuation* item = nullptr;
    for (; j < conts.size() && conts[j].key == conts[i].key; ++j) {
      n += conts[j].delta;
      if (conts[j].delta > 0) item = conts[j].item;
    }
    if (n < 0) {
      return absl::InternalError(
          "merge: removal of a continuation absent from the base");
    }
    for (int64_t r = 0; r < n; ++r) out.continuations.push_back(*item);
    i = j;
  }
  return out;
}

int CompareBytes(const Bytes& x, const Bytes& y) {
  const size_t n = std::min(x.size(), y.size());
  int c = n == 0 ? 0 : std::memcmp(x.data(), y.data(), n);
  if (c != 0) return c;
  return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
}

// The first eight bytes of `b` as a big-endian word, zero-padded: a sort key
// whose order agrees with the byte order of `b` where the words differ.
uint64_t PrefixKey(const uint8_t* data, size_t size) {
  uint64_t w = 0;
  std::memcpy(&w, data, std::min<size_t>(size, 8));
  return __builtin_bswap64(w);
}

enum class Side { kA, kB };

// Conflict groups keyed by an event or a channel, in two passes so that keys
// without an edge (nearly all) cost one small map entry and no list: Note
// every (key, branch, side) in ascending branch order, Finish, then Collect
// the same sequence again to fill the lists of the keys that have an edge.
class KeyedGroups {
 public:
  void Note(const Hash32& key, uint32_t branch, Side side) {
    auto [it, inserted] = map_.try_emplace(key);
    Summary& s = it->second;
    if (inserted) s.first = branch;
    if (branch != s.first) s.distinct = true;
    if (side == Side::kA) {
      if (s.last_a != branch) ++s.count_a;
      s.last_a = branch;
    } else {
      if (s.last_b != branch) ++s.count_b;
      s.last_b = branch;
    }
  }

  // A group has an edge: two in `a` (clique), or one in `a` and one in `b`
  // that are distinct branches.
  void Finish(bool a_clique) {
    for (auto& [key, s] : map_) {
      bool edge = (a_clique && s.count_a >= 2) ||
                  (s.count_a >= 1 && s.count_b >= 1 && s.distinct);
      if (!edge) continue;
      s.group = static_cast<int32_t>(groups_.size());
      groups_.push_back(ConflictGroup{{}, {}, a_clique});
    }
  }

  void Collect(const Hash32& key, uint32_t branch, Side side) {
    const Summary& s = map_.find(key)->second;
    if (s.group < 0) return;
    ConflictGroup& g = groups_[static_cast<size_t>(s.group)];
    std::vector<uint32_t>& v = side == Side::kA ? g.a : g.b;
    if (v.empty() || v.back() != branch) v.push_back(branch);
  }

  std::vector<ConflictGroup>& groups() { return groups_; }
  void Reserve(size_t keys) { map_.reserve(keys); }

 private:
  struct Summary {
    uint32_t first = 0;
    uint32_t last_a = UINT32_MAX;
    uint32_t last_b = UINT32_MAX;
    uint32_t count_a = 0;
    uint32_t count_b = 0;
    int32_t group = -1;
    bool distinct = false;
  };
  internal::Hash32Map<Summary> map_;
  std::vector<ConflictGroup> groups_;
};

}  // namespace

const char* RejectReasonName(RejectReason reason) {
  switch (reason) {
    case RejectReason::kConflict:
      return "conflict";
    case RejectReason::kNumberChannel:
      return "number-channel";
    case RejectReason::kDuplicateInBranch:
      return "duplicate-in-branch";
    case RejectReason::kUnavailable:
      return "unavailable";
  }
  return "unknown";
}

absl::StatusOr<MergeResult> Merge(
    rspace::History& history, const Hash32& base_root,
    std::span<const std::shared_ptr<const BlockIndex>> scope,
    const MergeOptions& options) {
  MergeResult result;
  MergeMetrics& m = result.metrics;
  if (scope.size() > kMaxScopeBlocks) {
    return absl::ResourceExhaustedError("merge: scope has too many blocks");
  }
  auto t0 = Clock::now();
  // --- index: blocks in hash order, chains in key order. ---
  std::vector<const BlockIndex*> blocks;
  for (const auto& b : scope) {
    if (b == nullptr)
      return absl::InvalidArgumentError("merge: null block index");
    blocks.push_back(b.get());
  }
  std::sort(blocks.begin(), blocks.end(),
            [](const BlockIndex* a, const BlockIndex* b) {
              return a->hash < b->hash;
            });
  for (size_t i = 1; i < blocks.size(); ++i) {
    if (blocks[i]->hash == blocks[i - 1]->hash) {
      return absl::InvalidArgumentError(
          "merge: block " + HexEncode(blocks[i]->hash) + " twice in scope");
    }
  }
  std::vector<const ChainIndex*> chains;
  std::vector<const BlockIndex*> chain_block;
  std::set<Hash32> number_set;
  for (const BlockIndex* b : blocks) {
    m.deploys += b->deploys.size();
    for (const ChainIndex& c : b->chains) {
      chains.push_back(&c);
      chain_block.push_back(b);
      for (const auto& [ch, d] : c.number_diffs) number_set.insert(ch);
    }
  }
  for (const ChainIndex* c : chains) {
    for (const Hash32& ch : c->raw_channels) {
      if (number_set.count(ch)) {
        return absl::InvalidArgumentError(
            "merge: number channel " + HexEncode(ch) +
            " has raw changes in a deploy that does not list it");
      }
    }
  }
  if (!number_set.empty() && options.number_codec == nullptr) {
    return absl::InvalidArgumentError("merge: number diffs without a codec");
  }
  m.blocks = blocks.size();
  m.chains = chains.size();
  m.index_ns = SinceNs(t0);

  // --- branches ---
  t0 = Clock::now();
  std::vector<const EventFacts*> chain_facts;
  chain_facts.reserve(chains.size());
  for (const ChainIndex* c : chains) chain_facts.push_back(&c->facts);
  std::vector<uint32_t> labels = internal::RelatedComponents(chain_facts);
  std::vector<uint32_t> branch_of_label(chains.size(), UINT32_MAX);
  std::vector<std::vector<uint32_t>> branch_chains;
  for (uint32_t i = 0; i < chains.size(); ++i) {
    uint32_t& b = branch_of_label[labels[i]];
    if (b == UINT32_MAX) {
      b = static_cast<uint32_t>(branch_chains.size());
      branch_chains.emplace_back();
    }
    branch_chains[b].push_back(i);
  }
  const uint32_t nb = static_cast<uint32_t>(branch_chains.size());
  m.branches = nb;
  std::vector<EventFacts> owned_facts;
  owned_facts.reserve(nb);
  std::vector<const EventFacts*> branch_facts(nb);
  result.branches.resize(nb);
  for (uint32_t b = 0; b < nb; ++b) {
    BranchInfo& info = result.branches[b];
    std::vector<const EventFacts*> parts;
    for (uint32_t c : branch_chains[b]) {
      info.chains.push_back(
          ChainKey{chains[c]->block, chains[c]->first_deploy});
      if (__builtin_add_overflow(info.cost, chains[c]->cost, &info.cost)) {
        return absl::InvalidArgumentError("merge: branch cost overflows");
      }
      parts.push_back(&chains[c]->facts);
    }
    if (parts.size() == 1) {
      branch_facts[b] = parts.front();
    } else {
      owned_facts.push_back(UnionFacts(parts));
      branch_facts[b] = &owned_facts.back();
    }
  }
  m.branches_ns = SinceNs(t0);

  // --- conflicts and pre-rejections ---
  t0 = Clock::now();
  BaseReader base(history, base_root,
                  options.term_factory
                      ? options.term_factory
                      : rspace::TermFactory([](Bytes b) {
                          return absl::StatusOr<rspace::TermPtr>(
                              rspace::Term::Make(std::move(b)));
                        }));
  base.Reserve(2 * chains.size());
  const size_t threads = std::max<size_t>(options.threads, 1);
  std::vector<std::optional<RejectReason>> prerejected(nb);
  std::vector<ConflictGroup> groups;
  {
    struct IdRef {
      uint64_t prefix;
      const Bytes* id;
      uint32_t branch;
    };
    std::vector<IdRef> ids;
    ids.reserve(m.deploys);
    for (uint32_t b = 0; b < nb; ++b) {
      for (uint32_t c : branch_chains[b]) {
        for (uint32_t d : chains[c]->deploys) {
          const Bytes& id = chain_block[c]->deploys[d].id;
          ids.push_back(IdRef{PrefixKey(id.data(), id.size()), &id, b});
        }
      }
    }
    std::sort(ids.begin(), ids.end(), [](const IdRef& x, const IdRef& y) {
      if (x.prefix != y.prefix) return x.prefix < y.prefix;
      int cmp = CompareBytes(*x.id, *y.id);
      return cmp != 0 ? cmp < 0 : x.branch < y.branch;
    });
    for (size_t i = 0; i < ids.size();) {
      size_t j = i + 1;
      while (j < ids.size() && ids[j].prefix == ids[i].prefix &&
             *ids[j].id == *ids[i].id)
        ++j;
      if (j - i >= 2) {
        ConflictGroup g{{}, {}, true};
        for (size_t k = i; k < j; ++k) {
          const uint32_t b = ids[k].branch;
          if (!g.a.empty() && g.a.back() == b) {
            prerejected[b] = RejectReason::kDuplicateInBranch;
          } else {
            g.a.push_back(b);
          }
        }
        if (g.a.size() >= 2) groups.push_back(std::move(g));
      }
      i = j;
    }
  }
  for (uint32_t b = 0; b < nb; ++b) {
    if (prerejected[b].has_value()) continue;
    std::map<ItemKey, int64_t> merged;
    const std::vector<std::pair<ItemKey, int64_t>>* nets = nullptr;
    std::vector<std::pair<ItemKey, int64_t>> flat;
    if (branch_chains[b].size() == 1) {
      nets = &chains[branch_chains[b].front()]->item_nets;
    } else {
      for (uint32_t c : branch_chains[b]) {
        for (const auto& [k, n] : chains[c]->item_nets) merged[k] += n;
      }
      flat.assign(merged.begin(), merged.end());
      nets = &flat;
    }
    for (const auto& [item, net] : *nets) {
      if (net >= 0) continue;
      ASSIGN_OR_RETURN(const BaseLeaf* leaf, base.Get(item.channel));
      if (BaseCount(leaf->state, item) + net < 0) {
        prerejected[b] = RejectReason::kUnavailable;
        break;
      }
    }
  }
  std::vector<bool> base_join(nb, false);
  KeyedGroups produce_races, consume_races, channels;
  auto for_each_key = [&](uint32_t b, auto&& fn) {
    const EventFacts& f = *branch_facts[b];
    for (const auto& p : f.consumed_produces) {
      if (!p.persist)
        fn(produce_races, p.hash, p.mergeable ? Side::kB : Side::kA);
    }
    for (const auto& k : f.fired_consumes) {
      if (!k.persist)
        fn(consume_races, k.hash, k.mergeable ? Side::kB : Side::kA);
    }
    for (const auto& p : f.pcnd) fn(channels, p.channel, Side::kA);
    for (const auto& k : f.ccnd) {
      for (const Hash32& ch : k.channels) fn(channels, ch, Side::kB);
    }
  };
  {
    size_t races = 0, fired = 0, chans = 0;
    for (uint32_t b = 0; b < nb; ++b) {
      races += branch_facts[b]->consumed_produces.size();
      fired += branch_facts[b]->fired_consumes.size();
      chans += branch_facts[b]->pcnd.size() + branch_facts[b]->ccnd.size();
    }
    produce_races.Reserve(races);
    consume_races.Reserve(fired);
    channels.Reserve(chans);
  }
  for (uint32_t b = 0; b < nb; ++b) {
    for_each_key(b, [&](KeyedGroups& kg, const Hash32& key, Side side) {
      kg.Note(key, b, side);
    });
  }
  produce_races.Finish(/*a_clique=*/true);
  consume_races.Finish(true);
  channels.Finish(false);
  for (uint32_t b = 0; b < nb; ++b) {
    for_each_key(b, [&](KeyedGroups& kg, const Hash32& key, Side side) {
      kg.Collect(key, b, side);
    });
  }
  for (KeyedGroups* kg : {&produce_races, &consume_races, &channels}) {
    for (ConflictGroup& g : kg->groups()) groups.push_back(std::move(g));
  }
  for (uint32_t b = 0; b < nb; ++b) {
    const Hash32* last = nullptr;
    for (const auto& p : branch_facts[b]->created_produces) {
      if (base_join[b]) break;
      if (last != nullptr && *last == p.channel) continue;
      last = &p.channel;
      ASSIGN_OR_RETURN(const BaseLeaf* leaf, base.Get(p.channel));
      base_join[b] = HasMultiJoin(leaf->state);
    }
  }
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  for (uint32_t b = 0; b < nb; ++b) {
    if (base_join[b]) result.base_join_branches.push_back(b);
  }
  m.conflict_groups = groups.size();
  m.base_join_branches = result.base_join_branches.size();
  m.conflicts_ns = SinceNs(t0);

  // --- rejection ---
  t0 = Clock::now();
  std::vector<Hash32> numbers(number_set.begin(), number_set.end());
  internal::RejectionProblem problem;
  problem.cost.resize(nb);
  for (uint32_t b = 0; b < nb; ++b) problem.cost[b] = result.branches[b].cost;
  problem.prerejected = prerejected;
  problem.base_join = base_join;
  problem.groups = groups;
  for (const Hash32& ch : numbers) {
    ASSIGN_OR_RETURN(const BaseLeaf* leaf, base.Get(ch));
    ASSIGN_OR_RETURN(int64_t v, options.number_codec->Read(leaf->state));
    if (v < 0) {
      return absl::FailedPreconditionError(
          "merge: base value of number channel " + HexEncode(ch) +
          " is negative");
    }
    problem.base_values.push_back(v);
  }
  problem.diffs.resize(nb);
  for (uint32_t b = 0; b < nb; ++b) {
    auto& sums = problem.diffs[b];
    for (uint32_t c : branch_chains[b]) {
      for (const auto& [ch, d] : chains[c]->number_diffs) {
        uint32_t idx = static_cast<uint32_t>(
            std::lower_bound(numbers.begin(), numbers.end(), ch) -
            numbers.begin());
        sums.emplace_back(idx, d);
      }
    }
    if (sums.size() > 1) {
      std::sort(sums.begin(), sums.end(),
                [](const auto& x, const auto& y) { return x.first < y.first; });
      size_t w = 0;
      for (size_t r = 1; r < sums.size(); ++r) {
        if (sums[r].first == sums[w].first) {
          sums[w].second += sums[r].second;
        } else {
          sums[++w] = sums[r];
        }
      }
      sums.resize(w + 1);
    }
  }
  internal::RejectionSolution solution = internal::SolveRejection(problem);
  m.components = solution.components;
  m.exact_components = solution.exact_components;
  m.greedy_components = solution.greedy_components;
  std::map<Bytes, RejectReason> rejected;
  for (uint32_t b = 0; b < nb; ++b) {
    BranchInfo& info = result.branches[b];
    info.rejected = solution.rejected[b];
    if (!info.rejected) continue;
    info.reason = solution.reason[b];
    ++m.rejected_branches;
    for (uint32_t c : branch_chains[b]) {
      for (uint32_t d : chains[c]->deploys) {
        rejected.emplace(chain_block[c]->deploys[d].id, info.reason);
      }
    }
  }
  if (!rejected.empty()) {
    for (uint32_t b = 0; b < nb; ++b) {
      if (result.branches[b].rejected) continue;
      for (uint32_t c : branch_chains[b]) {
        for (uint32_t d : chains[c]->deploys)
          rejected.erase(chain_block[c]->deploys[d].id);
      }
    }
  }
  for (auto& [id, reason] : rejected) result.rejected.push_back({id, reason});
  m.rejected_deploys = result.rejected.size();
  m.rejection_ns = SinceNs(t0);

  // --- combine ---
  t0 = Clock::now();
  // The channel is copied in so that sorting never follows the pointer.
  struct Touch {
    uint64_t prefix;
    Hash32 channel;
    const rspace::ChannelChange* change;
  };
  std::vector<Touch> touches;
  touches.reserve(3 * m.deploys);
  std::set<JoinGroup> touched_groups;
  std::map<uint32_t, __int128> number_sums;
  for (uint32_t b = 0; b < nb; ++b) {
    if (result.branches[b].rejected) continue;
    for (const auto& [idx, d] : problem.diffs[b]) number_sums[idx] += d;
    for (uint32_t c : branch_chains[b]) {
      for (uint32_t d : chains[c]->deploys) {
        const DeployInput& dep = chain_block[c]->deploys[d];
        for (const rspace::ChannelChange& cc : dep.changes.channels) {
          if (dep.number_diffs.count(cc.channel)) continue;
          touches.push_back(
              Touch{PrefixKey(cc.channel.data(), 8), cc.channel, &cc});
          for (const auto& k : cc.added_continuations)
            touched_groups.insert(k.group);
          for (const auto& k : cc.removed_continuations)
            touched_groups.insert(k.group);
        }
      }
    }
  }
  std::sort(touches.begin(), touches.end(), [](const Touch& x, const Touch& y) {
    if (x.prefix != y.prefix) return x.prefix < y.prefix;
    return internal::Hash32Less()(x.channel, y.channel);
  });
  // New states in insertion order with an index by channel; sorted by
  // channel for the trie actions.
  std::vector<std::pair<Hash32, ChannelState>> next;
  internal::Hash32Map<uint32_t> next_index;
  next_index.reserve(touches.size() + 1);
  next.reserve(touches.size() + 1);
  auto find_next = [&](const Hash32& ch) -> ChannelState* {
    auto it = next_index.find(ch);
    return it == next_index.end() ? nullptr : &next[it->second].second;
  };
  auto add_next = [&](const Hash32& ch, ChannelState st) -> ChannelState* {
    next_index.emplace(ch, static_cast<uint32_t>(next.size()));
    next.emplace_back(ch, std::move(st));
    return &next.back().second;
  };
  ChannelAcc a;
  for (size_t i = 0; i < touches.size();) {
    const Hash32& ch = touches[i].change->channel;
    a.added_data.clear();
    a.removed_data.clear();
    a.added_k.clear();
    a.removed_k.clear();
    size_t j = i;
    for (; j < touches.size() && touches[j].change->channel == ch; ++j) {
      const rspace::ChannelChange& cc = *touches[j].change;
      for (const auto& x : cc.added_data) a.added_data.push_back(&x);
      for (const auto& x : cc.removed_data) a.removed_data.push_back(&x);
      for (const auto& k : cc.added_continuations) a.added_k.push_back(&k);
      for (const auto& k : cc.removed_continuations) a.removed_k.push_back(&k);
    }
    ASSIGN_OR_RETURN(const BaseLeaf* leaf, base.Get(ch));
    ASSIGN_OR_RETURN(ChannelState st, ApplyAcc(leaf->state, a));
    add_next(ch, std::move(st));
    i = j;
  }
  const size_t sorted_prefix = next.size();
  for (const JoinGroup& g : touched_groups) {
    if (g.empty()) return absl::InvalidArgumentError("merge: empty join group");
    const ChannelState* owner = find_next(g.front());
    if (owner == nullptr) {
      ASSIGN_OR_RETURN(const BaseLeaf* leaf, base.Get(g.front()));
      owner = &leaf->state;
    }
    bool present = false;
    for (const auto& k : owner->continuations) present |= k.group == g;
    for (size_t i = 0; i < g.size(); ++i) {
      if (i > 0 && g[i] == g[i - 1]) continue;
      ChannelState* target = find_next(g[i]);
      if (target == nullptr) {
        ASSIGN_OR_RETURN(const BaseLeaf* leaf, base.Get(g[i]));
        target = add_next(g[i], leaf->state);
      }
      auto& joins = target->joins;
      auto jit = std::find(joins.begin(), joins.end(), g);
      if (present && jit == joins.end()) joins.push_back(g);
      if (!present && jit != joins.end()) joins.erase(jit);
    }
  }
  for (const auto& [idx, sum] : number_sums) {
    if (sum == 0) continue;
    __int128 value = problem.base_values[idx] + sum;
    ASSIGN_OR_RETURN(
        ChannelState s,
        options.number_codec->Write(numbers[idx], static_cast<int64_t>(value)));
    if (ChannelState* cur = find_next(numbers[idx]); cur != nullptr) {
      *cur = std::move(s);
    } else {
      add_next(numbers[idx], std::move(s));
    }
  }
  std::vector<uint32_t> order(next.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  auto order_less = [&](uint32_t x, uint32_t y) {
    return internal::Hash32Less()(next[x].first, next[y].first);
  };
  // Entries up to sorted_prefix are in channel order already.
  std::sort(order.begin() + static_cast<ptrdiff_t>(sorted_prefix), order.end(),
            order_less);
  std::inplace_merge(order.begin(),
                     order.begin() + static_cast<ptrdiff_t>(sorted_prefix),
                     order.end(), order_less);
  m.combine_ns = SinceNs(t0);

  // --- trie actions ---
  t0 = Clock::now();
  std::vector<rspace::LeafUpdate> updates;
  std::vector<const BaseLeaf*> leaves(next.size());
  for (uint32_t i : order) {
    ASSIGN_OR_RETURN(leaves[i], base.Get(next[i].first));
  }
  // Per channel, independent: the new blob and its hash, or a deletion, or
  // nothing when the state equals the base. Collected in channel order.
  std::vector<std::optional<rspace::LeafUpdate>> slots(next.size());
  ForEachIndex(next.size(), threads, [&](size_t i) {
    const Hash32& ch = next[i].first;
    ChannelState& s = next[i].second;
    const BaseLeaf* leaf = leaves[i];
    Canonicalize(s);
    if (s.empty()) {
      if (leaf->blob.has_value()) slots[i] = rspace::LeafUpdate{ch, {}, {}};
      return;
    }
    Bytes blob = rspace::internal::EncodeChannelState(s);
    if (leaf->blob.has_value() && *leaf->blob == blob) return;
    Hash32 h = crypto::Blake2b256(blob);
    slots[i] = rspace::LeafUpdate{ch, std::move(blob), h};
  });
  updates.reserve(next.size());
  for (uint32_t i : order) {
    if (slots[i].has_value()) updates.push_back(std::move(*slots[i]));
  }
  m.channels_read = base.reads();
  m.base_read_ns = base.read_ns();
  m.leaves_written = updates.size();
  m.trie_actions_ns = SinceNs(t0);

  // --- apply ---
  t0 = Clock::now();
  if (updates.empty()) {
    result.root = base_root;
  } else {
    ASSIGN_OR_RETURN(result.root, history.Commit(base_root, updates));
  }
  m.apply_ns = SinceNs(t0);
  result.conflicts = std::move(groups);
  return result;
}

std::vector<std::pair<uint32_t, uint32_t>> ExpandConflictPairs(
    const MergeResult& result) {
  std::set<std::pair<uint32_t, uint32_t>> pairs;
  auto add = [&](uint32_t x, uint32_t y) {
    if (x != y) pairs.emplace(std::min(x, y), std::max(x, y));
  };
  for (const ConflictGroup& g : result.conflicts) {
    if (g.a_clique) {
      for (uint32_t x : g.a) {
        for (uint32_t y : g.a) add(x, y);
      }
    }
    for (uint32_t x : g.a) {
      for (uint32_t y : g.b) add(x, y);
    }
  }
  const uint32_t n = static_cast<uint32_t>(result.branches.size());
  for (uint32_t j : result.base_join_branches) {
    for (uint32_t y = 0; y < n; ++y) add(j, y);
  }
  return {pairs.begin(), pairs.end()};
}

}  // namespace rnode::casper::merge

// The merge: branches, conflict groups, rejection, combined state, new root.
#include "casper/merge/merger.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "casper/merge/internal/background.h"
#include "casper/merge/internal/base_reader.h"
#include "casper/merge/internal/depends.h"
#include "casper/merge/internal/hash_key.h"
#include "casper/merge/internal/key_sort.h"
#include "casper/merge/internal/rejection.h"
#include "crypto/hash.h"
#include "rspace/channel_codec.h"
#include "rspace/term.h"
#include "util/status_macros.h"
#include "util/worker_pool.h"

namespace rnode::casper::merge {
namespace {

using internal::BackgroundTask;
using internal::BaseLeaf;
using internal::BaseReader;
using internal::HelperThread;
using internal::KeyWordsLess;
using rspace::ChannelState;
using rspace::Datum;
using rspace::JoinGroup;
using rspace::WaitingContinuation;
using Clock = std::chrono::steady_clock;

int64_t SinceNs(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0)
      .count();
}

// Items per task when per-channel work is spread over threads: large enough
// that task overhead stays small against a leaf read or a blob hash.
constexpr size_t kParallelGrain = 256;

// Most threads a merge uses, whatever MergeOptions::threads says.
constexpr size_t kMaxThreads = 64;

// Runs fn(i) for every i in [0, n) on up to `threads` threads (inline when
// 1), in chunks of kParallelGrain. fn must only touch state of its own
// index. The pool is process-wide (its threads and their allocator caches
// persist between merges) and runs one merge's loop at a time. It is a
// util::WorkerPool rather than TBB so the tsan build can check it (the
// system libtbb is not instrumented).
template <typename Fn>
void ForEachIndex(size_t n, size_t threads, Fn&& fn) {
  threads = std::min(threads, kMaxThreads);
  if (threads <= 1 || n <= kParallelGrain) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  static std::mutex mu;
  static std::unique_ptr<WorkerPool> pool;
  static size_t pool_threads = 0;
  std::lock_guard<std::mutex> lock(mu);
  if (pool_threads != threads) {
    pool.reset();
    pool = std::make_unique<WorkerPool>(static_cast<int>(threads));
    pool_threads = threads;
  }
  const size_t chunks = (n + kParallelGrain - 1) / kParallelGrain;
  pool->ParallelFor(chunks, [&](size_t c) {
    const size_t end = std::min(n, (c + 1) * kParallelGrain);
    for (size_t i = c * kParallelGrain; i < end; ++i) fn(i);
  });
}

// Appends `records` to `out` in one bulk copy.
void AppendRecords(std::span<const internal::KeyRecord> records,
                   std::vector<internal::KeyRecord>& out) {
  out.insert(out.end(), records.begin(), records.end());
}

// Datum identity (docs/merge.md §6): source, persist, value hash, compared
// in that order with bytes in lexicographic order.
bool DatumKeyLess(const Hash32& source_a, bool persist_a, const Hash32& value_a,
                  const Hash32& source_b, bool persist_b,
                  const Hash32& value_b) {
  internal::Hash32Eq eq;
  internal::Hash32Less less;
  if (!eq(source_a, source_b)) return less(source_a, source_b);
  if (persist_a != persist_b) return persist_b;
  return less(value_a, value_b);
}

bool DatumLess(const Datum& a, const Datum& b) {
  return DatumKeyLess(a.source, a.persist, a.value->hash(), b.source, b.persist,
                      b.value->hash());
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

// A new channel state as lists of pointers to its items (into base leaves,
// the scope's changes and number-codec states): [begin, end) ranges of the
// merge's item pools, and its joins.
struct NewState {
  Hash32 channel{};
  const BaseLeaf* leaf = nullptr;
  uint32_t data_begin = 0, data_end = 0;
  uint32_t k_begin = 0, k_end = 0;
  std::vector<const JoinGroup*> joins;
};

struct ItemPools {
  std::vector<const Datum*> data;
  std::vector<const WaitingContinuation*> conts;

  std::span<const Datum* const> Data(const NewState& s) const {
    return {data.data() + s.data_begin, s.data_end - s.data_begin};
  }
  std::span<const WaitingContinuation* const> Conts(const NewState& s) const {
    return {conts.data() + s.k_begin, s.k_end - s.k_begin};
  }

  // Sets the items of `s` to those of `state`.
  void Assign(NewState& s, const ChannelState& state) {
    s.data_begin = static_cast<uint32_t>(data.size());
    for (const Datum& d : state.data) data.push_back(&d);
    s.data_end = static_cast<uint32_t>(data.size());
    s.k_begin = static_cast<uint32_t>(conts.size());
    for (const WaitingContinuation& k : state.continuations)
      conts.push_back(&k);
    s.k_end = static_cast<uint32_t>(conts.size());
    s.joins.clear();
    for (const JoinGroup& g : state.joins) s.joins.push_back(&g);
  }
};

// Items with equal keys are identical (the key is a hash of the content),
// so an unstable sort gives one order. Touches only the ranges of `s`.
void Canonicalize(NewState& s, ItemPools& pools) {
  auto d_first = pools.data.begin() + s.data_begin;
  auto d_last = pools.data.begin() + s.data_end;
  auto data_less = [](const Datum* a, const Datum* b) {
    return DatumLess(*a, *b);
  };
  if (!std::is_sorted(d_first, d_last, data_less)) {
    // Data with equal keys encode alike, so any order consistent with
    // DatumLess gives the same blob: sort flat (source prefix, pointer)
    // records and follow the pointers only on a prefix tie.
    struct Keyed {
      uint64_t prefix;
      const Datum* d;
    };
    std::vector<Keyed> keyed;
    keyed.reserve(static_cast<size_t>(d_last - d_first));
    for (auto it = d_first; it != d_last; ++it) {
      keyed.push_back({internal::PrefixKey((*it)->source.data(), 8), *it});
    }
    std::sort(keyed.begin(), keyed.end(), [](const Keyed& x, const Keyed& y) {
      if (x.prefix != y.prefix) return x.prefix < y.prefix;
      return DatumLess(*x.d, *y.d);
    });
    for (size_t i = 0; i < keyed.size(); ++i) d_first[i] = keyed[i].d;
  }
  auto k_first = pools.conts.begin() + s.k_begin;
  auto k_last = pools.conts.begin() + s.k_end;
  auto k_less = [](const WaitingContinuation* a, const WaitingContinuation* b) {
    return internal::Hash32Less()(a->source, b->source);
  };
  if (!std::is_sorted(k_first, k_last, k_less)) {
    std::sort(k_first, k_last, k_less);
  }
  if (s.joins.size() > 1) {
    std::sort(s.joins.begin(), s.joins.end(),
              [](const JoinGroup* a, const JoinGroup* b) { return *a < *b; });
    s.joins.erase(std::unique(s.joins.begin(), s.joins.end(),
                              [](const JoinGroup* a, const JoinGroup* b) {
                                return *a == *b;
                              }),
                  s.joins.end());
  }
}

struct ChannelAcc {
  std::vector<const Datum*> added_data;
  std::vector<const Datum*> removed_data;
  std::vector<const WaitingContinuation*> added_k;
  std::vector<const WaitingContinuation*> removed_k;
  // Scratch of ApplyAcc, kept across channels to reuse its capacity.
  struct DatumEntry {
    const Datum* item;
    int64_t delta;
  };
  struct ContEntry {
    const WaitingContinuation* item;
    int64_t delta;
  };
  std::vector<DatumEntry> data_entries;
  std::vector<ContEntry> cont_entries;

  void Clear() {
    added_data.clear();
    removed_data.clear();
    added_k.clear();
    removed_k.clear();
  }
};

// Appends base + added - removed (as multisets) to the pools as the items of
// `out`; Internal if a removal finds nothing. Additions are counted before
// removals, so the result is a function of the three multisets; with a
// removal, items come out in key order.
absl::Status ApplyAcc(const ChannelState& base, ChannelAcc& acc, NewState& out,
                      ItemPools& pools) {
  out.joins.clear();
  for (const JoinGroup& g : base.joins) out.joins.push_back(&g);
  out.data_begin = static_cast<uint32_t>(pools.data.size());
  out.k_begin = static_cast<uint32_t>(pools.conts.size());
  auto finish = [&] {
    out.data_end = static_cast<uint32_t>(pools.data.size());
    out.k_end = static_cast<uint32_t>(pools.conts.size());
  };
  if (acc.removed_data.empty() && acc.removed_k.empty()) {
    for (const Datum& d : base.data) pools.data.push_back(&d);
    pools.data.insert(pools.data.end(), acc.added_data.begin(),
                      acc.added_data.end());
    for (const WaitingContinuation& k : base.continuations)
      pools.conts.push_back(&k);
    pools.conts.insert(pools.conts.end(), acc.added_k.begin(),
                       acc.added_k.end());
    finish();
    return absl::OkStatus();
  }
  using DatumEntry = ChannelAcc::DatumEntry;
  std::vector<DatumEntry>& data = acc.data_entries;
  data.clear();
  data.reserve(base.data.size() + acc.added_data.size() +
               acc.removed_data.size());
  for (const auto& d : base.data) data.push_back({&d, 1});
  for (const Datum* d : acc.added_data) data.push_back({d, 1});
  for (const Datum* d : acc.removed_data) data.push_back({d, -1});
  std::sort(data.begin(), data.end(),
            [](const DatumEntry& x, const DatumEntry& y) {
              return DatumLess(*x.item, *y.item);
            });
  auto same_datum = [](const Datum& x, const Datum& y) {
    return x.source == y.source && x.persist == y.persist &&
           x.value->hash() == y.value->hash();
  };
  for (size_t i = 0; i < data.size();) {
    size_t j = i;
    int64_t n = 0;
    const Datum* item = nullptr;
    for (; j < data.size() && same_datum(*data[j].item, *data[i].item); ++j) {
      n += data[j].delta;
      if (data[j].delta > 0) item = data[j].item;
    }
    if (n < 0) {
      return absl::InternalError(
          "merge: removal of a datum absent from the base");
    }
    for (int64_t r = 0; r < n; ++r) pools.data.push_back(item);
    i = j;
  }
  using ContEntry = ChannelAcc::ContEntry;
  std::vector<ContEntry>& conts = acc.cont_entries;
  conts.clear();
  conts.reserve(base.continuations.size() + acc.added_k.size() +
                acc.removed_k.size());
  for (const auto& k : base.continuations) conts.push_back({&k, 1});
  for (const WaitingContinuation* k : acc.added_k) conts.push_back({k, 1});
  for (const WaitingContinuation* k : acc.removed_k) conts.push_back({k, -1});
  std::sort(conts.begin(), conts.end(),
            [](const ContEntry& x, const ContEntry& y) {
              return internal::Hash32Less()(x.item->source, y.item->source);
            });
  for (size_t i = 0; i < conts.size();) {
    size_t j = i;
    int64_t n = 0;
    const WaitingContinuation* item = nullptr;
    for (; j < conts.size() && conts[j].item->source == conts[i].item->source;
         ++j) {
      n += conts[j].delta;
      if (conts[j].delta > 0) item = conts[j].item;
    }
    if (n < 0) {
      return absl::InternalError(
          "merge: removal of a continuation absent from the base");
    }
    for (int64_t r = 0; r < n; ++r) pools.conts.push_back(item);
    i = j;
  }
  finish();
  return absl::OkStatus();
}

int CompareBytes(const Bytes& x, const Bytes& y) {
  const size_t n = std::min(x.size(), y.size());
  int c = n == 0 ? 0 : std::memcmp(x.data(), y.data(), n);
  if (c != 0) return c;
  return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
}

// The conflict groups of sorted key records (internal::AppendConflictRecords
// tags: kind * 2 + side): per (key, kind), side A and
// side B branches ascending; a group has an edge with two in `a` (races are
// cliques), or one in `a` and one in `b` that are distinct branches.
void CollectGroups(const std::vector<internal::KeyRecord>& records,
                   std::vector<ConflictGroup>& out) {
  for (size_t i = 0; i < records.size();) {
    const internal::KeyRecord& first = records[i];
    const uint32_t kind = first.tag >> 1;
    const bool clique =
        kind != static_cast<uint32_t>(internal::ConflictKeyKind::kChannel);
    // Records are ordered by side, then branch: count distinct branches per
    // side without building lists (nearly every key has no edge).
    size_t j = i;
    size_t count_a = 0, count_b = 0;
    bool distinct = false;
    for (; j < records.size() && (records[j].tag >> 1) == kind &&
           internal::SameKey(records[j], first);
         ++j) {
      distinct |= records[j].item != first.item;
      const bool new_branch = j == i || records[j].tag != records[j - 1].tag ||
                              records[j].item != records[j - 1].item;
      if (new_branch) ++((records[j].tag & 1) ? count_b : count_a);
    }
    const bool edge =
        (clique && count_a >= 2) || (count_a >= 1 && count_b >= 1 && distinct);
    if (edge) {
      ConflictGroup g;
      g.a_clique = clique;
      g.a.reserve(count_a);
      g.b.reserve(count_b);
      for (size_t k = i; k < j; ++k) {
        std::vector<uint32_t>& v = (records[k].tag & 1) ? g.b : g.a;
        if (v.empty() || v.back() != records[k].item)
          v.push_back(records[k].item);
      }
      out.push_back(std::move(g));
    }
    i = j;
  }
}

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
  // Chain g of the scope is chain g - chain_offset[b] of blocks[b]; the
  // merge reads a chain through its block's flat arrays (BlockFlat).
  std::vector<uint32_t> chain_offset(blocks.size() + 1, 0);
  for (size_t b = 0; b < blocks.size(); ++b) {
    m.deploys += blocks[b]->deploys.size();
    chain_offset[b + 1] =
        chain_offset[b] + static_cast<uint32_t>(blocks[b]->chains.size());
  }
  const uint32_t nc = chain_offset.back();
  std::vector<uint32_t> chain_block(nc);  // Index into `blocks`.
  for (uint32_t b = 0; b < blocks.size(); ++b) {
    std::fill(chain_block.begin() + chain_offset[b],
              chain_block.begin() + chain_offset[b + 1], b);
  }
  auto flat_of = [&](uint32_t g) -> const BlockFlat& {
    return blocks[chain_block[g]]->flat;
  };
  auto local_of = [&](uint32_t g) { return g - chain_offset[chain_block[g]]; };
  // Every number channel of the scope, ascending, unique.
  std::vector<Hash32> numbers;
  {
    // Few distinct channels (vaults) named by many chains.
    absl::flat_hash_set<Hash32, rspace::Hash32Hasher, internal::Hash32Eq> seen;
    for (const BlockIndex* b : blocks) {
      for (const NumberDiff& n : b->flat.number_diffs.all()) {
        if (seen.insert(n.channel).second) numbers.push_back(n.channel);
      }
    }
    std::sort(numbers.begin(), numbers.end(), internal::Hash32Less());
  }
  if (!numbers.empty()) {
    std::vector<internal::KeyRecord> number_keys;
    for (const Hash32& ch : numbers)
      number_keys.push_back(internal::KeyRecord::Make(ch, 0, 0));
    for (const BlockIndex* b : blocks) {
      for (const RawChange& r : b->flat.raw_changes.all()) {
        if (std::binary_search(number_keys.begin(), number_keys.end(), r.key,
                               KeyWordsLess)) {
          return absl::InvalidArgumentError(
              "merge: number channel " + HexEncode(internal::KeyOf(r.key)) +
              " has raw changes in a deploy that does not list it");
        }
      }
    }
    if (options.number_codec == nullptr) {
      return absl::InvalidArgumentError("merge: number diffs without a codec");
    }
  }
  m.blocks = blocks.size();
  m.chains = nc;

  // The base leaves the conflict and rejection steps read (channels of
  // removed items, channels produced on, number channels; per chain, a
  // superset of what the branches need) are noted now in one batch. With
  // more than one thread they are read on a helper thread while the branch
  // step runs; nothing else touches `base` until the read is joined.
  auto base_owner =
      std::make_unique<BaseReader>(history, base_root, options.term_factory);
  BaseReader& base = *base_owner;
  const size_t threads = std::max<size_t>(options.threads, 1);
  // Leaf per removed item (BlockFlat::removed, scope order) and per
  // produced-on channel (BlockFlat::produced_on, scope order).
  std::vector<uint32_t> removed_leaf, produce_leaf, number_leaf(numbers.size());
  {
    // Kept per thread between merges (see SortKeyRecords).
    thread_local std::vector<internal::KeyRecord> wants;
    wants.clear();
    enum : uint32_t { kRemoved = 0, kProduce = 1, kNumber = 2 };
    uint32_t removed = 0, produce = 0;
    for (const BlockIndex* b : blocks) {
      for (const auto& [item, net] : b->flat.removed.all()) {
        wants.push_back(
            internal::KeyRecord::Make(item.channel, removed++, kRemoved));
      }
      const size_t first = wants.size();
      AppendRecords(b->flat.produced_on.all(), wants);
      for (size_t i = first; i < wants.size(); ++i) {
        wants[i].item = produce++;
        wants[i].tag = kProduce;
      }
    }
    for (uint32_t i = 0; i < numbers.size(); ++i)
      wants.push_back(internal::KeyRecord::Make(numbers[i], i, kNumber));
    removed_leaf.resize(removed);
    produce_leaf.resize(produce);
    base.Resolve(wants, /*sorted=*/false,
                 [&](const internal::KeyRecord& r, uint32_t leaf) {
                   (r.tag == kRemoved   ? removed_leaf
                    : r.tag == kProduce ? produce_leaf
                                        : number_leaf)[r.item] = leaf;
                 });
    internal::TrimScratch(wants);
  }
  BackgroundTask background;
  if (threads > 1 && base.pending() >= kParallelGrain) {
    background.Start([&base] { return base.ReadPending(); });
  }
  m.index_ns = SinceNs(t0);

  // --- branches ---
  t0 = Clock::now();
  std::vector<uint32_t> labels;
  {
    thread_local std::vector<internal::KeyRecord> records;
    records.clear();
    size_t keys = 0;
    for (const BlockIndex* b : blocks) keys += b->flat.depend_keys.all().size();
    records.reserve(keys);
    for (uint32_t b = 0; b < blocks.size(); ++b) {
      const size_t first = records.size();
      AppendRecords(blocks[b]->flat.depend_keys.all(), records);
      for (size_t i = first; i < records.size(); ++i)
        records[i].item += chain_offset[b];
    }
    labels = internal::ComponentsOfRecords(nc, records);
    internal::TrimScratch(records);
  }
  std::vector<uint32_t> branch_of_label(nc, UINT32_MAX);
  // Chains of each branch, ascending, as one flat list with offsets.
  std::vector<uint32_t> chain_branch(nc);
  uint32_t nb = 0;
  for (uint32_t i = 0; i < nc; ++i) {
    uint32_t& b = branch_of_label[labels[i]];
    if (b == UINT32_MAX) b = nb++;
    chain_branch[i] = b;
  }
  std::vector<uint32_t> branch_offset(nb + 1, 0);
  for (uint32_t b : chain_branch) ++branch_offset[b + 1];
  for (uint32_t b = 0; b < nb; ++b) branch_offset[b + 1] += branch_offset[b];
  std::vector<uint32_t> branch_chain_list(nc);
  {
    std::vector<uint32_t> fill(branch_offset.begin(), branch_offset.end() - 1);
    for (uint32_t i = 0; i < nc; ++i) {
      branch_chain_list[fill[chain_branch[i]]++] = i;
    }
  }
  auto chains_of = [&](uint32_t b) {
    return std::span<const uint32_t>(
        branch_chain_list.data() + branch_offset[b],
        branch_offset[b + 1] - branch_offset[b]);
  };
  auto single = [&](uint32_t b) {
    return branch_offset[b + 1] - branch_offset[b] == 1;
  };
  m.branches = nb;
  // Facts of the branches of several chains (the others use their chain's
  // flat records).
  std::vector<EventFacts> owned_facts;
  std::vector<uint32_t> multi_branches;
  result.branches.resize(nb);
  std::vector<const EventFacts*> parts;
  for (uint32_t b = 0; b < nb; ++b) {
    BranchInfo& info = result.branches[b];
    info.chains.reserve(chains_of(b).size());
    for (uint32_t g : chains_of(b)) {
      const BlockFlat& f = flat_of(g);
      const uint32_t c = local_of(g);
      info.chains.push_back(
          ChainKey{blocks[chain_block[g]]->hash, f.first_deploy[c]});
      if (__builtin_add_overflow(info.cost, f.cost[c], &info.cost)) {
        return absl::InvalidArgumentError("merge: branch cost overflows");
      }
    }
    if (!single(b)) multi_branches.push_back(b);
  }
  owned_facts.reserve(multi_branches.size());
  for (uint32_t b : multi_branches) {
    parts.clear();
    for (uint32_t g : chains_of(b)) {
      parts.push_back(&blocks[chain_block[g]]->chains[local_of(g)].facts);
    }
    owned_facts.push_back(UnionFacts(parts));
  }
  m.branches_ns = SinceNs(t0);

  // --- conflicts and pre-rejections ---
  t0 = Clock::now();
  std::vector<std::optional<RejectReason>> prerejected(nb);
  std::vector<ConflictGroup> groups;
  // Every deploy id of the scope with its branch, ascending by (id, branch).
  struct IdRef {
    uint64_t prefix;
    const Bytes* id;
    uint32_t branch;
  };
  std::vector<IdRef> ids;
  {
    ids.reserve(m.deploys);
    for (uint32_t bl = 0; bl < blocks.size(); ++bl) {
      const BlockIndex& block = *blocks[bl];
      for (uint32_t c = 0; c < block.chains.size(); ++c) {
        const uint32_t b = chain_branch[chain_offset[bl] + c];
        for (uint32_t d : block.flat.deploys.of(c)) {
          ids.push_back(
              IdRef{block.flat.id_prefix[d], &block.deploys[d].id, b});
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
  // The conflict keys need no base state: they are collected, sorted and
  // grouped before the batched base read is joined (with more than one
  // thread that read is still running on the helper thread). Then the base
  // leaves of the branches of several chains are noted (the index step
  // noted every chain's) and read, and one pass checks availability and
  // base joins.
  std::vector<bool> base_join(nb, false);
  // Kept per thread between merges (see SortKeyRecords).
  thread_local std::vector<internal::KeyRecord> key_records;
  key_records.clear();
  {
    size_t keys = 0;
    for (const BlockIndex* b : blocks)
      keys += b->flat.conflict_keys.all().size();
    for (const EventFacts& f : owned_facts) {
      keys += f.consumed_produces.size() + f.fired_consumes.size() +
              f.pcnd.size() + f.ccnd.size();
    }
    key_records.reserve(keys);
  }
  for (uint32_t bl = 0; bl < blocks.size(); ++bl) {
    // Copied in bulk; records of branches of several chains are dropped.
    const uint32_t* branch = chain_branch.data() + chain_offset[bl];
    size_t out = key_records.size();
    AppendRecords(blocks[bl]->flat.conflict_keys.all(), key_records);
    for (size_t i = out; i < key_records.size(); ++i) {
      const uint32_t b = branch[key_records[i].item];
      if (!single(b)) continue;
      key_records[out] = key_records[i];
      key_records[out++].item = b;
    }
    key_records.resize(out);
  }
  for (size_t i = 0; i < multi_branches.size(); ++i) {
    internal::AppendConflictRecords(owned_facts[i], multi_branches[i],
                                    key_records);
  }
  internal::SortKeyRecords(key_records);
  CollectGroups(key_records, groups);
  // Item nets and noted leaves of the branches of several chains.
  struct MultiNeeds {
    std::vector<std::pair<ItemKey, int64_t>> removed;  // Negative nets.
    std::vector<uint32_t> removed_leaf;
    std::vector<uint32_t> produce_leaf;
  };
  std::vector<MultiNeeds> multi_needs(multi_branches.size());
  RETURN_IF_ERROR(background.Join());
  for (size_t i = 0; i < multi_branches.size(); ++i) {
    const uint32_t b = multi_branches[i];
    MultiNeeds& needs = multi_needs[i];
    if (!prerejected[b].has_value()) {
      std::map<ItemKey, int64_t> merged;
      for (uint32_t g : chains_of(b)) {
        for (const auto& [k, n] :
             blocks[chain_block[g]]->chains[local_of(g)].item_nets)
          merged[k] += n;
      }
      for (const auto& [item, net] : merged) {
        if (net >= 0) continue;
        needs.removed.emplace_back(item, net);
        needs.removed_leaf.push_back(base.Want(item.channel));
      }
    }
    const Hash32* last = nullptr;
    for (const auto& p : owned_facts[i].created_produces) {
      if (last != nullptr && *last == p.channel) continue;
      last = &p.channel;
      needs.produce_leaf.push_back(base.Want(p.channel));
    }
  }
  RETURN_IF_ERROR(base.ReadPending());
  {
    // Chains of one-chain branches, in scope order over the flat arrays.
    uint32_t removed_pos = 0, produce_pos = 0;
    for (uint32_t bl = 0; bl < blocks.size(); ++bl) {
      const BlockFlat& f = blocks[bl]->flat;
      for (uint32_t c = 0; c < f.first_deploy.size(); ++c) {
        const uint32_t b = chain_branch[chain_offset[bl] + c];
        const auto removed = f.removed.of(c);
        const uint32_t produced =
            static_cast<uint32_t>(f.produced_on.of(c).size());
        if (single(b)) {
          for (size_t k = 0; k < removed.size(); ++k) {
            if (prerejected[b].has_value()) break;
            const BaseLeaf& leaf = base.At(removed_leaf[removed_pos + k]);
            if (BaseCount(leaf.state, removed[k].first) + removed[k].second < 0)
              prerejected[b] = RejectReason::kUnavailable;
          }
          for (uint32_t k = 0; k < produced; ++k) {
            if (HasMultiJoin(base.At(produce_leaf[produce_pos + k]).state)) {
              base_join[b] = true;
              break;
            }
          }
        }
        removed_pos += static_cast<uint32_t>(removed.size());
        produce_pos += produced;
      }
    }
  }
  for (size_t i = 0; i < multi_branches.size(); ++i) {
    const uint32_t b = multi_branches[i];
    const MultiNeeds& needs = multi_needs[i];
    for (size_t k = 0; k < needs.removed.size(); ++k) {
      if (prerejected[b].has_value()) break;
      const BaseLeaf& leaf = base.At(needs.removed_leaf[k]);
      if (BaseCount(leaf.state, needs.removed[k].first) +
              needs.removed[k].second <
          0)
        prerejected[b] = RejectReason::kUnavailable;
    }
    for (uint32_t leaf : needs.produce_leaf) {
      if (HasMultiJoin(base.At(leaf).state)) {
        base_join[b] = true;
        break;
      }
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
  internal::RejectionProblem problem;
  problem.cost.resize(nb);
  for (uint32_t b = 0; b < nb; ++b) problem.cost[b] = result.branches[b].cost;
  problem.prerejected = prerejected;
  problem.base_join = base_join;
  problem.groups = std::move(groups);
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
  std::vector<internal::BranchDiffs::Entry> sums;
  for (uint32_t b = 0; b < nb; ++b) {
    sums.clear();
    for (uint32_t g : chains_of(b)) {
      for (const auto& [ch, d] : flat_of(g).number_diffs.of(local_of(g))) {
        uint32_t idx = static_cast<uint32_t>(
            std::lower_bound(numbers.begin(), numbers.end(), ch,
                             internal::Hash32Less()) -
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
    problem.diffs.Append(sums);
  }
  internal::RejectionSolution solution = internal::SolveRejection(problem);
  m.components = solution.components;
  m.exact_components = solution.exact_components;
  m.greedy_components = solution.greedy_components;
  for (uint32_t b = 0; b < nb; ++b) {
    BranchInfo& info = result.branches[b];
    info.rejected = solution.rejected[b];
    if (!info.rejected) continue;
    info.reason = solution.reason[b];
    ++m.rejected_branches;
  }
  // A deploy is rejected when no kept branch holds it, with the reason of
  // the first rejected branch holding it; ids come out ascending.
  if (m.rejected_branches != 0) {
    for (size_t i = 0; i < ids.size();) {
      size_t j = i + 1;
      bool kept = !result.branches[ids[i].branch].rejected;
      while (j < ids.size() && ids[j].prefix == ids[i].prefix &&
             *ids[j].id == *ids[i].id) {
        kept |= !result.branches[ids[j].branch].rejected;
        ++j;
      }
      if (!kept) {
        result.rejected.push_back(
            {*ids[i].id, result.branches[ids[i].branch].reason});
      }
      i = j;
    }
  }
  m.rejected_deploys = result.rejected.size();
  m.rejection_ns = SinceNs(t0);

  // --- combine ---
  t0 = Clock::now();
  // The kept channel changes, grouped by channel in channel order by the
  // key sort (the key records of the conflict step are no longer needed:
  // their buffer is reused). The order of the changes of one channel does
  // not matter (ApplyAcc and Canonicalize depend only on the multisets).
  std::vector<const RawChange*> changes;
  changes.reserve(3 * m.deploys);
  std::vector<internal::KeyRecord>& touches = key_records;
  touches.clear();
  std::set<JoinGroup> touched_groups;
  std::map<uint32_t, __int128> number_sums;
  for (uint32_t b = 0; b < nb; ++b) {
    if (result.branches[b].rejected) continue;
    for (const auto& [idx, d] : problem.diffs[b]) number_sums[idx] += d;
  }
  for (uint32_t bl = 0; bl < blocks.size(); ++bl) {
    const BlockFlat& f = blocks[bl]->flat;
    for (uint32_t c = 0; c < f.first_deploy.size(); ++c) {
      if (result.branches[chain_branch[chain_offset[bl] + c]].rejected)
        continue;
      for (const RawChange& r : f.raw_changes.of(c)) {
        internal::KeyRecord key = r.key;
        key.item = static_cast<uint32_t>(changes.size());
        touches.push_back(key);
        changes.push_back(&r);
        for (const auto& k : r.added_k) touched_groups.insert(k.group);
        for (const auto& k : r.removed_k) touched_groups.insert(k.group);
      }
    }
  }
  internal::SortKeyRecords(touches);
  std::vector<uint32_t> touch_leaf;  // Per distinct touched channel.
  {
    // Distinct channels get distinct leaves, and Resolve reports in key
    // order: a new leaf starts the next channel.
    base.Resolve(touches, /*sorted=*/true,
                 [&](const internal::KeyRecord&, uint32_t leaf) {
                   if (touch_leaf.empty() || touch_leaf.back() != leaf)
                     touch_leaf.push_back(leaf);
                 });
    for (const JoinGroup& g : touched_groups) {
      for (const Hash32& ch : g) base.Want(ch);
    }
    RETURN_IF_ERROR(base.ReadPending());
  }
  // New states: the sorted run of touched channels first, then the states
  // added by join derivation and number channels (indexed by channel).
  std::vector<NewState> next;
  ItemPools pools;
  next.reserve(touches.size() + 1);
  internal::Hash32Map<uint32_t> extra_index;
  size_t sorted_prefix = 0;
  auto find_next = [&](const Hash32& ch) -> NewState* {
    auto run_end = next.begin() + static_cast<ptrdiff_t>(sorted_prefix);
    auto it = std::lower_bound(next.begin(), run_end, ch,
                               [](const NewState& x, const Hash32& c) {
                                 return internal::Hash32Less()(x.channel, c);
                               });
    if (it != run_end && it->channel == ch) return &*it;
    auto e = extra_index.find(ch);
    return e == extra_index.end() ? nullptr : &next[e->second];
  };
  // Adds a state for a channel outside the run, with the items of `state`.
  auto add_extra = [&](const Hash32& ch, const BaseLeaf* leaf,
                       const ChannelState& state) -> NewState* {
    extra_index.emplace(ch, static_cast<uint32_t>(next.size()));
    NewState& ns = next.emplace_back();
    ns.channel = ch;
    ns.leaf = leaf;
    pools.Assign(ns, state);
    return &ns;
  };
  ChannelAcc a;
  for (size_t i = 0; i < touches.size();) {
    const Hash32 ch = internal::KeyOf(touches[i]);
    a.Clear();
    size_t j = i;
    for (; j < touches.size() && internal::SameKey(touches[j], touches[i]);
         ++j) {
      const RawChange& r = *changes[touches[j].item];
      for (const auto& x : r.added_data) a.added_data.push_back(&x);
      for (const auto& x : r.removed_data) a.removed_data.push_back(&x);
      for (const auto& k : r.added_k) a.added_k.push_back(&k);
      for (const auto& k : r.removed_k) a.removed_k.push_back(&k);
    }
    const BaseLeaf* leaf = &base.At(touch_leaf[next.size()]);
    NewState& ns = next.emplace_back();
    ns.channel = ch;
    ns.leaf = leaf;
    RETURN_IF_ERROR(ApplyAcc(leaf->state, a, ns, pools));
    i = j;
  }
  sorted_prefix = next.size();
  for (const JoinGroup& g : touched_groups) {
    if (g.empty()) return absl::InvalidArgumentError("merge: empty join group");
    bool present = false;
    if (const NewState* owner = find_next(g.front()); owner != nullptr) {
      for (const WaitingContinuation* k : pools.Conts(*owner))
        present |= k->group == g;
    } else {
      ASSIGN_OR_RETURN(const BaseLeaf* leaf, base.Get(g.front()));
      for (const auto& k : leaf->state.continuations) present |= k.group == g;
    }
    for (size_t i = 0; i < g.size(); ++i) {
      if (i > 0 && g[i] == g[i - 1]) continue;
      NewState* target = find_next(g[i]);
      if (target == nullptr) {
        ASSIGN_OR_RETURN(const BaseLeaf* leaf, base.Get(g[i]));
        target = add_extra(g[i], leaf, leaf->state);
      }
      auto& joins = target->joins;
      auto jit = std::find_if(joins.begin(), joins.end(),
                              [&](const JoinGroup* x) { return *x == g; });
      if (present && jit == joins.end()) joins.push_back(&g);
      if (!present && jit != joins.end()) joins.erase(jit);
    }
  }
  std::deque<ChannelState> number_states;  // Stable addresses.
  for (const auto& [idx, sum] : number_sums) {
    if (sum == 0) continue;
    __int128 value = problem.base_values[idx] + sum;
    ASSIGN_OR_RETURN(
        ChannelState s,
        options.number_codec->Write(numbers[idx], static_cast<int64_t>(value)));
    const ChannelState& owned = number_states.emplace_back(std::move(s));
    if (NewState* cur = find_next(numbers[idx]); cur != nullptr) {
      pools.Assign(*cur, owned);
    } else {
      ASSIGN_OR_RETURN(const BaseLeaf* leaf, base.Get(numbers[idx]));
      add_extra(numbers[idx], leaf, owned);
    }
  }
  std::vector<uint32_t> order(next.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  auto order_less = [&](uint32_t x, uint32_t y) {
    return internal::Hash32Less()(next[x].channel, next[y].channel);
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
  // Per channel, independent: the new blob and its hash, or a deletion, or
  // nothing when the state equals the base. Collected in channel order.
  std::vector<std::optional<rspace::LeafUpdate>> slots(next.size());
  ForEachIndex(next.size(), threads, [&](size_t i) {
    NewState& s = next[i];
    const BaseLeaf* leaf = s.leaf;
    Canonicalize(s, pools);
    if (s.data_begin == s.data_end && s.k_begin == s.k_end && s.joins.empty()) {
      if (leaf->blob.has_value())
        slots[i] = rspace::LeafUpdate{s.channel, {}, {}};
      return;
    }
    Bytes blob =
        rspace::EncodeChannelState(pools.Data(s), pools.Conts(s), s.joins);
    if (leaf->blob.has_value() && *leaf->blob == blob) return;
    Hash32 h = crypto::Blake2b256(blob);
    slots[i] = rspace::LeafUpdate{s.channel, std::move(blob), h};
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
    ASSIGN_OR_RETURN(result.root,
                     history.CommitOwned(base_root, std::move(updates)));
  }
  m.apply_ns = SinceNs(t0);
  result.conflicts = std::move(problem.groups);
  internal::TrimScratch(key_records);
  if (threads > 1) {
    // Freeing the decoded base states is the bulk of the merge's teardown;
    // with a second thread it overlaps the caller's next steps.
    HelperThread::Get().Post([p = base_owner.release()] { delete p; });
  }
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

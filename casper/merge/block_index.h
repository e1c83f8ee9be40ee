// The merger's inputs per block and the per-block index (deploy chains and
// their event facts) built once when a block is admitted and then cached.
#ifndef RNODE_CASPER_MERGE_BLOCK_INDEX_H_
#define RNODE_CASPER_MERGE_BLOCK_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/merge/internal/key_sort.h"
#include "rspace/event_log.h"
#include "rspace/state_change.h"
#include "util/bytes.h"

namespace rnode::casper::merge {

// Largest number of deploys in one block the index accepts. Far above any
// phlo-limited block; bounds the memory one malformed block can ask for.
inline constexpr size_t kMaxDeploysPerBlock = 65536;

// One deploy as executed in its block (docs/merge.md §1).
struct DeployInput {
  Bytes id;  // Signature bytes; system deploys: an id unique to the block.
  uint64_t cost = 0;                  // Phlo cost; 0 for system deploys.
  std::vector<rspace::Event> events;  // The deploy's event log.
  rspace::StateChanges changes;       // Per channel, ascending.
  // Every number channel the deploy touched -> its delta (0 for a read).
  std::map<Hash32, int64_t> number_diffs;
};

struct BlockInput {
  Hash32 hash{};
  uint64_t number = 0;
  std::vector<DeployInput> deploys;  // Execution order.
};

// A Produce event of the set.
struct CreatedProduce {
  Hash32 hash{};
  Hash32 channel{};
  bool persist = false;
  bool mergeable = false;
};

// A produce named by a bind of a COMM without peek.
struct ConsumedProduce {
  Hash32 hash{};
  bool persist = false;    // The datum's persist flag.
  bool mergeable = false;  // Its channel is a number channel of the consumer.
};

// A Consume event of the set.
struct CreatedConsume {
  Hash32 hash{};
  std::vector<Hash32> channels;  // Sorted, unique.
  bool persist = false;
};

// A consume named by a COMM.
struct FiredConsume {
  Hash32 hash{};
  bool persist = false;
  bool mergeable = false;  // Every channel is a number channel of the deploy.
};

// A datum or continuation of a channel change, as a multiset key.
struct ItemKey {
  Hash32 channel{};
  bool continuation = false;
  Hash32 source{};
  bool persist = false;
  Hash32 value{};  // Datum value hash; zero for continuations.
  auto operator<=>(const ItemKey&) const = default;
};

// The event facts of a set of deploys (a deploy, a chain or a branch),
// each list sorted by hash and unique (flags OR-ed over the set).
struct EventFacts {
  std::vector<CreatedProduce> created_produces;
  std::vector<ConsumedProduce> consumed_produces;
  std::vector<CreatedConsume> created_consumes;
  std::vector<FiredConsume> fired_consumes;
  // Derived (docs/merge.md §2): produces created and not destroyed, consumes
  // created and not destroyed.
  std::vector<CreatedProduce> pcnd;
  std::vector<CreatedConsume> ccnd;
};

// One deploy chain of a block (docs/merge.md §3).
struct ChainIndex {
  Hash32 block{};
  uint64_t block_number = 0;
  uint32_t first_deploy = 0;  // Chain key: (block, first_deploy).
  std::vector<uint32_t>
      deploys;  // Indices into BlockIndex::deploys, ascending.
  uint64_t cost = 0;
  EventFacts facts;
  // Net count (added - removed) of every item the chain's state changes
  // touch on non-number channels, nonzero only, ascending.
  std::vector<std::pair<ItemKey, int64_t>> item_nets;
  // Sum of the chain's number diffs per number channel (every listed channel).
  std::map<Hash32, __int128> number_diffs;
};

// Lists of a block's chains stored back to back in one array, so the
// merger streams over a block instead of following pointers per chain.
template <typename T>
class ChainLists {
 public:
  // The list of chain `c`. REQUIRES: c < chains().
  std::span<const T> of(size_t c) const {
    const uint32_t begin = c == 0 ? 0 : end_[c - 1];
    return {items_.data() + begin, end_[c] - begin};
  }
  // Every chain's list, in chain order.
  std::span<const T> all() const { return items_; }
  size_t chains() const { return end_.size(); }

  // Building: append the current chain's items, then close its list.
  std::vector<T>& items() { return items_; }
  void Close() { end_.push_back(static_cast<uint32_t>(items_.size())); }

 private:
  std::vector<T> items_;
  std::vector<uint32_t> end_;  // Per chain, one past its last item.
};

// A number channel's summed diff in a chain.
struct NumberDiff {
  Hash32 channel{};
  __int128 diff = 0;
};

// A state change the merge applies as it is (its channel is not a number
// channel of its deploy), with its item lists as spans so the merge never
// loads the ChannelChange itself. Points into BlockIndex::deploys.
struct RawChange {
  internal::KeyRecord key;  // The channel (item and tag 0).
  std::span<const rspace::Datum> added_data;
  std::span<const rspace::Datum> removed_data;
  std::span<const rspace::WaitingContinuation> added_k;
  std::span<const rspace::WaitingContinuation> removed_k;
};

// What the merger reads of each chain, flattened over the block at
// admission (docs/merge.md §8). Derived from ChainIndex; record items are
// chain numbers within the block.
struct BlockFlat {
  std::vector<uint32_t> first_deploy;  // Per chain.
  std::vector<uint64_t> cost;          // Per chain.
  ChainLists<uint32_t> deploys;        // ChainIndex::deploys.
  // Per deploy (block order): its id's first 8 bytes, big-endian, zero-padded.
  std::vector<uint64_t> id_prefix;
  // internal::AppendDependRecords and AppendConflictRecords of the facts.
  ChainLists<internal::KeyRecord> depend_keys;
  ChainLists<internal::KeyRecord> conflict_keys;
  // ChainIndex::item_nets with a negative net, ascending.
  ChainLists<std::pair<ItemKey, int64_t>> removed;
  // Channels of the created produces, consecutive repeats dropped (item and
  // tag 0).
  ChainLists<internal::KeyRecord> produced_on;
  ChainLists<NumberDiff> number_diffs;  // ChainIndex::number_diffs.
  ChainLists<RawChange> raw_changes;    // Deploy order, then channel order.
  // The base channels a merge of the block may read: the channels of
  // `removed`, `produced_on` and `raw_changes` entries and of every join
  // group those changes add or remove; ascending, unique, item = index, tag
  // 0. Sorted once here, so a merge's base plan sorts one record per
  // channel and block instead of one per entry (docs/merge.md §8).
  std::vector<internal::KeyRecord> base_keys;
  // Per entry of removed.all(), produced_on.all(), raw_changes.all(): the
  // index of its channel in base_keys.
  std::vector<uint32_t> removed_base;
  std::vector<uint32_t> produce_base;
  std::vector<uint32_t> change_base;
};

// Immutable once built; share it as shared_ptr<const BlockIndex>. Thread-safe
// for concurrent reads. Not copyable: `flat` points into `deploys`.
struct BlockIndex {
  BlockIndex() = default;
  BlockIndex(const BlockIndex&) = delete;
  BlockIndex& operator=(const BlockIndex&) = delete;

  Hash32 hash{};
  uint64_t number = 0;
  std::vector<DeployInput> deploys;
  std::vector<ChainIndex> chains;  // Ascending first_deploy.
  BlockFlat flat;
};

// Facts of one deploy from its event log; `number_channels` are the deploy's
// number channels (keys of number_diffs). InvalidArgument on a malformed log
// (a COMM without binds).
absl::StatusOr<EventFacts> BuildEventFacts(
    std::span<const rspace::Event> events,
    const std::map<Hash32, int64_t>& number_channels);

// Union of several fact sets with the derived sets recomputed.
EventFacts UnionFacts(std::span<const EventFacts* const> parts);

// Builds the chains of `block` and takes ownership of its deploys.
// InvalidArgument for a malformed event log, a deploy without id, a cost sum
// that overflows, a datum without value; ResourceExhausted above
// kMaxDeploysPerBlock.
absl::StatusOr<std::shared_ptr<const BlockIndex>> BuildBlockIndex(
    BlockInput block);

}  // namespace rnode::casper::merge

#endif  // RNODE_CASPER_MERGE_BLOCK_INDEX_H_

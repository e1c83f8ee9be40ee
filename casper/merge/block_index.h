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
  // Channels with raw state changes applied by the merge (not a number
  // channel of the deploy that changed it), ascending, unique.
  std::vector<Hash32> raw_channels;
  // Sum of the chain's number diffs per number channel (every listed channel).
  std::map<Hash32, __int128> number_diffs;
};

// Immutable once built; share it as shared_ptr<const BlockIndex>. Thread-safe
// for concurrent reads.
struct BlockIndex {
  Hash32 hash{};
  uint64_t number = 0;
  std::vector<DeployInput> deploys;
  std::vector<ChainIndex> chains;  // Ascending first_deploy.
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

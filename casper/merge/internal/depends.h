// Connected components of the `related` relation (docs/merge.md §3) over a
// list of fact sets, found by walking shared event keys with union-find; and
// the key records of a fact set for that walk and for the conflict groups
// (docs/merge.md §4), which BuildBlockIndex stores per chain.
#ifndef RNODE_CASPER_MERGE_INTERNAL_DEPENDS_H_
#define RNODE_CASPER_MERGE_INTERNAL_DEPENDS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "casper/merge/block_index.h"
#include "casper/merge/internal/key_sort.h"

namespace rnode::casper::merge::internal {

// Appends the records of `f` for the depends walk: (event hash, item,
// tag = kind * 2 + is_source), kind 0 for produces and 1 for consumes.
void AppendDependRecords(const EventFacts& f, uint32_t item,
                         std::vector<KeyRecord>& out);

// Kinds of conflict keys (docs/merge.md §4); a conflict record's tag is
// kind * 2 + side (0 for side A, 1 for side B).
enum class ConflictKeyKind : uint32_t {
  kProduceRace = 0,  // A: consumed non-persistent produce; B: same, mergeable.
  kConsumeRace = 1,  // A: fired non-persistent consume; B: same, mergeable.
  kChannel = 2,      // A: channel of a pcnd produce; B: of a ccnd consume.
};

// Appends the conflict records of `f` with `item` (a branch or chain).
void AppendConflictRecords(const EventFacts& f, uint32_t item,
                           std::vector<KeyRecord>& out);

// Component label of each of `n` items from their depends records (made by
// AppendDependRecords; sorted here in place with `scratch`): the smallest
// item index of its component. Cost O(records) expected; no pair lists.
std::vector<uint32_t> ComponentsOfRecords(uint32_t n,
                                          std::vector<KeyRecord>& records,
                                          KeySortScratch& scratch);

// ComponentsOfRecords over the records of each fact set (working space of
// its own, freed on return: it runs once per block at admission).
std::vector<uint32_t> RelatedComponents(
    std::span<const EventFacts* const> items);

}  // namespace rnode::casper::merge::internal

#endif  // RNODE_CASPER_MERGE_INTERNAL_DEPENDS_H_

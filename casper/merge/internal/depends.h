// Connected components of the `related` relation (docs/merge.md §3) over a
// list of fact sets, found by walking shared event keys with union-find.
#ifndef RNODE_CASPER_MERGE_INTERNAL_DEPENDS_H_
#define RNODE_CASPER_MERGE_INTERNAL_DEPENDS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "casper/merge/block_index.h"

namespace rnode::casper::merge::internal {

// Component label of each item (the smallest item index of its component).
// Cost O(events) expected; no pair lists.
std::vector<uint32_t> RelatedComponents(
    std::span<const EventFacts* const> items);

}  // namespace rnode::casper::merge::internal

#endif  // RNODE_CASPER_MERGE_INTERNAL_DEPENDS_H_

// A plain pairwise implementation of the merge rules of docs/merge.md, written
// independently of the library, used as the reference in differential tests.
#ifndef RNODE_TESTS_CASPER_MERGE_PAIRWISE_REFERENCE_H_
#define RNODE_TESTS_CASPER_MERGE_PAIRWISE_REFERENCE_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "casper/merge/merger.h"

namespace rnode::casper::merge::testing {

struct ReferenceResult {
  Hash32 root{};
  std::vector<RejectedDeploy> rejected;
  std::vector<BranchInfo> branches;
  std::vector<std::pair<uint32_t, uint32_t>> conflicts;  // i < j, ascending.
  std::vector<uint32_t> base_join_branches;
};

// O(n^2) in deploys, chains and branches; exponential in component size.
absl::StatusOr<ReferenceResult> ReferenceMerge(rspace::History& history,
                                               const Hash32& base_root,
                                               std::vector<BlockInput> blocks,
                                               const NumberChannelCodec& codec);

}  // namespace rnode::casper::merge::testing

#endif  // RNODE_TESTS_CASPER_MERGE_PAIRWISE_REFERENCE_H_

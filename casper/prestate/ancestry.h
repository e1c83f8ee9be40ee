// Whether a deploy is already in the ancestry a new block would have: what
// the proposer leaves out and the validator refuses as a repeat
// (docs/validation.md "Creating a block", check CheckDeploys).
#ifndef RNODE_CASPER_PRESTATE_ANCESTRY_H_
#define RNODE_CASPER_PRESTATE_ANCESTRY_H_

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "casper/dag/dag_store.h"
#include "util/bytes.h"

namespace rnode::casper::prestate {

// True when a block of `parents` (stored) would repeat the deploy `sig`:
// a stored block holding it is one of the parents or their ancestors, of
// number at least `min_number`. Errors are the DAG's.
absl::StatusOr<bool> DeployInAncestry(dag::DagStore& dag,
                                      std::span<const Hash32> parents,
                                      ByteView sig, int64_t min_number);

}  // namespace rnode::casper::prestate

#endif  // RNODE_CASPER_PRESTATE_ANCESTRY_H_

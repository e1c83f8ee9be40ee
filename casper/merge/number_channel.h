// The interface through which the merger reads and writes mergeable number
// channels (REV balances); implemented by the contracts issue.
#ifndef RNODE_CASPER_MERGE_NUMBER_CHANNEL_H_
#define RNODE_CASPER_MERGE_NUMBER_CHANNEL_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "rspace/types.h"
#include "util/bytes.h"

namespace rnode::casper::merge {

// docs/merge.md "Mergeable number channels". Implementations must be pure
// functions of their arguments (every validator writes the same blob) and
// thread-safe for concurrent const calls.
class NumberChannelCodec {
 public:
  virtual ~NumberChannelCodec() = default;

  // The value held by a number channel's state. An absent leaf is passed as
  // the empty state. Errors (malformed state) fail the merge as returned.
  virtual absl::StatusOr<int64_t> Read(
      const rspace::ChannelState& state) const = 0;

  // The state that holds `value` on `channel`. Errors fail the merge.
  virtual absl::StatusOr<rspace::ChannelState> Write(const Hash32& channel,
                                                     int64_t value) const = 0;
};

}  // namespace rnode::casper::merge

#endif  // RNODE_CASPER_MERGE_NUMBER_CHANNEL_H_

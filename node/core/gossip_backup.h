// The deploys other validators admitted and sent here (docs/p2p.md "Deploy
// gossip"), held as backup: forgotten once a block includes them, taken
// over (handed back to be pooled here) when their validator did not
// include them in time. Bounded by a count; not thread-safe (the node
// calls it under its mutex).
#ifndef RNODE_NODE_CORE_GOSSIP_BACKUP_H_
#define RNODE_NODE_CORE_GOSSIP_BACKUP_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "casper/deploy.h"
#include "util/bytes.h"

namespace rnode::node {

class GossipBackup {
 public:
  using Clock = std::chrono::steady_clock;

  // At most `max_deploys` held; a deploy is due `takeover` after it
  // arrived, or once half its validity window has passed.
  GossipBackup(size_t max_deploys, std::chrono::milliseconds takeover);

  enum class Held { kHeld, kAlreadyHeld, kFull };
  // Holds `deploy`, arrived at `now`. kFull (and nothing held) when
  // max_deploys are held; kAlreadyHeld keeps the first arrival.
  Held Hold(casper::SignedDeploy deploy, Clock::time_point now);
  // A block includes the deploy `sig`: no takeover for it. Absent: no-op.
  void Forget(ByteView sig);
  // Removes and returns, in signature order, the deploys due at `now` for
  // a block numbered `next_block`.
  std::vector<casper::SignedDeploy> TakeDue(Clock::time_point now,
                                            int64_t next_block);
  size_t size() const { return held_.size(); }

 private:
  struct Entry {
    casper::SignedDeploy deploy;
    Clock::time_point arrived;
  };
  const size_t max_deploys_;
  const std::chrono::milliseconds takeover_;
  std::map<Bytes, Entry> held_;  // By signature.
};

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_GOSSIP_BACKUP_H_

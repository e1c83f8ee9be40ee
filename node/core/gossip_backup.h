// The deploys other validators admitted and sent here (docs/p2p.md "Deploy
// gossip"), held as backup: forgotten once a block includes them, taken
// over (handed back to be pooled here) when their validator did not
// include them in time. Bounded by a count and by bytes of terms, in all
// and per deployer; not thread-safe (the node calls it under its mutex).
#ifndef RNODE_NODE_CORE_GOSSIP_BACKUP_H_
#define RNODE_NODE_CORE_GOSSIP_BACKUP_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "casper/deploy.h"
#include "casper/pool/deployer_shares.h"
#include "util/bytes.h"

namespace rnode::node {

class GossipBackup {
 public:
  using Clock = std::chrono::steady_clock;

  // A deployer may hold at most 1/kDeployerShare of the backup (count and
  // bytes): a few keys cannot take it all, while 16 busy dApps still fit.
  static constexpr size_t kDeployerShare = 16;

  // At most `max_deploys` held and `max_term_bytes` of their terms (the
  // backup is in memory); a deploy is due `takeover` after it arrived, or
  // once half its validity window has passed.
  GossipBackup(size_t max_deploys, size_t max_term_bytes,
               std::chrono::milliseconds takeover);

  enum class Held { kHeld, kAlreadyHeld, kFull, kDeployerFull };
  // Holds `deploy`, arrived at `now`. Nothing is held on kFull (the count
  // or the bytes would pass their bound) or kDeployerFull (the deployer's
  // share would); kAlreadyHeld keeps the first arrival.
  Held Hold(casper::SignedDeploy deploy, Clock::time_point now);
  // A block includes the deploy `sig`: no takeover for it. Absent: no-op.
  void Forget(ByteView sig);
  // Removes and returns, in signature order, the deploys due at `now` for
  // a block numbered `next_block`.
  std::vector<casper::SignedDeploy> TakeDue(Clock::time_point now,
                                            int64_t next_block);
  size_t size() const { return held_.size(); }
  size_t term_bytes() const { return term_bytes_; }

 private:
  struct Entry {
    casper::SignedDeploy deploy;
    Clock::time_point arrived;
  };
  // Drops `it`'s entry from the totals; returns the deploy.
  casper::SignedDeploy Release(std::map<Bytes, Entry>::iterator it);

  const size_t max_deploys_;
  const size_t max_term_bytes_;
  const std::chrono::milliseconds takeover_;
  std::map<Bytes, Entry> held_;  // By signature.
  size_t term_bytes_ = 0;
  // Each deployer's 1/kDeployerShare.
  casper::pool::DeployerShares shares_;
};

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_GOSSIP_BACKUP_H_

#include "node/core/gossip_backup.h"

#include <utility>

namespace rnode::node {

GossipBackup::GossipBackup(size_t max_deploys,
                           std::chrono::milliseconds takeover)
    : max_deploys_(max_deploys), takeover_(takeover) {}

GossipBackup::Held GossipBackup::Hold(casper::SignedDeploy deploy,
                                      Clock::time_point now) {
  // The key is copied before the deploy moves into the entry: building
  // both in one call read the signature after the move (an empty key, so
  // one deploy was held at a time; found by the bad-peer scenario).
  Bytes sig = deploy.sig();
  if (held_.contains(sig)) return Held::kAlreadyHeld;
  if (held_.size() >= max_deploys_) return Held::kFull;
  held_.emplace(std::move(sig), Entry{std::move(deploy), now});
  return Held::kHeld;
}

void GossipBackup::Forget(ByteView sig) {
  held_.erase(Bytes(sig.begin(), sig.end()));
}

std::vector<casper::SignedDeploy> GossipBackup::TakeDue(Clock::time_point now,
                                                        int64_t next_block) {
  std::vector<casper::SignedDeploy> due;
  for (auto it = held_.begin(); it != held_.end();) {
    if (now - it->second.arrived >= takeover_ ||
        casper::WindowHalfGone(it->second.deploy.data(), next_block)) {
      due.push_back(std::move(it->second.deploy));
      it = held_.erase(it);
    } else {
      ++it;
    }
  }
  return due;
}

}  // namespace rnode::node

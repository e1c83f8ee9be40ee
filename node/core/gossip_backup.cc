#include "node/core/gossip_backup.h"

#include <algorithm>
#include <utility>

namespace rnode::node {

GossipBackup::GossipBackup(size_t max_deploys, size_t max_term_bytes,
                           std::chrono::milliseconds takeover)
    : max_deploys_(max_deploys),
      max_term_bytes_(max_term_bytes),
      takeover_(takeover),
      shares_(std::max<size_t>(1, max_deploys / kDeployerShare),
              max_term_bytes / kDeployerShare) {}

GossipBackup::Held GossipBackup::Hold(casper::SignedDeploy deploy,
                                      Clock::time_point now) {
  // The key is copied before the deploy moves into the entry: building
  // both in one call read the signature after the move (an empty key, so
  // one deploy was held at a time; found by the bad-peer scenario).
  Bytes sig = deploy.sig();
  if (held_.contains(sig)) return Held::kAlreadyHeld;
  const size_t bytes = deploy.data().term.size();
  if (held_.size() >= max_deploys_ || term_bytes_ + bytes > max_term_bytes_) {
    return Held::kFull;
  }
  if (!shares_.Fits(deploy.deployer(), bytes)) return Held::kDeployerFull;
  shares_.Add(deploy.deployer(), bytes);
  term_bytes_ += bytes;
  held_.emplace(std::move(sig), Entry{std::move(deploy), now});
  return Held::kHeld;
}

casper::SignedDeploy GossipBackup::Release(
    std::map<Bytes, Entry>::iterator it) {
  casper::SignedDeploy deploy = std::move(it->second.deploy);
  held_.erase(it);
  const size_t bytes = deploy.data().term.size();
  term_bytes_ -= bytes;
  shares_.Remove(deploy.deployer(), bytes);
  return deploy;
}

void GossipBackup::Forget(ByteView sig) {
  auto it = held_.find(Bytes(sig.begin(), sig.end()));
  if (it != held_.end()) (void)Release(it);
}

std::vector<casper::SignedDeploy> GossipBackup::TakeDue(Clock::time_point now,
                                                        int64_t next_block) {
  std::vector<casper::SignedDeploy> due;
  for (auto it = held_.begin(); it != held_.end();) {
    if (now - it->second.arrived >= takeover_ ||
        casper::WindowHalfGone(it->second.deploy.data(), next_block)) {
      auto next = std::next(it);
      due.push_back(Release(it));
      it = next;
    } else {
      ++it;
    }
  }
  return due;
}

}  // namespace rnode::node

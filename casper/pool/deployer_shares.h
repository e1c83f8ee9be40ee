// What each deployer has waiting, in deploys and bytes of terms, against
// its share of a bound: the deploy pool and the gossip backup each keep one,
// so that one key cannot take all of either. Not thread-safe (each owner
// calls it under its own lock).
#ifndef RNODE_CASPER_POOL_DEPLOYER_SHARES_H_
#define RNODE_CASPER_POOL_DEPLOYER_SHARES_H_

#include <cstddef>
#include <map>

#include "crypto/secp256k1.h"

namespace rnode::casper::pool {

class DeployerShares {
 public:
  struct Share {
    size_t deploys = 0;
    size_t term_bytes = 0;
  };

  // Each deployer may have at most `max_deploys` deploys and
  // `max_term_bytes` bytes of terms.
  DeployerShares(size_t max_deploys, size_t max_term_bytes)
      : max_deploys_(max_deploys), max_term_bytes_(max_term_bytes) {}

  // What `deployer` has (zeros when nothing).
  Share Of(const crypto::Secp256k1PublicKey& deployer) const {
    auto it = shares_.find(deployer);
    return it == shares_.end() ? Share{} : it->second;
  }
  // Whether one more deploy of `term_bytes` fits `deployer`'s share.
  bool Fits(const crypto::Secp256k1PublicKey& deployer,
            size_t term_bytes) const {
    const Share has = Of(deployer);
    return has.deploys + 1 <= max_deploys_ &&
           has.term_bytes + term_bytes <= max_term_bytes_;
  }
  void Add(const crypto::Secp256k1PublicKey& deployer, size_t term_bytes) {
    Share& share = shares_[deployer];
    ++share.deploys;
    share.term_bytes += term_bytes;
  }
  // Takes back an Add; a deployer at zero has no entry.
  void Remove(const crypto::Secp256k1PublicKey& deployer, size_t term_bytes) {
    auto it = shares_.find(deployer);
    if (it == shares_.end()) return;
    it->second.term_bytes -= term_bytes;
    if (--it->second.deploys == 0) shares_.erase(it);
  }

  size_t max_deploys() const { return max_deploys_; }
  size_t max_term_bytes() const { return max_term_bytes_; }

 private:
  const size_t max_deploys_;
  const size_t max_term_bytes_;
  std::map<crypto::Secp256k1PublicKey, Share> shares_;
};

}  // namespace rnode::casper::pool

#endif  // RNODE_CASPER_POOL_DEPLOYER_SHARES_H_

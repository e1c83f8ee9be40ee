// Deploy admission (docs/node.md "Deploys", docs/p2p.md "Deploy gossip"):
// the deploys clients send (checked, pooled, copied to a peer before the
// client hears OK) and the deploys peers admitted and sent here (held as
// backup, and taken over when their validator did not include them in
// time).
#ifndef RNODE_NODE_CORE_DEPLOY_ADMISSION_H_
#define RNODE_NODE_CORE_DEPLOY_ADMISSION_H_

#include <chrono>
#include <cstddef>

#include "CasperMessage.pb.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "casper/dag/dag_store.h"
#include "casper/deploy.h"
#include "casper/deploy_rules.h"
#include "casper/pool/deploy_pool.h"
#include "node/config/config.h"
#include "node/core/catch_up.h"
#include "node/core/disk_guard.h"
#include "node/core/gossip_backup.h"
#include "node/core/identity.h"
#include "node/core/network.h"
#include "node/core/node_metrics.h"
#include "node/core/scheduler.h"
#include "rspace/history/history.h"
#include "util/bytes.h"
#include "util/logging.h"
#include "util/mutex.h"

namespace rnode::node {

// What admission reads and tells; none owned, all outlive it. `network`
// is null in standalone mode.
struct AdmissionDeps {
  const NodeConfig* config = nullptr;
  const NodeIdentity* identity = nullptr;
  casper::dag::DagStore* dag = nullptr;
  casper::pool::DeployPool* pool = nullptr;
  // The states' history, for deployers' balances.
  rspace::History* history = nullptr;
  CasperNetwork* network = nullptr;
  ConsensusScheduler* scheduler = nullptr;
  const CatchUpMonitor* catch_up = nullptr;
  DiskGuard* disk = nullptr;
  NodeMetrics* metrics = nullptr;
};

// Thread-safe.
class DeployAdmission {
 public:
  explicit DeployAdmission(const AdmissionDeps& deps);

  // Admits a client's deploy: node role, signature, the shard's deploy
  // rules (casper/deploy_rules.h, at this node's height), the deployer's
  // funds, disk, catching up, peers, duplicates, pool space; durable in the
  // pool and held by another validator (in a shard) on OK. Returns the
  // deploy id (its signature). Errors carry the client's message:
  // FailedPrecondition (read-only or unbonded node, or a deployer whose
  // balance at the last finalized block is below phloLimit x phloPrice),
  // InvalidArgument (bad deploy), ResourceExhausted (pool full;
  // rspace::NoSpaceError when the disk is full), Unavailable (catching up, or
  // no peer took a copy), AlreadyExists (duplicate), the store's errors
  // otherwise.
  absl::StatusOr<Bytes> Admit(const ::casper::DeployDataProto& proto);

  // A deploy another validator admitted, held as backup. OK when it is
  // held (or already pooled here, or in a block); FailedPrecondition when
  // this node could never propose it (an observer, a validator without
  // stake), InvalidArgument for a deploy that does not verify or breaks
  // the shard's deploy rules, ResourceExhausted when the backup is full. The
  // sender counts only OK answers as copies.
  absl::Status HoldGossiped(const ::casper::DeployDataProto& proto);

  // Pools the held deploys whose validator did not include them in time
  // (none while catching up: "in no block" means in no block seen here);
  // counts them waiting for a block. Consensus thread.
  void TakeOverDue(std::chrono::steady_clock::time_point now);

  // A block includes `sig`: no takeover for it.
  void Forget(ByteView sig);
  size_t held() const;

 private:
  // Admit's checks before the pool: node role, the deploy itself, the
  // node's state, duplicates.
  absl::StatusOr<casper::SignedDeploy> Screen(
      const ::casper::DeployDataProto& proto);
  // Disk, catching up, peers: whether this node can take any deploy now.
  absl::Status CheckNodeCanTake();
  // Whether the deployer can pay phloLimit x phloPrice from its balance at
  // the last finalized block (FailedPrecondition if not).
  absl::Status CheckFunds(const casper::SignedDeploy& d);
  // Whether a deploy may still need a block: none holds it, or a merge
  // rejected a copy and the finalized state does not hold it. (A copy in
  // an unfinalized block may be rejected yet; the creator never puts a
  // deploy in a state that holds it.)
  absl::StatusOr<bool> StillWanted(ByteView sig) const;

  const AdmissionDeps d_;
  // The shard's rules (fixed at genesis): the same check as the pool's and
  // block validation's.
  const casper::DeployRules rules_;
  mutable Mutex mu_;
  GossipBackup backup_ ABSL_GUARDED_BY(mu_);
  // Lines about deploys peers gossiped (any number).
  RateLimitedLog peer_log_{"casper", kPeerLogLinesPerSecond};
};

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_DEPLOY_ADMISSION_H_

#include "node/core/deploy_admission.h"

#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "casper/contracts/ledger.h"
#include "casper/deploy.h"
#include "casper/prestate/ancestry.h"
#include "crypto/rev_address.h"
#include "node/core/clock.h"
#include "node/core/genesis_setup.h"
#include "rspace/storage/kv_store.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace rnode::node {
namespace {

using Clock = std::chrono::steady_clock;

// How long an acknowledgement waits for each peer it offers the deploy to
// until one holds a copy, and for each after that (a live peer answers in
// a millisecond; a stopped one costs this until it is disconnected, after
// three failures). The first is generous: a busy peer (a loaded machine,
// the sanitizer builds) is not a missing one; under ASan 250 ms refused
// deploys as "reaches no other validator" while the peers were only slow.
constexpr auto kDeployReplicationTimeout = std::chrono::milliseconds(1000);
constexpr auto kDeployExtraCopyTimeout = std::chrono::milliseconds(250);
// The gossip backup's bound on terms in memory: at 250 deploys/s of 1 KiB
// held for a 10 s takeover it uses 2.5 MiB, so 64 MiB leaves room for big
// terms while 20,000 deploys of the largest size (5 GiB) cannot pile up.
constexpr size_t kGossipBackupTermBytes = 64u << 20;
constexpr char kNoPeerTookTheDeploy[] =
    "Deploy was not accepted: this validator reaches no other validator to "
    "keep a copy of the deploy; retry shortly or deploy to another "
    "validator.";
constexpr char kDiskFull[] =
    "Deploy was not accepted: this validator's disk is full, so it cannot "
    "store the deploy; retry once space returns or deploy to another "
    "validator.";

}  // namespace

DeployAdmission::DeployAdmission(const AdmissionDeps& deps)
    : d_(deps),
      rules_(DeployRulesOf(*deps.config)),
      backup_(
          static_cast<size_t>(deps.config->deploy_pool_max_deploys),
          kGossipBackupTermBytes,
          std::chrono::milliseconds(deps.config->deploy_gossip_takeover_ms)) {}

absl::StatusOr<Bytes> DeployAdmission::Admit(
    const ::casper::DeployDataProto& proto) {
  ASSIGN_OR_RETURN(casper::SignedDeploy d, Screen(proto));
  d_.scheduler->AdmissionStarted();
  // Uncounts it from the deploys being admitted; counts it waiting when
  // admitted.
  bool admitted = false;
  absl::Cleanup settle = [this, &admitted] {
    d_.scheduler->AdmissionEnded(admitted);
  };
  if (absl::Status s = d_.pool->Add(d, d_.dag->MaxHeight(), UnixMs());
      !s.ok()) {
    if (rspace::IsNoSpace(s)) {
      d_.disk->Full(s);
      d_.metrics->DeployRefused("disk_full");
      return rspace::NoSpaceError(kDiskFull);
    }
    d_.metrics->DeployRefused(
        s.code() == absl::StatusCode::kAlreadyExists       ? "duplicate"
        : casper::pool::IsDeployerShareFull(s)             ? "deployer_share"
        : s.code() == absl::StatusCode::kResourceExhausted ? "pool_full"
                                                           : "window");
    return s;
  }
  d_.disk->Ok();
  // A peer holds the deploy before the client hears it was accepted: should
  // this validator die before proposing it and stay down past half its
  // window, the peer takes it over (docs/p2p.md "Deploy gossip"). When no
  // peer took it the deploy leaves the pool and the client is told to retry
  // (a peer that got it after all may still include it: the client finds
  // it by its id, and a retry of the same deploy is kept once).
  if (d_.network != nullptr &&
      d_.network->ReplicateDeploy(proto.SerializeAsString(),
                                  kDeployReplicationTimeout,
                                  kDeployExtraCopyTimeout) == 0) {
    const Bytes& sig = d.sig();
    RETURN_IF_ERROR(d_.pool->Remove(std::span<const Bytes>(&sig, 1)));
    d_.metrics->DeployRefused("no_peers");
    return absl::UnavailableError(kNoPeerTookTheDeploy);
  }
  d_.metrics->DeployAdmitted(d.sig());
  admitted = true;
  return d.sig();
}

absl::StatusOr<casper::SignedDeploy> DeployAdmission::Screen(
    const ::casper::DeployDataProto& proto) {
  if (!d_.identity->is_validator()) {
    d_.metrics->DeployRefused("read_only");
    return absl::FailedPreconditionError(
        "Deploy was rejected because node is running in read-only mode.");
  }
  if (!SelfBonded(*d_.dag, *d_.identity)) {
    d_.metrics->DeployRefused("not_bonded");
    return absl::FailedPreconditionError(
        "Deploy was not accepted: this validator has no stake in the last "
        "finalized block, so it proposes no blocks; deploy to a bonded "
        "validator.");
  }
  absl::StatusOr<casper::SignedDeploy> d =
      casper::SignedDeploy::FromProto(proto);
  if (!d.ok()) {
    d_.metrics->DeployRefused("invalid");
    return absl::InvalidArgumentError(d.status().message());
  }
  if (std::optional<casper::DeployBreach> breach =
          casper::CheckDeployRules(d->data(), rules_, d_.dag->MaxHeight())) {
    d_.metrics->DeployRefused(casper::DeployFaultName(breach->fault));
    return absl::InvalidArgumentError(breach->message);
  }
  RETURN_IF_ERROR(CheckFunds(*d));
  RETURN_IF_ERROR(CheckNodeCanTake());
  ASSIGN_OR_RETURN(std::vector<Hash32> in, d_.dag->BlocksWithDeploy(d->sig()));
  ASSIGN_OR_RETURN(const bool wanted, StillWanted(d->sig()));
  if (!wanted) {
    d_.metrics->DeployRefused("duplicate");
    return absl::AlreadyExistsError(absl::StrCat("Deploy ", HexEncode(d->sig()),
                                                 " is already in block ",
                                                 HexEncode(in.back()), "."));
  }
  return *std::move(d);
}

absl::StatusOr<bool> DeployAdmission::StillWanted(ByteView sig) const {
  ASSIGN_OR_RETURN(const std::vector<Hash32> in, d_.dag->BlocksWithDeploy(sig));
  if (in.empty()) return true;
  ASSIGN_OR_RETURN(const std::vector<Hash32> rejected,
                   d_.dag->BlocksRejectingDeploy(sig));
  if (rejected.empty()) return false;
  const std::optional<Hash32> lfb = d_.dag->LastFinalized();
  if (!lfb.has_value()) return true;
  ASSIGN_OR_RETURN(const std::optional<Hash32> kept,
                   casper::prestate::CopyInPostState(*d_.dag, *lfb, sig, 0));
  return !kept.has_value();
}

// A block leaves out a deploy that cannot pay its precharge (validation's
// UnpaidDeploy: an unfunded key cannot fill blocks), so a deploy that could
// not pay even at the last finalized block would only take a place in the
// pool. Funds arriving in blocks not yet final do not count; funds spent
// since may still leave the deploy out of its block (it is then reported
// failed).
absl::Status DeployAdmission::CheckFunds(const casper::SignedDeploy& d) {
  if (d_.history == nullptr) return absl::OkStatus();
  const std::optional<Hash32> lfb = d_.dag->LastFinalized();
  if (!lfb.has_value()) return absl::OkStatus();
  int64_t charge = 0;
  if (__builtin_mul_overflow(d.data().phlo_limit, d.data().phlo_price,
                             &charge)) {
    charge = std::numeric_limits<int64_t>::max();
  }
  if (charge <= 0) return absl::OkStatus();
  const std::optional<std::string> address =
      crypto::RevAddressFromKeyBytes(ByteView(d.deployer()));
  if (!address.has_value()) {  // FromProto checked the key; never here
    return absl::InvalidArgumentError("the deployer key has no REV address");
  }
  ASSIGN_OR_RETURN(const auto meta, d_.dag->Meta(*lfb));
  ASSIGN_OR_RETURN(const int64_t balance,
                   casper::contracts::ReadBalanceAt(
                       *d_.history, meta->post_state, *address));
  if (balance >= charge) return absl::OkStatus();
  d_.metrics->DeployRefused("insufficient_funds");
  return absl::FailedPreconditionError(absl::StrCat(
      "Deploy was not accepted: insufficient funds: the deployer's vault ",
      *address, " holds ", balance,
      " at the last finalized block, less than phloLimit x phloPrice = ",
      charge, "."));
}

absl::Status DeployAdmission::CheckNodeCanTake() {
  // Before anything that depends on the node's view: a full disk is what
  // the client must hear.
  if (!d_.disk->Writable()) {
    d_.metrics->DeployRefused("disk_full");
    return rspace::NoSpaceError(kDiskFull);
  }
  if (const std::optional<uint64_t> free = d_.disk->BelowFloor()) {
    d_.metrics->DeployRefused("disk_full");
    return rspace::NoSpaceError(absl::StrCat(
        "Deploy was not accepted: this validator's disk has ", *free,
        " bytes free, below its floor of ", d_.disk->min_free(),
        " (storage.min-free-bytes), so it takes no new deploys to store; "
        "retry once space returns or deploy to another validator."));
  }
  if (const Behind why = d_.catch_up->Reason(); why == Behind::kSyncing) {
    d_.metrics->DeployRefused("syncing");
    return absl::UnavailableError(
        "Deploy was not accepted: this validator is syncing (joining the "
        "shard from its last finalized state) and cannot judge the deploy "
        "yet; retry once it is ready or deploy to another validator.");
  } else if (why == Behind::kBeyondHistory) {
    d_.metrics->DeployRefused("beyond_history");
    return absl::UnavailableError(
        "Deploy was not accepted: this validator is further behind its "
        "peers than they keep blocks, so it cannot catch up until its "
        "operator joins it again from the shard's state; deploy to another "
        "validator.");
  } else if (why != Behind::kNo) {
    d_.metrics->DeployRefused("catching_up");
    return absl::UnavailableError(absl::StrCat(
        "Deploy was not accepted: this validator is catching up with its "
        "peers (",
        BehindName(why),
        ") and cannot judge the deploy's validity window yet; retry "
        "shortly or deploy to another validator."));
  }
  // In a shard an acknowledged deploy is on two machines (Admit): a
  // validator cut off from every peer cannot give that, nor judge the
  // window against the shard's height, so it says so at once.
  if (d_.network != nullptr && !d_.network->HasPeers()) {
    d_.metrics->DeployRefused("no_peers");
    return absl::UnavailableError(kNoPeerTookTheDeploy);
  }
  return absl::OkStatus();
}

absl::Status DeployAdmission::HoldGossiped(
    const ::casper::DeployDataProto& proto) {
  if (!d_.identity->is_validator()) {
    return absl::FailedPreconditionError(
        "a read-only node proposes no deploys");
  }
  if (!SelfBonded(*d_.dag, *d_.identity)) {
    return absl::FailedPreconditionError(
        "this validator is not bonded, it proposes no deploys");
  }
  absl::StatusOr<casper::SignedDeploy> d =
      casper::SignedDeploy::FromProto(proto);
  if (!d.ok()) return d.status();
  if (std::optional<casper::DeployBreach> breach =
          casper::CheckDeployRules(d->data(), rules_, d_.dag->MaxHeight())) {
    d_.metrics->DeployRefused(
        absl::StrCat("gossip_", casper::DeployFaultName(breach->fault)));
    return absl::InvalidArgumentError(breach->message);
  }
  if (d_.pool->Contains(d->sig())) return absl::OkStatus();
  ASSIGN_OR_RETURN(const bool wanted, StillWanted(d->sig()));
  if (!wanted) return absl::OkStatus();
  MutexLock lock(&mu_);
  switch (backup_.Hold(*std::move(d), Clock::now())) {
    case GossipBackup::Held::kHeld:
    case GossipBackup::Held::kAlreadyHeld:
      return absl::OkStatus();
    case GossipBackup::Held::kFull:
      d_.metrics->DeployRefused("gossip_backup_full");
      return absl::ResourceExhaustedError("the gossip backup is full");
    case GossipBackup::Held::kDeployerFull:
      d_.metrics->DeployRefused("gossip_deployer_quota");
      return absl::ResourceExhaustedError(
          "this deployer holds its share of the gossip backup");
  }
  return absl::InternalError("unknown backup verdict");
}

void DeployAdmission::TakeOverDue(Clock::time_point now) {
  // Held for the takeover time, or until half their window has passed (at
  // ten heights a second the window is about 5 s, as short as the
  // takeover time: a validator that stalls must not take its deploys with
  // it). Not while behind: "in no block" means in no block seen here, and
  // a validator catching up has not seen the latest ones. The deploys stay
  // held until it has.
  if (d_.catch_up->CatchingUp()) return;
  std::vector<casper::SignedDeploy> due;
  {
    const int64_t next = d_.dag->MaxHeight() + 1;
    MutexLock lock(&mu_);
    due = backup_.TakeDue(now, next);
  }
  size_t taken = 0;
  for (const casper::SignedDeploy& d : due) {
    absl::StatusOr<bool> wanted = StillWanted(d.sig());
    if (!wanted.ok() || !*wanted) continue;
    absl::Status added = d_.pool->Add(d, d_.dag->MaxHeight(), UnixMs());
    if (added.ok()) {
      ++taken;
    } else if (rspace::IsNoSpace(added)) {
      d_.disk->Full(added);
    } else {
      peer_log_.Warn(
          "deploy {} gossiped by a peer, in no block, not "
          "taken over: {}",
          HexEncode(d.sig()), LogText(added.ToString()));
    }
  }
  if (taken > 0) {
    Log("casper")->info(
        "{} deploys gossiped by peers and in no block are "
        "proposed here",
        taken);
    d_.scheduler->DeploysArrived(taken);
  }
}

void DeployAdmission::Forget(ByteView sig) {
  MutexLock lock(&mu_);
  backup_.Forget(sig);
}

size_t DeployAdmission::held() const {
  MutexLock lock(&mu_);
  return backup_.size();
}

}  // namespace rnode::node

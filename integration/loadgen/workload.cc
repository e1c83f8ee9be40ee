// The load generator's deploy terms.
#include "integration/loadgen/workload.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "integration/loadgen/sender.h"

namespace rnode::loadgen {
namespace {

// Moves $AMOUNT from the deployer's wallet $FROM to $TO through the public
// vault contract (the interface public clients use).
constexpr char kTransferTerm[] = R"(new rl(`rho:registry:lookup`),
    deployerId(`rho:rchain:deployerId`), vaultsCh, fromCh, keyCh, doneCh in {
  rl!(`rho:rchain:revVault`, *vaultsCh) |
  for (@(_, vaults) <- vaultsCh) {
    @vaults!("findOrCreate", "$FROM", *fromCh) |
    @vaults!("deployerAuthKey", *deployerId, *keyCh) |
    for (@(true, from) <- fromCh; key <- keyCh) {
      @from!("transfer", "$TO", $AMOUNT, *key, *doneCh)$READ
    }
  }
})";

// Inserts $N into the registry under a fresh URI and reads it back.
constexpr char kRegistryTerm[] = R"(new insert(`rho:registry:insertArbitrary`),
    lookup(`rho:registry:lookup`), uriCh, valueCh in {
  insert!($N, *uriCh) |
  for (@uri <- uriCh) { lookup!(uri, *valueCh)$READ }
})";

// What read_answers adds after the transfer's and the lookup's call.
constexpr char kReadTransfer[] = " | for (_ <- doneCh) { Nil }";
constexpr char kReadLookup[] = " | for (_ <- valueCh) { Nil }";

std::string Counter(const Workload& w, int64_t sequence) {
  const std::string ch = absl::StrCat("@\"", CounterChannel(w), "\"");
  if (sequence == 0) return absl::StrCat(ch, "!(0)");
  return absl::StrCat("for (@n <- ", ch, ") { ", ch, "!(n + 1) }");
}

std::string Transfer(const Workload& w, int64_t sequence) {
  const size_t n = w.wallets.size();
  const size_t from = static_cast<size_t>(sequence) % n;
  const size_t step = 1 + (static_cast<size_t>(sequence) / n) % (n - 1);
  return absl::StrReplaceAll(kTransferTerm,
                             {{"$FROM", w.wallets[from]},
                              {"$TO", w.wallets[(from + step) % n]},
                              {"$AMOUNT", absl::StrCat(w.transfer_amount)},
                              {"$READ", w.read_answers ? kReadTransfer : ""}});
}

std::string Registry(const Workload& w, int64_t sequence) {
  return absl::StrReplaceAll(kRegistryTerm,
                             {{"$N", absl::StrCat(kFirstTermNumber + sequence)},
                              {"$READ", w.read_answers ? kReadLookup : ""}});
}

std::string Noop(const Workload& w, int64_t sequence) {
  if (!w.read_answers) return DeployTerm(sequence);
  const std::string n = absl::StrCat(kFirstTermNumber + sequence);
  return absl::StrCat("@", n, "!(", n, ") | for (_ <- @", n, ") { Nil }");
}

}  // namespace

absl::StatusOr<WorkloadKind> ParseWorkload(std::string_view name) {
  for (WorkloadKind k :
       {WorkloadKind::kNoop, WorkloadKind::kCounter, WorkloadKind::kTransfer,
        WorkloadKind::kRegistry, WorkloadKind::kMix}) {
    if (name == WorkloadName(k)) return k;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown workload '", std::string(name),
                   "': give noop, counter, transfer, registry or mix"));
}

const char* WorkloadName(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kNoop:
      return "noop";
    case WorkloadKind::kCounter:
      return "counter";
    case WorkloadKind::kTransfer:
      return "transfer";
    case WorkloadKind::kRegistry:
      return "registry";
    case WorkloadKind::kMix:
      return "mix";
  }
  return "unknown";
}

absl::Status CheckWorkload(const Workload& w) {
  if (w.run_tag.empty()) return absl::InvalidArgumentError("no run tag");
  const bool transfers =
      w.kind == WorkloadKind::kTransfer || w.kind == WorkloadKind::kMix;
  if (transfers && w.wallets.size() < 2) {
    return absl::InvalidArgumentError(
        "transfers need at least two wallets (keys)");
  }
  if (transfers && w.transfer_amount <= 0) {
    return absl::InvalidArgumentError("the transfer amount must be positive");
  }
  return absl::OkStatus();
}

std::string CounterChannel(const Workload& w) {
  return absl::StrCat("loadgen-counter-", w.run_tag);
}

std::string WorkloadTerm(const Workload& w, int64_t sequence) {
  switch (w.kind) {
    case WorkloadKind::kNoop:
      return Noop(w, sequence);
    case WorkloadKind::kCounter:
      return Counter(w, sequence);
    case WorkloadKind::kTransfer:
      return Transfer(w, sequence);
    case WorkloadKind::kRegistry:
      return Registry(w, sequence);
    case WorkloadKind::kMix:
      switch (sequence % 3) {
        case 0:
          return Counter(w, sequence);
        case 1:
          return Transfer(w, sequence);
        default:
          return Registry(w, sequence);
      }
  }
  return DeployTerm(sequence);
}

}  // namespace rnode::loadgen

// What the load generator's deploys do (--workload): terms that never
// conflict (noop), that all touch one counter (counter), that move REV
// among the signers' wallets (transfer), that insert into and look up the
// registry (registry), or a rotation of the three that do work (mix).
// Conflicting workloads make merges reject deploys, which the node must
// propose again (docs/validation.md "A deploy again").
#ifndef RNODE_INTEGRATION_LOADGEN_WORKLOAD_H_
#define RNODE_INTEGRATION_LOADGEN_WORKLOAD_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace rnode::loadgen {

enum class WorkloadKind { kNoop, kCounter, kTransfer, kRegistry, kMix };

// "noop", "counter", "transfer", "registry" or "mix"; InvalidArgument
// naming the choices otherwise.
absl::StatusOr<WorkloadKind> ParseWorkload(std::string_view name);
const char* WorkloadName(WorkloadKind kind);

struct Workload {
  WorkloadKind kind = WorkloadKind::kNoop;
  // Names this run's counter channel, so that runs on one shard do not
  // share a counter (a second initial value would split it).
  std::string run_tag;
  // The REV addresses of the signing keys, in key order: transfers go from
  // the signer's wallet to another of them. At least two for kTransfer and
  // kMix.
  std::vector<std::string> wallets;
  int64_t transfer_amount = 1;
  // Each deploy receives what it sends and nobody else reads (the noop's
  // value, the transfer's and the lookup's answers), so the run leaves no
  // channel per deploy in the state (a registry insert still does): for
  // disk soaks, where the live state must not grow with the run.
  bool read_answers = false;
};

// InvalidArgument for a transfer workload with fewer than two wallets or a
// non-positive amount, or an empty run tag.
absl::Status CheckWorkload(const Workload& w);

// The term of deploy `sequence` (0-based over the run), signed by the key
// of index sequence mod wallets (or keys).
//   noop      "@N!(N)", N = kFirstTermNumber + sequence (with read_answers
//             "@N!(N) | for (_ <- @N) { Nil }").
//   counter   deploy 0 puts 0 on the run's counter channel; every other
//             deploy takes the value n and puts n + 1 back. The counter at
//             the end is the number of increments whose effect is kept.
//   transfer  transfer_amount from the signer's wallet to the wallet
//             1 + (sequence / wallets) mod (wallets - 1) places after it:
//             consecutive rounds share wallets in both directions.
//   registry  inserts N under a fresh URI, then looks the URI up.
//   mix       counter, transfer, registry by sequence mod 3 (the counter's
//             first deploy, sequence 0, puts its initial value).
std::string WorkloadTerm(const Workload& w, int64_t sequence);

// The counter channel's name in the term (a string), for reading it back.
std::string CounterChannel(const Workload& w);

}  // namespace rnode::loadgen

#endif  // RNODE_INTEGRATION_LOADGEN_WORKLOAD_H_

// Load phases of the load generator: paced rates and bursts, parsed from a
// spec, the public methodology's sequences, and the exact send schedule.
#ifndef RNODE_INTEGRATION_LOADGEN_PHASES_H_
#define RNODE_INTEGRATION_LOADGEN_PHASES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace rnode::loadgen {

// Highest paced rate, deploys per second. A validator admits a few thousand
// deploys per second at best; 100,000 is far past any node and keeps the
// schedule's spacing (10 us) above the pacing thread's timer resolution.
inline constexpr double kMaxRatePerSecond = 100000;

// Longest phase, seconds. A day covers soak runs; longer runs are several
// invocations so that a report exists at least daily.
inline constexpr double kMaxPhaseSeconds = 86400;

// Largest burst. Bursts probe the admission path; 100,000 deploys at once
// is well past a node's deploy pool bound.
inline constexpr int64_t kMaxBurstCount = 100000;

// Most deploys one phase may send. Its schedule is materialized (8 bytes a
// deploy) and each deploy is tracked, see kMaxTrackedDeploys; 2,000,000 is
// the tracker's bound, so one phase can never overflow it alone.
inline constexpr int64_t kMaxDeploysPerPhase = 2'000'000;

// Most phases in one spec or ramp: a report row each; 1,000 is more than
// any readable report.
inline constexpr size_t kMaxPhases = 1000;

enum class PhaseKind {
  kPaced,  // rate_per_second for duration_seconds.
  kBurst,  // burst_count deploys at once.
};

struct Phase {
  // The spec item as written ("5/s:20s", "burst:32").
  std::string name;
  PhaseKind kind = PhaseKind::kPaced;
  double rate_per_second = 0;   // kPaced only.
  double duration_seconds = 0;  // kPaced only.
  int64_t burst_count = 0;      // kBurst only.

  friend bool operator==(const Phase&, const Phase&) = default;
};

// Deploys the phase sends: a burst's count, or for a paced phase the number
// of offsets i / rate below the duration, i.e. ceil(rate * duration) with a
// 1e-9 allowance for rounding (0.3/s for 10 s is 3 deploys, not 4).
int64_t DeployCount(const Phase& phase);

// Sum of DeployCount over `phases`.
int64_t TotalDeploys(const std::vector<Phase>& phases);

// Parses a comma-separated spec of items, each either RATE/s:DURATION
// (DURATION a number followed by `s` for seconds or `m` for minutes, e.g.
// "2.5/s:90s", "4/s:5m") or burst:COUNT. Spaces around items are ignored.
// Bounds: rate in (0, kMaxRatePerSecond], duration in (0, kMaxPhaseSeconds]
// seconds, count in [1, kMaxBurstCount], at most kMaxDeploysPerPhase per
// phase and kMaxPhases items. InvalidArgument naming the offending item
// (quoted) and what is wrong with it otherwise, or for an empty spec.
absl::StatusOr<std::vector<Phase>> ParsePhases(std::string_view spec);

// The public node's load test: 1/s for 30 s, 5/s for 20 s, 10/s for 15 s,
// a burst of 32, then 4/s sustained for 300 s (`quick`: the same sequence
// with the sustained phase cut to 30 s).
std::vector<Phase> PublicPhases(bool quick);

// The smoke run of the tool's own test: 5/s for 20 s, then 20/s for 20 s.
std::vector<Phase> SmokePhases();

// A ramp of paced steps of `step_seconds` each: first, first * factor,
// first * factor^2, ... while below `max_rate`, then one last step at
// exactly `max_rate` (the cap is always run, and never exceeded). For the
// defaults and max_rate 1000: 25, 50, 100, 200, 400, 800, 1000.
// InvalidArgument unless 0 < first <= max_rate <= kMaxRatePerSecond,
// factor > 1, step_seconds in (0, kMaxPhaseSeconds], the ramp has at most
// kMaxPhases steps and each step at most kMaxDeploysPerPhase deploys.
absl::StatusOr<std::vector<Phase>> RampPhases(double max_rate,
                                              double first = 25,
                                              double factor = 2,
                                              double step_seconds = 30);

// The send offset of each deploy of `phase`, seconds from the phase start:
// deploy i at exactly i / rate (computed from i, so no error accumulates);
// every deploy of a burst at 0. DeployCount(phase) entries.
std::vector<double> DueTimes(const Phase& phase);

}  // namespace rnode::loadgen

#endif  // RNODE_INTEGRATION_LOADGEN_PHASES_H_

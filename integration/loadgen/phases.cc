// Phase specs, the public sequences and exact pacing offsets.
#include "integration/loadgen/phases.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace rnode::loadgen {
namespace {

// Slack for products like 0.3 * 10 that land a hair above an integer.
constexpr double kCountRoundingSlack = 1e-9;

// Relative slack when comparing a ramp rate to its cap, so 0.1 * 10 ends
// the ramp at the cap instead of adding a step a rounding error below it.
constexpr double kRampCapSlack = 1e-9;

// Debian's abseil has its own string_view, so text helpers over
// std::string_view are written here.
std::string_view Trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  const size_t last = text.find_last_not_of(kSpace);
  return text.substr(first, last - first + 1);
}

// Shortest text of a rate or duration, as a user would type it.
std::string Number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.10g", value);
  return buf;
}

std::string PacedName(double rate, double seconds) {
  return absl::StrCat(Number(rate), "/s:", Number(seconds), "s");
}

Phase Paced(double rate, double seconds) {
  Phase p;
  p.name = PacedName(rate, seconds);
  p.kind = PhaseKind::kPaced;
  p.rate_per_second = rate;
  p.duration_seconds = seconds;
  return p;
}

Phase Burst(int64_t count) {
  Phase p;
  p.name = absl::StrCat("burst:", count);
  p.kind = PhaseKind::kBurst;
  p.burst_count = count;
  return p;
}

// The whole of `text` as a number; nullopt for anything else (empty,
// trailing characters, a sign or spaces).
std::optional<double> WholeDouble(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<int64_t> WholeInt(std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

absl::Status ItemError(std::string_view item, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("phase \"", std::string(item), "\": ", std::string(what)));
}

// Rate, duration and count bounds shared by specs and ramps.
absl::Status CheckPaced(std::string_view item, double rate, double seconds) {
  // Written as !(x > 0) so that NaN fails too.
  if (!(rate > 0) || rate > kMaxRatePerSecond) {
    return ItemError(item,
                     absl::StrCat("rate ", Number(rate), "/s is not in (0, ",
                                  Number(kMaxRatePerSecond), "]"));
  }
  if (!(seconds > 0) || seconds > kMaxPhaseSeconds) {
    return ItemError(
        item, absl::StrCat("duration ", Number(seconds), " s is not in (0, ",
                           Number(kMaxPhaseSeconds), "]"));
  }
  const double deploys = std::ceil(rate * seconds - kCountRoundingSlack);
  if (deploys > static_cast<double>(kMaxDeploysPerPhase)) {
    return ItemError(item, absl::StrCat(Number(deploys), " deploys; at most ",
                                        kMaxDeploysPerPhase, " per phase"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Phase> ParseItem(std::string_view item) {
  constexpr std::string_view kBurstPrefix = "burst:";
  constexpr std::string_view kRateSeparator = "/s:";
  if (item.starts_with(kBurstPrefix)) {
    std::optional<int64_t> count = WholeInt(item.substr(kBurstPrefix.size()));
    if (!count.has_value()) {
      return ItemError(item, "expected burst:COUNT with an integer COUNT");
    }
    if (*count < 1 || *count > kMaxBurstCount) {
      return ItemError(item, absl::StrCat("count ", *count, " is not in [1, ",
                                          kMaxBurstCount, "]"));
    }
    Phase p = Burst(*count);
    p.name = std::string(item);
    return p;
  }
  const size_t sep = item.find(kRateSeparator);
  if (sep == std::string_view::npos) {
    return ItemError(item, "expected RATE/s:DURATION or burst:COUNT");
  }
  std::optional<double> rate = WholeDouble(item.substr(0, sep));
  if (!rate.has_value()) {
    return ItemError(item, "RATE is not a number");
  }
  std::string_view duration = item.substr(sep + kRateSeparator.size());
  double unit = 0;
  if (duration.ends_with('s')) {
    unit = 1;
  } else if (duration.ends_with('m')) {
    unit = 60;
  } else {
    return ItemError(item, "DURATION needs a unit: s or m");
  }
  duration.remove_suffix(1);
  std::optional<double> amount = WholeDouble(duration);
  if (!amount.has_value()) {
    return ItemError(item, "DURATION is not a number");
  }
  const double seconds = *amount * unit;
  RETURN_IF_ERROR(CheckPaced(item, *rate, seconds));
  Phase p = Paced(*rate, seconds);
  p.name = std::string(item);
  return p;
}

}  // namespace

int64_t DeployCount(const Phase& phase) {
  switch (phase.kind) {
    case PhaseKind::kBurst:
      return phase.burst_count;
    case PhaseKind::kPaced: {
      const double n = std::ceil(
          phase.rate_per_second * phase.duration_seconds - kCountRoundingSlack);
      return n > 0 ? static_cast<int64_t>(n) : 0;
    }
  }
  return 0;
}

int64_t TotalDeploys(const std::vector<Phase>& phases) {
  int64_t total = 0;
  for (const Phase& p : phases) total += DeployCount(p);
  return total;
}

absl::StatusOr<std::vector<Phase>> ParsePhases(std::string_view spec) {
  if (Trim(spec).empty()) {
    return absl::InvalidArgumentError("empty phase spec");
  }
  std::vector<Phase> phases;
  size_t position = 0;
  std::string_view rest = spec;
  while (true) {
    const size_t comma = rest.find(',');
    std::string_view item = Trim(rest.substr(0, comma));
    ++position;
    if (item.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("phase ", position, " of the spec is empty"));
    }
    if (phases.size() == kMaxPhases) {
      return ItemError(item, absl::StrCat("more than ", kMaxPhases, " phases"));
    }
    absl::StatusOr<Phase> phase = ParseItem(item);
    if (!phase.ok()) return phase.status();
    phases.push_back(*std::move(phase));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return phases;
}

std::vector<Phase> PublicPhases(bool quick) {
  // The public node's load-test methodology, sustained 4/s as its last step.
  constexpr double kSustainedSeconds = 300;
  constexpr double kQuickSustainedSeconds = 30;
  constexpr int64_t kBurstDeploys = 32;
  return {Paced(1, 30), Paced(5, 20), Paced(10, 15), Burst(kBurstDeploys),
          Paced(4, quick ? kQuickSustainedSeconds : kSustainedSeconds)};
}

std::vector<Phase> SmokePhases() { return {Paced(5, 20), Paced(20, 20)}; }

absl::StatusOr<std::vector<Phase>> RampPhases(double max_rate, double first,
                                              double factor,
                                              double step_seconds) {
  if (!(first > 0) || !(max_rate >= first) || max_rate > kMaxRatePerSecond) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ramp: need 0 < first rate (", Number(first), ") <= max rate (",
        Number(max_rate), ") <= ", Number(kMaxRatePerSecond)));
  }
  if (!(factor > 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("ramp: factor ", Number(factor), " must exceed 1"));
  }
  std::vector<double> rates;
  for (double rate = first; rate < max_rate * (1 - kRampCapSlack);
       rate *= factor) {
    rates.push_back(rate);
    if (rates.size() >= kMaxPhases) {
      return absl::InvalidArgumentError(
          absl::StrCat("ramp: more than ", kMaxPhases, " steps"));
    }
  }
  rates.push_back(max_rate);
  std::vector<Phase> phases;
  for (double rate : rates) {
    Phase p = Paced(rate, step_seconds);
    RETURN_IF_ERROR(CheckPaced(p.name, rate, step_seconds));
    phases.push_back(std::move(p));
  }
  return phases;
}

std::vector<double> DueTimes(const Phase& phase) {
  const int64_t n = DeployCount(phase);
  std::vector<double> due(static_cast<size_t>(n), 0.0);
  if (phase.kind == PhaseKind::kPaced) {
    for (int64_t i = 0; i < n; ++i) {
      due[static_cast<size_t>(i)] =
          static_cast<double>(i) / phase.rate_per_second;
    }
  }
  return due;
}

}  // namespace rnode::loadgen

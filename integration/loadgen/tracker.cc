// DeployTracker: per-deploy records, nearest-rank percentiles and series.
#include "integration/loadgen/tracker.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "util/string_view.h"

namespace rnode::loadgen {
namespace {

// The index of the first series point that counts an event at `t`: points
// count events strictly before their second.
size_t FirstPointAfter(double t) {
  return static_cast<size_t>(std::floor(std::max(t, 0.0))) + 1;
}

}  // namespace

size_t NearestRank(double p, size_t n) {
  if (n == 0) return 0;
  const double rank = std::ceil(p / 100.0 * static_cast<double>(n));
  if (rank < 1) return 1;
  if (rank > static_cast<double>(n)) return n;
  return static_cast<size_t>(rank);
}

std::optional<double> Percentile(const std::vector<double>& sorted_samples,
                                 double p) {
  if (sorted_samples.empty()) return std::nullopt;
  return sorted_samples[NearestRank(p, sorted_samples.size()) - 1];
}

DeployTracker::DeployTracker(size_t max_deploys) : max_deploys_(max_deploys) {}

absl::Status DeployTracker::Submitted(std::string id, int phase_index, double t,
                                      int target) {
  if (phase_index < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("negative phase index ", phase_index));
  }
  MutexLock lock(&mu_);
  if (records_.size() >= max_deploys_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("already tracking ", records_.size(),
                     " deploys, the most one run may send"));
  }
  Record record;
  record.phase = phase_index;
  record.target = target;
  record.submitted_at = t;
  if (!records_.try_emplace(std::move(id), record).second) {
    return absl::AlreadyExistsError("deploy id submitted twice");
  }
  ++totals_.submitted;
  return absl::OkStatus();
}

bool DeployTracker::Acknowledged(std::string_view id, double t) {
  MutexLock lock(&mu_);
  auto it = records_.find(AbslView(id));
  if (it == records_.end()) return false;
  Record& r = it->second;
  if (r.acknowledged || r.failed) return false;
  r.acknowledged = true;
  r.acknowledged_at = t;
  ++totals_.acknowledged;
  if (r.finalized_at == kNever) ++totals_.pending;
  return true;
}

bool DeployTracker::Failed(std::string_view id, std::string_view reason) {
  MutexLock lock(&mu_);
  auto it = records_.find(AbslView(id));
  if (it == records_.end()) return false;
  Record& r = it->second;
  if (r.acknowledged || r.failed) return false;
  r.failed = true;
  ++totals_.failed;
  std::string text(reason.substr(0, kMaxFailureReasonBytes));
  if (!failure_reasons_.contains(text) &&
      failure_reasons_.size() >= kMaxFailureReasons) {
    text = std::string(kOtherFailureReasons);
  }
  ++failure_reasons_[text];
  return true;
}

absl::Status DeployTracker::Resigned(std::string_view old_id,
                                     std::string new_id) {
  MutexLock lock(&mu_);
  auto it = records_.find(AbslView(old_id));
  if (it == records_.end()) return absl::NotFoundError("unknown deploy id");
  if (it->second.acknowledged || it->second.failed) {
    return absl::FailedPreconditionError(
        "the deploy was already acknowledged or refused");
  }
  if (records_.contains(new_id)) {
    return absl::AlreadyExistsError("deploy id submitted twice");
  }
  const Record record = it->second;
  records_.erase(it);
  records_.emplace(std::move(new_id), record);
  return absl::OkStatus();
}

bool DeployTracker::Included(std::string_view id, double t, bool errored) {
  MutexLock lock(&mu_);
  auto it = records_.find(AbslView(id));
  if (it == records_.end()) return false;
  Record& r = it->second;
  if (r.included_at != kNever) return false;
  r.included_at = t;
  r.errored = errored;
  ++totals_.included;
  return true;
}

bool DeployTracker::Rejected(std::string_view id) {
  MutexLock lock(&mu_);
  auto it = records_.find(AbslView(id));
  if (it == records_.end()) return false;
  ++it->second.rejections;
  return true;
}

bool DeployTracker::Reproposed(std::string_view id) {
  MutexLock lock(&mu_);
  auto it = records_.find(AbslView(id));
  if (it == records_.end() || it->second.reproposed) return false;
  it->second.reproposed = true;
  return true;
}

bool DeployTracker::Finalized(std::string_view id, double t, bool errored) {
  MutexLock lock(&mu_);
  auto it = records_.find(AbslView(id));
  if (it == records_.end()) return false;
  Record& r = it->second;
  if (r.finalized_at != kNever || r.finalized_unseen) return false;
  r.finalized_at = t;
  r.errored = errored;
  ++totals_.finalized;
  if (r.included_at == kNever) {
    r.included_at = t;
    ++totals_.included;
  }
  if (r.acknowledged && --totals_.pending == 0) no_pending_.SignalAll();
  return true;
}

bool DeployTracker::FinalizedUnseen(std::string_view id, bool errored) {
  MutexLock lock(&mu_);
  auto it = records_.find(AbslView(id));
  if (it == records_.end()) return false;
  Record& r = it->second;
  if (!r.acknowledged || r.finalized_at != kNever || r.finalized_unseen) {
    return false;
  }
  r.finalized_unseen = true;
  r.errored = errored;
  ++totals_.finalized;
  ++totals_.finalized_unseen;
  if (--totals_.pending == 0) no_pending_.SignalAll();
  return true;
}

PhaseStats DeployTracker::Summarize(int phase_index,
                                    double phase_wall_seconds) const {
  PhaseStats s;
  std::vector<double> acknowledgement;
  std::vector<double> inclusion;
  std::vector<double> finalization;
  {
    MutexLock lock(&mu_);
    for (const auto& entry : records_) {
      const Record& r = entry.second;
      if (r.phase != phase_index) continue;
      ++s.submitted;
      if (r.acknowledged) {
        ++s.acknowledged;
        acknowledgement.push_back(r.acknowledged_at - r.submitted_at);
      }
      if (r.failed) ++s.failed;
      if (r.included_at != kNever) {
        ++s.included;
        inclusion.push_back(r.included_at - r.submitted_at);
        if (r.errored) ++s.errored;
      }
      if (r.rejections > 0) ++s.rejected;
      if (r.reproposed) ++s.reproposed;
      if (r.finalized_at != kNever || r.finalized_unseen) {
        ++s.finalized;
        ++(r.errored ? s.finalized_failed : s.finalized_with_effect);
        if (!r.finalized_unseen) {
          finalization.push_back(r.finalized_at - r.submitted_at);
        }
      } else if (r.acknowledged) {
        ++s.not_finalized;
      }
    }
  }
  std::sort(acknowledgement.begin(), acknowledgement.end());
  std::sort(inclusion.begin(), inclusion.end());
  std::sort(finalization.begin(), finalization.end());
  if (phase_wall_seconds > 0) {
    s.achieved_rate = static_cast<double>(s.acknowledged) / phase_wall_seconds;
    s.effective_rate =
        static_cast<double>(s.finalized_with_effect) / phase_wall_seconds;
  }
  s.acknowledgement_p50 = Percentile(acknowledgement, 50);
  s.acknowledgement_p99 = Percentile(acknowledgement, 99);
  s.inclusion_p50 = Percentile(inclusion, 50);
  s.inclusion_p95 = Percentile(inclusion, 95);
  s.inclusion_p99 = Percentile(inclusion, 99);
  s.finalization_p50 = Percentile(finalization, 50);
  s.finalization_p95 = Percentile(finalization, 95);
  s.finalization_p99 = Percentile(finalization, 99);
  return s;
}

bool DeployTracker::FinalizationMedianExceeds(int phase_index,
                                              double limit_seconds) const {
  size_t acknowledged = 0;
  size_t within = 0;
  MutexLock lock(&mu_);
  for (const auto& entry : records_) {
    const Record& r = entry.second;
    if (r.phase != phase_index || !r.acknowledged) continue;
    ++acknowledged;
    if (r.finalized_at != kNever &&
        r.finalized_at - r.submitted_at <= limit_seconds) {
      ++within;
    }
  }
  return within < NearestRank(50, acknowledged);
}

int64_t DeployTracker::Pending() const {
  MutexLock lock(&mu_);
  return totals_.pending;
}

std::vector<PendingDeploy> DeployTracker::PendingDeploys(size_t max) const {
  std::vector<PendingDeploy> out;
  {
    MutexLock lock(&mu_);
    for (const auto& entry : records_) {
      const Record& r = entry.second;
      if (!r.acknowledged || r.finalized_at != kNever || r.finalized_unseen) {
        continue;
      }
      PendingDeploy p;
      p.id = entry.first;
      p.phase = r.phase;
      p.target = r.target;
      p.submitted_at = r.submitted_at;
      p.acknowledged_at = r.acknowledged_at;
      if (r.included_at != kNever) p.included_at = r.included_at;
      out.push_back(std::move(p));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const PendingDeploy& a, const PendingDeploy& b) {
              return std::tie(a.submitted_at, a.id) <
                     std::tie(b.submitted_at, b.id);
            });
  if (out.size() > max) out.resize(max);
  return out;
}

TrackerTotals DeployTracker::Totals() const {
  MutexLock lock(&mu_);
  return totals_;
}

bool DeployTracker::AwaitNoPending(
    std::chrono::steady_clock::time_point deadline) {
  MutexLock lock(&mu_);
  while (totals_.pending > 0) {
    if (no_pending_.WaitUntil(&mu_, deadline)) return totals_.pending == 0;
  }
  return true;
}

std::map<std::string, int64_t> DeployTracker::FailureReasons() const {
  MutexLock lock(&mu_);
  return failure_reasons_;
}

std::vector<SeriesPoint> DeployTracker::Series(double end_seconds) const {
  const size_t last = std::min<size_t>(
      static_cast<size_t>(std::ceil(std::max(end_seconds, 0.0))),
      kMaxSeriesPoints - 1);
  // Per-second changes, summed into cumulative counts below; index last + 1
  // collects events past the end.
  std::vector<SeriesPoint> delta(last + 2);
  auto index = [last](double t) {
    return std::min(FirstPointAfter(t), last + 1);
  };
  auto at = [&delta, &index](double t) -> SeriesPoint& {
    return delta[index(t)];
  };
  // Latencies by the point of the deploy's submission.
  std::vector<std::vector<double>> inclusion(last + 2);
  std::vector<std::vector<double>> finalization(last + 2);
  {
    MutexLock lock(&mu_);
    for (const auto& entry : records_) {
      const Record& r = entry.second;
      ++at(r.submitted_at).submitted;
      if (r.included_at != kNever) {
        ++at(r.included_at).included;
        inclusion[index(r.submitted_at)].push_back(r.included_at -
                                                   r.submitted_at);
      }
      if (r.finalized_at != kNever) {
        ++at(r.finalized_at).finalized;
        finalization[index(r.submitted_at)].push_back(r.finalized_at -
                                                      r.submitted_at);
      }
      if (!r.acknowledged) continue;
      ++at(r.acknowledged_at).acknowledged;
      // Pending over [acknowledged, finalized); empty when the finalization
      // was seen first.
      if (r.finalized_at == kNever) {
        ++at(r.acknowledged_at).pending;
      } else if (r.finalized_at >= r.acknowledged_at) {
        ++at(r.acknowledged_at).pending;
        --at(r.finalized_at).pending;
      }
    }
  }
  std::vector<SeriesPoint> points(last + 1);
  SeriesPoint sum;
  for (size_t i = 0; i <= last; ++i) {
    sum.submitted += delta[i].submitted;
    sum.acknowledged += delta[i].acknowledged;
    sum.included += delta[i].included;
    sum.finalized += delta[i].finalized;
    sum.pending += delta[i].pending;
    sum.t = static_cast<int64_t>(i);
    points[i] = sum;
    std::sort(inclusion[i].begin(), inclusion[i].end());
    std::sort(finalization[i].begin(), finalization[i].end());
    points[i].inclusion_p50 = Percentile(inclusion[i], 50);
    points[i].inclusion_p95 = Percentile(inclusion[i], 95);
    points[i].finalization_p50 = Percentile(finalization[i], 50);
    points[i].finalization_p95 = Percentile(finalization[i], 95);
  }
  return points;
}

}  // namespace rnode::loadgen

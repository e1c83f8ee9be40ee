// DeployScope: the per-deploy record, marks, net changes and revert.
#include "rspace/deploy_scope.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "rspace/space.h"
#include "util/status_macros.h"

namespace rnode::rspace {

DeployScope::DeployScope(Space& space) : space_(&space) {}

DeployScope::Mark DeployScope::mark() const {
  Mark m;
  m.generation = space_->generation();
  for (size_t i = 0; i < kScopeStripes; ++i) {
    MutexLock lock(&stripes_[i].mu);
    m.at[i] = stripes_[i].records.size();
  }
  return m;
}

void DeployScope::Append(Record r) {
  Stripe& s = stripes_[StripeOf(r.channel)];
  MutexLock lock(&s.mu);
  s.records.push_back(std::move(r));
}

void DeployScope::Touch(const Hash32& channel) {
  Stripe& s = stripes_[StripeOf(channel)];
  MutexLock lock(&s.mu);
  s.touched.insert(channel);
}

absl::StatusOr<std::vector<DeployScope::Record>> DeployScope::RecordsSince(
    const Mark& m) const {
  if (m.generation != space_->generation()) {
    return absl::FailedPreconditionError(
        "deploy scope: the mark predates a checkpoint or reset of the space");
  }
  std::vector<Record> out;
  for (size_t i = 0; i < kScopeStripes; ++i) {
    const Stripe& s = stripes_[i];
    MutexLock lock(&s.mu);
    if (m.at[i] > s.records.size()) {
      return absl::FailedPreconditionError(
          "deploy scope: the mark is past this scope's record (a mark of "
          "another scope, or one taken before an earlier revert)");
    }
    out.insert(out.end(), s.records.begin() + m.at[i], s.records.end());
  }
  return out;
}

absl::StatusOr<StateChanges> DeployScope::ChangesSince(const Mark& m) const {
  ASSIGN_OR_RETURN(std::vector<Record> records, RecordsSince(m));
  // Per channel, the items added and removed, in record order.
  std::map<Hash32, std::pair<ChannelState, ChannelState>> by_channel;
  for (Record& r : records) {
    auto& [added, removed] = by_channel[r.channel];
    switch (r.kind) {
      case Record::Kind::kAddDatum:
        added.data.push_back(std::get<Datum>(std::move(r.item)));
        break;
      case Record::Kind::kRemoveDatum:
        removed.data.push_back(std::get<Datum>(std::move(r.item)));
        break;
      case Record::Kind::kAddContinuation:
        added.continuations.push_back(
            std::get<WaitingContinuation>(std::move(r.item)));
        break;
      case Record::Kind::kRemoveContinuation:
        removed.continuations.push_back(
            std::get<WaitingContinuation>(std::move(r.item)));
        break;
      case Record::Kind::kAddJoin:
        added.joins.push_back(std::get<JoinGroup>(std::move(r.item)));
        break;
      case Record::Kind::kRemoveJoin:
        removed.joins.push_back(std::get<JoinGroup>(std::move(r.item)));
        break;
    }
  }
  StateChanges out;
  for (const auto& [channel, change] : by_channel) {
    ChannelChange c = NetChannelChange(channel, change.first, change.second);
    if (!c.empty()) out.channels.push_back(std::move(c));
  }
  return out;
}

absl::Status DeployScope::RevertTo(const Mark& m) {
  ASSIGN_OR_RETURN(std::vector<Record> records, RecordsSince(m));
  absl::Status st = space_->Revert(records);
  for (size_t i = 0; i < kScopeStripes; ++i) {
    Stripe& s = stripes_[i];
    MutexLock lock(&s.mu);
    s.records.resize(m.at[i]);
  }
  return st;
}

std::vector<Hash32> DeployScope::WrittenChannels() const {
  std::vector<Hash32> out;
  for (const Stripe& s : stripes_) {
    MutexLock lock(&s.mu);
    for (const Record& r : s.records) out.push_back(r.channel);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<Hash32> DeployScope::TouchedChannels() const {
  std::vector<Hash32> out;
  for (const Stripe& s : stripes_) {
    MutexLock lock(&s.mu);
    out.insert(out.end(), s.touched.begin(), s.touched.end());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace rnode::rspace

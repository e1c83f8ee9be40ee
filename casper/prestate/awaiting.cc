// Deploys a finalized merge rejected, awaited until the finalized state
// holds them or their window closes.
#include "casper/prestate/awaiting.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "casper/prestate/ancestry.h"
#include "util/status_macros.h"

namespace rnode::casper::prestate {

absl::StatusOr<std::optional<AwaitedDeploys::Window>> AwaitedDeploys::WindowOf(
    dag::DagStore& dag, ByteView sig) const {
  ASSIGN_OR_RETURN(const std::optional<block::ProcessedDeploy> d,
                   StoredCopy(dag, sig));
  if (!d.has_value()) return std::optional<Window>();
  return std::optional<Window>(Window{LastBlockNumber(d->data, lifespan_),
                                      d->data.expiration_timestamp, 0});
}

absl::StatusOr<std::vector<Bytes>> AwaitedDeploys::NoteFinalized(
    dag::DagStore& dag, const Hash32& lfb, std::span<const Hash32> blocks,
    int64_t next_number, int64_t now_ms) {
  std::vector<Bytes> noted;
  for (const Hash32& h : blocks) {
    ASSIGN_OR_RETURN(const auto meta, dag.Meta(h));
    if (meta->parents.size() < 2) continue;  // no merge, nothing rejected
    ASSIGN_OR_RETURN(const std::shared_ptr<const dag::MergeRecord> record,
                     dag.MergeRecordOf(h));
    for (const block::RejectedDeploy& r : record->rejected) {
      if (window_.contains(r.sig) ||
          std::find(noted.begin(), noted.end(), r.sig) != noted.end()) {
        continue;
      }
      ASSIGN_OR_RETURN(const std::optional<Hash32> held,
                       CopyInPostState(dag, lfb, r.sig, 0));
      if (held.has_value()) continue;
      ASSIGN_OR_RETURN(std::optional<Window> w, WindowOf(dag, r.sig));
      if (!w.has_value() || !w->OpenAt(next_number, now_ms)) continue;
      if (window_.size() >= capacity_) {
        auto oldest = std::min_element(window_.begin(), window_.end(),
                                       [](const auto& a, const auto& b) {
                                         return a.second.noted < b.second.noted;
                                       });
        window_.erase(oldest);
      }
      w->noted = noted_++;
      window_.emplace(r.sig, *w);
      noted.push_back(r.sig);
    }
  }
  return noted;
}

absl::StatusOr<std::vector<Bytes>> AwaitedDeploys::Settle(dag::DagStore& dag,
                                                          const Hash32& lfb,
                                                          int64_t next_number,
                                                          int64_t now_ms) {
  std::vector<Bytes> held;
  std::vector<Bytes> closed;
  for (const auto& [sig, w] : window_) {
    ASSIGN_OR_RETURN(const std::optional<Hash32> copy,
                     CopyInPostState(dag, lfb, sig, 0));
    if (copy.has_value()) {
      held.push_back(sig);
    } else if (!w.OpenAt(next_number, now_ms)) {
      closed.push_back(sig);
    }
  }
  for (const Bytes& sig : held) window_.erase(sig);
  for (const Bytes& sig : closed) window_.erase(sig);
  return held;
}

}  // namespace rnode::casper::prestate

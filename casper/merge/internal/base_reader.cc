// Base leaves of a merge (see base_reader.h).
#include "casper/merge/internal/base_reader.h"

#include <chrono>
#include <utility>

#include "rspace/term.h"
#include "util/status_macros.h"

namespace rnode::casper::merge::internal {

BaseReader::BaseReader(rspace::History& history, const Hash32& root,
                       rspace::TermFactory factory)
    : history_(history),
      root_(root),
      value_hashes_(factory ? rspace::ValueHashes::kVerify
                            : rspace::ValueHashes::kTrust),
      factory_(factory ? std::move(factory) : rspace::TermFactory([](Bytes b) {
        return absl::StatusOr<rspace::TermPtr>(
            rspace::Term::Make(std::move(b)));
      })) {}

uint32_t BaseReader::Want(const Hash32& channel) {
  const KeyRecord key = KeyRecord::Make(channel, 0, 0);
  auto it = std::lower_bound(known_.begin(), known_.end(), key, KeyWordsLess);
  if (it != known_.end() && SameKey(*it, key)) return it->item;
  auto [s, inserted] = singles_.try_emplace(channel, 0);
  if (inserted) {
    s->second = NewLeaf();
    KeyRecord r = key;
    r.item = s->second;
    pending_.push_back(r);
  }
  return s->second;
}

absl::Status BaseReader::ReadPending() {
  if (pending_.empty()) return absl::OkStatus();
  const auto t0 = std::chrono::steady_clock::now();
  if (!std::is_sorted(pending_.begin(), pending_.end(), KeyWordsLess))
    SortKeyRecords(pending_);
  std::vector<Hash32> keys;
  keys.reserve(pending_.size());
  for (const KeyRecord& w : pending_) keys.push_back(KeyOf(w));
  ASSIGN_OR_RETURN(std::vector<std::optional<Bytes>> blobs,
                   history_.ReadLeaves(root_, keys));
  for (size_t i = 0; i < pending_.size(); ++i) {
    BaseLeaf& leaf = leaves_[pending_[i].item];
    leaf.blob = std::move(blobs[i]);
    if (leaf.blob.has_value()) {
      ASSIGN_OR_RETURN(leaf.state, rspace::DecodeChannelState(
                                       *leaf.blob, factory_, value_hashes_));
    }
    leaf.loaded = true;
  }
  pending_.clear();
  read_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now() - t0)
                  .count();
  return absl::OkStatus();
}

absl::StatusOr<const BaseLeaf*> BaseReader::Get(const Hash32& channel) {
  const uint32_t index = Want(channel);
  if (!leaves_[index].loaded) RETURN_IF_ERROR(ReadPending());
  return &leaves_[index];
}

}  // namespace rnode::casper::merge::internal

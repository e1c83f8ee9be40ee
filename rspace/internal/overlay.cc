// The ordering helpers of the Space's overlay (rspace/internal/overlay.h).
#include "rspace/internal/overlay.h"

namespace rnode::rspace::internal {

std::string Hex(const Hash32& h) { return HexEncode(h); }

bool AddJoin(std::vector<JoinGroup>& joins, const JoinGroup& g) {
  auto it = std::lower_bound(joins.begin(), joins.end(), g);
  if (it != joins.end() && *it == g) return false;
  joins.insert(it, g);
  return true;
}

void InsertDatum(std::vector<Datum>& data, Datum d) {
  auto it = std::upper_bound(
      data.begin(), data.end(), d.source,
      [](const Hash32& s, const Datum& x) { return s < x.source; });
  data.insert(it, std::move(d));
}

void InsertContinuation(std::vector<WaitingContinuation>& ks,
                        WaitingContinuation k) {
  auto it = std::upper_bound(ks.begin(), ks.end(), k.source,
                             [](const Hash32& s, const WaitingContinuation& x) {
                               return s < x.source;
                             });
  ks.insert(it, std::move(k));
}

absl::StatusOr<BindHashes> CheckBinds(const char* op,
                                      const std::vector<TermPtr>& channels,
                                      const std::vector<TermPtr>& patterns) {
  if (channels.empty() || channels.size() != patterns.size()) {
    return absl::InvalidArgumentError(
        std::string(op) +
        ": needs one pattern per channel and at least one channel (" +
        std::to_string(channels.size()) + " channels, " +
        std::to_string(patterns.size()) + " patterns)");
  }
  if (channels.size() > kMaxJoinArity) {
    return absl::ResourceExhaustedError(std::string(op) + ": more than " +
                                        std::to_string(kMaxJoinArity) +
                                        " binds");
  }
  BindHashes h;
  for (size_t i = 0; i < channels.size(); ++i) {
    if (channels[i] == nullptr || patterns[i] == nullptr) {
      return absl::InvalidArgumentError(std::string(op) +
                                        ": null channel or pattern");
    }
    h.channels.push_back(channels[i]->hash());
    h.patterns.push_back(patterns[i]->hash());
  }
  return h;
}

}  // namespace rnode::rspace::internal

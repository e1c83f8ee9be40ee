// DagStore's lookups by hash prefix (split from dag_store.cc): a seek in
// the metadata column, keyed by block hash.
#include "casper/dag/dag_store.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "util/bytes.h"
#include "util/status_macros.h"

namespace rnode::casper::dag {

absl::StatusOr<std::vector<Hash32>> DagStore::HashesWithPrefix(
    std::string_view hex, size_t max) const {
  const bool lower_hex =
      !hex.empty() && hex.size() <= 64 &&
      std::all_of(hex.begin(), hex.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
      });
  if (!lower_hex) {
    return absl::InvalidArgumentError(
        "a hash prefix is 1 to 64 lower-case hex digits");
  }
  // The smallest key with the prefix: its whole bytes, then an odd digit
  // as the high half of the next byte.
  ASSIGN_OR_RETURN(Bytes from, HexDecode(hex.substr(0, hex.size() / 2 * 2)));
  if (hex.size() % 2 == 1) {
    ASSIGN_OR_RETURN(Bytes odd, HexDecode(std::string(1, hex.back()) + "0"));
    from.push_back(odd[0]);
  }
  std::vector<Hash32> out;
  if (max == 0) return out;
  // Keys are ascending: the matches are contiguous from the seek.
  RETURN_IF_ERROR(
      store_->ScanFrom(columns_.meta, from, [&](ByteView key, ByteView) {
        if (key.size() != 32 || !HexEncode(key).starts_with(hex)) return false;
        Hash32 h;
        std::copy(key.begin(), key.end(), h.begin());
        out.push_back(h);
        return out.size() < max;
      }));
  return out;
}

}  // namespace rnode::casper::dag

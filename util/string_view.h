// Debian 12's abseil has its own absl::string_view, distinct from
// std::string_view: the one conversion for the abseil calls and lookups
// (flat_hash_map<std::string, ...>::find) that take it.
#ifndef RNODE_UTIL_STRING_VIEW_H_
#define RNODE_UTIL_STRING_VIEW_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace rnode {

inline absl::string_view AbslView(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

}  // namespace rnode

#endif  // RNODE_UTIL_STRING_VIEW_H_

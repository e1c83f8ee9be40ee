// Text that JSON can carry: Rholang strings are bytes and may hold invalid
// UTF-8, which nlohmann::json::dump() refuses by throwing.
#ifndef RNODE_NODE_VIEWS_INTERNAL_UTF8_H_
#define RNODE_NODE_VIEWS_INTERNAL_UTF8_H_

#include <string>
#include <string_view>

namespace rnode::node::views::internal {

// `text` with every byte that does not start or belong to a well-formed
// UTF-8 sequence (RFC 3629: no overlongs, no surrogates, at most U+10FFFF)
// replaced by U+FFFD. Valid text is returned unchanged. Thread-safe.
std::string Utf8Sanitized(std::string_view text);

}  // namespace rnode::node::views::internal

#endif  // RNODE_NODE_VIEWS_INTERNAL_UTF8_H_

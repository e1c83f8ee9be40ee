// The public node's score-tree order (rholang/frontend/internal/public_score.h).
#include "rholang/frontend/internal/public_score.h"

#include <algorithm>

namespace rnode::rholang::internal {
namespace {

int CompareBytes(const std::string& a, const std::string& b) {
  // Unsigned bytewise, a proper prefix first (std::string::compare is
  // unsigned via char_traits<char>).
  int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace

int CompareScore(const Score& a, const Score& b) {
  using K = Score::Kind;
  bool a_leaf = a.kind != K::kNode;
  bool b_leaf = b.kind != K::kNode;
  if (a_leaf && b_leaf) {
    if (a.kind != b.kind) return a.kind < b.kind ? -1 : 1;
    if (a.kind == K::kIntAtom) {
      return a.int_atom < b.int_atom ? -1 : (a.int_atom > b.int_atom ? 1 : 0);
    }
    return CompareBytes(a.text_atom, b.text_atom);
  }
  if (a_leaf) return -1;
  if (b_leaf) return 1;
  size_t n = std::min(a.children.size(), b.children.size());
  for (size_t i = 0; i < n; ++i) {
    int c = CompareScore(a.children[i], b.children[i]);
    if (c != 0) return c;
  }
  if (a.children.size() == b.children.size()) return 0;
  return a.children.size() < b.children.size() ? -1 : 1;
}

}  // namespace rnode::rholang::internal

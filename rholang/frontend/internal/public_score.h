// The public node's score tree (reference rholang.md §3.4): the key by
// which it sorts a Par's terms, sets and maps, and the order of keys.
#ifndef RNODE_RHOLANG_INTERNAL_PUBLIC_SCORE_H_
#define RNODE_RHOLANG_INTERNAL_PUBLIC_SCORE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rnode::rholang::internal {

// A public score tree: a leaf atom (Int < String < Bytes) or a node.
struct Score {
  enum class Kind : uint8_t { kIntAtom, kStringAtom, kBytesAtom, kNode };
  Kind kind = Kind::kNode;
  int64_t int_atom = 0;
  std::string text_atom;  // string or bytes atom
  std::vector<Score> children;

  static Score Int(int64_t v) {
    Score s;
    s.kind = Kind::kIntAtom;
    s.int_atom = v;
    return s;
  }
  static Score Text(std::string v) {
    Score s;
    s.kind = Kind::kStringAtom;
    s.text_atom = std::move(v);
    return s;
  }
  static Score Bytes(std::string v) {
    Score s;
    s.kind = Kind::kBytesAtom;
    s.text_atom = std::move(v);
    return s;
  }
  static Score Node(std::vector<Score> children) {
    Score s;
    s.children = std::move(children);
    return s;
  }
  // Node[Leaf(code), rest...].
  static Score Tagged(int64_t code, std::vector<Score> rest = {}) {
    std::vector<Score> c;
    c.reserve(rest.size() + 1);
    c.push_back(Int(code));
    for (Score& r : rest) c.push_back(std::move(r));
    return Node(std::move(c));
  }
};

// The public sorter's order: leaves before nodes, leaves by kind (Int <
// String < Bytes) then value (text unsigned bytewise, a proper prefix
// first), nodes by their children lexicographically. -1, 0 or 1.
int CompareScore(const Score& a, const Score& b);

}  // namespace rnode::rholang::internal

#endif  // RNODE_RHOLANG_INTERNAL_PUBLIC_SCORE_H_

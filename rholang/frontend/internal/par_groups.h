// A Par's component groups as the spatial matcher counts and enumerates
// them (one vector of the IR's Par per group), and component counts per
// group.
#ifndef RNODE_RHOLANG_INTERNAL_PAR_GROUPS_H_
#define RNODE_RHOLANG_INTERNAL_PAR_GROUPS_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "rholang/frontend/ir.h"

namespace rnode::rholang::internal {

// The component groups of a Par, in IR order. The first seven are the
// public node's ParCount kinds, in its sub-Par enumeration order.
enum Group : int {
  kSendGroup,
  kReceiveGroup,
  kNewGroup,
  kExprGroup,
  kMatchGroup,
  kUnforgeableGroup,
  kBundleGroup,
  kConnectiveGroup,
  kIfGroup,
};
inline constexpr int kGroupCount = 9;

// The number of components of `p` in group `g`.
size_t GroupSize(const ir::Par& p, int g);
// The `i`th component of `p` in group `g`. REQUIRES: i < GroupSize(p, g).
const ir::NodeInfo& GroupItem(const ir::Par& p, int g, size_t i);
// Adds the `i`th component of `p` in group `g` to `b`.
// REQUIRES: i < GroupSize(p, g).
void AddGroupItem(const ir::Par& p, int g, size_t i, ir::ParBuilder& b);

// Stands for "any number of components" in count bounds: far above any
// term the deploy size limit admits. (The public node uses 1000, which only
// differs for a Par of more than 1000 components of one kind.)
inline constexpr int64_t kAnyCount = int64_t{1} << 40;

// Component counts per group.
using Counts = std::array<int64_t, kGroupCount>;

// Every group at `v`.
inline Counts Filled(int64_t v) {
  Counts c;
  c.fill(v);
  return c;
}

// Group by group, capped at kAnyCount.
inline Counts Plus(const Counts& a, const Counts& b) {
  Counts c;
  for (int g = 0; g < kGroupCount; ++g) {
    c[g] = std::min(a[g] + b[g], kAnyCount);
  }
  return c;
}

}  // namespace rnode::rholang::internal

#endif  // RNODE_RHOLANG_INTERNAL_PAR_GROUPS_H_

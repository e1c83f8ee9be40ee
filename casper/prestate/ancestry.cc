// Where a deploy's effect is in a state of the DAG.
#include "casper/prestate/ancestry.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "util/status_macros.h"

namespace rnode::casper::prestate {
namespace {

struct Copy {
  int64_t number = 0;
  Hash32 block{};
};

// The record of the stored block `hash`'s pre-state, with what owns the
// record's spans: its metadata (parents) and, for several parents, its
// merge record (kept in memory by the DAG for recent blocks).
struct StoredPre {
  std::shared_ptr<const dag::BlockMeta> meta;
  std::shared_ptr<const dag::MergeRecord> merge;
  PreStateRecord record() const {
    if (merge == nullptr) return {meta->parents, std::nullopt, {}};
    return {meta->parents, merge->merge_base, merge->rejected};
  }
};

absl::StatusOr<StoredPre> ReadPre(dag::DagStore& dag, const Hash32& hash) {
  StoredPre out;
  ASSIGN_OR_RETURN(out.meta, dag.Meta(hash));
  if (out.meta->parents.size() >= 2) {
    ASSIGN_OR_RETURN(out.merge, dag.MergeRecordOf(hash));
  }
  return out;
}

// The copies of `sig` numbered at least `min_number`, ascending by number
// then hash.
absl::StatusOr<std::vector<Copy>> CopiesOf(dag::DagStore& dag, ByteView sig,
                                           int64_t min_number) {
  ASSIGN_OR_RETURN(const std::vector<Hash32> holders,
                   dag.BlocksWithDeploy(sig));
  std::vector<Copy> copies;
  for (const Hash32& h : holders) {
    ASSIGN_OR_RETURN(const auto meta, dag.Meta(h));
    if (meta->invalid || meta->block_number < min_number) continue;
    copies.push_back({meta->block_number, h});
  }
  std::sort(copies.begin(), copies.end(), [](const Copy& a, const Copy& b) {
    return a.number != b.number ? a.number < b.number : a.block < b.block;
  });
  return copies;
}

// Walks down from the pre-state `pre` with the copies still in play
// (ancestors of a parent).
absl::StatusOr<std::optional<Hash32>> Walk(dag::DagStore& dag,
                                           PreStateRecord pre,
                                           std::vector<Copy> copies,
                                           ByteView sig) {
  StoredPre owner;  // Owns `pre`'s spans after the first step down.
  for (;;) {
    if (copies.empty() || pre.parents.empty()) return std::nullopt;
    Hash32 next{};
    if (pre.parents.size() == 1) {
      next = pre.parents.front();
    } else {
      if (!pre.merge_base.has_value()) {
        return absl::DataLossError(
            "a block of several parents does not record its merge base");
      }
      next = *pre.merge_base;
      std::vector<Copy> below;
      const Copy* kept = nullptr;
      for (const Copy& c : copies) {
        if (dag.IsAncestor(c.block, next)) {
          below.push_back(c);
        } else {
          kept = &c;  // The last is the highest-numbered.
        }
      }
      if (kept != nullptr && !NamesRejected(pre.rejected, sig)) {
        return kept->block;
      }
      copies = std::move(below);
      if (copies.empty()) return std::nullopt;
    }
    // The post-state of `next`: its own copy, else its pre-state's.
    if (std::any_of(copies.begin(), copies.end(),
                    [&](const Copy& c) { return c.block == next; })) {
      return next;
    }
    ASSIGN_OR_RETURN(owner, ReadPre(dag, next));
    pre = owner.record();
  }
}

// The state path of a block X: X, then the block X's pre-state starts from
// (its parent, or the merge base of its parents), and so on down. The
// post-state of X holds a copy C of a deploy if C is the first of the
// deploy's copies met going down the path: a path block that is C, or a
// merge whose scope holds C and whose record does not reject the deploy.
//
// The blocks of main's state path that the scope accepts, from main down,
// and the first one it refuses (nullopt: the path ended in the scope).
struct ScopePath {
  std::vector<StoredPre> nodes;
  std::optional<Hash32> below;
};

absl::StatusOr<ScopePath> PathInScope(
    dag::DagStore& dag, const Hash32& main,
    absl::FunctionRef<bool(const Hash32&)> in_scope) {
  ScopePath path;
  Hash32 h = main;
  for (;;) {
    if (!in_scope(h)) {
      path.below = h;
      return path;
    }
    ASSIGN_OR_RETURN(StoredPre pre, ReadPre(dag, h));
    const PreStateRecord record = pre.record();
    path.nodes.push_back(std::move(pre));
    if (record.parents.empty()) return path;
    if (record.parents.size() == 1) {
      h = record.parents.front();
    } else if (record.merge_base.has_value()) {
      h = *record.merge_base;
    } else {
      return absl::DataLossError(
          "a block of several parents does not record its merge base");
    }
  }
}

// Per scope block that is an ancestor of (or is) main: the largest i such
// that it is an ancestor-or-self of path node i. The ancestors of nested
// path nodes are nested, so a walk from each node, lowest first, that stops
// at blocks already marked visits every scope block once.
absl::StatusOr<absl::flat_hash_map<Hash32, uint32_t, Hash32Hasher>> Depths(
    dag::DagStore& dag, const ScopePath& path,
    absl::FunctionRef<bool(const Hash32&)> in_scope) {
  absl::flat_hash_map<Hash32, uint32_t, Hash32Hasher> depth;
  std::vector<std::shared_ptr<const dag::BlockMeta>> stack;
  for (size_t i = path.nodes.size(); i-- > 0;) {
    const auto& top = path.nodes[i].meta;
    if (!depth.emplace(top->hash, static_cast<uint32_t>(i)).second) continue;
    stack.push_back(top);
    while (!stack.empty()) {
      const std::shared_ptr<const dag::BlockMeta> m = std::move(stack.back());
      stack.pop_back();
      for (const Hash32& p : m->parents) {
        if (!in_scope(p) ||
            !depth.emplace(p, static_cast<uint32_t>(i)).second) {
          continue;
        }
        ASSIGN_OR_RETURN(std::shared_ptr<const dag::BlockMeta> pm, dag.Meta(p));
        stack.push_back(std::move(pm));
      }
    }
  }
  return depth;
}

// The depth of a copy outside the scope: the largest i with the copy an
// ancestor-or-self of path node i; nullopt when it is not an ancestor of
// main, or is an ancestor of the first block below the path (then the walk
// down meets every scope copy before it). Ancestry is nested along the
// path: a binary search.
std::optional<uint32_t> DepthOutside(const dag::DagStore& dag,
                                     const ScopePath& path,
                                     const Hash32& copy) {
  const auto& nodes = path.nodes;
  if (nodes.empty()) return std::nullopt;
  if (path.below.has_value() && dag.IsAncestor(copy, *path.below)) {
    return std::nullopt;
  }
  // Usually the lowest node: a copy outside the scope is an ancestor of
  // the base, and the base is on main's path or just below it.
  const size_t last = nodes.size() - 1;
  if (dag.IsAncestor(copy, nodes[last].meta->hash)) {
    return static_cast<uint32_t>(last);
  }
  if (!dag.IsAncestor(copy, nodes.front().meta->hash)) return std::nullopt;
  size_t lo = 0, hi = last;  // Ancestor of nodes[lo], not of nodes[hi].
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    (dag.IsAncestor(copy, nodes[mid].meta->hash) ? lo : hi) = mid;
  }
  return static_cast<uint32_t>(lo);
}

}  // namespace

absl::StatusOr<std::vector<HeldCopy>> ScopeCopiesInPostState(
    dag::DagStore& dag, const Hash32& main,
    absl::FunctionRef<bool(const Hash32&)> in_scope,
    std::span<const Bytes> sigs) {
  std::vector<HeldCopy> out;
  ASSIGN_OR_RETURN(const ScopePath path, PathInScope(dag, main, in_scope));
  if (path.nodes.empty()) return out;  // No ancestor of main is in scope.
  ASSIGN_OR_RETURN(const auto depth, Depths(dag, path, in_scope));
  struct Placed {
    uint32_t depth = 0;
    Copy copy;
  };
  std::vector<Placed> placed;
  for (const Bytes& sig : sigs) {
    ASSIGN_OR_RETURN(const std::vector<Copy> copies, CopiesOf(dag, sig, 0));
    placed.clear();
    for (const Copy& c : copies) {
      std::optional<uint32_t> d;
      if (in_scope(c.block)) {
        if (auto it = depth.find(c.block); it != depth.end()) d = it->second;
      } else {
        d = DepthOutside(dag, path, c.block);
      }
      if (d.has_value()) placed.push_back({*d, c});
    }
    // Going down the path: the first node with copies at its depth decides
    // (its own copy; else its merge kept the highest of them, unless its
    // record rejects the deploy, and then they are out of play).
    std::stable_sort(
        placed.begin(), placed.end(),
        [](const Placed& x, const Placed& y) { return x.depth < y.depth; });
    std::optional<Hash32> held;
    for (size_t i = 0; i < placed.size() && !held.has_value();) {
      size_t j = i;
      while (j < placed.size() && placed[j].depth == placed[i].depth) ++j;
      const StoredPre& node = path.nodes[placed[i].depth];
      const PreStateRecord record = node.record();
      for (size_t k = i; k < j; ++k) {
        if (placed[k].copy.block == node.meta->hash) held = node.meta->hash;
      }
      if (!held.has_value() && record.parents.size() >= 2 &&
          !NamesRejected(record.rejected, sig)) {
        held = placed[j - 1].copy.block;  // Copies ascend: the highest.
      }
      i = j;
    }
    if (held.has_value() && in_scope(*held)) out.push_back({sig, *held});
  }
  return out;
}

absl::StatusOr<std::optional<block::ProcessedDeploy>> StoredCopy(
    dag::DagStore& dag, ByteView sig,
    const crypto::Secp256k1PublicKey* sender) {
  ASSIGN_OR_RETURN(const std::vector<Hash32> holders,
                   dag.BlocksWithDeploy(sig));
  for (const Hash32& h : holders) {
    ASSIGN_OR_RETURN(const auto meta, dag.Meta(h));
    if (meta->invalid || (sender != nullptr && meta->sender != *sender)) {
      continue;
    }
    ASSIGN_OR_RETURN(std::optional<block::Block> b, dag.GetBlock(h));
    if (!b.has_value()) continue;
    for (block::ProcessedDeploy& d : b->body.deploys) {
      if (std::equal(d.sig.begin(), d.sig.end(), sig.begin(), sig.end())) {
        return std::optional<block::ProcessedDeploy>(std::move(d));
      }
    }
  }
  return std::optional<block::ProcessedDeploy>();
}

bool NamesRejected(std::span<const block::RejectedDeploy> rejected,
                   ByteView sig) {
  return std::any_of(
      rejected.begin(), rejected.end(), [&](const block::RejectedDeploy& r) {
        return r.sig.size() == sig.size() &&
               std::equal(r.sig.begin(), r.sig.end(), sig.begin());
      });
}

absl::StatusOr<std::optional<Hash32>> CopyInPreState(dag::DagStore& dag,
                                                     const PreStateRecord& pre,
                                                     ByteView sig,
                                                     int64_t min_number) {
  ASSIGN_OR_RETURN(std::vector<Copy> copies, CopiesOf(dag, sig, min_number));
  std::erase_if(copies, [&](const Copy& c) {
    return std::none_of(
        pre.parents.begin(), pre.parents.end(),
        [&](const Hash32& p) { return dag.IsAncestor(c.block, p); });
  });
  return Walk(dag, pre, std::move(copies), sig);
}

absl::StatusOr<std::optional<Hash32>> CopyInPostState(dag::DagStore& dag,
                                                      const Hash32& block,
                                                      ByteView sig,
                                                      int64_t min_number) {
  ASSIGN_OR_RETURN(std::vector<Copy> copies, CopiesOf(dag, sig, min_number));
  std::erase_if(copies,
                [&](const Copy& c) { return !dag.IsAncestor(c.block, block); });
  if (copies.empty()) return std::nullopt;
  for (const Copy& c : copies) {
    if (c.block == block) return block;
  }
  ASSIGN_OR_RETURN(StoredPre owner, ReadPre(dag, block));
  return Walk(dag, owner.record(), std::move(copies), sig);
}

}  // namespace rnode::casper::prestate

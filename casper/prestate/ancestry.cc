// Where a deploy's effect is in a state of the DAG.
#include "casper/prestate/ancestry.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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

}  // namespace

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

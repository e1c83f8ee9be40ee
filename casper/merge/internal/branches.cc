// Step 3: branches, the connected components of related chains.
#include "casper/merge/internal/depends.h"
#include "casper/merge/internal/steps.h"

namespace rnode::casper::merge::internal {

absl::StatusOr<Branches> BuildBranches(const ScopeIndex& index,
                                       MergeScratch& scratch) {
  const uint32_t nc = index.chains();
  const std::vector<const BlockIndex*>& blocks = index.blocks;
  std::vector<uint32_t> labels;
  {
    std::vector<KeyRecord>& records = scratch.depends;
    records.clear();
    size_t keys = 0;
    for (const BlockIndex* b : blocks) keys += b->flat.depend_keys.all().size();
    records.reserve(keys);
    for (uint32_t b = 0; b < blocks.size(); ++b) {
      const size_t first = records.size();
      const auto all = blocks[b]->flat.depend_keys.all();
      records.insert(records.end(), all.begin(), all.end());
      for (size_t i = first; i < records.size(); ++i)
        records[i].item += index.chain_offset[b];
    }
    labels = ComponentsOfRecords(nc, records, scratch.sort);
  }
  Branches br;
  std::vector<uint32_t> branch_of_label(nc, UINT32_MAX);
  br.chain_branch.resize(nc);
  for (uint32_t i = 0; i < nc; ++i) {
    uint32_t& b = branch_of_label[labels[i]];
    if (b == UINT32_MAX) b = br.count++;
    br.chain_branch[i] = b;
  }
  const uint32_t nb = br.count;
  br.offset.assign(nb + 1, 0);
  for (uint32_t b : br.chain_branch) ++br.offset[b + 1];
  for (uint32_t b = 0; b < nb; ++b) br.offset[b + 1] += br.offset[b];
  br.chain_list.resize(nc);
  {
    std::vector<uint32_t> fill(br.offset.begin(), br.offset.end() - 1);
    for (uint32_t i = 0; i < nc; ++i)
      br.chain_list[fill[br.chain_branch[i]]++] = i;
  }
  br.info.resize(nb);
  for (uint32_t b = 0; b < nb; ++b) {
    BranchInfo& info = br.info[b];
    info.chains.reserve(br.chains_of(b).size());
    for (uint32_t g : br.chains_of(b)) {
      const BlockFlat& f = index.flat_of(g);
      const uint32_t c = index.local_of(g);
      info.chains.push_back(
          ChainKey{blocks[index.chain_block[g]]->hash, f.first_deploy[c]});
      if (__builtin_add_overflow(info.cost, f.cost[c], &info.cost)) {
        return absl::InvalidArgumentError("merge: branch cost overflows");
      }
    }
    if (!br.single(b)) br.multi.push_back(b);
  }
  br.multi_facts.reserve(br.multi.size());
  std::vector<const EventFacts*> parts;
  for (uint32_t b : br.multi) {
    parts.clear();
    for (uint32_t g : br.chains_of(b)) parts.push_back(&index.chain(g).facts);
    br.multi_facts.push_back(UnionFacts(parts));
  }
  return br;
}

}  // namespace rnode::casper::merge::internal

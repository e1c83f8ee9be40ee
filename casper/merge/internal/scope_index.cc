// Step 1: the blocks of a scope in hash order and their chains numbered.
#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "casper/merge/internal/hash_key.h"
#include "casper/merge/internal/steps.h"

namespace rnode::casper::merge::internal {
void MergeScratch::Trim(size_t max_bytes) {
  TrimScratch(plan, max_bytes);
  TrimScratch(slot_leaf, max_bytes);
  TrimScratch(depends, max_bytes);
  TrimScratch(keys, max_bytes);
  sort.Trim(max_bytes);
}

absl::StatusOr<ScopeIndex> IndexScope(
    std::span<const std::shared_ptr<const BlockIndex>> scope,
    const NumberChannelCodec* codec) {
  if (scope.size() > kMaxScopeBlocks) {
    return absl::ResourceExhaustedError("merge: scope has too many blocks");
  }
  ScopeIndex idx;
  std::vector<const BlockIndex*>& blocks = idx.blocks;
  for (const auto& b : scope) {
    if (b == nullptr)
      return absl::InvalidArgumentError("merge: null block index");
    blocks.push_back(b.get());
  }
  std::sort(blocks.begin(), blocks.end(),
            [](const BlockIndex* a, const BlockIndex* b) {
              return a->hash < b->hash;
            });
  for (size_t i = 1; i < blocks.size(); ++i) {
    if (blocks[i]->hash == blocks[i - 1]->hash) {
      return absl::InvalidArgumentError(
          "merge: block " + HexEncode(blocks[i]->hash) + " twice in scope");
    }
  }
  idx.chain_offset.assign(blocks.size() + 1, 0);
  for (size_t b = 0; b < blocks.size(); ++b) {
    idx.deploys += blocks[b]->deploys.size();
    idx.chain_offset[b + 1] =
        idx.chain_offset[b] + static_cast<uint32_t>(blocks[b]->chains.size());
  }
  idx.chain_block.resize(idx.chains());
  for (uint32_t b = 0; b < blocks.size(); ++b) {
    std::fill(idx.chain_block.begin() + idx.chain_offset[b],
              idx.chain_block.begin() + idx.chain_offset[b + 1], b);
  }
  {
    // Few distinct channels (vaults) named by many chains.
    absl::flat_hash_set<Hash32, rspace::Hash32Hasher, Hash32Eq> seen;
    for (const BlockIndex* b : blocks) {
      for (const NumberDiff& n : b->flat.number_diffs.all()) {
        if (seen.insert(n.channel).second) idx.numbers.push_back(n.channel);
      }
    }
    std::sort(idx.numbers.begin(), idx.numbers.end(), Hash32Less());
  }
  if (!idx.numbers.empty()) {
    std::vector<KeyRecord> number_keys;
    for (const Hash32& ch : idx.numbers)
      number_keys.push_back(KeyRecord::Make(ch, 0, 0));
    for (const BlockIndex* b : blocks) {
      for (const RawChange& r : b->flat.raw_changes.all()) {
        if (std::binary_search(number_keys.begin(), number_keys.end(), r.key,
                               KeyWordsLess)) {
          return absl::InvalidArgumentError(
              "merge: number channel " + HexEncode(KeyOf(r.key)) +
              " has raw changes in a deploy that does not list it");
        }
      }
    }
    if (codec == nullptr) {
      return absl::InvalidArgumentError("merge: number diffs without a codec");
    }
  }
  return idx;
}

}  // namespace rnode::casper::merge::internal

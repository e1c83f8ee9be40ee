#include "casper/deploy_rules.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace rnode::casper {

std::optional<DeployBreach> CheckDeployRules(const DeployData& data,
                                             const DeployRules& rules,
                                             std::optional<int64_t> height) {
  if (data.shard_id != rules.shard_id) {
    return DeployBreach{DeployFault::kWrongShard,
                        absl::StrCat("Deploy shardId '", data.shard_id,
                                     "' is not as expected network shard '",
                                     rules.shard_id, "'.")};
  }
  if (data.phlo_price < rules.min_phlo_price) {
    return DeployBreach{DeployFault::kLowPhloPrice,
                        absl::StrCat("Phlo price ", data.phlo_price,
                                     " is less than minimum price ",
                                     rules.min_phlo_price, ".")};
  }
  if (data.phlo_limit < 1 || data.phlo_limit > rules.max_phlo_limit) {
    return DeployBreach{DeployFault::kPhloLimit,
                        absl::StrCat("Phlo limit ", data.phlo_limit,
                                     " is outside this shard's range, 1 to ",
                                     rules.max_phlo_limit, ".")};
  }
  if (data.term.size() > rules.max_term_bytes) {
    return DeployBreach{DeployFault::kTermTooLarge,
                        absl::StrCat("Deploy term is ", data.term.size(),
                                     " bytes, more than this shard's limit of ",
                                     rules.max_term_bytes, " bytes.")};
  }
  if (height.has_value() &&
      *height <= std::numeric_limits<int64_t>::max() - kDeployHorizonBlocks &&
      data.valid_after_block_number > *height + kDeployHorizonBlocks) {
    return DeployBreach{
        DeployFault::kBeyondHorizon,
        absl::StrCat("Deploy is valid only after block ",
                     data.valid_after_block_number, ", more than ",
                     kDeployHorizonBlocks,
                     " blocks above this validator's highest block, ", *height,
                     "; set validAfterBlockNumber to a recent block number.")};
  }
  return std::nullopt;
}

const char* DeployFaultName(DeployFault fault) {
  switch (fault) {
    case DeployFault::kWrongShard:
      return "wrong_shard";
    case DeployFault::kLowPhloPrice:
      return "low_phlo_price";
    case DeployFault::kPhloLimit:
      return "phlo_limit";
    case DeployFault::kTermTooLarge:
      return "term_too_large";
    case DeployFault::kBeyondHorizon:
      return "beyond_horizon";
  }
  return "unknown";
}

}  // namespace rnode::casper

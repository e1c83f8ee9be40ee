// The shard's rules for a user deploy (docs/node.md "Deploy admission"): the
// one check that the API, deploy gossip, the deploy pool and block
// validation all apply, so that whatever one of them lets through the
// others let through too.
//
// The rules are shard parameters fixed at genesis (kept beside the store
// in the genesis parameters file): every validator of a shard applies the
// same ones.
#ifndef RNODE_CASPER_DEPLOY_RULES_H_
#define RNODE_CASPER_DEPLOY_RULES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "casper/deploy.h"

namespace rnode::casper {

// Room for a deploy's fields beyond its term on the wire (signature,
// deployer key, shard id, numbers: under 1 KiB).
inline constexpr size_t kDeployFieldsBytes = 4096;

// The default term size limit: what deploy gossip carries in one packet by
// default (256 KiB, node/p2p/transport.h max_unary_bytes) less the other
// fields. A node derives its transport's packet limit from the shard's
// value (at least term + kDeployFieldsBytes), so every deploy it admits
// can reach a peer.
inline constexpr size_t kDefaultMaxDeployTermBytes =
    (256u << 10) - kDeployFieldsBytes;

// The default phlo limit ceiling: five times the 200,000,000 that public
// clients and docs commonly use, and far above what a block of ours runs
// in a second. It bounds the work one funded deploy may demand.
inline constexpr int64_t kDefaultMaxPhloLimit = 1'000'000'000;

// How far above the node's highest block a deploy's window may start when
// it is admitted: one lifespan. A client reading the height from another
// validator is a few blocks ahead at most; a deploy further out would sit
// in the pool (and take its room) until the chain got there.
inline constexpr int64_t kDeployHorizonBlocks = kDeployLifespanBlocks;

struct DeployRules {
  std::string shard_id = "root";
  int64_t min_phlo_price = 1;
  int64_t max_phlo_limit = kDefaultMaxPhloLimit;
  size_t max_term_bytes = kDefaultMaxDeployTermBytes;
};

// Which rule a deploy breaks.
enum class DeployFault : uint8_t {
  kWrongShard,     // shardId is not the shard's.
  kLowPhloPrice,   // phloPrice below the shard's minimum.
  kPhloLimit,      // phloLimit below 1 or above the shard's maximum.
  kTermTooLarge,   // term above the shard's maximum.
  kBeyondHorizon,  // validAfterBlockNumber too far above the height.
};

struct DeployBreach {
  DeployFault fault;
  // For the client (the first two as the public node words them).
  std::string message;
};

// The first rule `data` breaks, in the order above; nullopt when it keeps
// them all. `height` is the admitting node's highest block number; nullopt
// skips the horizon (a block checks the deploy's window instead).
std::optional<DeployBreach> CheckDeployRules(
    const DeployData& data, const DeployRules& rules,
    std::optional<int64_t> height = std::nullopt);

// A short name for metrics and logs ("wrong_shard", "low_phlo_price", ...).
const char* DeployFaultName(DeployFault fault);

}  // namespace rnode::casper

#endif  // RNODE_CASPER_DEPLOY_RULES_H_

// Blocks and deploys as the public client API shows them: the casper.*Info
// messages of DeployServiceCommon.proto, their Web API JSON (the F1R3FLY
// Rust node's shape) and the WebSocket event envelopes.
//
// Every function here is pure and thread-safe. Hashes, keys and signatures
// are lower-case hex; an absent key or signature (the genesis block's sender
// and sig) is the empty string, as the public nodes show it.
#ifndef RNODE_NODE_VIEWS_BLOCK_VIEWS_H_
#define RNODE_NODE_VIEWS_BLOCK_VIEWS_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "DeployServiceCommon.pb.h"
#include "casper/block/block.h"
#include "util/bytes.h"

namespace rnode::node::views {

// The schema version every WebSocket event envelope carries.
inline constexpr int kEventSchemaVersion = 1;

// The light view of `block`: header, body state and seal fields, the bonds,
// justifications and rejected deploys' sigs, `blockSize` as the decimal
// length of the canonical encoding (casper/block/block_codec.h), the number
// of user deploys, `fault_tolerance` as given (the caller computes it from
// the DAG) and `is_finalized`. Encodes the block once to measure it.
::casper::LightBlockInfo LightBlockInfoOf(const casper::block::Block& block,
                                          bool is_finalized,
                                          float fault_tolerance = 0.0f);

// LightBlockInfoOf plus DeployInfoOf of each user deploy, in block order.
// System deploys are not listed (as on the public nodes).
::casper::BlockInfo BlockInfoOf(const casper::block::Block& block,
                                bool is_finalized,
                                float fault_tolerance = 0.0f);

// A user deploy as the block recorded it. No transfers are extracted here:
// `transfers` is empty and `transfersAvailable` false.
::casper::DeployInfo DeployInfoOf(const casper::block::ProcessedDeploy& d);

// Web API JSON. Field names are the proto field names (camelCase), numbers
// are JSON numbers (faultTolerance the shortest decimal of the float, as
// serde writes an f32), the three *ExtraBytes fields standard base64 with
// padding (the Rust node; Scala nodes used hex). Free-text fields (term,
// shardId, sigAlgorithm, systemDeployError, transfer texts) have invalid
// UTF-8 replaced by U+FFFD so that dump() cannot throw; the hex fields are
// copied as they are.
nlohmann::json LightBlockInfoJson(const ::casper::LightBlockInfo& info);
// Every field but transfersAvailable; `transfers` is always an array of
// {fromAddr, toAddr, amount, success, failReason}.
nlohmann::json DeployInfoJson(const ::casper::DeployInfo& info);
// {"blockInfo": LightBlockInfoJson, "deploys": [DeployInfoJson...]}, the
// `deploys` key only when `full` (the Rust node's `?view=full|summary`).
nlohmann::json BlockInfoJson(const ::casper::BlockInfo& info, bool full);

// One WebSocket text frame for a block event (`event_name` is
// "block-created", "block-added" or "block-finalised"; it is not checked):
// {"event": event_name, "schema-version": 1, "payload": {"block-hash",
// "block-number", "timestamp", "parent-hashes": [hex...],
// "justification-hashes": [[validator, hash]...], "deploys": [{"id",
// "cost", "deployer", "errored"}...], "creator", "seq-num",
// "rejected-deploys": [hex...]}} (the deploys this block's merge rejected).
// With `rejected` (a finalized block's copies a merge rejected), each
// deploy also has "rejected": true or false. Compact JSON.
std::string BlockEventJson(
    std::string_view event_name, const casper::block::Block& block,
    std::optional<std::span<const Bytes>> rejected = std::nullopt);

// A deploy event ("deploy-rejected": a merge in `block` rejected it;
// "deploy-reproposed": `block` holds it again): {"event": event_name,
// "schema-version": 1, "payload": {"deploy-id", "block-hash",
// "block-number"}}. Compact JSON.
std::string DeployEventJson(std::string_view event_name, ByteView sig,
                            const casper::block::Block& block);

// One WebSocket text frame for any other event (e.g. "node-started" with
// {"address": ...}, "entered-running-state" with {"block-hash": ...}):
// {"event": event_name, "schema-version": 1, "payload": payload}. A null
// `payload` omits the key (the "started" handshake has none). Compact JSON.
std::string SimpleEventJson(std::string_view event_name,
                            nlohmann::json payload);

}  // namespace rnode::node::views

#endif  // RNODE_NODE_VIEWS_BLOCK_VIEWS_H_

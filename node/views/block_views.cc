// Block and deploy views of the client API and their JSON.
#include "node/views/block_views.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <system_error>
#include <utility>

#include "absl/strings/escaping.h"
#include "casper/block/block_codec.h"
#include "casper/deploy.h"
#include "node/views/internal/utf8.h"
#include "util/bytes.h"

namespace rnode::node::views {
namespace {

using nlohmann::json;

// Hex of a key that the block encoding leaves absent when all zero.
std::string KeyHex(const crypto::Secp256k1PublicKey& key) {
  const bool absent =
      std::all_of(key.begin(), key.end(), [](uint8_t b) { return b == 0; });
  return absent ? std::string() : HexEncode(key);
}

std::string Base64(const std::string& bytes) {
  return absl::Base64Escape(bytes);
}

// The float as the shortest decimal that reads back as the same float, then
// as a double: 0.1f is 0.1 in the JSON, not 0.10000000149011612.
double ShortestFloat(float value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf) - 1, value);
  if (ec != std::errc()) return static_cast<double>(value);
  *end = '\0';
  return std::strtod(buf, nullptr);
}

json BlockEventPayload(const casper::block::Block& block,
                       std::optional<std::span<const Bytes>> rejected) {
  json parents = json::array();
  for (const Hash32& p : block.header.parents) parents.push_back(HexEncode(p));
  json justifications = json::array();
  for (const casper::block::Justification& j : block.justifications) {
    justifications.push_back(
        json::array({HexEncode(j.validator), HexEncode(j.latest_block)}));
  }
  json deploys = json::array();
  for (const casper::block::ProcessedDeploy& d : block.body.deploys) {
    json entry = {{"id", HexEncode(d.sig)},
                  {"cost", d.cost},
                  {"deployer", KeyHex(d.deployer)},
                  {"errored", d.errored}};
    if (rejected.has_value()) {
      entry["rejected"] =
          std::any_of(rejected->begin(), rejected->end(),
                      [&](const Bytes& r) { return r == d.sig; });
    }
    deploys.push_back(std::move(entry));
  }
  json merge_rejected = json::array();
  for (const casper::block::RejectedDeploy& r : block.body.rejected) {
    merge_rejected.push_back(HexEncode(r.sig));
  }
  return {{"block-hash", HexEncode(block.hash)},
          {"block-number", block.number()},
          {"timestamp", block.header.timestamp},
          {"parent-hashes", std::move(parents)},
          {"justification-hashes", std::move(justifications)},
          {"deploys", std::move(deploys)},
          {"creator", KeyHex(block.sender)},
          {"seq-num", block.seq_num},
          {"rejected-deploys", std::move(merge_rejected)}};
}

std::string EventText(std::string_view event_name, json payload) {
  json envelope = {{"event", internal::Utf8Sanitized(event_name)},
                   {"schema-version", kEventSchemaVersion}};
  if (!payload.is_null()) envelope["payload"] = std::move(payload);
  // Replace, not throw, should a caller's payload hold invalid UTF-8.
  return envelope.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

::casper::LightBlockInfo LightBlockInfoOf(const casper::block::Block& block,
                                          bool is_finalized,
                                          float fault_tolerance) {
  ::casper::LightBlockInfo info;
  info.set_blockhash(HexEncode(block.hash));
  info.set_sender(KeyHex(block.sender));
  info.set_seqnum(block.seq_num);
  info.set_sig(HexEncode(block.sig));
  info.set_sigalgorithm(block.sig_algorithm);
  info.set_shardid(block.shard_id);
  info.set_extrabytes(ToString(block.extra));
  info.set_version(block.header.version);
  info.set_timestamp(block.header.timestamp);
  info.set_headerextrabytes(ToString(block.header.extra));
  for (const Hash32& p : block.header.parents) {
    info.add_parentshashlist(HexEncode(p));
  }
  info.set_blocknumber(block.number());
  info.set_prestatehash(HexEncode(block.body.state.pre_state));
  info.set_poststatehash(HexEncode(block.body.state.post_state));
  info.set_bodyextrabytes(ToString(block.body.extra));
  for (const casper::block::Bond& b : block.body.state.bonds) {
    ::casper::BondInfo* bond = info.add_bonds();
    bond->set_validator(HexEncode(b.validator));
    bond->set_stake(b.stake);
  }
  info.set_blocksize(std::to_string(casper::block::EncodeBlock(block).size()));
  info.set_deploycount(static_cast<int32_t>(block.body.deploys.size()));
  info.set_faulttolerance(fault_tolerance);
  for (const casper::block::Justification& j : block.justifications) {
    ::casper::JustificationInfo* just = info.add_justifications();
    just->set_validator(HexEncode(j.validator));
    just->set_latestblockhash(HexEncode(j.latest_block));
  }
  for (const casper::block::RejectedDeploy& r : block.body.rejected) {
    info.add_rejecteddeploys()->set_sig(HexEncode(r.sig));
  }
  info.set_isfinalized(is_finalized);
  return info;
}

::casper::BlockInfo BlockInfoOf(const casper::block::Block& block,
                                bool is_finalized, float fault_tolerance) {
  ::casper::BlockInfo info;
  *info.mutable_blockinfo() =
      LightBlockInfoOf(block, is_finalized, fault_tolerance);
  for (const casper::block::ProcessedDeploy& d : block.body.deploys) {
    *info.add_deploys() = DeployInfoOf(d);
  }
  return info;
}

::casper::DeployInfo DeployInfoOf(const casper::block::ProcessedDeploy& d) {
  ::casper::DeployInfo info;
  info.set_deployer(KeyHex(d.deployer));
  info.set_term(d.data.term);
  info.set_timestamp(d.data.timestamp);
  info.set_sig(HexEncode(d.sig));
  info.set_sigalgorithm(std::string(casper::SigAlgorithmName(d.sig_algorithm)));
  info.set_phloprice(d.data.phlo_price);
  info.set_phlolimit(d.data.phlo_limit);
  info.set_validafterblocknumber(d.data.valid_after_block_number);
  // Costs are never negative; clamp rather than wrap should one be.
  info.set_cost(static_cast<uint64_t>(std::max<int64_t>(d.cost, 0)));
  info.set_errored(d.errored);
  info.set_systemdeployerror(d.system_deploy_error);
  info.set_transfersavailable(false);
  return info;
}

json LightBlockInfoJson(const ::casper::LightBlockInfo& info) {
  json parents = json::array();
  for (const std::string& p : info.parentshashlist()) parents.push_back(p);
  json bonds = json::array();
  for (const ::casper::BondInfo& b : info.bonds()) {
    bonds.push_back({{"validator", b.validator()}, {"stake", b.stake()}});
  }
  json justifications = json::array();
  for (const ::casper::JustificationInfo& j : info.justifications()) {
    justifications.push_back({{"validator", j.validator()},
                              {"latestBlockHash", j.latestblockhash()}});
  }
  json rejected = json::array();
  for (const ::casper::RejectedDeployInfo& r : info.rejecteddeploys()) {
    rejected.push_back({{"sig", r.sig()}});
  }
  return {{"blockHash", info.blockhash()},
          {"sender", info.sender()},
          {"seqNum", info.seqnum()},
          {"sig", info.sig()},
          {"sigAlgorithm", internal::Utf8Sanitized(info.sigalgorithm())},
          {"shardId", internal::Utf8Sanitized(info.shardid())},
          {"extraBytes", Base64(info.extrabytes())},
          {"version", info.version()},
          {"timestamp", info.timestamp()},
          {"headerExtraBytes", Base64(info.headerextrabytes())},
          {"parentsHashList", std::move(parents)},
          {"blockNumber", info.blocknumber()},
          {"preStateHash", info.prestatehash()},
          {"postStateHash", info.poststatehash()},
          {"bodyExtraBytes", Base64(info.bodyextrabytes())},
          {"bonds", std::move(bonds)},
          {"blockSize", info.blocksize()},
          {"deployCount", info.deploycount()},
          {"faultTolerance", ShortestFloat(info.faulttolerance())},
          {"justifications", std::move(justifications)},
          {"rejectedDeploys", std::move(rejected)},
          {"isFinalized", info.isfinalized()}};
}

json DeployInfoJson(const ::casper::DeployInfo& info) {
  json transfers = json::array();
  for (const ::casper::TransferInfo& t : info.transfers()) {
    transfers.push_back(
        {{"fromAddr", internal::Utf8Sanitized(t.fromaddr())},
         {"toAddr", internal::Utf8Sanitized(t.toaddr())},
         {"amount", t.amount()},
         {"success", t.success()},
         {"failReason", internal::Utf8Sanitized(t.failreason())}});
  }
  return {
      {"deployer", info.deployer()},
      {"term", internal::Utf8Sanitized(info.term())},
      {"timestamp", info.timestamp()},
      {"sig", info.sig()},
      {"sigAlgorithm", internal::Utf8Sanitized(info.sigalgorithm())},
      {"phloPrice", info.phloprice()},
      {"phloLimit", info.phlolimit()},
      {"validAfterBlockNumber", info.validafterblocknumber()},
      {"cost", info.cost()},
      {"errored", info.errored()},
      {"systemDeployError", internal::Utf8Sanitized(info.systemdeployerror())},
      {"transfers", std::move(transfers)}};
}

json BlockInfoJson(const ::casper::BlockInfo& info, bool full) {
  json out = {{"blockInfo", LightBlockInfoJson(info.blockinfo())}};
  if (full) {
    json deploys = json::array();
    for (const ::casper::DeployInfo& d : info.deploys()) {
      deploys.push_back(DeployInfoJson(d));
    }
    out["deploys"] = std::move(deploys);
  }
  return out;
}

std::string BlockEventJson(std::string_view event_name,
                           const casper::block::Block& block,
                           std::optional<std::span<const Bytes>> rejected) {
  return EventText(event_name, BlockEventPayload(block, rejected));
}

std::string DeployEventJson(std::string_view event_name, ByteView sig,
                            const casper::block::Block& block) {
  return EventText(event_name, {{"deploy-id", HexEncode(sig)},
                                {"block-hash", HexEncode(block.hash)},
                                {"block-number", block.number()}});
}

std::string SimpleEventJson(std::string_view event_name, json payload) {
  return EventText(event_name, std::move(payload));
}

}  // namespace rnode::node::views

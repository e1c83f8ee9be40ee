#include "node/api/api_common.h"

#include "absl/strings/str_cat.h"

namespace rnode::node {

std::string NodeVersion() { return "rnode-cpp 0.1.0"; }

::casper::Status StatusOf(Node& node) {
  ::casper::Status s;
  s.mutable_version()->set_api(std::string(kApiVersion));
  s.mutable_version()->set_node(NodeVersion());
  s.set_networkid(node.config().network_id);
  s.set_shardid(node.config().shard_name);
  s.set_minphloprice(node.config().min_phlo_price);
  s.set_nativetokenname("F1R3CAP");
  s.set_nativetokensymbol("F1R3");
  s.set_nativetokendecimals(8);
  const int64_t lfb = node.last_finalized_number();
  s.set_lastfinalizedblocknumber(lfb);
  s.set_isvalidator(node.is_validator());
  s.set_isreadonly(!node.is_validator());
  s.set_isready(node.ready());
  const int64_t epoch = node.config().epoch_length;
  s.set_epochlength(static_cast<int32_t>(std::min<int64_t>(epoch, INT32_MAX)));
  s.set_currentepoch(lfb < 0 ? 0 : lfb / epoch);
  s.set_address(node.address());
  int32_t connected = 0;
  std::vector<PeerStatus> peers = node.peers();
  for (const PeerStatus& p : peers) {
    connected += p.connected ? 1 : 0;
    ::casper::PeerInfo* info = s.add_peerlist();
    info->set_address(p2p::FormatPeerAddress(p.node));
    info->set_nodeid(p.node.IdHex());
    info->set_host(p.node.host);
    info->set_protocolport(static_cast<int32_t>(p.node.tcp_port));
    info->set_discoveryport(static_cast<int32_t>(p.node.udp_port));
    info->set_isconnected(p.connected);
  }
  s.set_peers(connected);
  s.set_nodes(static_cast<int32_t>(peers.size()));
  return s;
}

std::string DeploySuccessText(ByteView deploy_id) {
  return absl::StrCat("Success!\nDeployId is: ", HexEncode(deploy_id));
}

std::string ProposeSuccessText(const Hash32& block) {
  return absl::StrCat("Success! Block ", HexEncode(block),
                      " created and added.");
}

::casper::DeployFinalizationStateProto StateProto(DeployStatus::State state) {
  switch (state) {
    case DeployStatus::State::kPending:
      return ::casper::DEPLOY_STATE_PENDING;
    case DeployStatus::State::kFinalized:
      return ::casper::DEPLOY_STATE_FINALIZED;
    case DeployStatus::State::kFailed:
      return ::casper::DEPLOY_STATE_FAILED;
    case DeployStatus::State::kExpired:
      return ::casper::DEPLOY_STATE_EXPIRED;
  }
  return ::casper::DEPLOY_STATE_UNSPECIFIED;
}

std::string_view StateName(DeployStatus::State state) {
  switch (state) {
    case DeployStatus::State::kPending:
      return "Pending";
    case DeployStatus::State::kFinalized:
      return "Finalized";
    case DeployStatus::State::kFailed:
      return "Failed";
    case DeployStatus::State::kExpired:
      return "Expired";
  }
  return "Unspecified";
}

}  // namespace rnode::node

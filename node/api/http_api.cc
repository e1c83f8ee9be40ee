#include "node/api/http_api.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "CasperMessage.pb.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "node/api/api_common.h"
#include "node/api/fault_api.h"
#include "node/api/http_answers.h"
#include "node/api/http_json.h"
#include "node/views/block_views.h"
#include "node/views/par_views.h"
#include "rspace/storage/kv_store.h"
#include "util/host_address.h"
#include "util/status_macros.h"

namespace rnode::node {
namespace {

using casper::block::Block;
using nlohmann::json;

json PeerListJson(const ::casper::Status& s) {
  json list = json::array();
  for (const ::casper::PeerInfo& p : s.peerlist()) {
    list.push_back(json{{"address", p.address()},
                        {"nodeId", p.nodeid()},
                        {"host", p.host()},
                        {"protocolPort", p.protocolport()},
                        {"discoveryPort", p.discoveryport()},
                        {"isConnected", p.isconnected()}});
  }
  return list;
}

json StatusJson(Node& node) {
  ::casper::Status s = StatusOf(node);
  // Ours (not in the public Status): how far catching up is, in a shard.
  json sync = nullptr;
  if (std::optional<SyncProgress> p = node.sync_progress()) {
    sync = json{{"state", SyncStateName(p->state)},
                {"height", p->local},
                {"peersHeight", p->target},
                {"blocksBehind", p->behind()},
                {"peersFloor", p->peers_floor}};
  }
  // Ours: joining from the shard's last finalized state, on a node that
  // started new.
  json join = nullptr;
  if (std::optional<JoinProgress> j = node.join_progress()) {
    join = json{{"phase", JoinPhaseName(j->phase)},
                {"anchorNumber", j->anchor_number},
                {"anchor", j->anchor_number >= 0 ? HexEncode(j->anchor) : ""},
                {"floor", j->floor},
                {"blocks", j->blocks},
                {"badBlocks", j->bad_blocks},
                {"rootsTotal", j->roots_total},
                {"rootsDone", j->roots_done},
                {"trieNodes", j->trie_nodes},
                {"trieBytes", j->trie_bytes},
                {"trieNodesFound", j->trie_nodes_found},
                {"badTrieAnswers", j->bad_trie_answers},
                {"seconds", j->seconds},
                {"error", j->error}};
  }
  return json{
      {"version", {{"api", s.version().api()}, {"node", s.version().node()}}},
      {"address", s.address()},
      {"networkId", s.networkid()},
      {"shardId", s.shardid()},
      {"peers", s.peers()},
      {"nodes", s.nodes()},
      {"minPhloPrice", s.minphloprice()},
      {"peerList", PeerListJson(s)},
      {"nativeTokenName", s.nativetokenname()},
      {"nativeTokenSymbol", s.nativetokensymbol()},
      {"nativeTokenDecimals", s.nativetokendecimals()},
      {"lastFinalizedBlockNumber", s.lastfinalizedblocknumber()},
      {"isValidator", s.isvalidator()},
      {"isReadOnly", s.isreadonly()},
      {"isReady", s.isready()},
      {"currentEpoch", s.currentepoch()},
      {"epochLength", s.epochlength()},
      {"sync", sync},
      {"join", join}};
}

bool FullView(const http::Request& req, bool default_full) {
  auto it = req.query.find("view");
  if (it == req.query.end()) return default_full;
  return it->second == "full";
}

json BlockJson(Node& node, const Block& b, bool full) {
  return views::BlockInfoJson(
      views::BlockInfoOf(b, node.dag().IsFinalized(b.hash)), full);
}

json ExprsJson(const std::vector<rholang::ir::ParPtr>& data) {
  json out = json::array();
  for (const auto& p : data) out.push_back(views::RhoExprJson(*p));
  return out;
}

// GET /api/deploy/{id}: where the deploy is, in the RUST node's shape.
http::Response DeployView(Node& node, std::string_view id_hex, bool full) {
  std::string hex(id_hex);
  if (hex.starts_with("0x")) hex = hex.substr(2);
  absl::StatusOr<Bytes> id = HexDecode(hex);
  if (!id.ok() || id->empty()) {
    return Error(400, "invalid_deploy_id", "the deploy id is not hex");
  }
  absl::StatusOr<DeployStatus> s = node.FindDeploy(*id);
  if (!s.ok() || !s->block.has_value()) {
    return Error(404, "deploy_not_found",
                 absl::StrCat("Couldn't find block containing deploy with id: ",
                              HexEncode(*id)));
  }
  absl::StatusOr<Block> b = node.GetBlock(*s->block);
  if (!b.ok()) return ErrorOf(b.status(), "invalid");
  for (const auto& d : b->body.deploys) {
    if (d.sig != *id) continue;
    json j{{"deployId", HexEncode(d.sig)},
           {"blockHash", HexEncode(b->hash)},
           {"blockNumber", b->body.state.block_number},
           {"timestamp", d.data.timestamp},
           {"cost", d.cost},
           {"errored", d.errored},
           {"isFinalized", node.dag().IsFinalized(b->hash)},
           {"finalizationState", StateName(s->state)},
           {"rejectionCount", s->rejection_count}};
    if (full) {
      json info = views::DeployInfoJson(views::DeployInfoOf(d));
      for (const char* k :
           {"deployer", "term", "systemDeployError", "phloPrice", "phloLimit",
            "sigAlgorithm", "validAfterBlockNumber"}) {
        if (info.contains(k)) j[k] = info[k];
      }
      j["transfers"] = json::array();
    }
    return Json(200, j);
  }
  return Error(500, "internal", "the deploy's block does not hold it");
}

// One request as the route handlers see it: `parts` is the path's
// segments, with /api/v1/x read as /api/x.
struct Call {
  Node& node;
  metrics::Registry* metrics;
  const http::Request& req;
  const std::vector<std::string>& parts;
};

http::Response Status(const Call& c) { return Json(200, StatusJson(c.node)); }

http::Response Version(const Call&) {
  http::Response r;
  r.content_type = "text/plain; charset=utf-8";
  r.body = NodeVersion();
  return r;
}

http::Response Metrics(const Call& c) {
  if (!c.node.config().prometheus || c.metrics == nullptr) {
    return Error(503, "metrics_disabled", "metrics.prometheus is off");
  }
  http::Response r;
  r.content_type = std::string(metrics::kContentType);
  r.body = c.metrics->Render();
  return r;
}

http::Response PostDeploy(const Call& c) {
  absl::StatusOr<::casper::DeployDataProto> proto =
      DeployOfHttpBody(c.req.body);
  if (!proto.ok()) {
    return Error(400, "invalid_deploy", proto.status().message());
  }
  absl::StatusOr<Bytes> id = c.node.Deploy(*proto);
  if (!id.ok()) return ErrorOf(id.status(), "invalid_deploy");
  return Json(200, DeploySuccessText(*id));
}

json LightBlockJson(Node& node, const Block& b) {
  return views::LightBlockInfoJson(
      views::LightBlockInfoOf(b, node.dag().IsFinalized(b.hash)));
}

// POST /api/explore-deploy(-by-block-hash): a JSON object with the term,
// or the term as the whole body.
http::Response ExploreDeploy(const Call& c) {
  std::string term = c.req.body;
  std::optional<Hash32> at;
  bool pre = false;
  json body = json::parse(c.req.body, nullptr, false);
  if (!body.is_discarded() && body.is_object()) {
    absl::StatusOr<std::string> t = StringField(body, "term");
    if (!t.ok()) return Error(400, "invalid_request", t.status().message());
    term = *t;
    if (body.contains("blockHash") && body["blockHash"].is_string() &&
        !body["blockHash"].get<std::string>().empty()) {
      absl::StatusOr<Block> b =
          c.node.FindBlock(body["blockHash"].get<std::string>());
      if (!b.ok()) return ErrorOf(b.status(), "invalid_hash");
      at = b->hash;
    }
    pre = body.value("usePreStateHash", false);
  }
  absl::StatusOr<Exploration> e = c.node.Explore(term, at, pre);
  if (!e.ok()) return ErrorOf(e.status(), "invalid_term");
  absl::StatusOr<Block> b = c.node.GetBlock(e->block);
  if (!b.ok()) return ErrorOf(b.status(), "invalid");
  return Json(200, json{{"expr", ExprsJson(e->data)},
                        {"block", LightBlockJson(c.node, *b)},
                        {"cost", e->cost}});
}

http::Response DataAtNameByBlockHash(const Call& c) {
  absl::StatusOr<json> body = ParseJsonObject(c.req.body);
  if (!body.ok()) return Error(400, "invalid_request", body.status().message());
  const json& name = body->contains("name") ? (*body)["name"] : (*body)["par"];
  absl::StatusOr<rholang::ir::ParPtr> par = views::ParFromRhoUnforgJson(name);
  if (!par.ok()) return Error(400, "invalid_name", par.status().message());
  absl::StatusOr<std::string> hash = StringField(*body, "blockHash");
  if (!hash.ok()) return Error(400, "invalid_hash", hash.status().message());
  absl::StatusOr<Block> b = c.node.FindBlock(*hash);
  if (!b.ok()) return ErrorOf(b.status(), "invalid_hash");
  absl::StatusOr<std::vector<rholang::ir::ParPtr>> data =
      c.node.DataAtName(*par, b->hash, body->value("usePreStateHash", false));
  if (!data.ok()) return ErrorOf(data.status(), "invalid_name");
  return Json(200, json{{"expr", ExprsJson(*data)},
                        {"block", LightBlockJson(c.node, *b)},
                        {"cost", 0}});
}

http::Response DataAtName(const Call& c) {
  absl::StatusOr<json> body = ParseJsonObject(c.req.body);
  if (!body.ok()) return Error(400, "invalid_request", body.status().message());
  absl::StatusOr<rholang::ir::ParPtr> par =
      views::ParFromRhoUnforgJson(body->value("name", json()));
  if (!par.ok()) return Error(400, "invalid_name", par.status().message());
  absl::StatusOr<int64_t> depth = IntField(*body, "depth", false);
  if (!depth.ok()) {
    return Error(400, "invalid_request", depth.status().message());
  }
  absl::StatusOr<std::vector<Block>> chain =
      c.node.MainChain(std::max<int64_t>(1, *depth));
  if (!chain.ok()) return ErrorOf(chain.status(), "invalid");
  json exprs = json::array();
  for (const Block& b : *chain) {
    absl::StatusOr<std::vector<rholang::ir::ParPtr>> data =
        c.node.DataAtName(*par, b.hash, false);
    if (!data.ok()) return ErrorOf(data.status(), "invalid_name");
    json info = LightBlockJson(c.node, b);
    for (const auto& p : *data) {
      exprs.push_back(json{{"expr", views::RhoExprJson(*p)}, {"block", info}});
    }
  }
  const size_t n = exprs.size();
  return Json(200, json{{"exprs", std::move(exprs)}, {"length", n}});
}

http::Response LastFinalized(const Call& c) {
  absl::StatusOr<Block> b = c.node.LastFinalizedBlock();
  if (!b.ok()) return ErrorOf(b.status(), "invalid");
  return Json(200, BlockJson(c.node, *b, FullView(c.req, true)));
}

http::Response BlockByHash(const Call& c) {
  absl::StatusOr<Block> b = c.node.FindBlock(c.parts[2]);
  if (!b.ok()) {
    if (b.status().code() == absl::StatusCode::kNotFound) {
      return Error(404, "block_not_found", b.status().message());
    }
    return ErrorOf(b.status(), "invalid_hash");
  }
  return Json(200, BlockJson(c.node, *b, FullView(c.req, true)));
}

// GET /api/blocks (the top), /api/blocks/{depth}, /api/blocks/{start}/{end}.
http::Response Blocks(const Call& c) {
  const int64_t top = c.node.dag().MaxHeight();
  int64_t from = top, to = top;
  int64_t a = 0, b = 0;
  if (c.parts.size() == 3) {
    if (!absl::SimpleAtoi(c.parts[2], &a) || a < 1) {
      return Error(400, "invalid_depth", "depth must be a positive integer");
    }
    from = top - a + 1;
  } else if (c.parts.size() == 4) {
    if (!absl::SimpleAtoi(c.parts[2], &a) ||
        !absl::SimpleAtoi(c.parts[3], &b) || a < 0 || b < a) {
      return Error(400, "invalid_range",
                   "expected /api/blocks/{start}/{end} with start <= end");
    }
    from = a;
    to = b;
  }
  absl::StatusOr<std::vector<Block>> blocks = c.node.BlocksByHeight(from, to);
  if (!blocks.ok()) return ErrorOf(blocks.status(), "invalid");
  json out = json::array();
  const bool full = FullView(c.req, false);
  for (const Block& blk : *blocks) out.push_back(BlockJson(c.node, blk, full));
  return Json(200, out);
}

http::Response Deploy(const Call& c) {
  return DeployView(c.node, c.parts[2], FullView(c.req, true));
}

http::Response IsFinalized(const Call& c) {
  absl::StatusOr<Block> b = c.node.FindBlock(c.parts[2]);
  if (!b.ok()) {
    if (b.status().code() == absl::StatusCode::kNotFound) {
      return Json(200, false);
    }
    return ErrorOf(b.status(), "invalid_hash");
  }
  return Json(200, c.node.dag().IsFinalized(b->hash));
}

http::Response DeployFinalizationStatus(const Call& c) {
  std::string hex = c.parts[2];
  if (hex.starts_with("0x")) hex = hex.substr(2);
  absl::StatusOr<Bytes> sig = HexDecode(hex);
  // As /api/deploy/{id}: an empty id is no id, an unknown one 404.
  if (!sig.ok() || sig->empty()) {
    return Error(400, "invalid_deploy_id", "the deploy id is not hex");
  }
  absl::StatusOr<DeployStatus> s = c.node.FindDeploy(*sig);
  if (!s.ok() && s.status().code() == absl::StatusCode::kNotFound) {
    return Error(404, "deploy_not_found", s.status().message());
  }
  if (!s.ok()) return ErrorOf(s.status(), "invalid_deploy_id");
  return Json(200, json{{"state", StateName(s->state)},
                        {"rejectionCount", s->rejection_count},
                        {"latestBlockHash", s->block.has_value()
                                                ? json(HexEncode(*s->block))
                                                : json(nullptr)}});
}

http::Response BondStatus(const Call& c) {
  absl::StatusOr<Bytes> key = HexDecode(c.parts[2]);
  if (!key.ok()) return Error(400, "invalid_public_key", "not hex");
  absl::StatusOr<bool> bonded = c.node.IsBonded(*key);
  if (!bonded.ok()) return ErrorOf(bonded.status(), "invalid_public_key");
  return Json(200, json{{"publicKey", c.parts[2]}, {"isBonded", *bonded}});
}

http::Response PrepareDeploy(const Call& c) {
  int64_t seq = -1;
  if (c.node.is_validator()) {
    auto latest = c.node.dag().LatestMessages();
    auto it = latest.find(c.node.public_key());
    if (it != latest.end()) {
      absl::StatusOr<std::shared_ptr<const casper::dag::BlockMeta>> meta =
          c.node.dag().Meta(it->second);
      if (!meta.ok()) return ErrorOf(meta.status(), "invalid");
      seq = (*meta)->seq_num;
    }
  }
  return Json(200, json{{"names", json::array()}, {"seqNumber", seq}});
}

// A route: the method (GET also answers HEAD: the server sends the
// headers only) and the path's segments, "*" matching any one segment.
struct Route {
  std::string_view method;
  std::initializer_list<std::string_view> path;
  http::Response (*handle)(const Call&);
};

// The public routes, first match wins. docs/node.md "HTTP API" lists them.
const Route kRoutes[] = {
    {"GET", {"api", "status"}, Status},
    {"GET", {"status"}, Status},
    {"GET", {"version"}, Version},
    {"GET", {"metrics"}, Metrics},
    {"POST", {"api", "deploy"}, PostDeploy},
    {"POST", {"api", "explore-deploy"}, ExploreDeploy},
    {"POST", {"api", "explore-deploy-by-block-hash"}, ExploreDeploy},
    {"POST", {"api", "data-at-name-by-block-hash"}, DataAtNameByBlockHash},
    {"POST", {"api", "data-at-name"}, DataAtName},
    {"GET", {"api", "last-finalized-block"}, LastFinalized},
    {"GET", {"api", "block", "*"}, BlockByHash},
    {"GET", {"api", "blocks"}, Blocks},
    {"GET", {"api", "blocks", "*"}, Blocks},
    {"GET", {"api", "blocks", "*", "*"}, Blocks},
    {"GET", {"api", "deploy", "*"}, Deploy},
    {"GET", {"api", "is-finalized", "*"}, IsFinalized},
    {"GET",
     {"api", "deploy-finalization-status", "*"},
     DeployFinalizationStatus},
    {"GET", {"api", "bond-status", "*"}, BondStatus},
    {"GET", {"api", "prepare-deploy"}, PrepareDeploy},
};

bool Matches(const Route& route, std::string_view method,
             const std::vector<std::string>& parts) {
  const bool method_ok =
      route.method == method || (route.method == "GET" && method == "HEAD");
  if (!method_ok || parts.size() != route.path.size()) return false;
  size_t i = 0;
  for (std::string_view want : route.path) {
    if (want != "*" && parts[i] != want) return false;
    ++i;
  }
  return true;
}

http::Response HandlePublic(Node& node, metrics::Registry* metrics,
                            const http::Request& req) {
  std::vector<std::string> parts =
      absl::StrSplit(req.path, '/', absl::SkipEmpty());
  // /api/v1/x is /api/x.
  if (parts.size() >= 2 && parts[0] == "api" && parts[1] == "v1") {
    parts.erase(parts.begin() + 1);
  }
  for (const Route& route : kRoutes) {
    if (Matches(route, req.method, parts)) {
      return route.handle(Call{node, metrics, req, parts});
    }
  }
  return Error(404, "not_found",
               absl::StrCat("no route ", req.method, " ", req.path));
}

}  // namespace

http::Handler PublicHttpHandler(Node* node, metrics::Registry* metrics) {
  return [node, metrics](const http::Request& req) {
    return HandlePublic(*node, metrics, req);
  };
}

http::Handler AdminHttpHandler(Node* node) {
  return [node](const http::Request& req) -> http::Response {
    std::vector<std::string> parts =
        absl::StrSplit(req.path, '/', absl::SkipEmpty());
    if (parts.size() >= 2 && parts[0] == "api" && parts[1] == "v1") {
      parts.erase(parts.begin() + 1);
    }
    if (req.method == "POST" && parts.size() == 2 && parts[0] == "api" &&
        parts[1] == "propose") {
      if (!node->is_validator()) {
        return Error(400, "readonly_node_required",
                     "Propose error: read-only node.");
      }
      absl::StatusOr<Hash32> made = node->Propose();
      if (!made.ok()) {
        if (made.status().code() == absl::StatusCode::kFailedPrecondition) {
          return Error(409, "no_new_deploys", made.status().message());
        }
        return ErrorOf(made.status(), "invalid");
      }
      http::Response r;
      r.content_type = "text/plain; charset=utf-8";
      r.body = ProposeSuccessText(*made);
      return r;
    }
    if (std::optional<http::Response> fault = FaultRoute(node, req, parts)) {
      return *std::move(fault);
    }
    return Error(404, "not_found",
                 absl::StrCat("no route ", req.method, " ", req.path));
  };
}

namespace {

// The non-empty, trimmed entries of a comma-separated setting.
std::vector<std::string> CommaList(const std::string& setting) {
  std::vector<std::string> out;
  for (absl::string_view part : absl::StrSplit(setting, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (!part.empty()) out.emplace_back(part);
  }
  return out;
}

// The Host names a server bound to `host` answers by default: on loopback
// the loopback names and `host` itself (no DNS rebinding); elsewhere any
// (empty).
std::vector<std::string> DefaultHosts(const std::string& host) {
  if (!IsLoopbackHost(host)) return {};
  std::vector<std::string> names = {"localhost", "127.0.0.1", "[::1]"};
  if (std::find(names.begin(), names.end(), host) == names.end()) {
    names.push_back(host);
  }
  return names;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpApi>> HttpApi::Start(
    Node* node, const NodeConfig& config, metrics::Registry* metrics,
    http::EventHub* events) {
  if (config.fault_injection && !FaultInjectionBuilt()) {
    return absl::FailedPreconditionError(
        "--fault-injection: this build has no fault injection (it was "
        "configured with RNODE_FAULT_INJECTION=OFF, as the release image is)");
  }
  auto api = std::make_unique<HttpApi>();
  http::HttpServerOptions options;
  options.host = config.api_host;
  options.max_body_bytes = static_cast<size_t>(config.http_max_body_bytes);
  // Four of the largest bodies at once (at least the default budget).
  options.max_body_bytes_total =
      std::max(http::kDefaultMaxBodyBytesTotal, 4 * options.max_body_bytes);
  options.max_in_flight = static_cast<size_t>(config.api_max_in_flight);
  options.port = static_cast<uint16_t>(config.port_http);
  options.allowed_origins = CommaList(config.http_allowed_origins);
  options.allowed_hosts = CommaList(config.http_allowed_hosts);
  if (options.allowed_hosts.empty()) {
    options.allowed_hosts = DefaultHosts(config.api_host);
  }
  absl::StatusOr<std::unique_ptr<http::HttpServer>> pub =
      http::HttpServer::Start(options, PublicHttpHandler(node, metrics),
                              events);
  if (!pub.ok()) return pub.status();
  api->public_ = *std::move(pub);
  options.host = config.api_admin_host;
  options.port = static_cast<uint16_t>(config.port_admin_http);
  // No page elsewhere may call the admin API; loopback names only.
  options.allowed_origins.clear();
  options.allowed_hosts = DefaultHosts(config.api_admin_host);
  absl::StatusOr<std::unique_ptr<http::HttpServer>> admin =
      http::HttpServer::Start(options, AdminHttpHandler(node), nullptr);
  if (!admin.ok()) {
    api->public_->Stop();
    return admin.status();
  }
  api->admin_ = *std::move(admin);
  return api;
}

void HttpApi::Stop() {
  if (public_ != nullptr) public_->Stop();
  if (admin_ != nullptr) admin_->Stop();
}

}  // namespace rnode::node

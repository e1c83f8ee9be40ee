// libFuzzer target over the JSON the node reads from clients: a signed
// deploy in the JSON of `rnode sign-deploy` / `verify-deploy`
// (DeployFromJson), and the name of the HTTP API's /api/data-at-name and
// /api/data-at-name-by-block-hash bodies (views::ParFromRhoUnforgJson),
// each body first parsed as the HTTP handler parses it (nlohmann, no
// exceptions), and the /api/deploy body (node::DeployOfHttpBody, what the
// handler calls before Node::Deploy; deploy_fuzz covers the proto it
// feeds). Asserted:
//  - a refused deploy, body or name is InvalidArgument;
//  - an accepted /api/deploy body gives a proto that, written back as a
//    body, reads back to the same proto, and that SignedDeploy::FromProto
//    accepts or refuses with InvalidArgument;
//  - an accepted deploy prints (DeployToJson) to JSON that is accepted as
//    the same deploy and prints the same again, and its proto is accepted
//    by SignedDeploy::FromProto;
//  - an accepted name renders (RhoExprJson) as one ExprUnforg whose data is
//    accepted again as the same term (same IR hash), its JSON dumps without
//    throwing, and it survives the client API's protobuf form (ParToProto /
//    ParFromProto) with the same hash.
// Any broken property traps.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "CasperMessage.pb.h"
#include "RhoTypes.pb.h"
#include "casper/deploy.h"
#include "node/api/http_json.h"
#include "node/tools/deploy_json.h"
#include "node/views/par_views.h"
#include "rholang/frontend/ir.h"
#include "util/bytes.h"

namespace {

using nlohmann::json;

void CheckDeploy(std::string_view text) {
  auto deploy = rnode::node::DeployFromJson(text);
  if (!deploy.ok()) {
    if (deploy.status().code() != absl::StatusCode::kInvalidArgument) {
      __builtin_trap();
    }
    return;
  }
  const std::string printed = rnode::node::DeployToJson(*deploy);
  auto again = rnode::node::DeployFromJson(printed);
  if (!again.ok()) __builtin_trap();
  const std::string proto = deploy->ToProto().SerializeAsString();
  if (again->ToProto().SerializeAsString() != proto) __builtin_trap();
  if (rnode::node::DeployToJson(*again) != printed) __builtin_trap();
  if (!rnode::casper::SignedDeploy::FromProto(deploy->ToProto()).ok()) {
    __builtin_trap();
  }
}

void CheckName(const json& name) {
  auto par = rnode::node::views::ParFromRhoUnforgJson(name);
  if (!par.ok()) {
    if (par.status().code() != absl::StatusCode::kInvalidArgument) {
      __builtin_trap();
    }
    return;
  }
  const json rendered = rnode::node::views::RhoExprJson(**par);
  if (!rendered.is_object() || rendered.size() != 1) __builtin_trap();
  const auto unforg = rendered.find("ExprUnforg");
  if (unforg == rendered.end() || !unforg->is_object()) __builtin_trap();
  const auto data = unforg->find("data");
  if (data == unforg->end()) __builtin_trap();
  auto again = rnode::node::views::ParFromRhoUnforgJson(*data);
  if (!again.ok() || (*again)->hash != (*par)->hash) __builtin_trap();
  (void)rendered.dump();
  auto proto = rnode::node::views::ParToProto(**par);
  if (!proto.ok()) __builtin_trap();
  auto back = rnode::node::views::ParFromProto(*proto);
  if (!back.ok() || (*back)->hash != (*par)->hash) __builtin_trap();
}

// The /api/deploy body.
void CheckHttpDeploy(const std::string& text) {
  auto proto = rnode::node::DeployOfHttpBody(text);
  if (!proto.ok()) {
    if (proto.status().code() != absl::StatusCode::kInvalidArgument) {
      __builtin_trap();
    }
    return;
  }
  auto as_hex = [](const std::string& bytes) {
    return rnode::HexEncode(rnode::Bytes(bytes.begin(), bytes.end()));
  };
  const json body = {
      {"data",
       {{"term", proto->term()},
        {"timestamp", proto->timestamp()},
        {"phloPrice", proto->phloprice()},
        {"phloLimit", proto->phlolimit()},
        {"validAfterBlockNumber", proto->validafterblocknumber()},
        {"shardId", proto->shardid()},
        {"expirationTimestamp", proto->expirationtimestamp()}}},
      {"deployer", as_hex(proto->deployer())},
      {"signature", as_hex(proto->sig())},
      {"sigAlgorithm", proto->sigalgorithm()}};
  auto again = rnode::node::DeployOfHttpBody(body.dump());
  if (!again.ok() || again->SerializeAsString() != proto->SerializeAsString()) {
    __builtin_trap();
  }
  auto deploy = rnode::casper::SignedDeploy::FromProto(*proto);
  if (!deploy.ok() &&
      deploy.status().code() != absl::StatusCode::kInvalidArgument) {
    __builtin_trap();
  }
}

// The names the data-at-name routes take from a body.
void CheckBody(const std::string& text) {
  const json body = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return;
  CheckName(body);
  if (!body.is_object()) return;
  // /api/data-at-name: "name", null when absent.
  CheckName(body.value("name", json()));
  // /api/data-at-name-by-block-hash: "name", else "par".
  if (!body.contains("name")) {
    const auto par = body.find("par");
    CheckName(par == body.end() ? json() : *par);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  CheckDeploy(text);
  CheckHttpDeploy(text);
  CheckBody(text);
  return 0;
}

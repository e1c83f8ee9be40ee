// Deploy <-> JSON over nlohmann::json.
#include "node/tools/deploy_json.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace rnode::node {
namespace {

using nlohmann::json;

absl::StatusOr<const json*> Field(const json& obj, const char* name,
                                  bool required) {
  auto it = obj.find(name);
  if (it == obj.end()) {
    if (!required) return nullptr;
    return absl::InvalidArgumentError(absl::StrCat("missing field '", name, "'"));
  }
  return &*it;
}

absl::StatusOr<int64_t> Int(const json& obj, const char* name, bool required) {
  ASSIGN_OR_RETURN(const json* v, Field(obj, name, required));
  if (v == nullptr) return 0;
  if (!v->is_number_integer()) {
    return absl::InvalidArgumentError(
        absl::StrCat("field '", name, "' must be an integer"));
  }
  if (v->is_number_unsigned() &&
      v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return absl::InvalidArgumentError(
        absl::StrCat("field '", name, "' does not fit in int64"));
  }
  return v->get<int64_t>();
}

absl::StatusOr<std::string> String(const json& obj, const char* name,
                                   bool required) {
  ASSIGN_OR_RETURN(const json* v, Field(obj, name, required));
  if (v == nullptr) return std::string();
  if (!v->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat("field '", name, "' must be a string"));
  }
  return v->get<std::string>();
}

absl::StatusOr<Bytes> Hex(const json& obj, const char* name) {
  ASSIGN_OR_RETURN(std::string text, String(obj, name, true));
  absl::StatusOr<Bytes> bytes = HexDecode(text);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("field '", name, "': ", bytes.status().message()));
  }
  return bytes;
}

}  // namespace

std::string DeployToJson(const casper::SignedDeploy& deploy) {
  const casper::DeployData& d = deploy.data();
  json j = {
      {"deployer", HexEncode(deploy.deployer())},
      {"term", d.term},
      {"timestamp", d.timestamp},
      {"sig", HexEncode(deploy.sig())},
      {"sigAlgorithm", std::string(SigAlgorithmName(deploy.sig_algorithm()))},
      {"phloPrice", d.phlo_price},
      {"phloLimit", d.phlo_limit},
      {"validAfterBlockNumber", d.valid_after_block_number},
      {"shardId", d.shard_id},
      {"expirationTimestamp", d.expiration_timestamp},
  };
  if (!d.language.empty()) j["language"] = d.language;
  return j.dump();
}

absl::StatusOr<casper::SignedDeploy> DeployFromJson(std::string_view text) {
  json obj = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (obj.is_discarded()) {
    return absl::InvalidArgumentError("deploy is not valid JSON");
  }
  if (!obj.is_object()) {
    return absl::InvalidArgumentError("deploy JSON must be an object");
  }
  casper::DeployData d;
  ASSIGN_OR_RETURN(d.term, String(obj, "term", true));
  ASSIGN_OR_RETURN(d.timestamp, Int(obj, "timestamp", true));
  ASSIGN_OR_RETURN(d.phlo_price, Int(obj, "phloPrice", true));
  ASSIGN_OR_RETURN(d.phlo_limit, Int(obj, "phloLimit", true));
  ASSIGN_OR_RETURN(d.valid_after_block_number,
                   Int(obj, "validAfterBlockNumber", true));
  ASSIGN_OR_RETURN(d.shard_id, String(obj, "shardId", true));
  ASSIGN_OR_RETURN(d.expiration_timestamp,
                   Int(obj, "expirationTimestamp", false));
  ASSIGN_OR_RETURN(d.language, String(obj, "language", false));
  ASSIGN_OR_RETURN(Bytes deployer, Hex(obj, "deployer"));
  ASSIGN_OR_RETURN(Bytes sig, Hex(obj, "sig"));
  ASSIGN_OR_RETURN(std::string alg, String(obj, "sigAlgorithm", true));
  return casper::SignedDeploy::Verify(d, deployer, sig, alg);
}

}  // namespace rnode::node

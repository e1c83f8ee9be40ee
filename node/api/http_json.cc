// The Web API's JSON bodies.
#include "node/api/http_json.h"

#include <limits>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "util/bytes.h"
#include "util/status_macros.h"

namespace rnode::node {

using nlohmann::json;

absl::StatusOr<json> ParseJsonObject(std::string_view text) {
  json body = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    return absl::InvalidArgumentError("the body is not a JSON object");
  }
  return body;
}

absl::StatusOr<int64_t> IntField(const json& obj, std::string_view name,
                                 bool required) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) {
    if (required) {
      return absl::InvalidArgumentError(
          absl::StrCat("missing field '", std::string(name), "'"));
    }
    return 0;
  }
  // An unsigned JSON number above INT64_MAX is not an int64 (get<int64_t>
  // would wrap it to a negative one).
  if (it->is_number_unsigned()) {
    const uint64_t u = it->get<uint64_t>();
    if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return static_cast<int64_t>(u);
    }
  } else if (it->is_number_integer()) {
    return it->get<int64_t>();
  }
  int64_t v = 0;
  if (it->is_string() && absl::SimpleAtoi(it->get<std::string>(), &v)) {
    return v;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("field '", std::string(name), "' must be an integer"));
}

absl::StatusOr<std::string> StringField(const json& obj,
                                        std::string_view name) {
  auto it = obj.find(name);
  if (it == obj.end() || !it->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat("missing or non-string field '", std::string(name), "'"));
  }
  return it->get<std::string>();
}

namespace {

// The Web API's deploy body (a JSON object) as the proto doDeploy takes.
absl::StatusOr<::casper::DeployDataProto> DeployOfJson(const json& body) {
  if (!body.is_object() || !body.contains("data") ||
      !body["data"].is_object()) {
    return absl::InvalidArgumentError(
        "expected {\"data\":{...},\"deployer\":hex,\"signature\":hex,"
        "\"sigAlgorithm\":...}");
  }
  const json& d = body["data"];
  ::casper::DeployDataProto p;
  absl::StatusOr<std::string> term = StringField(d, "term");
  if (!term.ok()) return term.status();
  p.set_term(*term);
  absl::StatusOr<int64_t> v = IntField(d, "timestamp", true);
  if (!v.ok()) return v.status();
  p.set_timestamp(*v);
  if (!(v = IntField(d, "phloPrice", true)).ok()) return v.status();
  p.set_phloprice(*v);
  if (!(v = IntField(d, "phloLimit", true)).ok()) return v.status();
  p.set_phlolimit(*v);
  if (!(v = IntField(d, "validAfterBlockNumber", true)).ok()) {
    return v.status();
  }
  p.set_validafterblocknumber(*v);
  absl::StatusOr<std::string> shard = StringField(d, "shardId");
  if (!shard.ok()) return shard.status();
  p.set_shardid(*shard);
  const char* expiration = d.contains("expirationTimestamp")
                               ? "expirationTimestamp"
                               : "expiration_timestamp";
  if (!(v = IntField(d, expiration, false)).ok()) return v.status();
  p.set_expirationtimestamp(*v);
  for (const char* field : {"deployer", "signature"}) {
    absl::StatusOr<std::string> hex = StringField(body, field);
    if (!hex.ok()) return hex.status();
    absl::StatusOr<Bytes> raw = HexDecode(*hex);
    if (!raw.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("field '", field, "' is not hex"));
    }
    std::string bytes(raw->begin(), raw->end());
    if (std::string_view(field) == "deployer") {
      p.set_deployer(bytes);
    } else {
      p.set_sig(bytes);
    }
  }
  // Absent (or null) means secp256k1, as for the public clients; present,
  // it must be a string like every other named field.
  auto alg = body.find("sigAlgorithm");
  if (alg == body.end() || alg->is_null()) {
    p.set_sigalgorithm("secp256k1");
  } else {
    ASSIGN_OR_RETURN(std::string name, StringField(body, "sigAlgorithm"));
    p.set_sigalgorithm(std::move(name));
  }
  return p;
}

}  // namespace

absl::StatusOr<::casper::DeployDataProto> DeployOfHttpBody(
    std::string_view body) {
  ASSIGN_OR_RETURN(json parsed, ParseJsonObject(body));
  return DeployOfJson(parsed);
}

}  // namespace rnode::node

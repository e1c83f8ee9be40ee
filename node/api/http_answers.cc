#include "node/api/http_answers.h"

#include <string>

#include "rspace/storage/kv_store.h"

namespace rnode::node {

http::Response Json(int status, const nlohmann::json& body) {
  http::Response r;
  r.status = status;
  r.body = body.dump();
  return r;
}

http::Response Error(int status, std::string_view kind,
                     absl::string_view message) {
  return Json(status, nlohmann::json{{"error", std::string(kind)},
                                     {"message", std::string(message)}});
}

// The status code and kind of a failed node operation.
http::Response ErrorOf(const absl::Status& s, std::string_view invalid_kind) {
  if (rspace::IsNoSpace(s)) {
    // The node's disk is full: nothing was stored; retry later (or
    // elsewhere).
    http::Response r = Error(507, "disk_full", s.message());
    r.headers.emplace_back("Retry-After", "5");
    return r;
  }
  if (rspace::IsPruned(s)) {
    // A state or blocks this node deleted (storage.retain-blocks): gone
    // for good here; an archive node has them.
    return Error(410, "pruned", s.message());
  }
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
      return Error(400, invalid_kind, s.message());
    case absl::StatusCode::kNotFound:
      return Error(404, "not_found", s.message());
    case absl::StatusCode::kAlreadyExists:
      return Error(409, "duplicate_deploy", s.message());
    case absl::StatusCode::kFailedPrecondition:
      return Error(422, "failed_precondition", s.message());
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kUnavailable: {
      http::Response r = Error(503, "busy", s.message());
      r.headers.emplace_back("Retry-After", "1");
      return r;
    }
    default:
      return Error(500, "internal", s.message());
  }
}

}  // namespace rnode::node

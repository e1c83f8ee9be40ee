// The fault routes, in builds with RNODE_FAULT_INJECTION (fault_api.h).
#include "node/api/fault_api.h"

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "node/api/http_answers.h"

namespace rnode::node {

bool FaultInjectionBuilt() { return true; }

std::optional<http::Response> FaultRoute(
    Node* node, const http::Request& req,
    const std::vector<std::string>& parts) {
  if (req.method == "POST" && parts.size() == 3 && parts[0] == "api" &&
      parts[1] == "fault" &&
      (parts[2] == "isolate" || parts[2] == "disk-full" ||
       parts[2] == "corrupt-trie" || parts[2] == "heal")) {
    absl::Status s;
    if (parts[2] == "isolate") {
      s = node->SetIsolated(true);
    } else if (parts[2] == "disk-full") {
      s = node->SetDiskFull(true);
    } else if (parts[2] == "corrupt-trie") {
      s = node->SetCorruptTrie(true);
    } else {
      s = node->SetDiskFull(false);
      // A standalone node has no isolation to lift, nor a trie server.
      if (s.ok() && node->isolated()) s = node->SetIsolated(false);
      if (s.ok() && node->corrupt_trie_injected()) {
        s = node->SetCorruptTrie(false);
      }
    }
    if (!s.ok()) {
      if (s.code() == absl::StatusCode::kPermissionDenied) {
        return Error(403, "fault_injection_off", s.message());
      }
      return ErrorOf(s, "invalid");
    }
    return Json(200,
                nlohmann::json{{"isolated", node->isolated()},
                               {"diskFull", node->disk_full_injected()},
                               {"corruptTrie", node->corrupt_trie_injected()}});
  }
  return std::nullopt;
}

}  // namespace rnode::node

// Status conversions between gRPC and abseil, for the p2p layer's sources
// only (gRPC stays out of its public headers). The two share the canonical
// code numbering; a gRPC code outside it becomes Unknown.
#ifndef RNODE_NODE_P2P_GRPC_STATUS_H_
#define RNODE_NODE_P2P_GRPC_STATUS_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/support/status.h"

namespace rnode::node::p2p {

// OK for OK; otherwise the same code with `context` (if any), ": " and
// gRPC's message.
inline absl::Status FromGrpc(const grpc::Status& s,
                             std::string_view context = {}) {
  if (s.ok()) return absl::OkStatus();
  const int code = static_cast<int>(s.error_code());
  const absl::StatusCode abseil_code =
      code > 0 && code <= static_cast<int>(absl::StatusCode::kUnauthenticated)
          ? static_cast<absl::StatusCode>(code)
          : absl::StatusCode::kUnknown;
  return absl::Status(abseil_code, context.empty()
                                       ? s.error_message()
                                       : absl::StrCat(std::string(context),
                                                      ": ", s.error_message()));
}

inline grpc::Status ToGrpc(const absl::Status& s) {
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()),
                      std::string(s.message()));
}

}  // namespace rnode::node::p2p

#endif  // RNODE_NODE_P2P_GRPC_STATUS_H_

// Fuzzes the two ways a deploy enters the node from outside: protobuf bytes
// (gRPC doDeploy, blocks from peers) and JSON (tools, HTTP). Any input must
// give a deploy or an error, never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "CasperMessage.pb.h"
#include "casper/deploy.h"
#include "node/tools/deploy_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ::casper::DeployDataProto proto;
  if (proto.ParseFromArray(data, static_cast<int>(size))) {
    absl::StatusOr<rnode::casper::SignedDeploy> d =
        rnode::casper::SignedDeploy::FromProto(proto);
    if (d.ok()) {
      // A verified deploy must survive its own round trip.
      if (!rnode::casper::SignedDeploy::FromProto(d->ToProto()).ok()) {
        __builtin_trap();
      }
    }
  }
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)rnode::node::DeployFromJson(text);
  return 0;
}

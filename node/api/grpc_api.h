// The gRPC API servers (docs/node.md "APIs"): casper.v1.DeployService on
// the external port, DeployService and ProposeService on the internal one,
// both with server reflection. Business errors travel in the reply's
// ServiceError with status OK, as on the public nodes.
//
// Bounds: each server runs at most `api-server.max-in-flight` handlers at
// once (a gRPC resource quota: a call beyond it fails RESOURCE_EXHAUSTED,
// "busy"), each connection has at most kMaxStreamsPerConnection calls in
// flight, requests are limited to grpc-max-recv-message-size, and the
// memory gRPC's core accounts is bounded by the same quota (four of the
// largest requests, at least kGrpcMemoryFloorBytes).
#ifndef RNODE_NODE_API_GRPC_API_H_
#define RNODE_NODE_API_GRPC_API_H_

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "node/config/config.h"
#include "node/core/node.h"

namespace rnode::node {

// Concurrent calls one client connection may have open (HTTP/2 streams);
// more wait in the client, not here.
inline constexpr int kMaxStreamsPerConnection = 16;
// The least memory gRPC's core may account for each server (its resource
// quota): buffers of every connection and the messages being read.
inline constexpr size_t kGrpcMemoryFloorBytes = 128u << 20;

class GrpcApi {
 public:
  // Starts both servers on config.api_host. `node` is not owned and must
  // outlive the servers. Unavailable naming the address when a port
  // cannot be bound.
  static absl::StatusOr<std::unique_ptr<GrpcApi>> Start(
      Node* node, const NodeConfig& config);
  ~GrpcApi();  // Stop().
  // Stops accepting calls, cancels those in flight after a short grace and
  // waits for their handlers. Idempotent.
  void Stop();

  int external_port() const;
  int internal_port() const;

 private:
  struct Impl;
  explicit GrpcApi(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rnode::node

#endif  // RNODE_NODE_API_GRPC_API_H_

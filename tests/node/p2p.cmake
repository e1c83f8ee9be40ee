# node/p2p: addresses, streams, discovery and the transport, over real
# gRPC servers on 127.0.0.1 (mutual TLS). The sources are in p2p/, where
# they may use node/p2p/internal headers (scripts/check-includes R3).
rnode_test(node_p2p_tests
  SOURCES p2p/peer_test.cc p2p/chunker_test.cc p2p/discovery_test.cc
          p2p/transport_test.cc
  DEPS rnode_node_p2p rnode_proto rnode_proto_grpc rnode_crypto rnode_util
       rnode_node_metrics rnode_badpeer absl::strings)

# node/p2p/identity and the ports over mutual TLS.
rnode_test(node_p2p_tls_tests
  SOURCES p2p/identity_test.cc p2p/tls_test.cc p2p/validator_statement_test.cc
  DEPS rnode_node_p2p rnode_proto rnode_proto_grpc rnode_util rnode_badpeer
       OpenSSL::Crypto absl::strings)

# node/p2p: addresses, streams, discovery and the transport, over real
# gRPC servers on 127.0.0.1.
rnode_test(node_p2p_tests
  SOURCES p2p_peer_test.cc p2p_chunker_test.cc p2p_discovery_test.cc
          p2p_transport_test.cc
  DEPS rnode_node_p2p rnode_proto rnode_proto_grpc rnode_crypto rnode_util
       rnode_node_metrics absl::strings)

# node/p2p/identity and the ports over mutual TLS.
rnode_test(node_p2p_tls_tests
  SOURCES p2p_identity_test.cc p2p_tls_test.cc validator_statement_test.cc
  DEPS rnode_node_p2p rnode_proto rnode_proto_grpc rnode_util rnode_badpeer
       OpenSSL::Crypto absl::strings)

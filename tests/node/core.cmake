rnode_test(node_core_tests SOURCES core_test.cc
  DEPS rnode_node_core rnode_node_metrics rnode_casper rnode_rholang
       rnode_crypto rnode_proto)

# node/views: block, deploy and Rholang value views of the client API.
rnode_test(node_views_tests
  SOURCES views_test.cc
  DEPS rnode_node_views rnode_casper_block rnode_crypto)

rnode_test(node_config_tests SOURCES config_test.cc DEPS rnode_node_config)

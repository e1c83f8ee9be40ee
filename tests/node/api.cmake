# node/api: the fault routes' variant without fault injection (the release
# image's), linked on its own (the default build links the other).
rnode_test(node_no_fault_routes_tests SOURCES no_fault_routes_test.cc
  DEPS rnode_node_no_fault_routes rnode_node_api_base)

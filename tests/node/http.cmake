# node/http: the HTTP + WebSocket server and the event hub. The tests talk
# to the server with Beast clients, hence Boost here too.
rnode_test(node_http_tests SOURCES http_test.cc
  DEPS rnode_node_http Boost::headers Threads::Threads)

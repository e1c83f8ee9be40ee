# node/metrics: the metrics registry and its exposition (promtool-checked).
rnode_test(node_metrics_tests SOURCES metrics_test.cc DEPS rnode_node_metrics)

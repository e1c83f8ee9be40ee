# Whole nodes on RocksDB in temporary folders, with their threads.
rnode_test(node_core_tests SOURCES core_test.cc
  DEPS rnode_node_api rnode_node_core rnode_node_metrics rnode_casper rnode_rholang_frontend
       rnode_crypto rnode_proto rnode_rspace
  LABELS integration)
rnode_test(node_gossip_backup_tests SOURCES gossip_backup_test.cc
  DEPS rnode_node_core rnode_casper rnode_crypto)
rnode_test(node_network_tests SOURCES network_test.cc peer_discovery_test.cc
  chain_sync_test.cc
  DEPS rnode_node_core rnode_node_p2p rnode_casper rnode_crypto rnode_proto
       rnode_rspace rnode_util)
# The consensus thread's schedule over a scripted ConsensusWork.
rnode_test(node_scheduler_tests SOURCES scheduler_test.cc
  DEPS rnode_node_core rnode_node_metrics)
# The validator key: its sources, and no leak through the environment or
# the file system.
rnode_test(node_genesis_setup_tests SOURCES genesis_setup_test.cc
  DEPS rnode_node_core rnode_node_config rnode_crypto rnode_util)
# Trie nodes between real transports on loopback: honest, corrupt, cut and
# silent peers, refusals, a restarted fetch.
rnode_test(node_state_sync_tests SOURCES state_sync_test.cc
  DEPS rnode_node_core rnode_node_p2p rnode_rspace_sync rnode_rspace
       rnode_crypto rnode_proto rnode_util)
# History retention over a DAG and a history in memory, and the API's 410.
rnode_test(node_retention_tests SOURCES retention_test.cc
  DEPS rnode_node_core rnode_node_api_base rnode_casper_dag rnode_casper_block
       rnode_crypto rnode_rspace rnode_util)
# What a joining node holds of the blocks peers send, and the verification
# of its anchor (node/core/state_join.h); forgetting the chain to join
# again (node/core/rejoin.h).
rnode_test(node_state_join_tests SOURCES state_join_test.cc rejoin_test.cc
  DEPS rnode_node_core rnode_casper_dag rnode_casper_block rnode_crypto
       rnode_proto rnode_rspace rnode_util)
# A deploy's status read from the chain alone (hand-built DAGs).
rnode_test(node_deploy_status_tests SOURCES deploy_status_test.cc
  DEPS rnode_node_core rnode_casper_pool rnode_casper_dag rnode_casper_block
       rnode_casper rnode_crypto rnode_rspace)
# The free-space floor over an injected reading.
rnode_test(node_disk_guard_tests SOURCES disk_guard_test.cc
  DEPS rnode_node_core)

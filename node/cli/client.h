// The operator's client verbs of `rnode` (deploy, propose, show-block,
// show-blocks, last-finalized-block, is-finalized, find-deploy, status):
// calls to a node's gRPC API, printed as JSON.
#ifndef RNODE_NODE_CLI_CLIENT_H_
#define RNODE_NODE_CLI_CLIENT_H_

#include <cstdint>
#include <ostream>
#include <string>

namespace rnode::node {

struct ClientOptions {
  std::string host = "127.0.0.1";
  int port = 40401;           // external API (internal for propose)
  int internal_port = 40402;  // propose
  int timeout_seconds = 30;
};

struct DeployOptions {
  std::string private_key;       // hex
  std::string private_key_file;  // or a file holding it
  std::string term;
  std::string term_file;  // or a file holding it
  int64_t phlo_limit = 100'000;
  int64_t phlo_price = 1;
  // -1: the node's latest block number (asked with getBlocks).
  int64_t valid_after_block_number = -1;
  std::string shard_id = "root";
  // Wait until the deploy is finalized (polls deployFinalizationStatus).
  bool wait = false;
  int wait_seconds = 60;
};

// Each returns the process exit code: 0 on success, 1 when the node
// answered with an error (printed on `err`), 2 when it could not be
// reached.
int ClientDeploy(const ClientOptions& c, const DeployOptions& d,
                 std::ostream& out, std::ostream& err);
int ClientPropose(const ClientOptions& c, std::ostream& out, std::ostream& err);
int ClientShowBlock(const ClientOptions& c, const std::string& hash,
                    std::ostream& out, std::ostream& err);
int ClientShowBlocks(const ClientOptions& c, int depth, std::ostream& out,
                     std::ostream& err);
int ClientLastFinalizedBlock(const ClientOptions& c, std::ostream& out,
                             std::ostream& err);
int ClientIsFinalized(const ClientOptions& c, const std::string& hash,
                      std::ostream& out, std::ostream& err);
int ClientFindDeploy(const ClientOptions& c, const std::string& deploy_id,
                     std::ostream& out, std::ostream& err);
int ClientStatus(const ClientOptions& c, std::ostream& out, std::ostream& err);

}  // namespace rnode::node

#endif  // RNODE_NODE_CLI_CLIENT_H_

// The rnode binary: command-line entry point. Parses arguments and hands
// off; all work lives in the libraries.
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include <map>
#include <set>

#include "CLI/CLI.hpp"
#include "node/cli/client.h"
#include "node/cli/run.h"
#include "node/config/config.h"
#include "node/genesis_tool.h"
#include "node/key_tools.h"
#include "util/logging.h"

namespace {

// `run`'s flags: one per setting of node/config (the public node's names),
// collected as text and applied over the config file.
struct RunFlags {
  std::string config_file;
  std::map<std::string, std::string> values;  // by setting key
};

void AddRunFlags(CLI::App* run, RunFlags& flags) {
  run->add_option("-c,--config-file", flags.config_file,
                  "TOML config file (default: <data-dir>/rnode.toml if it "
                  "exists)");
  for (const rnode::node::Setting& s : rnode::node::Settings()) {
    if (s.flag.empty()) continue;
    std::string& value = flags.values[std::string(s.key)];
    std::string name = "--" + std::string(s.flag);
    if (s.flag == "standalone") name = "-s," + name;
    if (std::holds_alternative<bool rnode::node::NodeConfig::*>(s.field)) {
      run->add_flag(name + "{true}", value, std::string(s.help))
          ->expected(0, 1);
    } else {
      run->add_option(name, value, std::string(s.help));
    }
  }
}

// Embedded defaults, then the config file, then the flags. Returns the
// exit code of a failure (0 on success).
int ResolveConfig(const RunFlags& flags, const std::string& log_level,
                  bool log_level_given, rnode::node::NodeConfig& config) {
  using rnode::node::ApplySetting;
  // The data dir decides where the default config file is.
  if (auto it = flags.values.find("storage.data-dir");
      it != flags.values.end() && !it->second.empty()) {
    config.data_dir = it->second;
  }
  std::string file = flags.config_file;
  const std::string fallback = rnode::node::DataDir(config) + "/rnode.toml";
  if (file.empty() && std::ifstream(fallback).good()) file = fallback;
  std::set<std::string> from_file;
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::cerr << "error: cannot read config file " << file << "\n";
      return 1;
    }
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    if (absl::Status s = rnode::node::ApplyToml(config, text, file); !s.ok()) {
      std::cerr << "error: " << s.message() << "\n";
      return 1;
    }
    config.config_file = file;
  }
  bool dev_mode_given = false;
  for (const auto& [key, value] : flags.values) {
    if (value.empty()) continue;
    if (absl::Status s = ApplySetting(config, key, value); !s.ok()) {
      std::cerr << "error: " << s.message() << "\n";
      return 1;
    }
    dev_mode_given |= key == "dev-mode";
  }
  if (log_level_given) config.log_level = log_level;
  // A standalone node is a developer's: exploratory deploys on, and it
  // finalizes its own blocks alone.
  if (config.standalone && !dev_mode_given) config.dev_mode = true;
  if (absl::Status s = rnode::node::Validate(config); !s.ok()) {
    std::cerr << "error: " << s.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rnode: validator node for a Rholang / Casper shard"};
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level,
                 "trace, debug, info, warn, error, critical or off");

  CLI::App* keygen = app.add_subcommand("keygen", "Make a secp256k1 key pair");

  CLI::App* address = app.add_subcommand("rev-address", "REV address of a key");
  std::string public_key, private_key;
  address->add_option("--public-key", public_key, "65-byte public key (hex)");
  address->add_option("--private-key", private_key,
                      "32-byte private key (hex)");

  CLI::App* sign =
      app.add_subcommand("sign-deploy", "Sign a deploy and print it as JSON");
  rnode::casper::DeployData data;
  std::string sign_key, sig_algorithm = "secp256k1";
  sign->add_option("--private-key", sign_key, "32-byte private key (hex)")
      ->required();
  sign->add_option("--term", data.term, "Rholang source")->required();
  sign->add_option("--timestamp", data.timestamp, "milliseconds since epoch")
      ->required();
  sign->add_option("--phlo-price", data.phlo_price)->required();
  sign->add_option("--phlo-limit", data.phlo_limit)->required();
  sign->add_option("--valid-after-block-number", data.valid_after_block_number)
      ->required();
  sign->add_option("--shard-id", data.shard_id)->required();
  sign->add_option("--expiration-timestamp", data.expiration_timestamp,
                   "milliseconds; 0 = never");
  sign->add_option("--sig-algorithm", sig_algorithm,
                   "secp256k1 or secp256k1:eth");

  CLI::App* verify = app.add_subcommand(
      "verify-deploy", "Verify a JSON deploy read from standard input");

  rnode::node::GenesisToolOptions genesis_options;
  auto add_genesis_options = [&genesis_options](CLI::App* cmd) {
    cmd->add_option("--bonds", genesis_options.bonds_path,
                    "bonds.txt: <public key hex> <stake> per line")
        ->required();
    cmd->add_option("--wallets", genesis_options.wallets_path,
                    "wallets.txt: <REV address>,<balance> per line")
        ->required();
    cmd->add_option("--shard-id", genesis_options.shard_id, "shard name");
    cmd->add_option("--genesis-timestamp", genesis_options.timestamp,
                    "genesis block time, ms");
    cmd->add_option("--threads", genesis_options.threads,
                    "interpreter threads");
    auto& pos = genesis_options.pos;
    cmd->add_option("--bond-minimum", pos.minimum_bond, "smallest stake");
    cmd->add_option("--bond-maximum", pos.maximum_bond, "largest stake");
    cmd->add_option("--epoch-length", pos.epoch_length, "blocks per epoch");
    cmd->add_option("--quarantine-length", pos.quarantine_length,
                    "blocks a withdrawal waits after its epoch");
    cmd->add_option("--number-of-active-validators",
                    pos.number_of_active_validators,
                    "size of the active validator set");
  };
  CLI::App* genesis = app.add_subcommand(
      "genesis", "Build the genesis block from bonds and wallets and print it");
  add_genesis_options(genesis);
  CLI::App* eval = app.add_subcommand(
      "eval-deploy",
      "Run one signed JSON deploy (file or - for stdin) on the genesis state");
  add_genesis_options(eval);
  std::string deploy_path;
  eval->add_option("deploy", deploy_path, "JSON deploy file, or -")->required();

  CLI::App* run = app.add_subcommand(
      "run", "Run the node (rnode run --standalone: a local validator)");
  RunFlags run_flags;
  AddRunFlags(run, run_flags);

  rnode::node::ClientOptions client;
  auto add_client = [&client](CLI::App* cmd) {
    cmd->add_option("--grpc-host", client.host, "node address");
    cmd->add_option("--grpc-port", client.port, "external gRPC port");
    cmd->add_option("--grpc-port-internal", client.internal_port,
                    "internal gRPC port (propose)");
  };
  CLI::App* deploy_cmd =
      app.add_subcommand("deploy", "Sign a deploy and send it to a node");
  add_client(deploy_cmd);
  rnode::node::DeployOptions deploy;
  deploy_cmd->add_option("--private-key", deploy.private_key,
                         "signing key, hex (visible in ps: prefer the file)");
  deploy_cmd->add_option("--private-key-file", deploy.private_key_file,
                         "file holding the signing key in hex");
  deploy_cmd->add_option("--term", deploy.term, "Rholang source");
  deploy_cmd->add_option("--term-file", deploy.term_file, "Rholang file");
  deploy_cmd->add_option("--phlo-limit", deploy.phlo_limit);
  deploy_cmd->add_option("--phlo-price", deploy.phlo_price);
  deploy_cmd->add_option("--valid-after-block-number",
                         deploy.valid_after_block_number,
                         "default: the node's latest block number");
  deploy_cmd->add_option("--shard-id", deploy.shard_id);
  deploy_cmd->add_flag("--wait", deploy.wait,
                       "wait until the deploy is finalized");
  deploy_cmd->add_option("--wait-seconds", deploy.wait_seconds);
  CLI::App* propose_cmd =
      app.add_subcommand("propose", "Ask a node for a block");
  add_client(propose_cmd);
  std::string hash;
  CLI::App* show_block = app.add_subcommand("show-block", "One block");
  add_client(show_block);
  show_block->add_option("hash", hash, "hash or a prefix of 6+ hex")
      ->required();
  int depth = 1;
  CLI::App* show_blocks = app.add_subcommand("show-blocks", "Latest blocks");
  add_client(show_blocks);
  show_blocks->add_option("--depth", depth);
  CLI::App* lfb =
      app.add_subcommand("last-finalized-block", "The last finalized block");
  add_client(lfb);
  CLI::App* is_final = app.add_subcommand("is-finalized", "Is a block final");
  add_client(is_final);
  is_final->add_option("hash", hash)->required();
  std::string deploy_id;
  CLI::App* find = app.add_subcommand("find-deploy", "The block of a deploy");
  add_client(find);
  find->add_option("--deploy-id", deploy_id, "the deploy's signature, hex")
      ->required();
  CLI::App* status = app.add_subcommand("status", "A node's status");
  add_client(status);

  CLI11_PARSE(app, argc, argv);
  if (*run) {
    rnode::node::NodeConfig config;
    const bool level_given = app.count("--log-level") > 0;
    if (int rc = ResolveConfig(run_flags, log_level, level_given, config);
        rc != 0) {
      return rc;
    }
    rnode::node::BlockTerminationSignals();
    return rnode::node::RunNode(config, std::cout, std::cerr);
  }
  if (*deploy_cmd) {
    return rnode::node::ClientDeploy(client, deploy, std::cout, std::cerr);
  }
  if (*propose_cmd) {
    return rnode::node::ClientPropose(client, std::cout, std::cerr);
  }
  if (*show_block) {
    return rnode::node::ClientShowBlock(client, hash, std::cout, std::cerr);
  }
  if (*show_blocks) {
    return rnode::node::ClientShowBlocks(client, depth, std::cout, std::cerr);
  }
  if (*lfb) {
    return rnode::node::ClientLastFinalizedBlock(client, std::cout, std::cerr);
  }
  if (*is_final) {
    return rnode::node::ClientIsFinalized(client, hash, std::cout, std::cerr);
  }
  if (*find) {
    return rnode::node::ClientFindDeploy(client, deploy_id, std::cout,
                                         std::cerr);
  }
  if (*status) return rnode::node::ClientStatus(client, std::cout, std::cerr);
  if (absl::Status s = rnode::SetLogLevel(log_level); !s.ok()) {
    std::cerr << "error: " << s.message() << "\n";
    return 2;
  }
  if (*keygen) return rnode::node::RunKeygen(std::cout, std::cerr);
  if (*address) {
    return rnode::node::RunRevAddress(public_key, private_key, std::cout,
                                      std::cerr);
  }
  if (*sign) {
    return rnode::node::RunSignDeploy(data, sign_key, sig_algorithm, std::cout,
                                      std::cerr);
  }
  if (*verify)
    return rnode::node::RunVerifyDeploy(std::cin, std::cout, std::cerr);
  if (*genesis) {
    return rnode::node::RunGenesis(genesis_options, std::cout, std::cerr);
  }
  if (*eval) {
    absl::StatusOr<std::string> json =
        rnode::node::ReadDeployJson(deploy_path, std::cin);
    if (!json.ok()) {
      std::cerr << "error: " << json.status().message() << "\n";
      return 1;
    }
    return rnode::node::RunEvalDeploy(genesis_options, *json, std::cout,
                                      std::cerr);
  }
  return 2;
}

// The rnode binary: command-line entry point. Parses arguments and hands
// off; all work lives in the libraries.
#include <iostream>
#include <string>

#include "CLI/CLI.hpp"
#include "node/genesis_tool.h"
#include "node/key_tools.h"
#include "util/logging.h"

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

  CLI11_PARSE(app, argc, argv);
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

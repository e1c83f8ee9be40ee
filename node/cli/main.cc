// The rnode binary: command-line entry point. Parses arguments and hands
// off; all work lives in the libraries.
#include <exception>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "node/cli/client.h"
#include "node/cli/run.h"
#include "node/config/config.h"
#include "node/tools/genesis_tool.h"
#include "node/tools/key_tools.h"
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
    std::string name = absl::StrCat(s.flag == "standalone" ? "-s," : "", "--",
                                    std::string(s.flag));
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

// A subcommand and what it runs once the arguments are parsed.
struct Command {
  CLI::App* app;
  std::function<int()> run;
};

// Where the parsed options land; outlives the parse and the commands.
struct Args {
  std::string log_level = "info";
  std::string public_key, private_key;
  rnode::casper::DeployData data;
  std::string sign_key, sign_key_file, sig_algorithm = "secp256k1";
  rnode::node::GenesisToolOptions genesis;
  std::string deploy_path;
  RunFlags run;
  rnode::node::ClientOptions client;
  rnode::node::DeployOptions deploy;
  std::string hash;
  int depth = 1;
  std::string deploy_id;
};

int Fail(const absl::Status& s, int code) {
  std::cerr << "error: " << s.message() << "\n";
  return code;
}

void AddGenesisOptions(CLI::App* cmd, rnode::node::GenesisToolOptions& g) {
  cmd->add_option("--bonds", g.bonds_path,
                  "bonds.txt: <public key hex> <stake> per line")
      ->required();
  cmd->add_option("--wallets", g.wallets_path,
                  "wallets.txt: <REV address>,<balance> per line")
      ->required();
  cmd->add_option("--shard-id", g.shard_id, "shard name");
  cmd->add_option("--genesis-timestamp", g.timestamp, "genesis block time, ms");
  cmd->add_option("--threads", g.threads, "interpreter threads");
  auto& pos = g.pos;
  cmd->add_option("--bond-minimum", pos.minimum_bond, "smallest stake");
  cmd->add_option("--bond-maximum", pos.maximum_bond, "largest stake");
  cmd->add_option("--epoch-length", pos.epoch_length, "blocks per epoch");
  cmd->add_option("--quarantine-length", pos.quarantine_length,
                  "blocks a withdrawal waits after its epoch");
  cmd->add_option("--number-of-active-validators",
                  pos.number_of_active_validators,
                  "size of the active validator set");
}

void AddSignDeploy(CLI::App& app, Args& a, std::vector<Command>& out) {
  CLI::App* sign =
      app.add_subcommand("sign-deploy", "Sign a deploy and print it as JSON");
  CLI::Option* hex = sign->add_option("--private-key", a.sign_key,
                                      "32-byte private key (hex)");
  sign->add_option("--private-key-file", a.sign_key_file,
                   "file holding the private key (hex)")
      ->excludes(hex);
  sign->add_option("--term", a.data.term, "Rholang source")->required();
  sign->add_option("--timestamp", a.data.timestamp, "milliseconds since epoch")
      ->required();
  sign->add_option("--phlo-price", a.data.phlo_price)->required();
  sign->add_option("--phlo-limit", a.data.phlo_limit)->required();
  sign->add_option("--valid-after-block-number",
                   a.data.valid_after_block_number)
      ->required();
  sign->add_option("--shard-id", a.data.shard_id)->required();
  sign->add_option("--expiration-timestamp", a.data.expiration_timestamp,
                   "milliseconds; 0 = never");
  sign->add_option("--sig-algorithm", a.sig_algorithm,
                   "secp256k1 or secp256k1:eth");
  out.push_back({sign, [&a] {
                   return rnode::node::RunSignDeploy(a.data, a.sign_key,
                                                     a.sign_key_file,
                                                     a.sig_algorithm, std::cout,
                                                     std::cerr);
                 }});
}

// The offline tools: keys, signing, genesis, one deploy on a genesis.
void AddTools(CLI::App& app, Args& a, std::vector<Command>& out) {
  out.push_back({app.add_subcommand("keygen", "Make a secp256k1 key pair"),
                 [] { return rnode::node::RunKeygen(std::cout, std::cerr); }});
  CLI::App* address = app.add_subcommand("rev-address", "REV address of a key");
  address->add_option("--public-key", a.public_key, "65-byte public key (hex)");
  address->add_option("--private-key", a.private_key,
                      "32-byte private key (hex)");
  out.push_back({address, [&a] {
                   return rnode::node::RunRevAddress(
                       a.public_key, a.private_key, std::cout, std::cerr);
                 }});
  AddSignDeploy(app, a, out);
  out.push_back(
      {app.add_subcommand("verify-deploy",
                          "Verify a JSON deploy read from standard input"),
       [] {
         return rnode::node::RunVerifyDeploy(std::cin, std::cout, std::cerr);
       }});
  CLI::App* genesis = app.add_subcommand(
      "genesis", "Build the genesis block from bonds and wallets and print it");
  AddGenesisOptions(genesis, a.genesis);
  out.push_back({genesis, [&a] {
                   return rnode::node::RunGenesis(a.genesis, std::cout,
                                                  std::cerr);
                 }});
  CLI::App* eval = app.add_subcommand(
      "eval-deploy",
      "Run one signed JSON deploy (file or - for stdin) on the genesis state");
  AddGenesisOptions(eval, a.genesis);
  eval->add_option("deploy", a.deploy_path, "JSON deploy file, or -")
      ->required();
  out.push_back({eval, [&a] {
                   absl::StatusOr<std::string> json =
                       rnode::node::ReadDeployJson(a.deploy_path, std::cin);
                   if (!json.ok()) return Fail(json.status(), 1);
                   return rnode::node::RunEvalDeploy(a.genesis, *json,
                                                     std::cout, std::cerr);
                 }});
}

// A client command: the node's address options, then its own.
CLI::App* AddClient(CLI::App& app, Args& a, const char* name,
                    const char* help) {
  CLI::App* cmd = app.add_subcommand(name, help);
  cmd->add_option("--grpc-host", a.client.host, "node address");
  cmd->add_option("--grpc-port", a.client.port, "external gRPC port");
  cmd->add_option("--grpc-port-internal", a.client.internal_port,
                  "internal gRPC port (propose)");
  return cmd;
}

void AddDeployCommand(CLI::App& app, Args& a, std::vector<Command>& out) {
  CLI::App* cmd =
      AddClient(app, a, "deploy", "Sign a deploy and send it to a node");
  rnode::node::DeployOptions& d = a.deploy;
  cmd->add_option("--private-key", d.private_key,
                  "signing key, hex (visible in ps: prefer the file)");
  cmd->add_option("--private-key-file", d.private_key_file,
                  "file holding the signing key in hex");
  cmd->add_option("--term", d.term, "Rholang source");
  cmd->add_option("--term-file", d.term_file, "Rholang file");
  cmd->add_option("--phlo-limit", d.phlo_limit);
  cmd->add_option("--phlo-price", d.phlo_price);
  cmd->add_option("--valid-after-block-number", d.valid_after_block_number,
                  "default: the node's latest block number");
  cmd->add_option("--shard-id", d.shard_id);
  cmd->add_flag("--wait", d.wait, "wait until the deploy is finalized");
  cmd->add_option("--wait-seconds", d.wait_seconds);
  out.push_back({cmd, [&a] {
                   return rnode::node::ClientDeploy(a.client, a.deploy,
                                                    std::cout, std::cerr);
                 }});
}

// The commands that talk to a running node.
void AddClients(CLI::App& app, Args& a, std::vector<Command>& out) {
  namespace n = rnode::node;
  AddDeployCommand(app, a, out);
  out.push_back({AddClient(app, a, "propose", "Ask a node for a block"), [&a] {
                   return n::ClientPropose(a.client, std::cout, std::cerr);
                 }});
  CLI::App* show_block = AddClient(app, a, "show-block", "One block");
  show_block->add_option("hash", a.hash, "hash or a prefix of 6+ hex")
      ->required();
  out.push_back({show_block, [&a] {
                   return n::ClientShowBlock(a.client, a.hash, std::cout,
                                             std::cerr);
                 }});
  CLI::App* show_blocks = AddClient(app, a, "show-blocks", "Latest blocks");
  show_blocks->add_option("--depth", a.depth);
  out.push_back({show_blocks, [&a] {
                   return n::ClientShowBlocks(a.client, a.depth, std::cout,
                                              std::cerr);
                 }});
  out.push_back(
      {AddClient(app, a, "last-finalized-block", "The last finalized block"),
       [&a] {
         return n::ClientLastFinalizedBlock(a.client, std::cout, std::cerr);
       }});
  CLI::App* is_final = AddClient(app, a, "is-finalized", "Is a block final");
  is_final->add_option("hash", a.hash)->required();
  out.push_back({is_final, [&a] {
                   return n::ClientIsFinalized(a.client, a.hash, std::cout,
                                               std::cerr);
                 }});
  CLI::App* find = AddClient(app, a, "find-deploy", "The block of a deploy");
  find->add_option("--deploy-id", a.deploy_id, "the deploy's signature, hex")
      ->required();
  out.push_back({find, [&a] {
                   return n::ClientFindDeploy(a.client, a.deploy_id, std::cout,
                                              std::cerr);
                 }});
  out.push_back({AddClient(app, a, "status", "A node's status"), [&a] {
                   return n::ClientStatus(a.client, std::cout, std::cerr);
                 }});
}

int Main(int argc, char** argv) {
  CLI::App app{"rnode: validator node for a Rholang / Casper shard"};
  app.require_subcommand(1);
  Args a;
  app.add_option("--log-level", a.log_level,
                 "trace, debug, info, warn, error, critical or off");
  // The node and the clients set up logging their own way; the offline
  // tools after --log-level is applied.
  std::vector<Command> online;
  std::vector<Command> offline;
  AddTools(app, a, offline);
  CLI::App* run = app.add_subcommand(
      "run", "Run the node (rnode run --standalone: a local validator)");
  AddRunFlags(run, a.run);
  online.push_back(
      {run, [&] {
         rnode::node::NodeConfig config;
         const bool level_given = app.count("--log-level") > 0;
         if (int rc = ResolveConfig(a.run, a.log_level, level_given, config);
             rc != 0) {
           return rc;
         }
         rnode::node::BlockTerminationSignals();
         return rnode::node::RunNode(config, std::cout, std::cerr);
       }});
  AddClients(app, a, online);

  CLI11_PARSE(app, argc, argv);
  for (const Command& c : online) {
    if (*c.app) return c.run();
  }
  if (absl::Status s = rnode::SetLogLevel(a.log_level); !s.ok()) {
    return Fail(s, 2);
  }
  for (const Command& c : offline) {
    if (*c.app) return c.run();
  }
  return 2;
}

}  // namespace

// Exceptions stop here (the libraries return statuses; CLI11 and the
// standard library may throw).
int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "error: unexpected exception\n";
  }
  return 1;
}

#include "node/tools/genesis_tool.h"

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "casper/contracts/ledger.h"
#include "casper/contracts/names.h"
#include "casper/contracts/system_contracts.h"
#include "casper/execution/deploy_executor.h"
#include "casper/genesis/genesis.h"
#include "casper/genesis/genesis_files.h"
#include "node/tools/deploy_json.h"
#include "rholang/interpreter/reducer.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/space.h"
#include "rspace/storage/kv_store.h"
#include "util/bytes.h"

namespace rnode::node {
namespace {

namespace interp = rholang::interp;

// Column families of the in-memory store the history needs.
constexpr size_t kStoreColumns = 3;

// A genesis state in memory with the runtime over it.
struct World {
  explicit World(const casper::contracts::PosParams& pos)
      : contracts(casper::contracts::ContractsOptions{.pos = pos}) {}
  rspace::InMemoryStore store{kStoreColumns};
  std::unique_ptr<rspace::Space> space;
  casper::contracts::SystemContracts contracts;
  std::unique_ptr<interp::Runtime> runtime;
  interp::CollectingSink output;
  casper::genesis::GenesisParams params;
  casper::genesis::GenesisBlock block;
};

// Reads and parses both files and builds the genesis. Returns the exit code
// (0 on success).
int Build(const GenesisToolOptions& o, World& w, std::ostream& err) {
  if (o.threads < 1) {
    err << "error: --threads must be at least 1\n";
    return 1;
  }
  std::string bonds_text, wallets_text;
  for (auto [path, text] : {std::pair{&o.bonds_path, &bonds_text},
                            std::pair{&o.wallets_path, &wallets_text}}) {
    absl::StatusOr<std::string> read = casper::genesis::ReadGenesisFile(*path);
    if (!read.ok()) {
      err << "error: " << *path << ": " << read.status().message() << "\n";
      return 1;
    }
    *text = *std::move(read);
  }
  auto bonds = casper::genesis::ParseBonds(bonds_text, o.bonds_path);
  if (!bonds.ok()) {
    err << "error: " << bonds.status().message() << "\n";
    return 1;
  }
  auto wallets = casper::genesis::ParseWallets(wallets_text, o.wallets_path);
  if (!wallets.ok()) {
    err << "error: " << wallets.status().message() << "\n";
    return 1;
  }
  w.params.shard_id = o.shard_id;
  w.params.timestamp = o.timestamp;
  w.params.pos = o.pos;
  w.params.bonds = *std::move(bonds);
  w.params.wallets = *std::move(wallets);
  rspace::SpaceOptions so;
  so.term_factory = interp::StoredTermFactory();
  auto space = rspace::Space::Open(&w.store, so);
  if (!space.ok()) {
    err << "internal error: " << space.status().message() << "\n";
    return 2;
  }
  w.space = *std::move(space);
  auto rt = interp::Runtime::Create(
      w.space.get(), w.contracts.RuntimeOptionsFor(o.threads, &w.output));
  if (!rt.ok()) {
    err << "internal error: " << rt.status().message() << "\n";
    return 2;
  }
  w.runtime = *std::move(rt);
  auto block = casper::genesis::CreateGenesis(w.params, w.space.get(),
                                              &w.contracts, w.runtime.get());
  if (!block.ok()) {
    err << "error: " << block.status().message() << "\n";
    return block.status().code() == absl::StatusCode::kInvalidArgument ? 1 : 2;
  }
  w.block = *std::move(block);
  return 0;
}

}  // namespace

int RunGenesis(const GenesisToolOptions& options, std::ostream& out,
               std::ostream& err) {
  World w(options.pos);
  if (int rc = Build(options, w, err); rc != 0) return rc;
  out << "shard: " << w.block.block.shard_id << "\n"
      << "validators: " << w.block.bonds.size() << "\n"
      << "wallets: " << w.params.wallets.size() << "\n"
      << "total supply: " << w.block.total_supply << "\n"
      << "post-state: " << HexEncode(w.block.post_state()) << "\n"
      << "block hash: " << HexEncode(w.block.hash()) << "\n";
  return 0;
}

int RunEvalDeploy(const GenesisToolOptions& options,
                  const std::string& deploy_json, std::ostream& out,
                  std::ostream& err) {
  absl::StatusOr<casper::SignedDeploy> deploy = DeployFromJson(deploy_json);
  if (!deploy.ok()) {
    err << "invalid deploy: " << deploy.status().message() << "\n";
    return 1;
  }
  if (deploy->data().shard_id != options.shard_id) {
    err << "invalid deploy: shardId '" << deploy->data().shard_id
        << "' is not the shard '" << options.shard_id << "'\n";
    return 1;
  }
  World w(options.pos);
  if (int rc = Build(options, w, err); rc != 0) return rc;

  casper::DeployExecutor executor(w.space.get(), &w.contracts, w.runtime.get());
  interp::BlockInfo block;
  block.block_number = 1;
  block.timestamp = deploy->data().timestamp;
  auto balance_now = [&](const std::string& address) -> int64_t {
    absl::StatusOr<int64_t> b =
        casper::contracts::ReadBalance(*w.space, address);
    return b.ok() ? *b : -1;
  };
  absl::StatusOr<casper::DeployOutcome> outcome = executor.Play(*deploy, block);
  if (!outcome.ok()) {
    err << "internal error: " << outcome.status().message() << "\n";
    return 2;
  }
  for (const std::string& line : w.output.out)
    out << "stdout: " << line << "\n";
  for (const std::string& line : w.output.err)
    out << "stderr: " << line << "\n";
  out << "cost: " << outcome->cost << "\n"
      << "charged: " << outcome->charged << "\n"
      << "refunded: " << outcome->refunded << "\n";
  if (outcome->failed()) {
    out << "error (" << casper::DeployFailureName(outcome->failure)
        << "): " << outcome->message << "\n";
  }
  for (const auto& diff : outcome->number_diffs) {
    if (diff.delta == 0) continue;
    std::optional<std::string> address =
        w.contracts.ledger().KnownAddress(diff.channel);
    if (!address.has_value()) {
      out << "balance channel " << HexEncode(diff.channel) << ": "
          << (diff.delta > 0 ? "+" : "") << diff.delta << "\n";
      continue;
    }
    const int64_t after = balance_now(*address);
    out << "balance " << *address << ": " << (after - diff.delta) << " -> "
        << after << "\n";
  }
  absl::StatusOr<Hash32> root = w.space->CreateCheckpoint();
  if (!root.ok()) {
    err << "internal error: " << root.status().message() << "\n";
    return 2;
  }
  out << "post-state: " << HexEncode(*root) << "\n";
  return 0;
}

}  // namespace rnode::node

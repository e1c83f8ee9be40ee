// The composed node in process: a standalone validator on a temporary data
// dir, its deploy admission, proposer, finality, reads and restart.
#include "node/core/node.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "CasperMessage.pb.h"
#include "absl/strings/str_cat.h"
#include "casper/deploy.h"
#include "gtest/gtest.h"
#include "integration/child_process.h"
#include "node/api/grpc_api.h"
#include "node/core/rejoin.h"
#include "node/metrics/metrics.h"
#include "rholang/frontend/ir.h"
#include "rspace/storage/kv_store.h"
#include "tests/eventually.h"

namespace rnode::node {
namespace {

using ::rnode::testing::Eventually;

namespace ir = rholang::ir;
using namespace std::chrono_literals;

// Bounded waits: a standalone node finalizes a deploy within one batching
// window and one block; this is the patience of a slow (sanitizer) build.
constexpr auto kPatience = 60s;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class NodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rnode_core_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    config_.standalone = true;
    config_.dev_mode = true;
    config_.data_dir = dir_.string();
    config_.threads = 2;
    config_.propose_batch_window_ms = 5;
  }
  void TearDown() override {
    node_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Open() {
    registry_ = std::make_unique<metrics::Registry>();
    std::ostringstream out;
    absl::StatusOr<std::unique_ptr<Node>> n =
        Node::Open(config_, hooks_, registry_.get(), out);
    ASSERT_TRUE(n.ok()) << n.status();
    node_ = *std::move(n);
  }
  void Close() { node_.reset(); }

  crypto::Secp256k1PrivateKey Key() {
    std::ifstream in(dir_ / "validator.key");
    std::string hex;
    in >> hex;
    return *crypto::ParseSecp256k1PrivateKey(*HexDecode(hex));
  }

  casper::DeployData Data(std::string term) {
    casper::DeployData d;
    d.term = std::move(term);
    d.timestamp = NowMs() + (counter_++);
    d.phlo_price = 1;
    d.phlo_limit = 100'000;
    d.valid_after_block_number = node_->dag().MaxHeight();
    d.shard_id = "root";
    return d;
  }
  ::casper::DeployDataProto Signed(const casper::DeployData& d) {
    return casper::SignedDeploy::Sign(d, Key())->ToProto();
  }

  // A counter or gauge without labels, as /metrics shows it (-1: absent).
  double Metric(std::string_view name) {
    const std::string text = registry_->Render();
    const std::string key = "\n" + std::string(name) + " ";
    const size_t at = text.find(key);
    if (at == std::string::npos) return -1;
    return std::strtod(text.c_str() + at + key.size(), nullptr);
  }

  // Polls until the deploy is finalized (or the patience runs out).
  // Until the deploy reads FINALIZED, or also FAILED (it ran with an error,
  // its charge kept) when `or_failed`.
  DeployStatus WaitFinalized(const Bytes& id, bool or_failed = false) {
    const auto until = std::chrono::steady_clock::now() + kPatience;
    DeployStatus last;
    while (std::chrono::steady_clock::now() < until) {
      absl::StatusOr<DeployStatus> s = node_->FindDeploy(id);
      if (s.ok()) {
        last = *s;
        if (s->state == DeployStatus::State::kFinalized) return last;
        if (or_failed && s->state == DeployStatus::State::kFailed) return last;
      }
      std::this_thread::sleep_for(5ms);
    }
    return last;
  }

  // Closes the node, opens it without autopropose, admits a deploy of
  // `term` (which no block takes) and closes it again; the deploy's id.
  Bytes LeaveADeployWaiting(std::string term) {
    Close();
    config_.autopropose = false;
    Open();
    absl::StatusOr<Bytes> id = node_->Deploy(Signed(Data(std::move(term))));
    EXPECT_TRUE(id.ok()) << id.status();
    Close();
    return id.value_or(Bytes{});
  }

  std::filesystem::path dir_;
  NodeConfig config_;
  NodeHooks hooks_;
  std::unique_ptr<metrics::Registry> registry_;
  std::unique_ptr<Node> node_;
  int64_t counter_ = 0;
};

ir::ParPtr DeployIdName(const Bytes& id) {
  return ir::ParBuilder()
      .Add(ir::Unforgeable::Make(ir::UnforgeableKind::kDeployId, id))
      .Build();
}

TEST_F(NodeTest, StandaloneMakesGenesisKeyAndFiles) {
  Open();
  EXPECT_TRUE(node_->ready());
  EXPECT_TRUE(node_->is_validator());
  EXPECT_EQ(node_->last_finalized_number(), 0);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "genesis" / "bonds.txt"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "genesis" / "wallets.txt"));
  const auto perms =
      std::filesystem::status(dir_ / "validator.key").permissions();
  EXPECT_EQ(perms & std::filesystem::perms::group_read,
            std::filesystem::perms::none);
  EXPECT_EQ(crypto::Secp256k1PublicKeyOf(Key()), node_->public_key());
  absl::StatusOr<bool> bonded = node_->IsBonded(node_->public_key());
  ASSERT_TRUE(bonded.ok()) << bonded.status();
  EXPECT_TRUE(*bonded);
}

TEST_F(NodeTest, DeployIsProposedFinalizedAndReadable) {
  std::mutex mu;  // the hooks run on the consensus thread
  std::vector<std::string> events;
  auto record = [&](const char* what) {
    return [&mu, &events, what](const casper::block::Block&) {
      std::lock_guard<std::mutex> lock(mu);
      events.push_back(what);
    };
  };
  hooks_.block_created = record("created");
  hooks_.block_added = record("added");
  hooks_.block_finalized = [&mu, &events](const casper::block::Block&,
                                          std::span<const Bytes>) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back("finalized");
  };
  auto seen = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return events;
  };
  Open();
  absl::StatusOr<Bytes> id = node_->Deploy(
      Signed(Data("new deployId(`rho:rchain:deployId`) in { deployId!(42) }")));
  ASSERT_TRUE(id.ok()) << id.status();
  DeployStatus s = WaitFinalized(*id);
  ASSERT_EQ(s.state, DeployStatus::State::kFinalized);
  ASSERT_TRUE(s.block.has_value());
  EXPECT_TRUE(node_->dag().IsFinalized(*s.block));
  EXPECT_EQ(node_->last_finalized_number(), 1);
  absl::StatusOr<std::vector<ir::ParPtr>> data =
      node_->DataAtName(DeployIdName(*id), *s.block, false);
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->size(), 1u);
  ASSERT_NE((*data)[0]->SingleExpr(), nullptr);
  EXPECT_EQ((*data)[0]->SingleExpr()->int_value, 42);
  // The pre-state did not have it.
  data = node_->DataAtName(DeployIdName(*id), *s.block, true);
  ASSERT_TRUE(data.ok());
  EXPECT_TRUE(data->empty());
  // Events came in order, once each (finality is in the DAG just before
  // the hook runs: wait for it).
  const auto until = std::chrono::steady_clock::now() + kPatience;
  while (seen().size() < 3 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(seen(),
            (std::vector<std::string>{"created", "added", "finalized"}));
  EXPECT_EQ(node_->pending_deploys(), 0u);
  const std::string text = registry_->Render();
  EXPECT_NE(text.find("rnode_deploys_received_total 1"), std::string::npos);
  EXPECT_NE(text.find("casper_last_finalized_block_number 1"),
            std::string::npos);
  EXPECT_NE(text.find("\ncasper_dag_window_blocks "), std::string::npos);
  EXPECT_NE(text.find("rnode_deploy_finalization_seconds_count 1"),
            std::string::npos);
}

TEST_F(NodeTest, BlocksAreSpacedUnlessAFullBlockWaits) {
  // The interval is far longer than the test: only a full block may come
  // before it ends.
  config_.min_block_interval_ms = 600'000;
  config_.max_user_deploys_per_block = 2;
  Open();
  absl::StatusOr<Bytes> first = node_->Deploy(Signed(Data("@1!(1)")));
  ASSERT_TRUE(first.ok()) << first.status();
  // The node has made no block yet: the first one is not held back.
  ASSERT_EQ(WaitFinalized(*first).state, DeployStatus::State::kFinalized);
  const int64_t height = node_->dag().MaxHeight();
  absl::StatusOr<Bytes> second = node_->Deploy(Signed(Data("@2!(2)")));
  ASSERT_TRUE(second.ok()) << second.status();
  // Held for the interval: the consensus thread looks at it and sleeps
  // again without a block (a block made first would show below).
  const double idle = Metric("rnode_consensus_idle_total");
  ASSERT_TRUE(Eventually(
      [&] { return Metric("rnode_consensus_idle_total") >= idle + 1; }));
  absl::StatusOr<DeployStatus> waiting = node_->FindDeploy(*second);
  ASSERT_TRUE(waiting.ok()) << waiting.status();
  EXPECT_EQ(waiting->state, DeployStatus::State::kPending);
  EXPECT_EQ(node_->dag().MaxHeight(), height);
  // A second deploy fills a block: both go in at once.
  absl::StatusOr<Bytes> third = node_->Deploy(Signed(Data("@3!(3)")));
  ASSERT_TRUE(third.ok()) << third.status();
  DeployStatus s2 = WaitFinalized(*second);
  DeployStatus s3 = WaitFinalized(*third);
  ASSERT_EQ(s2.state, DeployStatus::State::kFinalized);
  ASSERT_EQ(s3.state, DeployStatus::State::kFinalized);
  EXPECT_EQ(s2.block, s3.block);
  EXPECT_EQ(node_->dag().MaxHeight(), height + 1);
}

TEST_F(NodeTest, AdmissionRefusalsCarryTheirReasons) {
  Open();
  casper::DeployData d = Data("Nil");
  d.shard_id = "elsewhere";
  absl::StatusOr<Bytes> r = node_->Deploy(Signed(d));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "Deploy shardId 'elsewhere' is not as expected network shard "
            "'root'.");

  d = Data("Nil");
  d.phlo_price = 0;  // the default minimum is 1
  r = node_->Deploy(Signed(d));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "Phlo price 0 is less than minimum price 1.");

  ::casper::DeployDataProto tampered = Signed(Data("Nil"));
  tampered.set_term("@0!(1)");
  r = node_->Deploy(tampered);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("signature"), std::string::npos)
      << r.status();

  // The shard's limits (casper/deploy_rules.h), each refused by name and
  // counted by its fault.
  d = Data("Nil");
  d.phlo_limit = 1'000'000'001;  // the default maximum is 1,000,000,000
  r = node_->Deploy(Signed(d));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "Phlo limit 1000000001 is outside this shard's range, 1 to "
            "1000000000.");
  d = Data(std::string(config_.max_deploy_term_bytes + 1, ' '));
  r = node_->Deploy(Signed(d));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "Deploy term is 258049 bytes, more than this shard's limit of "
            "258048 bytes.");
  d = Data("Nil");
  d.valid_after_block_number = node_->dag().MaxHeight() + 51;
  r = node_->Deploy(Signed(d));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("more than 50 blocks above this "
                                      "validator's highest block, 0"),
            std::string::npos)
      << r.status();
  for (const char* fault : {"phlo_limit", "term_too_large", "beyond_horizon",
                            "low_phlo_price", "wrong_shard"}) {
    EXPECT_NE(registry_->Render().find(absl::StrCat(
                  "rnode_deploys_refused_total{reason=\"", fault, "\"} 1")),
              std::string::npos)
        << fault;
  }

  d = Data("Nil");
  d.valid_after_block_number = -100;
  r = node_->Deploy(Signed(d));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
      << r.status();

  d = Data("Nil");
  d.expiration_timestamp = 1;
  r = node_->Deploy(Signed(d));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
      << r.status();

  // Duplicates: while waiting, and once in a block.
  ::casper::DeployDataProto once = Signed(Data("Nil"));
  r = node_->Deploy(once);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(WaitFinalized(*r).state, DeployStatus::State::kFinalized);
  absl::StatusOr<Bytes> again = node_->Deploy(once);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  // Nothing refused reached a block.
  EXPECT_EQ(node_->dag().MaxHeight(), 1);
}

TEST_F(NodeTest, ProposeWithoutDeploysSaysSo) {
  config_.autopropose = false;
  Open();
  absl::StatusOr<Hash32> made = node_->Propose();
  EXPECT_EQ(made.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(made.status().message(), "No new deploys to propose.");
  // Without autopropose a deploy waits for an explicit propose.
  absl::StatusOr<Bytes> id = node_->Deploy(Signed(Data("Nil")));
  ASSERT_TRUE(id.ok());
  // The consensus thread looks at it and sleeps again without a block.
  const double idle = Metric("rnode_consensus_idle_total");
  ASSERT_TRUE(Eventually(
      [&] { return Metric("rnode_consensus_idle_total") >= idle + 1; }));
  EXPECT_EQ(node_->dag().MaxHeight(), 0);
  absl::StatusOr<DeployStatus> pending = node_->FindDeploy(*id);
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(pending->state, DeployStatus::State::kPending);
  EXPECT_FALSE(pending->block.has_value());
  made = node_->Propose();
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(WaitFinalized(*id).block, *made);
}

TEST_F(NodeTest, ExploratoryDeployReadsItsFirstNameAndChangesNothing) {
  Open();
  absl::StatusOr<Exploration> e =
      node_->Explore("new ret, x in { ret!(7) | x!(8) }", std::nullopt, false);
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->data.size(), 1u);
  EXPECT_EQ(e->data[0]->SingleExpr()->int_value, 7);
  EXPECT_GT(e->cost, 0);
  EXPECT_EQ(node_->dag().MaxHeight(), 0);
  absl::StatusOr<Exploration> bad =
      node_->Explore("new x in {", std::nullopt, false);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  // A validator outside dev mode refuses.
  Close();
  config_.dev_mode = false;
  Open();
  EXPECT_EQ(node_->Explore("Nil", std::nullopt, false).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(NodeTest, RestartContinuesFromTheDataDir) {
  Open();
  absl::StatusOr<Bytes> id = node_->Deploy(Signed(Data("@1!(1)")));
  ASSERT_TRUE(id.ok());
  ASSERT_EQ(WaitFinalized(*id).state, DeployStatus::State::kFinalized);
  const Hash32 lfb = *node_->dag().LastFinalized();
  const crypto::Secp256k1PublicKey key = node_->public_key();
  // A deploy acknowledged but not yet in a block survives the restart.
  const Bytes waiting = LeaveADeployWaiting("@2!(2)");
  config_.autopropose = true;
  Open();
  EXPECT_EQ(node_->public_key(), key);
  EXPECT_EQ(node_->dag().LastFinalized(), lfb);
  EXPECT_EQ(WaitFinalized(*id).block, lfb);
  EXPECT_EQ(WaitFinalized(waiting).state, DeployStatus::State::kFinalized);
  EXPECT_EQ(node_->last_finalized_number(), 2);
}

// A data dir marked to join again (node/core/rejoin.h) opens as a new node
// of the same shard: the same genesis alone, the deploy pool kept.
TEST_F(NodeTest, AMarkedDataDirOpensWithTheSameGenesisAlone) {
  Open();
  absl::StatusOr<Bytes> id = node_->Deploy(Signed(Data("@1!(1)")));
  ASSERT_TRUE(id.ok());
  ASSERT_EQ(WaitFinalized(*id).state, DeployStatus::State::kFinalized);
  absl::StatusOr<std::vector<casper::block::Block>> genesis =
      node_->BlocksByHeight(0, 0);
  ASSERT_TRUE(genesis.ok() && genesis->size() == 1) << genesis.status();
  LeaveADeployWaiting("@2!(2)");
  ASSERT_TRUE(MarkForRejoin(dir_.string(), "test").ok());
  Open();
  EXPECT_FALSE(MarkedForRejoin(dir_.string()));
  EXPECT_EQ(node_->dag().size(), 1u);
  EXPECT_EQ(node_->dag().MaxHeight(), 0);
  absl::StatusOr<std::vector<casper::block::Block>> again =
      node_->BlocksByHeight(0, 0);
  ASSERT_TRUE(again.ok() && again->size() == 1) << again.status();
  EXPECT_EQ(again->front().hash, genesis->front().hash);
  EXPECT_EQ(node_->FindDeploy(*id).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(node_->pending_deploys(), 1u);
  EXPECT_FALSE(node_->rejoin_requested());
}

TEST_F(NodeTest, StoredShardWinsOverAnotherName) {
  Open();
  Close();
  config_.shard_name = "other";
  std::ostringstream out;
  metrics::Registry r;
  absl::StatusOr<std::unique_ptr<Node>> n = Node::Open(config_, {}, &r, out);
  EXPECT_EQ(n.status().code(), absl::StatusCode::kFailedPrecondition);
}

// The deploy rules are shard parameters: the genesis parameters file keeps
// them, and a restart with other settings applies the shard's.
TEST_F(NodeTest, TheDeployRulesAreFixedAtGenesis) {
  config_.min_phlo_price = 3;
  config_.max_phlo_limit = 500'000;
  Open();
  Close();
  config_.min_phlo_price = 1;
  config_.max_phlo_limit = 1'000'000'000;
  Open();
  EXPECT_EQ(node_->config().min_phlo_price, 3);
  casper::DeployData d = Data("Nil");
  d.phlo_price = 2;
  absl::StatusOr<Bytes> r = node_->Deploy(Signed(d));
  EXPECT_EQ(r.status().message(), "Phlo price 2 is less than minimum price 3.");
  d = Data("Nil");
  d.phlo_price = 3;
  d.phlo_limit = 500'001;
  r = node_->Deploy(Signed(d));
  EXPECT_EQ(r.status().message(),
            "Phlo limit 500001 is outside this shard's range, 1 to 500000.");
  d.phlo_limit = 500'000;
  r = node_->Deploy(Signed(d));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(WaitFinalized(*r).state, DeployStatus::State::kFinalized);
}

TEST_F(NodeTest, NewShardWithoutGenesisFilesIsRefused) {
  config_.standalone = false;
  std::ostringstream out;
  metrics::Registry r;
  absl::StatusOr<std::unique_ptr<Node>> n = Node::Open(config_, {}, &r, out);
  EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(n.status().message().find("--bonds-file"), std::string::npos);
}

TEST_F(NodeTest, BadGenesisSettingsAreRefusedByName) {
  struct Case {
    void (*set)(NodeConfig&);
    const char* setting;
  };
  for (const Case& c : {
           Case{
               [](NodeConfig& n) { n.pos_vault_transfer_public_key = "04abc"; },
               "pos-vault-transfer-public-key"},
           Case{[](NodeConfig& n) { n.pos_multi_sig_public_keys = "not hex"; },
                "pos-multi-sig-public-keys"},
           Case{[](NodeConfig& n) {
                  n.pos_multi_sig_public_keys = std::string(130, 'a');
                },
                "pos-multi-sig-public-keys"},
           Case{[](NodeConfig& n) {
                  n.pos_multi_sig_public_keys = "04" + std::string(128, 'a');
                  n.pos_multi_sig_quorum = 2;
                },
                "pos-multi-sig-quorum"},
           Case{[](NodeConfig& n) { n.native_token_name = "a\"b"; },
                "native-token"},
       }) {
    NodeConfig config = config_;
    c.set(config);
    std::ostringstream out;
    metrics::Registry r;
    absl::StatusOr<std::unique_ptr<Node>> n = Node::Open(config, {}, &r, out);
    EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument)
        << c.setting;
    EXPECT_NE(n.status().message().find(c.setting), std::string::npos)
        << n.status();
  }
}

// Regression: gRPC's servers set SO_REUSEPORT, so a second node of the
// same user started on an API port already in use shared it (and half the
// clients' calls) instead of refusing to start.
TEST_F(NodeTest, TheApiRefusesAPortAnotherNodeHolds) {
  config_.port_grpc_external = ::rnode::testing::FreePort();
  config_.port_grpc_internal = ::rnode::testing::FreePort();
  Open();
  absl::StatusOr<std::unique_ptr<GrpcApi>> first =
      GrpcApi::Start(node_.get(), config_);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::unique_ptr<GrpcApi>> second =
      GrpcApi::Start(node_.get(), config_);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable)
      << second.status();
  EXPECT_NE(second.status().message().find("external gRPC API"),
            std::string::npos)
      << second.status();
}

TEST_F(NodeTest, ReadOnlyNodeRefusesDeploysAndProposals) {
  Open();
  Close();
  config_.standalone = false;  // no key: the stored shard, read-only
  // Ports of its own: the default ones may be another process's (a shard
  // or a test running beside it made this Open fail, and the test then
  // crashed on the null node).
  config_.port_protocol = ::rnode::testing::FreePort();
  config_.port_discovery = ::rnode::testing::FreePort();
  Open();
  ASSERT_NE(node_, nullptr);
  EXPECT_FALSE(node_->is_validator());
  absl::StatusOr<Bytes> r = node_->Deploy(::casper::DeployDataProto());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(node_->Propose().status().code(),
            absl::StatusCode::kFailedPrecondition);
  // Reads still work, and so does exploring (a read-only node may).
  EXPECT_TRUE(node_->LastFinalizedBlock().ok());
  EXPECT_TRUE(node_->Explore("Nil", std::nullopt, false).ok());
}

TEST_F(NodeTest, ValidatorWithoutStakeRefusesDeploys) {
  Open();
  const ::casper::DeployDataProto deploy = Signed(Data("Nil"));
  Close();
  // The stored shard, joined with a key the genesis bonds do not name (a
  // validator that was never bonded, or has been slashed).
  config_.standalone = false;
  config_.port_protocol = ::rnode::testing::FreePort();
  config_.port_discovery = ::rnode::testing::FreePort();
  crypto::Secp256k1PrivateKey other = Key();
  other[31] ^= 1;
  config_.validator_private_key = HexEncode(other);
  Open();
  ASSERT_TRUE(node_->is_validator());
  absl::StatusOr<Bytes> r = node_->Deploy(deploy);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().message(),
            "Deploy was not accepted: this validator has no stake in the last "
            "finalized block, so it proposes no blocks; deploy to a bonded "
            "validator.");
  EXPECT_EQ(node_->pending_deploys(), 0u);
}

TEST_F(NodeTest, AFullDiskRefusesDeploysAndTheNodeGoesOnWhenSpaceReturns) {
  config_.fault_injection = true;
  Open();
  absl::StatusOr<Bytes> before = node_->Deploy(Signed(Data("@1!(1)")));
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(WaitFinalized(*before).state, DeployStatus::State::kFinalized);
  const int64_t lfb = node_->last_finalized_number();

  ASSERT_TRUE(node_->SetDiskFull(true).ok());
  EXPECT_TRUE(node_->disk_full_injected());
  const ::casper::DeployDataProto during = Signed(Data("@2!(2)"));
  absl::StatusOr<Bytes> r = node_->Deploy(during);
  EXPECT_TRUE(rspace::IsNoSpace(r.status())) << r.status();
  EXPECT_EQ(r.status().message(),
            "Deploy was not accepted: this validator's disk is full, so it "
            "cannot store the deploy; retry once space returns or deploy to "
            "another validator.");
  EXPECT_EQ(node_->pending_deploys(), 0u);
  EXPECT_EQ(node_->last_finalized_number(), lfb);
  EXPECT_NE(registry_->Render().find(
                "rnode_deploys_refused_total{reason=\"disk_full\"} 1"),
            std::string::npos)
      << registry_->Render();

  // Space returns: RocksDB resumes (its own recovery polls the free space
  // every few seconds; the store's writes ask too), and the same deploy
  // goes through to finality.
  ASSERT_TRUE(node_->SetDiskFull(false).ok());
  const auto lifted = std::chrono::steady_clock::now();
  r = node_->Deploy(during);
  for (int i = 0; i < 300 && !r.ok(); ++i) {
    ASSERT_TRUE(rspace::IsNoSpace(r.status())) << r.status();
    std::this_thread::sleep_for(100ms);
    r = node_->Deploy(during);
  }
  ASSERT_TRUE(r.ok()) << r.status();
  std::cout << "writes resumed "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             lifted)
                   .count()
            << " s after space returned\n";
  EXPECT_EQ(WaitFinalized(*r).state, DeployStatus::State::kFinalized);
  EXPECT_GT(node_->last_finalized_number(), lfb);
  // Both survive a restart.
  Close();
  Open();
  EXPECT_EQ(node_->FindDeploy(*before)->state, DeployStatus::State::kFinalized);
  EXPECT_EQ(node_->FindDeploy(*r)->state, DeployStatus::State::kFinalized);
}

// Below the free-space floor (storage.min-free-bytes) deploys are refused
// as disk_full before any write fails, and the gauges say why; with the
// floor off the same deploy goes through.
TEST_F(NodeTest, BelowTheFreeSpaceFloorDeploysAreRefusedAsDiskFull) {
  config_.min_free_bytes = int64_t{1} << 60;  // more than any disk here
  Open();
  const ::casper::DeployDataProto d = Signed(Data("@3!(3)"));
  absl::StatusOr<Bytes> r = node_->Deploy(d);
  EXPECT_TRUE(rspace::IsNoSpace(r.status())) << r.status();
  EXPECT_NE(r.status().message().find(
                "bytes free, below its floor of 1152921504606846976 "
                "(storage.min-free-bytes)"),
            std::string::npos)
      << r.status();
  EXPECT_EQ(node_->pending_deploys(), 0u);
  EXPECT_NE(registry_->Render().find(
                "rnode_deploys_refused_total{reason=\"disk_full\"} 1"),
            std::string::npos);
  EXPECT_GT(Metric("rnode_disk_free_bytes"), 0);
  EXPECT_EQ(Metric("rnode_disk_min_free_bytes"), 1152921504606846976.0);
  Close();
  config_.min_free_bytes = 0;
  Open();
  r = node_->Deploy(d);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(WaitFinalized(*r).state, DeployStatus::State::kFinalized);
  EXPECT_EQ(Metric("rnode_disk_min_free_bytes"), 0);
}

TEST_F(NodeTest, FaultInjectionIsRefusedUnlessSwitchedOn) {
  Open();
  EXPECT_EQ(node_->SetDiskFull(true).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(node_->SetIsolated(true).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(node_->Deploy(Signed(Data("Nil"))).ok());
}

TEST_F(NodeTest, BlockLookupsByPrefixAndHeight) {
  Open();
  absl::StatusOr<Bytes> id = node_->Deploy(Signed(Data("Nil")));
  ASSERT_TRUE(id.ok());
  const Hash32 block = *WaitFinalized(*id).block;
  const std::string hex = HexEncode(block);
  absl::StatusOr<casper::block::Block> b = node_->FindBlock(hex.substr(0, 8));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->hash, block);
  EXPECT_EQ(node_->FindBlock("abc").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(node_->FindBlock("zzzzzzzz").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(node_->FindBlock(std::string(64, '0')).status().code(),
            absl::StatusCode::kNotFound);
  absl::StatusOr<std::vector<casper::block::Block>> blocks =
      node_->BlocksByHeight(0, 10);
  ASSERT_TRUE(blocks.ok());
  ASSERT_EQ(blocks->size(), 2u);
  EXPECT_EQ((*blocks)[0].hash, block);  // newest first
  absl::StatusOr<std::vector<casper::block::Block>> chain = node_->MainChain(5);
  ASSERT_TRUE(chain.ok());
  ASSERT_EQ(chain->size(), 2u);
  EXPECT_EQ((*chain)[0].hash, block);
}

// Issue 43: a range was bounded by count only (max-blocks-limit heights,
// each block up to max-block-bytes), so one request could make the node
// read and decode gigabytes. Beyond max-blocks-bytes stored it is refused
// before decoding; a shorter range is served.
// A deploy that runs out of phlo is in a finalized block with its charge,
// not its effect: it reads FAILED, not FINALIZED (the block's finality is
// not the deploy's), and the gRPC/HTTP views say the same (they share
// FindDeploy).
TEST_F(NodeTest, ADeployThatRanOutOfPhloReadsFailed) {
  Open();
  casper::DeployData d = Data("@0!(1) | @0!(2) | @0!(3) | @0!(4)");
  d.phlo_limit = 1;
  absl::StatusOr<Bytes> id = node_->Deploy(Signed(d));
  ASSERT_TRUE(id.ok()) << id.status();
  const DeployStatus s = WaitFinalized(*id, /*or_failed=*/true);
  EXPECT_EQ(s.state, DeployStatus::State::kFailed);
  ASSERT_TRUE(s.block.has_value());
  EXPECT_TRUE(node_->dag().IsFinalized(*s.block));
  EXPECT_EQ(s.rejection_count, 0u);
}

TEST_F(NodeTest, ABlockRangeReadsAtMostMaxBlocksBytes) {
  config_.max_blocks_bytes = 1 << 20;
  Open();
  Hash32 last{};
  for (int i = 0; i < 6; ++i) {  // six blocks of one 200 KiB term each
    absl::StatusOr<Bytes> id = node_->Deploy(Signed(
        Data(absl::StrCat("@0!(\"", std::string(200 << 10, 'a' + i), "\")"))));
    ASSERT_TRUE(id.ok()) << id.status();
    // Such a term runs out of phlo (FAILED): the block holds it either way.
    const DeployStatus s = WaitFinalized(*id, /*or_failed=*/true);
    ASSERT_TRUE(s.block.has_value());
    last = *s.block;
  }
  absl::StatusOr<std::vector<casper::block::Block>> all =
      node_->BlocksByHeight(0, 100);
  EXPECT_EQ(all.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(all.status().message().find("max-blocks-bytes"), std::string::npos)
      << all.status();
  EXPECT_EQ(node_->MainChain(100).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::vector<casper::block::Block>> top =
      node_->BlocksByHeight(node_->dag().MaxHeight(), 100);
  ASSERT_TRUE(top.ok()) << top.status();
  ASSERT_EQ(top->size(), 1u);
  EXPECT_TRUE(node_->dag().Meta(last).ok());
}

}  // namespace
}  // namespace rnode::node

// kill -9 of a standalone validator while a client streams deploys, again
// and again: every deploy the node acknowledged is, after each restart, in a
// block or still waiting in the pool; nothing finalized before a kill is
// ever unfinalized; at the end every acknowledged deploy is finalized.
//
// Starts the real `rnode run --standalone` (RNODE_BIN) on 127.0.0.1 with
// ephemeral ports and talks to it over gRPC. Randomized kill times print
// their seed.
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "DeployServiceV1.grpc.pb.h"
#include "casper/deploy.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "integration/child_process.h"
#include "tests/sanitizer.h"
#include "tests/test_seed.h"
#include "util/bytes.h"

namespace rnode {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Kills per run; sanitizer builds start the node several times slower.
constexpr int kKills =
    testing::kUnderAddressSanitizer || testing::kUnderThreadSanitizer ? 3 : 10;
// Patience for start-up and for finality (bounded waits, never a sleep
// for synchronisation).
constexpr auto kStartPatience = 60s;
constexpr auto kFinalityPatience = 120s;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class NodeProcess {
 public:
  NodeProcess(std::string bin, std::filesystem::path dir)
      : bin_(std::move(bin)), dir_(std::move(dir)) {
    const std::vector<int> ports = testing::FreePorts(4);
    grpc_ = ports[0];
    internal_ = ports[1];
    http_ = ports[2];
    admin_ = ports[3];
  }

  void Start() {
    ASSERT_TRUE(process_.Spawn(
        {bin_, "run", "--standalone", "--data-dir", dir_.string(), "--api-host",
         "127.0.0.1", "--api-port-grpc-external", std::to_string(grpc_),
         "--api-port-grpc-internal", std::to_string(internal_),
         "--api-port-http", std::to_string(http_), "--api-port-admin-http",
         std::to_string(admin_), "--threads", "2"},
        (dir_.parent_path() / "node.log").string()));
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(grpc_),
                                   grpc::InsecureChannelCredentials());
    stub_ = ::casper::v1::DeployService::NewStub(channel_);
  }

  // Waits until status says ready; false when the process exits or the
  // patience runs out.
  bool WaitReady() {
    const auto until = Clock::now() + kStartPatience;
    while (Clock::now() < until) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + 1s);
      ::casper::v1::StatusResponse r;
      if (stub_->status(&ctx, google::protobuf::Empty(), &r).ok() &&
          r.status().isready()) {
        return true;
      }
      if (!process_.Alive()) return false;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

  void Kill(int sig) { process_.Kill(sig); }

  ::casper::v1::DeployService::Stub& stub() { return *stub_; }
  int exit_status() const { return process_.exit_status(); }

 private:
  std::string bin_;
  std::filesystem::path dir_;
  int grpc_ = 0, internal_ = 0, http_ = 0, admin_ = 0;
  testing::ChildProcess process_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<::casper::v1::DeployService::Stub> stub_;
};


// Where a deploy stands per the node: 0 unknown, 1 pending, 2 finalized.
int DeployState(::casper::v1::DeployService::Stub& stub, const Bytes& sig) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 5s);
  ::casper::DeployFinalizationStatusQuery q;
  q.set_deploysig(std::string(sig.begin(), sig.end()));
  ::casper::v1::DeployFinalizationStatusResponse r;
  if (!stub.deployFinalizationStatus(&ctx, q, &r).ok() || r.has_error()) {
    return 0;
  }
  return r.status().state() == ::casper::DEPLOY_STATE_FINALIZED ? 2 : 1;
}

// The finalized blocks among the newest (a query returns at most the
// node's max-blocks-limit).
std::vector<std::string> FinalizedChain(
    ::casper::v1::DeployService::Stub& stub) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 5s);
  ::casper::BlocksQueryByHeight q;
  q.set_startblocknumber(0);
  q.set_endblocknumber(1'000'000);
  auto reader = stub.getBlocksByHeights(&ctx, q);
  ::casper::v1::BlockInfoResponse r;
  std::vector<std::string> out;
  while (reader->Read(&r)) {
    if (r.blockinfo().isfinalized()) out.push_back(r.blockinfo().blockhash());
  }
  (void)reader->Finish();
  return out;
}

TEST(NodeKillTest, AcknowledgedDeploysSurviveKillNine) {
  const uint64_t seed = testing::TestSeed("NodeKillTest", 17);
  std::mt19937_64 rng(seed);
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() /
      ("rnode_kill_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  const std::filesystem::path data = root / "data";

  NodeProcess node(testing::RnodeBinary(RNODE_BIN_PATH), data);
  node.Start();
  ASSERT_TRUE(node.WaitReady()) << "see " << (root / "node.log");
  std::string key_hex;
  std::ifstream(data / "validator.key") >> key_hex;
  const crypto::Secp256k1PrivateKey key =
      *crypto::ParseSecp256k1PrivateKey(*HexDecode(key_hex));

  std::vector<Bytes> acked;
  std::set<std::string> finalized_seen;
  int64_t counter = 0;
  for (int round = 0; round < kKills; ++round) {
    // A stream of deploys from one client thread until the kill.
    std::atomic<bool> stop{false};
    std::mutex mu;
    std::vector<Bytes> round_acked;
    std::thread sender([&] {
      int64_t valid_after = 0;
      while (!stop.load()) {
        // As a client does: validAfterBlockNumber is the node's latest
        // block (a deploy's window is 50 blocks from it).
        if (counter % 16 == 0) {
          grpc::ClientContext ctx;
          ctx.set_deadline(std::chrono::system_clock::now() + 2s);
          ::casper::v1::StatusResponse r;
          if (node.stub().status(&ctx, google::protobuf::Empty(), &r).ok()) {
            valid_after =
                std::max<int64_t>(0, r.status().lastfinalizedblocknumber());
          }
        }
        casper::DeployData d;
        d.term = "@\"kill-test\"!(" + std::to_string(counter) + ")";
        d.timestamp = NowMs() * 1000 + (counter++ % 1000);
        d.phlo_price = 1;
        d.phlo_limit = 100'000;
        d.valid_after_block_number = valid_after;
        d.shard_id = "root";
        absl::StatusOr<casper::SignedDeploy> s =
            casper::SignedDeploy::Sign(d, key);
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + 2s);
        ::casper::v1::DeployResponse r;
        if (node.stub().doDeploy(&ctx, s->ToProto(), &r).ok() &&
            r.has_result()) {
          std::lock_guard<std::mutex> lock(mu);
          round_acked.push_back(s->sig());
        }
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + rng() % 500));
    for (const std::string& h : FinalizedChain(node.stub())) {
      finalized_seen.insert(h);
    }
    node.Kill(SIGKILL);
    stop = true;
    sender.join();
    acked.insert(acked.end(), round_acked.begin(), round_acked.end());

    node.Start();
    ASSERT_TRUE(node.WaitReady())
        << "restart " << round << " failed; see " << (root / "node.log");
    // Every acknowledged deploy is known: in a block or waiting.
    for (const Bytes& sig : acked) {
      ASSERT_NE(DeployState(node.stub(), sig), 0)
          << "round " << round << ": acknowledged deploy " << HexEncode(sig)
          << " was lost";
    }
    // Nothing finalized before is unfinalized now.
    for (const std::string& h : finalized_seen) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + 5s);
      ::casper::IsFinalizedQuery q;
      q.set_hash(h);
      ::casper::v1::IsFinalizedResponse r;
      ASSERT_TRUE(node.stub().isFinalized(&ctx, q, &r).ok());
      ASSERT_TRUE(r.isfinalized()) << "block " << h << " lost its finality";
    }
  }
  ASSERT_GT(acked.size(), 0u);
  // The node finishes what it acknowledged.
  const auto until = Clock::now() + kFinalityPatience;
  size_t finalized = 0;
  while (Clock::now() < until) {
    finalized = 0;
    for (const Bytes& sig : acked)
      finalized += DeployState(node.stub(), sig) == 2;
    if (finalized == acked.size()) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(finalized, acked.size());
  std::printf("NodeKillTest: %d kills, %zu deploys acknowledged, all %s\n",
              kKills, acked.size(),
              finalized == acked.size() ? "finalized" : "NOT finalized");
  node.Kill(SIGTERM);
  EXPECT_TRUE(WIFEXITED(node.exit_status()) &&
              WEXITSTATUS(node.exit_status()) == 0)
      << "SIGTERM did not shut the node down cleanly";
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace rnode

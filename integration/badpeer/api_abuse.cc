#include "integration/badpeer/api_abuse.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "DeployServiceV1.grpc.pb.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "casper/deploy.h"
#include "crypto/secp256k1.h"
#include "grpcpp/grpcpp.h"
#include "integration/badpeer/block_peer.h"
#include "util/bytes.h"
#include "util/mutex.h"

namespace rnode::badpeer {
namespace {

constexpr auto kDeployCallDeadline = std::chrono::seconds(10);
const char* const kKinds[] = {"unfunded", "horizon", "free"};

// The deploy of kind `kind`, number `i`, signed by `key`.
casper::DeployData BadDeploy(const std::string& kind, int i,
                             const std::string& shard_id) {
  casper::DeployData d;
  d.term = absl::StrCat("@\"hostile\"!(", i, ")");
  d.timestamp = 1'700'000'000'000 + i;
  d.phlo_price = 1;
  d.phlo_limit = 100'000;
  d.shard_id = shard_id;
  if (kind == "horizon") d.valid_after_block_number = 1'000'000'000'000;
  if (kind == "free") {
    d.phlo_price = 0;
    d.phlo_limit = int64_t{1} << 62;
  }
  return d;
}

// A refusal message cut at its first digit: one rule's messages together.
std::string Category(const std::string& message) {
  const auto digit = std::find_if(message.begin(), message.end(),
                                  [](char c) { return c >= '0' && c <= '9'; });
  return std::string(message.begin(), digit);
}

}  // namespace

std::map<std::string, AbuseTally> AbuseDeployApi(const std::string& grpc_target,
                                                 const std::string& shard_id,
                                                 int count, int threads,
                                                 uint64_t seed) {
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel(grpc_target, grpc::InsecureChannelCredentials());
  std::unique_ptr<::casper::v1::DeployService::Stub> stub =
      ::casper::v1::DeployService::NewStub(channel);
  Mutex mu;
  std::map<std::string, AbuseTally> tallies;
  std::atomic<int> next{0};
  const int total = count * static_cast<int>(std::size(kKinds));
  std::vector<std::thread> workers;
  for (int t = 0; t < std::max(1, threads); ++t) {
    workers.emplace_back([&, t] {
      std::mt19937_64 rng(seed + static_cast<uint64_t>(t));
      for (int n = next++; n < total; n = next++) {
        const std::string kind = kKinds[n % std::size(kKinds)];
        absl::StatusOr<casper::SignedDeploy> deploy =
            casper::SignedDeploy::Sign(BadDeploy(kind, n, shard_id),
                                       FreshKey(rng));
        std::string outcome;
        bool accepted = false;
        if (!deploy.ok()) {
          outcome = "local: " + std::string(deploy.status().message());
        } else {
          grpc::ClientContext ctx;
          ctx.set_deadline(std::chrono::system_clock::now() +
                           kDeployCallDeadline);
          ::casper::v1::DeployResponse reply;
          const grpc::Status status =
              stub->doDeploy(&ctx, deploy->ToProto(), &reply);
          if (!status.ok()) {
            outcome =
                absl::StrCat("grpc ", static_cast<int>(status.error_code()));
          } else if (reply.has_error()) {
            outcome = Category(absl::StrJoin(reply.error().messages(), "; "));
          } else {
            accepted = true;
          }
        }
        MutexLock lock(&mu);
        AbuseTally& tally = tallies[kind];
        ++tally.sent;
        if (accepted) {
          ++tally.accepted;
        } else {
          ++tally.refused[outcome];
        }
      }
    });
  }
  for (std::thread& w : workers) w.join();
  return tallies;
}

}  // namespace rnode::badpeer

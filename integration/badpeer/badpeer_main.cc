// rnode-badpeer: a misbehaving peer against one node of a running shard
// (docs/reliability.md "bad-peer"; scripts/chaos runs it). It sends what
// each named attack says and prints, per attack, one JSON line with what
// the node answered; the node's health and the shard's verdicts are the
// caller's to judge.
//
//   rnode-badpeer --target rnode://<id>@127.0.0.1?protocol=P&discovery=D
//                 --network-id local-shard
//                 [--attacks garbage,oversized,flood,bad-signature,
//                            unbonded,equivocation,orphans,deploys]
//                 [--block HEX] [--equivocate HEX --equivocator-key-file F]
//                 [--seed N] [--flood-count N] [--orphan-count N]
//                 [--api-grpc HOST:PORT] [--deploy-count N]
//
// bad-signature and unbonded forge from --block (any block the target
// has); equivocation re-signs --equivocate (a block of the validator whose
// key is in --equivocator-key-file, hex) with other extra bytes. orphans
// streams --orphan-count blocks from fresh keys whose parent nobody has.
// deploys sends --deploy-count deploys of each kind api_abuse.h names
// (unfunded, beyond the horizon, free) to the node's external gRPC API at
// --api-grpc. The default is the first six.
//
// Two attacks hold the node for --hold-seconds (or until SIGTERM/SIGINT)
// and run only when named, without the others:
//   sybil        --sybil-count fresh identities join, and the admitted ones
//                stay live peers; a line when they joined, one at the end.
//   fake-holder  a peer proving an unbonded validator key (--shard-id)
//                that answers every DeployData as held; a line when it is
//                connected, a line per deploy offered, one at the end.
//   impostor     a discovery server naming --victim-id at its own ports,
//                and a transport of its own key there; a line when it is
//                up, one when the target looked it up, one whenever the
//                handshakes and packets it got change, one at the end.
//
// Exit status: 0 when every attack ran, 1 when one could not (no
// connection, a block the target did not serve), 2 on a usage error.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "casper/block/block.h"
#include "crypto/secp256k1.h"
#include "integration/badpeer/api_abuse.h"
#include "integration/badpeer/block_peer.h"
#include "integration/badpeer/impostor.h"
#include "integration/badpeer/wire.h"
#include "nlohmann/json.hpp"
#include "node/p2p/peer.h"
#include "util/bytes.h"

namespace rnode::badpeer {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr int kExitRan = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

constexpr int kGarbageFrames = 200;
// Above the node's receive limit: max(256 KiB unary, 1 MiB chunk) + 4 KiB
// envelope (node/p2p/transport.cc).
constexpr size_t kOversizedBytes = 2 << 20;
// Far above the 200 MiB stream limit, still a valid int32 length.
constexpr int32_t kHugeStreamBytes = 1 << 30;
constexpr auto kConnectPatience = 15s;
constexpr auto kFetchPatience = 15s;
// A sent block is queued; the transport streams it within this long.
constexpr auto kSendSettle = 500ms;
// Threads of the deploys attack: calls in flight at once.
constexpr int kDeployThreads = 8;

const std::vector<std::string> kAttacks = {
    "garbage",  "oversized",    "flood",   "bad-signature",
    "unbonded", "equivocation", "orphans", "deploys"};
// Named only, alone: they hold the node until --hold-seconds or a signal.
const std::vector<std::string> kHoldingAttacks = {"sybil", "fake-holder",
                                                  "impostor"};

// Set by SIGTERM and SIGINT (a lock-free atomic: safe in a handler).
std::atomic<bool> g_stop{false};
void OnStopSignal(int) { g_stop.store(true); }

json StatusJson(const grpc::Status& s) {
  return json{{"code", static_cast<int>(s.error_code())},
              {"message", s.error_message()}};
}

json CodesJson(const std::map<int, uint64_t>& codes) {
  json out = json::object();
  for (auto [code, n] : codes) out[std::to_string(code)] = n;
  return out;
}

json TallyJson(const SendTally& t) {
  return json{{"acknowledged", t.acked},
              {"busy", t.busy},
              {"shed", t.shed},
              {"other_errors", t.other_errors},
              {"failed", CodesJson(t.failed)}};
}

void Print(const json& line) {
  std::cout << line.dump() << std::endl;  // one line per attack, flushed
}

absl::StatusOr<Hash32> ParseHash(const std::string& hex) {
  return HexDecodeFixed<32>(hex);
}

absl::StatusOr<crypto::Secp256k1PrivateKey> ReadKey(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<crypto::Secp256k1PrivateKey> key =
      crypto::ParseSecp256k1PrivateKeyHex(text.str());
  if (!key.ok()) {
    return absl::InvalidArgumentError(path + ": " +
                                      std::string(key.status().message()));
  }
  return key;
}

struct Args {
  std::string target;
  std::string network_id;
  std::string attacks;
  std::string block;
  std::string equivocate;
  std::string key_file;
  uint64_t seed = 0;
  int flood_count = 5000;
  int orphan_count = 200;
  std::string api_grpc;
  int deploy_count = 100;
  int sybil_count = 200;
  int hold_seconds = 60;
  std::string shard_id = "root";
  std::string victim_id;
};

// The holding attacks (kHoldingAttacks) in `wanted`, together, until
// --hold-seconds pass or a signal comes.
int RunHolding(const Args& a, const node::p2p::PeerNode& target,
               const std::set<std::string>& wanted, std::mt19937_64& rng) {
  std::signal(SIGTERM, OnStopSignal);
  std::signal(SIGINT, OnStopSignal);
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::seconds(a.hold_seconds);
  std::unique_ptr<BlockPeer> holder;
  if (wanted.contains("fake-holder")) {
    PeerPose pose;
    pose.statement_key = FreshKey(rng);
    pose.shard_id = a.shard_id;
    pose.hold_deploys = true;
    absl::StatusOr<std::unique_ptr<BlockPeer>> peer =
        BlockPeer::Connect(target, a.network_id, kConnectPatience, pose);
    if (!peer.ok()) {
      Print(json{{"attack", "fake-holder"},
                 {"ran", false},
                 {"error", peer.status().ToString()}});
      return kExitFailed;
    }
    holder = *std::move(peer);
    Print(json{{"attack", "fake-holder"},
               {"connected", true},
               {"validator",
                HexEncode(crypto::Secp256k1PublicKeyOf(*pose.statement_key))}});
  }
  std::unique_ptr<Impostor> impostor;
  bool looked_up = false;
  uint64_t handshakes = 0, packets = 0;
  if (wanted.contains("impostor")) {
    absl::StatusOr<Bytes> victim = HexDecode(a.victim_id);
    if (!victim.ok() || victim->size() != 20) {
      std::cerr << "rnode-badpeer: impostor needs --victim-id (40 hex)\n";
      return kExitUsage;
    }
    absl::StatusOr<std::unique_ptr<Impostor>> started =
        Impostor::Start(target, a.network_id, *victim);
    if (!started.ok()) {
      Print(json{{"attack", "impostor"},
                 {"ran", false},
                 {"error", started.status().ToString()}});
      return kExitFailed;
    }
    impostor = *std::move(started);
    Print(json{{"attack", "impostor"},
               {"ready", true},
               {"address", impostor->Address()}});
  }
  std::atomic<bool> stop_sybils{false};
  SybilResult sybils;
  std::thread sybil_thread;
  if (wanted.contains("sybil")) {
    sybil_thread = std::thread([&] {
      sybils = Sybils(target.ProtocolTarget(), a.network_id, a.sybil_count,
                      std::chrono::seconds(1), stop_sybils,
                      [](const SybilResult& r) {
                        Print(json{{"attack", "sybil"},
                                   {"joined", true},
                                   {"identities", r.identities},
                                   {"admitted", r.admitted},
                                   {"refused", r.refused},
                                   {"codes", CodesJson(r.codes)}});
                      });
    });
  }
  uint64_t offered = 0;
  while (!g_stop.load() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(100ms);
    if (impostor != nullptr && !looked_up && impostor->LookedUpBy(target.id)) {
      looked_up = true;
      Print(json{{"attack", "impostor"}, {"looked_up", true}});
    }
    if (impostor != nullptr && (impostor->Handshakes() != handshakes ||
                                impostor->PacketsIn() != packets)) {
      handshakes = impostor->Handshakes();
      packets = impostor->PacketsIn();
      Print(json{{"attack", "impostor"},
                 {"handshakes", handshakes},
                 {"packets", packets}});
    }
    if (holder != nullptr && holder->DeploysOffered() > offered) {
      offered = holder->DeploysOffered();
      Print(json{{"attack", "fake-holder"}, {"deploys_offered", offered}});
    }
  }
  stop_sybils = true;
  if (sybil_thread.joinable()) sybil_thread.join();
  if (holder != nullptr) {
    Print(json{{"attack", "fake-holder"},
               {"ran", true},
               {"deploys_offered", holder->DeploysOffered()},
               {"connected_at_end", holder->Connected()}});
  }
  if (impostor != nullptr) {
    Print(json{{"attack", "impostor"},
               {"ran", true},
               {"looked_up", looked_up},
               {"handshakes", impostor->Handshakes()},
               {"packets", impostor->PacketsIn()}});
  }
  if (wanted.contains("sybil")) {
    Print(json{{"attack", "sybil"},
               {"ran", true},
               {"identities", sybils.identities},
               {"admitted", sybils.admitted},
               {"refused", sybils.refused},
               {"keepalive_failures", sybils.keepalive_failures}});
  }
  return kExitRan;
}

// One block attack: forge, send, report. False when it could not run.
bool RunBlockAttack(BlockPeer& peer, const std::string& name,
                    const std::string& hex,
                    const std::function<absl::StatusOr<casper::block::Block>(
                        casper::block::Block)>& forge) {
  json line{{"attack", name}};
  absl::StatusOr<Hash32> hash = ParseHash(hex);
  absl::StatusOr<casper::block::Block> real =
      hash.ok() ? peer.Fetch(*hash, kFetchPatience)
                : absl::StatusOr<casper::block::Block>(hash.status());
  absl::StatusOr<casper::block::Block> forged =
      real.ok() ? forge(*std::move(real)) : real;
  absl::Status sent =
      forged.ok() ? peer.Send(*forged) : absl::Status(forged.status());
  if (sent.ok()) std::this_thread::sleep_for(kSendSettle);
  line["ran"] = sent.ok();
  if (!sent.ok()) line["error"] = sent.ToString();
  if (forged.ok()) {
    line["block"] = HexEncode(forged->hash);
    line["sender"] = HexEncode(forged->sender);
    line["seq_num"] = forged->seq_num;
    line["number"] = forged->number();
  }
  line["still_connected"] = peer.Connected();
  Print(line);
  return sent.ok();
}

int Run(const Args& a) {
  absl::StatusOr<node::p2p::PeerNode> target =
      node::p2p::ParsePeerAddress(a.target);
  if (!target.ok()) {
    std::cerr << "rnode-badpeer: --target: " << target.status().message()
              << "\n";
    return kExitUsage;
  }
  std::set<std::string> wanted;
  int holding = 0;
  const std::vector<std::string> names =
      absl::StrSplit(a.attacks, ',', absl::SkipEmpty());
  for (const std::string& w : names) {
    const bool holds = std::find(kHoldingAttacks.begin(), kHoldingAttacks.end(),
                                 w) != kHoldingAttacks.end();
    if (!holds &&
        std::find(kAttacks.begin(), kAttacks.end(), w) == kAttacks.end()) {
      std::cerr << "rnode-badpeer: unknown attack '" << w << "'\n";
      return kExitUsage;
    }
    holding += holds ? 1 : 0;
    wanted.emplace(w);
  }
  if (holding > 0 && holding != static_cast<int>(wanted.size())) {
    std::cerr
        << "rnode-badpeer: sybil, fake-holder and impostor run without the "
           "other attacks\n";
    return kExitUsage;
  }
  if ((wanted.contains("bad-signature") || wanted.contains("unbonded")) &&
      a.block.empty()) {
    std::cerr << "rnode-badpeer: bad-signature and unbonded need --block\n";
    return kExitUsage;
  }
  if (wanted.contains("deploys") && a.api_grpc.empty()) {
    std::cerr << "rnode-badpeer: deploys needs --api-grpc\n";
    return kExitUsage;
  }
  if (wanted.contains("equivocation") &&
      (a.equivocate.empty() || a.key_file.empty())) {
    std::cerr << "rnode-badpeer: equivocation needs --equivocate and "
                 "--equivocator-key-file\n";
    return kExitUsage;
  }
  std::mt19937_64 rng(a.seed);
  if (holding > 0) return RunHolding(a, *target, wanted, rng);
  const std::string wire_target = target->ProtocolTarget();
  bool all_ran = true;

  if (wanted.contains("garbage")) {
    const GarbageResult r =
        SendGarbage(wire_target, a.network_id, kGarbageFrames, rng);
    Print(json{{"attack", "garbage"},
               {"ran", true},
               {"frames", r.frames},
               {"accepted", r.accepted},
               {"codes", CodesJson(r.codes)}});
  }
  if (wanted.contains("oversized")) {
    const OversizedResult r = SendOversized(
        wire_target, a.network_id, kOversizedBytes, kHugeStreamBytes, rng);
    json broken = json::array();
    for (const auto& b : r.broken) {
      broken.push_back(json{{"what", b.what},
                            {"stream", StatusJson(b.stream)},
                            {"next_send", StatusJson(b.next_send)}});
    }
    Print(json{{"attack", "oversized"},
               {"ran", true},
               {"unary", StatusJson(r.unary)},
               {"huge_stream", StatusJson(r.huge_stream)},
               {"broken_streams", broken}});
  }
  if (wanted.contains("flood")) {
    const Sender sender = MakeSender(a.network_id);
    const auto start = std::chrono::steady_clock::now();
    const SendTally t =
        Flood(wire_target, sender, "HasBlockRequest", a.flood_count, rng());
    Print(json{{"attack", "flood"},
               {"ran", true},
               {"packets", a.flood_count},
               {"seconds", std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - start)
                               .count()},
               {"answers", TallyJson(t)}});
  }
  if (wanted.contains("deploys")) {
    const auto start = std::chrono::steady_clock::now();
    const std::map<std::string, AbuseTally> tallies = AbuseDeployApi(
        a.api_grpc, a.shard_id, a.deploy_count, kDeployThreads, rng());
    json kinds = json::object();
    for (const auto& [kind, t] : tallies) {
      json refused = json::object();
      for (const auto& [why, n] : t.refused) refused[why] = n;
      kinds[kind] = json{
          {"sent", t.sent}, {"accepted", t.accepted}, {"refused", refused}};
    }
    Print(json{{"attack", "deploys"},
               {"ran", true},
               {"seconds", std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - start)
                               .count()},
               {"kinds", kinds}});
  }
  const bool blocks =
      wanted.contains("bad-signature") || wanted.contains("unbonded") ||
      wanted.contains("equivocation") || wanted.contains("orphans");
  if (!blocks) return kExitRan;  // the wire attacks always run

  absl::StatusOr<std::unique_ptr<BlockPeer>> peer =
      BlockPeer::Connect(*target, a.network_id, kConnectPatience);
  if (!peer.ok()) {
    Print(json{{"attack", "connect"},
               {"ran", false},
               {"error", peer.status().ToString()}});
    return kExitFailed;
  }
  if (wanted.contains("bad-signature")) {
    all_ran &= RunBlockAttack(
        **peer, "bad-signature", a.block,
        [](casper::block::Block b) -> absl::StatusOr<casper::block::Block> {
          return WithBadSignature(std::move(b), "rnode-badpeer: bad signature");
        });
  }
  if (wanted.contains("unbonded")) {
    const crypto::Secp256k1PrivateKey key = FreshKey(rng);
    all_ran &= RunBlockAttack(
        **peer, "unbonded", a.block, [&key](casper::block::Block b) {
          return SignedBy(std::move(b), "rnode-badpeer: unbonded", key);
        });
  }
  if (wanted.contains("orphans")) {
    int sent = 0;
    absl::Status error;
    for (int i = 0; i < a.orphan_count && error.ok(); ++i) {
      absl::StatusOr<casper::block::Block> b = OrphanBlock(rng, i, a.shard_id);
      error = b.ok() ? (*peer)->Send(*b) : b.status();
      sent += error.ok() ? 1 : 0;
    }
    if (error.ok()) std::this_thread::sleep_for(kSendSettle);
    json line{{"attack", "orphans"},
              {"ran", error.ok()},
              {"sent", sent},
              {"still_connected", (*peer)->Connected()}};
    if (!error.ok()) line["error"] = error.ToString();
    Print(line);
    all_ran &= error.ok();
  }
  if (wanted.contains("equivocation")) {
    absl::StatusOr<crypto::Secp256k1PrivateKey> key = ReadKey(a.key_file);
    if (!key.ok()) {
      std::cerr << "rnode-badpeer: --equivocator-key-file: "
                << key.status().message() << "\n";
      return kExitUsage;
    }
    all_ran &= RunBlockAttack(
        **peer, "equivocation", a.equivocate, [&key](casper::block::Block b) {
          return SignedBy(std::move(b), "rnode-badpeer: equivocation", *key);
        });
  }
  return all_ran ? kExitRan : kExitFailed;
}

}  // namespace
}  // namespace rnode::badpeer

int main(int argc, char** argv) {
  rnode::badpeer::Args a;
  CLI::App app{"A misbehaving peer against one node of a running shard"};
  app.add_option("--target", a.target, "the node's rnode:// address")
      ->required();
  app.add_option("--network-id", a.network_id, "the shard's network id")
      ->required();
  std::string all;
  for (const std::string& name : rnode::badpeer::kAttacks) {
    all += (all.empty() ? "" : ",") + name;
  }
  a.attacks = all.substr(0, all.find(",orphans"));
  app.add_option("--attacks", a.attacks,
                 "comma-separated: " + all + " (the default: the first " +
                     "six); or any of sybil, fake-holder and impostor "
                     "without those");
  app.add_option("--block", a.block,
                 "hex hash of a block the target has (bad-signature, "
                 "unbonded)");
  app.add_option("--equivocate", a.equivocate,
                 "hex hash of a block of the equivocator (equivocation)");
  app.add_option("--equivocator-key-file", a.key_file,
                 "file holding the equivocator's private key (hex)");
  app.add_option("--seed", a.seed, "random seed (ids, garbage, keys)");
  app.add_option("--flood-count", a.flood_count,
                 "HasBlockRequest packets in the flood")
      ->check(CLI::Range(1, 1'000'000));
  app.add_option("--orphan-count", a.orphan_count,
                 "blocks of the orphans attack");
  app.add_option("--api-grpc", a.api_grpc,
                 "the node's external gRPC API, host:port (deploys)");
  app.add_option("--deploy-count", a.deploy_count,
                 "deploys of each kind of the deploys attack");
  app.add_option("--sybil-count", a.sybil_count,
                 "fresh identities that join (sybil)")
      ->check(CLI::Range(1, 10'000));
  app.add_option("--hold-seconds", a.hold_seconds,
                 "how long sybil and fake-holder hold the node")
      ->check(CLI::Range(1, 3600));
  app.add_option("--victim-id", a.victim_id,
                 "hex node id the impostor poses as (impostor)");
  app.add_option("--shard-id", a.shard_id,
                 "the shard the fake holder's statement names");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : rnode::badpeer::kExitUsage;
  }
  return rnode::badpeer::Run(a);
}

#include "node/config/config.h"

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace rnode::node {
namespace {

TEST(ConfigTest, TomlSetsKeysByTheirDottedNames) {
  NodeConfig c;
  ASSERT_TRUE(ApplyToml(c, R"(
standalone = true
[casper]
shard-name = "dev"
fault-tolerance-threshold = 0.25
propose-batch-window = "50ms"
min-block-interval = "1s"
[casper.genesis-block-data]
epoch-length = 7
[api-server]
port-http = 8080
http-max-body-bytes = "2M"
)",
                        "rnode.toml")
                  .ok());
  EXPECT_TRUE(c.standalone);
  EXPECT_EQ(c.shard_name, "dev");
  EXPECT_DOUBLE_EQ(c.fault_tolerance_threshold, 0.25);
  EXPECT_EQ(c.propose_batch_window_ms, 50);
  EXPECT_EQ(c.min_block_interval_ms, 1000);
  EXPECT_EQ(c.epoch_length, 7);
  EXPECT_EQ(c.port_http, 8080);
  EXPECT_EQ(c.http_max_body_bytes, 2 << 20);
}

TEST(ConfigTest, UnknownKeyIsRefusedAndNothingChanges) {
  NodeConfig c;
  absl::Status s =
      ApplyToml(c, "[casper]\nshard-name = \"x\"\nshrad = 1\n", "my.toml");
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("my.toml"), std::string::npos) << s;
  EXPECT_NE(s.message().find("casper.shrad"), std::string::npos) << s;
  EXPECT_EQ(c.shard_name, "root");
}

TEST(ConfigTest, SyntaxErrorNamesTheLine) {
  NodeConfig c;
  absl::Status s = ApplyToml(c, "a = 1\nb = = 2\n", "bad.toml");
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("bad.toml:2:"), std::string::npos) << s;
}

TEST(ConfigTest, WrongTypesAreRefusedWithTheKey) {
  struct Case {
    const char* key;
    const char* value;
  };
  for (const Case& k :
       {Case{"casper.min-phlo-price", "cheap"}, Case{"standalone", "maybe"},
        Case{"casper.fault-tolerance-threshold", "high"},
        Case{"casper.propose-batch-window", "soon"},
        Case{"api-server.port-http", "99999999999999999999"}}) {
    NodeConfig c;
    absl::Status s = ApplySetting(c, k.key, k.value);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << k.key;
    EXPECT_NE(s.message().find(k.key), std::string::npos) << s;
  }
}

TEST(ConfigTest, AListOfStringsIsOneCommaSeparatedValue) {
  NodeConfig c;
  ASSERT_TRUE(ApplyToml(c, R"(
[casper.genesis-block-data]
pos-multi-sig-public-keys = ["04aa", "04bb"]
pos-multi-sig-quorum = 2
)",
                        "keys.toml")
                  .ok());
  EXPECT_EQ(c.pos_multi_sig_public_keys, "04aa,04bb");
  EXPECT_EQ(c.pos_multi_sig_quorum, 2);
  for (const char* bad : {"pos-multi-sig-public-keys = [1, 2]",
                          "pos-multi-sig-public-keys = [\"a,b\"]"}) {
    NodeConfig d;
    absl::Status s = ApplyToml(
        d, absl::StrCat("[casper.genesis-block-data]\n", bad, "\n"), "x.toml");
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("pos-multi-sig-public-keys"), std::string::npos)
        << s;
    EXPECT_EQ(d.pos_multi_sig_public_keys, "");
  }
}

TEST(ConfigTest, DurationsAndSizesTakeUnits) {
  NodeConfig c;
  ASSERT_TRUE(ApplySetting(c, "casper.propose-batch-window", "2s").ok());
  EXPECT_EQ(c.propose_batch_window_ms, 2000);
  ASSERT_TRUE(ApplySetting(c, "casper.propose-batch-window", "15").ok());
  EXPECT_EQ(c.propose_batch_window_ms, 15);
  ASSERT_TRUE(ApplySetting(c, "casper.min-block-interval", "500ms").ok());
  EXPECT_EQ(c.min_block_interval_ms, 500);
  ASSERT_TRUE(
      ApplySetting(c, "api-server.grpc-max-recv-message-size", "256K").ok());
  EXPECT_EQ(c.grpc_max_recv_message_bytes, 256 << 10);
  ASSERT_TRUE(ApplySetting(c, "storage.block-cache-size", "16M").ok());
  EXPECT_EQ(c.block_cache_bytes, 16 << 20);
  EXPECT_EQ(c.min_free_bytes, int64_t{1} << 30);  // the default
  ASSERT_TRUE(ApplySetting(c, "storage.min-free-bytes", "2G").ok());
  EXPECT_EQ(c.min_free_bytes, int64_t{2} << 30);
  c.min_free_bytes = -1;
  EXPECT_NE(Validate(c).message().find("storage.min-free-bytes"),
            std::string::npos);
}

TEST(ConfigTest, ABlockCacheBelowOneMebibyteIsRefused) {
  NodeConfig c;
  c.block_cache_bytes = 512 << 10;
  absl::Status s = Validate(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("storage.block-cache-size"), std::string::npos)
      << s;
}

// A block may carry at most limits::kMaxBlockParents parents (checked at
// decode): a shard allowing more could not exchange its own blocks.
TEST(ConfigTest, MoreParentsThanABlockMayCarryIsRefused) {
  NodeConfig c;
  c.max_number_of_parents = 256;
  EXPECT_TRUE(Validate(c).ok());
  c.max_number_of_parents = 257;
  absl::Status s = Validate(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("casper.max-number-of-parents: at most 256"),
            std::string::npos)
      << s;
}

// The joining node's trie fetch: at least one request of one node, at
// most what a peer answers without punishing (1,024 nodes a request).
TEST(ConfigTest, TheStateFetchSettingsHaveBounds) {
  NodeConfig c;
  EXPECT_EQ(c.state_sync_requests, 8);
  EXPECT_EQ(c.state_sync_hashes_per_request, 256);
  c.state_sync_requests = 256;
  c.state_sync_hashes_per_request = 1024;
  EXPECT_TRUE(Validate(c).ok());
  for (const auto& [requests, hashes, message] :
       std::vector<std::tuple<int64_t, int64_t, std::string>>{
           {257, 1, "sync.state-requests: at most 256"},
           {0, 1, "sync.state-requests"},
           {1, 1025, "sync.state-hashes-per-request: at most 1024"},
           {1, 0, "sync.state-hashes-per-request"}}) {
    c.state_sync_requests = requests;
    c.state_sync_hashes_per_request = hashes;
    absl::Status s = Validate(c);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << message;
    EXPECT_NE(s.message().find(message), std::string::npos) << s;
  }
}

// Retention: 0 keeps every state (archive); otherwise at least twice the
// merge depth.
TEST(ConfigTest, RetentionKeepsAtLeastTwiceTheMergeDepth) {
  NodeConfig c;
  EXPECT_EQ(c.retain_blocks, 16384);
  for (int64_t ok : {int64_t{0}, int64_t{1024}, int64_t{1} << 40}) {
    c.retain_blocks = ok;
    EXPECT_TRUE(Validate(c).ok()) << ok;
  }
  for (int64_t bad : {int64_t{1}, int64_t{1023}, int64_t{-1}}) {
    c.retain_blocks = bad;
    absl::Status s = Validate(c);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("storage.retain-blocks"), std::string::npos)
        << s;
  }
}

// Rejoining: 30 s by default, -1 never, nothing below -1.
TEST(ConfigTest, RejoinAfterSecondsIsMinusOneOrMore) {
  NodeConfig c;
  EXPECT_EQ(c.rejoin_after_seconds, 30);
  ASSERT_TRUE(
      ApplyToml(c, "[sync]\nrejoin-after-seconds = -1\n", "rnode.toml").ok());
  EXPECT_EQ(c.rejoin_after_seconds, -1);
  EXPECT_TRUE(Validate(c).ok());
  c.rejoin_after_seconds = -2;
  absl::Status s = Validate(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("sync.rejoin-after-seconds"), std::string::npos)
      << s;
}

// The block size limit: at least 1 MiB and four deploys of the largest
// term, at most what a node decodes.
TEST(ConfigTest, TheBlockSizeLimitHasBounds) {
  NodeConfig c;
  EXPECT_EQ(c.max_block_bytes, 32 << 20);
  c.max_block_bytes = 192 << 20;
  EXPECT_TRUE(Validate(c).ok());
  struct Case {
    int64_t block_bytes;
    int64_t term_bytes;
    std::string message;
  };
  for (const Case& k : std::vector<Case>{
           {(192 << 20) + 1, 1 << 10, "casper.max-block-bytes: at most"},
           {(1 << 20) - 1, 1 << 10, "below the least allowed, 1048576"},
           {1 << 20, 1 << 20, "below four deploys of the largest term"}}) {
    c.max_block_bytes = k.block_bytes;
    c.max_deploy_term_bytes = k.term_bytes;
    absl::Status s = Validate(c);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << k.message;
    EXPECT_NE(s.message().find(k.message), std::string::npos) << s;
  }
}

TEST(ConfigTest, ValidateRefusesBadCombinations) {
  NodeConfig ok;
  EXPECT_TRUE(Validate(ok).ok());
  NodeConfig same_port;
  same_port.port_http = same_port.port_grpc_external;
  EXPECT_EQ(Validate(same_port).code(), absl::StatusCode::kInvalidArgument);
  NodeConfig threshold;
  threshold.fault_tolerance_threshold = 1.0;
  EXPECT_EQ(Validate(threshold).code(), absl::StatusCode::kInvalidArgument);
  NodeConfig port;
  port.port_grpc_internal = 0;
  EXPECT_EQ(Validate(port).code(), absl::StatusCode::kInvalidArgument);
  NodeConfig parents;
  parents.max_number_of_parents = 0;
  EXPECT_EQ(Validate(parents).code(), absl::StatusCode::kInvalidArgument);
  NodeConfig bonds;
  bonds.bond_maximum = 0;
  EXPECT_EQ(Validate(bonds).code(), absl::StatusCode::kInvalidArgument);
  NodeConfig interval;
  interval.min_block_interval_ms = -1;
  EXPECT_EQ(Validate(interval).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ConfigTest, TheAdminApisStayOnLoopbackUnlessAllowed) {
  for (const std::string host :
       {"127.0.0.1", "127.0.0.7", "::1", "[::1]", "localhost"}) {
    NodeConfig c;
    c.api_admin_host = host;
    EXPECT_TRUE(Validate(c).ok()) << host;
  }
  for (const std::string host :
       {"0.0.0.0", "::", "10.1.2.3", "8.8.8.8", "node.example.org"}) {
    NodeConfig c;
    c.api_admin_host = host;
    const absl::Status s = Validate(c);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << host;
    EXPECT_NE(s.message().find("api-server.allow-public-admin"),
              std::string::npos)
        << s;
    c.allow_public_admin = true;
    EXPECT_TRUE(Validate(c).ok()) << host;
  }
  // The public APIs' address does not move the admin ones.
  NodeConfig c;
  ASSERT_TRUE(ApplySetting(c, "api-server.host", "0.0.0.0").ok());
  EXPECT_EQ(c.api_admin_host, "127.0.0.1");
  EXPECT_TRUE(Validate(c).ok());
}

TEST(ConfigTest, EveryFlagNamesAKnownSettingOnce) {
  std::set<std::string_view> keys, flags;
  for (const Setting& s : Settings()) {
    EXPECT_TRUE(keys.insert(s.key).second) << s.key;
    if (!s.flag.empty()) {
      EXPECT_TRUE(flags.insert(s.flag).second) << s.flag;
    }
    EXPECT_FALSE(s.help.empty()) << s.key;
  }
}

TEST(ConfigTest, DataDirDefaultsToHome) {
  NodeConfig c;
  EXPECT_TRUE(DataDir(c).ends_with("/.rnode"));
  c.data_dir = "/tmp/x";
  EXPECT_EQ(DataDir(c), "/tmp/x");
}

TEST(ConfigTest, PeerToPeerSettings) {
  NodeConfig c;
  ASSERT_TRUE(ApplyToml(c,
                        "[protocol-server]\nhost = \"10.0.0.5\"\nport = 41400\n"
                        "[protocol-client]\nnetwork-timeout = \"2s\"\n"
                        "bootstrap = \"rnode://ab@h?protocol=1&discovery=2\"\n"
                        "[peers-discovery]\nport = 41404\n"
                        "lookup-interval = \"500ms\"\n"
                        "[casper.heartbeat]\nenabled = false\n"
                        "check-interval = \"1min\"\n"
                        "[casper]\ndeploy-gossip-takeover = \"3s\"\n"
                        "synchrony-constraint-threshold = 0.5\n",
                        "t.toml")
                  .ok());
  EXPECT_EQ(c.host, "10.0.0.5");
  EXPECT_EQ(c.port_protocol, 41400);
  EXPECT_EQ(c.port_discovery, 41404);
  EXPECT_EQ(c.network_timeout_ms, 2000);
  EXPECT_EQ(c.lookup_interval_ms, 500);
  EXPECT_FALSE(c.heartbeat_enabled);
  EXPECT_EQ(c.heartbeat_check_interval_ms, 60'000);
  EXPECT_EQ(c.deploy_gossip_takeover_ms, 3000);
  EXPECT_EQ(c.synchrony_constraint_threshold, 0.5);
  // The bootstrap address is checked when the node starts its network.
  EXPECT_EQ(c.bootstrap, "rnode://ab@h?protocol=1&discovery=2");
  EXPECT_TRUE(Validate(c).ok());

  NodeConfig clash;
  clash.port_discovery = clash.port_http;
  EXPECT_EQ(Validate(clash).code(), absl::StatusCode::kInvalidArgument);
  NodeConfig sync;
  sync.synchrony_constraint_threshold = 1.5;
  EXPECT_EQ(Validate(sync).code(), absl::StatusCode::kInvalidArgument);
  NodeConfig timeout;
  timeout.network_timeout_ms = 10;
  EXPECT_EQ(Validate(timeout).code(), absl::StatusCode::kInvalidArgument);
  NodeConfig peers;
  peers.max_peers = 0;
  EXPECT_EQ(Validate(peers).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rnode::node

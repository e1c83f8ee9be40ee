// Peers: rnode:// addresses, the two wire forms of a node, the node key file.
#include "node/p2p/peer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "crypto/node_id.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kademlia.pb.h"
#include "node/p2p/identity/tls_identity.h"
#include "routing.pb.h"
#include "util/bytes.h"

namespace rnode::node::p2p {
namespace {

using ::testing::HasSubstr;

constexpr char kIdHex[] = "1e780e5dfbe0a3d9470a2b414f502d59402e09c2";

PeerNode SamplePeer() {
  PeerNode peer;
  peer.id = *HexDecode(kIdHex);
  peer.host = "node0.example.org";
  peer.tcp_port = 40400;
  peer.udp_port = 40404;
  return peer;
}

// --- Addresses ---

TEST(PeerAddressTest, FormatPrintsLowerHexProtocolFirst) {
  PeerNode peer = SamplePeer();
  EXPECT_EQ(FormatPeerAddress(peer),
            "rnode://1e780e5dfbe0a3d9470a2b414f502d59402e09c2"
            "@node0.example.org?protocol=40400&discovery=40404");
}

TEST(PeerAddressTest, FormatThenParseRoundTrips) {
  for (const char* host : {"node0.example.org", "127.0.0.1", "[::1]", "h"}) {
    PeerNode peer = SamplePeer();
    peer.host = host;
    peer.tcp_port = 1;
    peer.udp_port = 65535;
    absl::StatusOr<PeerNode> parsed = ParsePeerAddress(FormatPeerAddress(peer));
    ASSERT_TRUE(parsed.ok()) << host << ": " << parsed.status();
    EXPECT_EQ(*parsed, peer);
  }
}

TEST(PeerAddressTest, ParseAcceptsUpperCaseHexAndEitherKeyOrder) {
  absl::StatusOr<PeerNode> parsed = ParsePeerAddress(
      "rnode://1E780E5DFBE0A3D9470A2B414F502D59402E09C2"
      "@node0.example.org?discovery=40404&protocol=40400");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, SamplePeer());
}

TEST(PeerAddressTest, ParseRefusesMalformedAddresses) {
  const std::string id = kIdHex;
  const std::string ports = "?protocol=40400&discovery=40404";
  struct Case {
    std::string address;
    std::string message;  // a substring of the error
  };
  const std::vector<Case> cases = {
      {"", "rnode://"},
      {"http://" + id + "@h" + ports, "rnode://"},
      {"RNODE://" + id + "@h" + ports, "rnode://"},
      {"rnode://" + id + "h" + ports, "'@'"},
      {"rnode://" + id.substr(1) + "@h" + ports, "40 hex"},
      {"rnode://" + id + "00@h" + ports, "40 hex"},
      {"rnode://@h" + ports, "40 hex"},
      {"rnode://" + id.substr(1) + "g@h" + ports, "node id"},
      {"rnode://" + id + "@" + ports, "empty host"},
      {"rnode://" + id + "@" + std::string(kMaxHostBytes + 1, 'a') + ports,
       "host of"},
      {"rnode://" + id + "@h\tx" + ports, "printable"},
      {"rnode://" + id + "@h x" + ports, "printable"},
      {"rnode://" + id + "@h", "no protocol port"},
      {"rnode://" + id + "@h?", "empty query parameter"},
      {"rnode://" + id + "@h?&protocol=1&discovery=2", "empty query parameter"},
      {"rnode://" + id + "@h?protocol=1&&discovery=2", "empty query parameter"},
      {"rnode://" + id + "@h?discovery=40404", "no protocol port"},
      {"rnode://" + id + "@h?protocol=40400", "no discovery port"},
      {"rnode://" + id + "@h?protocol=0&discovery=40404", "protocol port"},
      {"rnode://" + id + "@h?protocol=40400&discovery=0", "discovery port"},
      {"rnode://" + id + "@h?protocol=65536&discovery=40404", "above"},
      {"rnode://" + id + "@h?protocol=99999999999&discovery=1", "above"},
      {"rnode://" + id + "@h?protocol=&discovery=40404", "empty protocol"},
      {"rnode://" + id + "@h?protocol&discovery=40404", "empty protocol"},
      {"rnode://" + id + "@h?protocol=+80&discovery=40404", "decimal"},
      {"rnode://" + id + "@h?protocol=-1&discovery=40404", "decimal"},
      {"rnode://" + id + "@h?protocol= 80&discovery=40404", "decimal"},
      {"rnode://" + id + "@h?protocol=80x&discovery=40404", "decimal"},
      {"rnode://" + id + "@h" + ports + "&protocol=1", "twice"},
      {"rnode://" + id + "@h" + ports + "&tls=1", "unknown query key 'tls'"},
      {"rnode://" + id + "@h" + ports + "&", "empty query parameter"},
      {"rnode://" + id + "@h" + ports + "&=1", "unknown query key ''"},
      {"rnode://" + id + "@h?Protocol=1&discovery=2", "unknown query key"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<PeerNode> parsed = ParsePeerAddress(c.address);
    ASSERT_FALSE(parsed.ok()) << c.address;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument)
        << c.address;
    EXPECT_THAT(parsed.status().message(), HasSubstr(c.message)) << c.address;
  }
}

TEST(PeerNodeTest, IdHexAndTargets) {
  PeerNode peer = SamplePeer();
  EXPECT_EQ(peer.IdHex(), kIdHex);
  EXPECT_EQ(peer.ProtocolTarget(), "node0.example.org:40400");
  EXPECT_EQ(peer.DiscoveryTarget(), "node0.example.org:40404");
  peer.host = "::1";
  EXPECT_EQ(peer.ProtocolTarget(), "[::1]:40400");
  peer.host = "[::1]";
  EXPECT_EQ(peer.DiscoveryTarget(), "[::1]:40404");
}

// --- Wire form ---

template <typename NodeProto>
class PeerProtoTest : public ::testing::Test {};
using NodeProtos =
    ::testing::Types<::routing::Node, ::coop::rchain::comm::discovery::Node>;
TYPED_TEST_SUITE(PeerProtoTest, NodeProtos);

TYPED_TEST(PeerProtoTest, RoundTrips) {
  PeerNode peer = SamplePeer();
  peer.host = std::string(kMaxHostBytes, 'h');
  peer.tcp_port = 65535;
  peer.udp_port = 1;
  TypeParam node;
  PeerToProto(peer, &node);
  EXPECT_EQ(node.id(), ToString(peer.id));
  EXPECT_EQ(node.host(), peer.host);
  EXPECT_EQ(node.tcp_port(), 65535u);
  EXPECT_EQ(node.udp_port(), 1u);
  absl::StatusOr<PeerNode> back = PeerFromProto(node);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, peer);
}

TYPED_TEST(PeerProtoTest, RefusesMalformedNodes) {
  struct Case {
    const char* name;
    void (*spoil)(TypeParam*);
  };
  const Case cases[] = {
      {"empty id", [](TypeParam* n) { n->clear_id(); }},
      {"19-byte id", [](TypeParam* n) { n->set_id(std::string(19, 'x')); }},
      {"21-byte id", [](TypeParam* n) { n->set_id(std::string(21, 'x')); }},
      {"empty host", [](TypeParam* n) { n->clear_host(); }},
      {"long host",
       [](TypeParam* n) { n->set_host(std::string(kMaxHostBytes + 1, 'h')); }},
      {"newline in host", [](TypeParam* n) { n->set_host("a\nb"); }},
      {"NUL in host",
       [](TypeParam* n) { n->set_host(std::string("a\0b", 3)); }},
      {"DEL in host", [](TypeParam* n) { n->set_host("a\x7f"); }},
      {"high byte in host", [](TypeParam* n) { n->set_host("h\xc3\xa9"); }},
      {"space in host", [](TypeParam* n) { n->set_host("a b"); }},
      {"tcp port 0", [](TypeParam* n) { n->set_tcp_port(0); }},
      {"tcp port 65536", [](TypeParam* n) { n->set_tcp_port(65536); }},
      {"udp port 0", [](TypeParam* n) { n->set_udp_port(0); }},
      {"udp port 65536", [](TypeParam* n) { n->set_udp_port(65536); }},
  };
  for (const Case& c : cases) {
    TypeParam node;
    PeerToProto(SamplePeer(), &node);
    ASSERT_TRUE(PeerFromProto(node).ok());
    c.spoil(&node);
    EXPECT_EQ(PeerFromProto(node).status().code(),
              absl::StatusCode::kInvalidArgument)
        << c.name;
  }
}

// --- Node key ---

class PeerKeyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rnode_p2p_peer_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "node.key.pem").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void WriteFile(const std::string& text) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << text;
  }
  std::string ReadFile() {
    std::ifstream in(path_, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
  }

  std::filesystem::path dir_;
  std::string path_;
};

// A P-256 key made with `openssl genpkey`; its public point is
// 04 74f4c2b2...48 0c0e, and keccak256(X || Y) (computed outside this
// code base) ends in the id below.
constexpr char kKnownKeyPem[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg2ngCs3NKnnmLzawC\n"
    "aPNhxSvOzF5rPmjv9Gxm6Oq/U6ihRANCAAR09MKyhtbHrEKi/j0Yly3/7HevX3I4\n"
    "ygpEE9evS4QkMg/iJdZjg3fhhcaD/LjrgF4JKXSsxTU5jp5HU2Z2SAwO\n"
    "-----END PRIVATE KEY-----\n";
constexpr char kKnownKeyId[] = "5cde5c6debd4e8a3a02841f6afd94aee554fd129";

TEST_F(PeerKeyTest, CreatedOnceWithOwnerOnlyModeAndStableId) {
  bool created = false;
  absl::StatusOr<Bytes> id = LoadOrCreateNodeKey(path_, &created);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_TRUE(created);
  EXPECT_EQ(id->size(), kNodeIdBytes);

  struct stat st;
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));

  const std::string pem = ReadFile();
  EXPECT_THAT(pem, HasSubstr("-----BEGIN PRIVATE KEY-----"));  // PKCS#8
  absl::StatusOr<std::string> hex = crypto::NodeIdFromPem(pem);
  ASSERT_TRUE(hex.ok()) << hex.status();
  EXPECT_EQ(HexEncode(*id), *hex);

  absl::StatusOr<Bytes> again = LoadOrCreateNodeKey(path_, &created);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(created);
  EXPECT_EQ(*again, *id);
  EXPECT_EQ(ReadFile(), pem);
  EXPECT_TRUE(LoadOrCreateNodeKey(path_).ok());  // `created` is optional
}

TEST_F(PeerKeyTest, FreshKeysDiffer) {
  absl::StatusOr<Bytes> first = LoadOrCreateNodeKey(path_);
  ASSERT_TRUE(first.ok()) << first.status();
  std::filesystem::remove(path_);
  absl::StatusOr<Bytes> second = LoadOrCreateNodeKey(path_);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(*first, *second);
}

TEST_F(PeerKeyTest, KnownKeyGivesItsPublishedNodeId) {
  WriteFile(kKnownKeyPem);
  bool created = true;
  absl::StatusOr<Bytes> id = LoadOrCreateNodeKey(path_, &created);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_FALSE(created);
  EXPECT_EQ(HexEncode(*id), kKnownKeyId);
  EXPECT_EQ(HexEncode(*id), *crypto::NodeIdFromPem(kKnownKeyPem));
  EXPECT_EQ(ReadFile(), kKnownKeyPem);
}

TEST_F(PeerKeyTest, FileWithoutAP256PrivateKeyIsInvalidArgument) {
  const std::string known(kKnownKeyPem);
  const std::vector<std::string> contents = {
      "",
      "garbage\n",
      std::string(1000, '\0'),
      // The known key with one base64 character changed.
      known.substr(0, 40) + (known[40] == 'A' ? "B" : "A") + known.substr(41),
      // Cut in the middle.
      known.substr(0, known.size() / 2),
      // An Ed25519 key.
      "-----BEGIN PRIVATE KEY-----\n"
      "MC4CAQAwBQYDK2VwBCIEINIyffZPwKt0VAmqG9RLiWaJw4IbLxnHE29MAptN+DG2\n"
      "-----END PRIVATE KEY-----\n",
      // Larger than any key file.
      std::string(1 << 20, 'x'),
  };
  for (const std::string& text : contents) {
    WriteFile(text);
    bool created = true;
    absl::StatusOr<Bytes> id = LoadOrCreateNodeKey(path_, &created);
    EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument)
        << text.substr(0, 80);
    EXPECT_FALSE(created);
    EXPECT_EQ(ReadFile(), text);  // never replaced
  }
}

TEST_F(PeerKeyTest, PublicKeyAloneIsInvalidArgument) {
  // The public half of the known key: a node cannot serve TLS with it.
  WriteFile(
      "-----BEGIN PUBLIC KEY-----\n"
      "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEdPTCsobWx6xCov49GJct/+x3r19y\n"
      "OMoKRBPXr0uEJDIP4iXWY4N34YXGg/y464BeCSl0rMU1OY6eR1NmdkgMDg==\n"
      "-----END PUBLIC KEY-----\n");
  EXPECT_EQ(LoadOrCreateNodeKey(path_).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(PeerKeyTest, DirectoryAtKeyPathIsRefused) {
  std::filesystem::create_directory(path_);
  EXPECT_EQ(LoadOrCreateNodeKey(path_).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(PeerKeyTest, UnwritablePathIsInternal) {
  const std::string path = (dir_ / "missing" / "node.key.pem").string();
  bool created = true;
  EXPECT_EQ(LoadOrCreateNodeKey(path, &created).status().code(),
            absl::StatusCode::kInternal);
  EXPECT_FALSE(created);
}

}  // namespace
}  // namespace rnode::node::p2p

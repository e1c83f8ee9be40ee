// The protocol and discovery ports over mutual TLS (docs/security.md): a
// peer's id is the one its certificate proves, whatever its headers say.
// Real transports and gRPC clients on 127.0.0.1.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "crypto/secp256k1.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_certificate_verifier.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "gtest/gtest.h"
#include "node/p2p/discovery.h"
#include "node/p2p/identity/tls_identity.h"
#include "node/p2p/identity/validator_statement.h"
#include "node/p2p/peer.h"
#include "node/p2p/transport.h"
#include "routing.grpc.pb.h"
#include "routing.pb.h"
#include "tests/eventually.h"
#include "util/bytes.h"
#include "util/mutex.h"

namespace rnode::node::p2p {
namespace {

using ::rnode::testing::Eventually;
using std::chrono::milliseconds;

constexpr char kNetwork[] = "testnet";
constexpr std::chrono::seconds kCallTimeout{10};
// The advertised port of raw callers: nothing listens there.
constexpr uint32_t kDeadPort = 1;

std::shared_ptr<const TlsIdentity> Identity() {
  absl::StatusOr<TlsIdentity> id = NewTlsIdentity();
  EXPECT_TRUE(id.ok()) << id.status();
  return std::make_shared<const TlsIdentity>(id.ok() ? *std::move(id)
                                                     : TlsIdentity{});
}

TransportOptions Options(std::shared_ptr<const TlsIdentity> tls) {
  TransportOptions o;
  o.self = PeerNode{tls->node_id, "127.0.0.1", 0, 40404};
  o.tls = std::move(tls);
  o.network_id = kNetwork;
  o.heartbeat_interval = milliseconds(150);
  o.reconnect_min = milliseconds(50);
  o.reconnect_max = milliseconds(200);
  o.network_timeout = milliseconds(2000);
  return o;
}

// Counts what the transport hands over. Thread-safe.
class Counter : public PacketHandler {
 public:
  void OnPacket(const PeerNode& from, const std::string&, std::string,
                bool) override {
    MutexLock lock(&mu_);
    senders_.push_back(from.id);
  }
  std::vector<Bytes> senders() const {
    MutexLock lock(&mu_);
    return senders_;
  }

 private:
  mutable Mutex mu_;
  std::vector<Bytes> senders_ ABSL_GUARDED_BY(mu_);
};

bool Contains(const std::vector<PeerNode>& peers, const Bytes& id) {
  for (const PeerNode& p : peers) {
    if (p.id == id) return true;
  }
  return false;
}

// A raw caller presenting `identity`'s certificate and accepting whatever
// server answers (as an attacker would).
class AcceptAnyServer final
    : public grpc::experimental::ExternalCertificateVerifier {
 public:
  bool Verify(grpc::experimental::TlsCustomVerificationCheckRequest*,
              std::function<void(grpc::Status)>,
              grpc::Status* sync_status) override {
    *sync_status = grpc::Status::OK;
    return true;
  }
  void Cancel(grpc::experimental::TlsCustomVerificationCheckRequest*) override {
  }
};

std::unique_ptr<::routing::TransportLayer::Stub> TlsStub(
    int port, const TlsIdentity& identity) {
  grpc::experimental::TlsChannelCredentialsOptions o;
  o.set_certificate_provider(
      std::make_shared<grpc::experimental::StaticDataCertificateProvider>(
          std::vector<grpc::experimental::IdentityKeyCertPair>{
              {identity.key_pem, identity.certificate_pem}}));
  o.watch_identity_key_cert_pairs();
  o.set_verify_server_certs(false);
  o.set_check_call_host(false);
  o.set_certificate_verifier(
      grpc::experimental::ExternalCertificateVerifier::Create<
          AcceptAnyServer>());
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return ::routing::TransportLayer::NewStub(grpc::CreateCustomChannel(
      absl::StrCat("127.0.0.1:", port),
      grpc::experimental::TlsCredentials(o), args));
}

::routing::Protocol Envelope(const Bytes& sender) {
  ::routing::Protocol p;
  PeerToProto(PeerNode{sender, "127.0.0.1", kDeadPort, kDeadPort},
              p.mutable_header()->mutable_sender());
  p.mutable_header()->set_networkid(kNetwork);
  return p;
}

grpc::Status RawSend(::routing::TransportLayer::Stub& stub,
                     const ::routing::Protocol& protocol) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + kCallTimeout);
  ::routing::TLRequest req;
  *req.mutable_protocol() = protocol;
  ::routing::TLResponse resp;
  return stub.Send(&ctx, req, &resp);
}

// A stream from `sender` whose data breaks its header (more than
// announced): invalid data, which gets its sender banned.
grpc::Status BrokenStream(::routing::TransportLayer::Stub& stub,
                          const Bytes& sender) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + kCallTimeout);
  ::routing::TLResponse resp;
  std::unique_ptr<grpc::ClientWriter<::routing::Chunk>> writer =
      stub.Stream(&ctx, &resp);
  ::routing::Chunk header;
  PeerToProto(PeerNode{sender, "127.0.0.1", kDeadPort, kDeadPort},
              header.mutable_header()->mutable_sender());
  header.mutable_header()->set_typeid_("BlockMessage");
  header.mutable_header()->set_contentlength(10);
  header.mutable_header()->set_networkid(kNetwork);
  ::routing::Chunk data;
  data.mutable_data()->set_contentdata(std::string(4096, 'x'));
  if (writer->Write(header)) writer->Write(data);
  writer->WritesDone();
  return writer->Finish();
}

class TlsTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_tls_ = Identity();
    b_tls_ = Identity();
    absl::StatusOr<std::unique_ptr<Transport>> a =
        Transport::Start(Options(a_tls_), &a_handler_, nullptr);
    absl::StatusOr<std::unique_ptr<Transport>> b =
        Transport::Start(Options(b_tls_), &b_handler_, nullptr);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    a_ = *std::move(a);
    b_ = *std::move(b);
  }

  // A and B linked (A dialled B; B learnt A from A's handshake).
  void Link() {
    ASSERT_TRUE(a_->AddPeer(b_->self()));
    ASSERT_TRUE(Eventually([&] {
      return Contains(a_->Connected(), b_tls_->node_id) &&
             Contains(b_->Connected(), a_tls_->node_id);
    })) << "A and B did not connect over TLS";
  }

  std::shared_ptr<const TlsIdentity> a_tls_, b_tls_;
  Counter a_handler_, b_handler_;
  std::unique_ptr<Transport> a_, b_;
};

TEST_F(TlsTransportTest, PeersConnectAndTheSenderIsTheProvenNode) {
  ASSERT_NO_FATAL_FAILURE(Link());
  ASSERT_TRUE(a_->Send(b_tls_->node_id, "Ping", "hello").ok());
  ASSERT_TRUE(Eventually([&] { return !b_handler_.senders().empty(); }));
  EXPECT_EQ(b_handler_.senders().front(), a_tls_->node_id);
  EXPECT_EQ(b_->counters().impersonations, 0u);
}

TEST_F(TlsTransportTest, AHeaderNamingAnotherNodeIsRefusedAndCounted) {
  const std::shared_ptr<const TlsIdentity> mallory = Identity();
  std::unique_ptr<::routing::TransportLayer::Stub> stub =
      TlsStub(b_->port(), *mallory);
  ::routing::Protocol p = Envelope(a_tls_->node_id);
  p.mutable_heartbeat();
  const grpc::Status s = RawSend(*stub, p);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << s.error_message();
  EXPECT_EQ(b_->counters().impersonations, 1u);
  // Nothing was made of it: no peer under either id.
  EXPECT_FALSE(Contains(b_->Known(), a_tls_->node_id));
  EXPECT_FALSE(Contains(b_->Known(), mallory->node_id));

  // The same caller under its own id is an ordinary peer.
  ::routing::Protocol own = Envelope(mallory->node_id);
  own.mutable_heartbeat();
  EXPECT_TRUE(RawSend(*stub, own).ok());
  EXPECT_TRUE(Contains(b_->Known(), mallory->node_id));
}

TEST_F(TlsTransportTest, ADisconnectInAnotherNodesNameChangesNothing) {
  ASSERT_NO_FATAL_FAILURE(Link());
  const std::shared_ptr<const TlsIdentity> mallory = Identity();
  std::unique_ptr<::routing::TransportLayer::Stub> stub =
      TlsStub(b_->port(), *mallory);
  ::routing::Protocol bye = Envelope(a_tls_->node_id);
  bye.mutable_disconnect();
  EXPECT_EQ(RawSend(*stub, bye).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // The refusal is synchronous: had it been taken, A would be
  // disconnected now.
  EXPECT_TRUE(Contains(b_->Connected(), a_tls_->node_id));
  EXPECT_EQ(b_->counters().disconnects, 0u);
}

TEST_F(TlsTransportTest, InvalidDataBansOnlyItsRealSender) {
  ASSERT_NO_FATAL_FAILURE(Link());
  const std::shared_ptr<const TlsIdentity> mallory = Identity();
  std::unique_ptr<::routing::TransportLayer::Stub> stub =
      TlsStub(b_->port(), *mallory);
  // Under A's name: refused as an impersonation, nobody punished.
  EXPECT_EQ(BrokenStream(*stub, a_tls_->node_id).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(b_->counters().malformed, 0u);
  // Under its own: invalid, and Mallory is banned.
  EXPECT_EQ(BrokenStream(*stub, mallory->node_id).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  ::routing::Protocol beat = Envelope(mallory->node_id);
  beat.mutable_heartbeat();
  const grpc::Status banned = RawSend(*stub, beat);
  EXPECT_EQ(banned.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(banned.error_message().find("banned"), std::string::npos)
      << banned.error_message();
  // A is untouched and still talks to B.
  EXPECT_TRUE(Contains(b_->Connected(), a_tls_->node_id));
  ASSERT_TRUE(a_->Send(b_tls_->node_id, "Ping", "still here").ok());
  EXPECT_TRUE(Eventually([&] { return !b_handler_.senders().empty(); }));
}

TEST_F(TlsTransportTest, APlaintextCallerIsRefused) {
  std::unique_ptr<::routing::TransportLayer::Stub> stub =
      ::routing::TransportLayer::NewStub(grpc::CreateChannel(
          absl::StrCat("127.0.0.1:", b_->port()),
          grpc::InsecureChannelCredentials()));
  ::routing::Protocol p = Envelope(a_tls_->node_id);
  p.mutable_heartbeat();
  EXPECT_EQ(RawSend(*stub, p).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_FALSE(Contains(b_->Known(), a_tls_->node_id));
}

TEST_F(TlsTransportTest, ALinkIsPinnedToTheNodeItDials) {
  // Mallory listens where A believes B to be: a man in the middle with
  // another key. A's handshakes fail, so nothing reaches Mallory.
  const std::shared_ptr<const TlsIdentity> mallory_tls = Identity();
  Counter mallory_handler;
  absl::StatusOr<std::unique_ptr<Transport>> mallory =
      Transport::Start(Options(mallory_tls), &mallory_handler, nullptr);
  ASSERT_TRUE(mallory.ok()) << mallory.status();
  PeerNode fake_b = b_->self();
  fake_b.tcp_port = static_cast<uint32_t>((*mallory)->port());
  // A dialler that gives up after three failed handshakes.
  const std::shared_ptr<const TlsIdentity> c_tls = Identity();
  TransportOptions co = Options(c_tls);
  co.forget_after_failures = 3;
  Counter c_handler;
  absl::StatusOr<std::unique_ptr<Transport>> c =
      Transport::Start(co, &c_handler, nullptr);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE((*c)->AddPeer(fake_b));
  ASSERT_TRUE(Eventually([&] { return (*c)->Known().empty(); }))
      << "the dialler never gave up on the false B";
  EXPECT_TRUE((*c)->Connected().empty());
  EXPECT_EQ((*mallory)->counters().packets_in, 0u);
  EXPECT_TRUE((*mallory)->Known().empty());
}

TEST_F(TlsTransportTest, StartRefusesAnIdThatIsNotTheKeys) {
  TransportOptions o = Options(a_tls_);
  o.self.id = b_tls_->node_id;
  Counter handler;
  EXPECT_EQ(Transport::Start(o, &handler, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TlsDiscoveryTest, PingsArePinnedAndSendersProven) {
  const std::shared_ptr<const TlsIdentity> server_tls = Identity();
  PeerTable table(server_tls->node_id, 16);
  DiscoveryOptions o;
  o.self = PeerNode{server_tls->node_id, "127.0.0.1", 40400, 0};
  o.network_id = kNetwork;
  o.tls = server_tls;
  absl::StatusOr<std::unique_ptr<DiscoveryServer>> server =
      DiscoveryServer::Start(o, &table);
  ASSERT_TRUE(server.ok()) << server.status();
  PeerNode to{server_tls->node_id, "127.0.0.1", 40400,
              static_cast<uint32_t>((*server)->port())};

  const std::shared_ptr<const TlsIdentity> me_tls = Identity();
  const PeerNode me{me_tls->node_id, "127.0.0.1", 41000, 41004};
  EXPECT_TRUE(Ping(to, me, kNetwork, std::chrono::seconds(5), me_tls.get()).ok());
  EXPECT_TRUE(table.Find(me.id).has_value());

  // A caller naming another node than its certificate's is refused.
  const std::shared_ptr<const TlsIdentity> other = Identity();
  const PeerNode claimed{other->node_id, "127.0.0.1", 42000, 42004};
  EXPECT_EQ(Ping(to, claimed, kNetwork, std::chrono::seconds(5), me_tls.get())
                .code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_FALSE(table.Find(claimed.id).has_value());

  // Dialled as another node: the handshake fails on our side.
  PeerNode wrong = to;
  wrong.id = other->node_id;
  EXPECT_EQ(Ping(wrong, me, kNetwork, std::chrono::seconds(5), me_tls.get())
                .code(),
            absl::StatusCode::kUnavailable);
  // And without a certificate, nothing is answered.
  EXPECT_FALSE(Ping(to, me, kNetwork, std::chrono::seconds(5)).ok());
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

crypto::Secp256k1PrivateKey ValidatorKey(uint8_t fill) {
  crypto::Secp256k1PrivateKey k;
  k.fill(fill);
  return k;
}

// A provider of fresh statements by `key` for `node_id` on `shard`.
std::function<Bytes()> Statements(crypto::Secp256k1PrivateKey key,
                                  Bytes node_id, std::string shard) {
  return [key, node_id, shard]() -> Bytes {
    absl::StatusOr<ValidatorStatement> s =
        SignValidatorStatement(key, node_id, kNetwork, shard, NowMs());
    return s.ok() ? EncodeValidatorStatement(*s) : Bytes{};
  };
}

TEST(TlsValidatorTest, AValidatorProvesItsKeyToItsPeers) {
  const std::shared_ptr<const TlsIdentity> v_tls = Identity();
  const std::shared_ptr<const TlsIdentity> o_tls = Identity();
  TransportOptions vo = Options(v_tls);
  vo.shard_id = "root";
  vo.validator_statement = Statements(ValidatorKey(9), v_tls->node_id, "root");
  TransportOptions oo = Options(o_tls);
  oo.shard_id = "root";
  Counter vh, oh;
  absl::StatusOr<std::unique_ptr<Transport>> v = Transport::Start(vo, &vh, nullptr);
  absl::StatusOr<std::unique_ptr<Transport>> o = Transport::Start(oo, &oh, nullptr);
  ASSERT_TRUE(v.ok() && o.ok());
  ASSERT_TRUE((*v)->AddPeer((*o)->self()));
  ASSERT_TRUE(Eventually([&] {
    return (*o)->ValidatorOf(v_tls->node_id).has_value();
  })) << "the observer never learnt the validator's key";
  EXPECT_EQ(*(*o)->ValidatorOf(v_tls->node_id),
            crypto::Secp256k1PublicKeyOf(ValidatorKey(9)));
  // The observer makes no statement, so it is no validator to anyone.
  EXPECT_FALSE((*v)->ValidatorOf(o_tls->node_id).has_value());
  EXPECT_EQ((*o)->counters().statements_refused, 0u);
}

TEST(TlsValidatorTest, StatementsForAnotherShardOrNodeAreRefused) {
  const std::shared_ptr<const TlsIdentity> b_tls = Identity();
  TransportOptions bo = Options(b_tls);
  bo.shard_id = "root";
  Counter bh;
  absl::StatusOr<std::unique_ptr<Transport>> b = Transport::Start(bo, &bh, nullptr);
  ASSERT_TRUE(b.ok());

  // Another shard's statement, from its own node.
  const std::shared_ptr<const TlsIdentity> x_tls = Identity();
  TransportOptions xo = Options(x_tls);
  xo.validator_statement = Statements(ValidatorKey(9), x_tls->node_id, "other");
  Counter xh;
  absl::StatusOr<std::unique_ptr<Transport>> x = Transport::Start(xo, &xh, nullptr);
  ASSERT_TRUE(x.ok());
  ASSERT_TRUE((*x)->AddPeer((*b)->self()));
  ASSERT_TRUE(Eventually([&] { return (*b)->counters().statements_refused >= 1; }));
  EXPECT_FALSE((*b)->ValidatorOf(x_tls->node_id).has_value());

  // A real validator's statement replayed by Mallory over her own
  // connection: it names the validator's node, not hers.
  const std::shared_ptr<const TlsIdentity> v_tls = Identity();
  const std::shared_ptr<const TlsIdentity> mallory = Identity();
  const Bytes copied = Statements(ValidatorKey(9), v_tls->node_id, "root")();
  std::unique_ptr<::routing::TransportLayer::Stub> stub =
      TlsStub((*b)->port(), *mallory);
  ::routing::Protocol beat = Envelope(mallory->node_id);
  beat.mutable_heartbeat();
  beat.set_validator_statement(std::string(AsChars(copied)));
  const uint64_t refused = (*b)->counters().statements_refused;
  EXPECT_TRUE(RawSend(*stub, beat).ok());  // a heartbeat is still a heartbeat
  EXPECT_EQ((*b)->counters().statements_refused, refused + 1);
  EXPECT_FALSE((*b)->ValidatorOf(mallory->node_id).has_value());
}

// Sybil pressure: keys are free, so a node id proves nothing about
// usefulness; slots for bonded validators stay free for them.
TEST(TlsSybilTest, FreshIdentitiesCannotCrowdOutABondedValidator) {
  const crypto::Secp256k1PublicKey bonded =
      crypto::Secp256k1PublicKeyOf(ValidatorKey(9));
  const std::shared_ptr<const TlsIdentity> b_tls = Identity();
  TransportOptions bo = Options(b_tls);
  bo.shard_id = "root";
  bo.max_peers = 8;
  bo.reserved_validator_slots = 4;
  bo.is_bonded_validator = [bonded](const crypto::Secp256k1PublicKey& k) {
    return k == bonded;
  };
  Counter bh;
  absl::StatusOr<std::unique_ptr<Transport>> b = Transport::Start(bo, &bh, nullptr);
  ASSERT_TRUE(b.ok()) << b.status();

  constexpr int kSybils = 20;
  int admitted = 0, refused = 0;
  std::vector<std::unique_ptr<::routing::TransportLayer::Stub>> stubs;
  for (int i = 0; i < kSybils; ++i) {
    const std::shared_ptr<const TlsIdentity> sybil = Identity();
    stubs.push_back(TlsStub((*b)->port(), *sybil));
    ::routing::Protocol beat = Envelope(sybil->node_id);
    beat.mutable_heartbeat();
    const grpc::Status s = RawSend(*stubs.back(), beat);
    if (s.ok()) {
      ++admitted;
    } else if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++refused;
    }
  }
  EXPECT_EQ(admitted, 4) << "the unreserved slots";
  EXPECT_EQ(refused, kSybils - 4);
  EXPECT_EQ((*b)->counters().peers_refused, static_cast<uint64_t>(kSybils - 4));

  // The bonded validator still gets in, and is known as such.
  const std::shared_ptr<const TlsIdentity> v_tls = Identity();
  TransportOptions vo = Options(v_tls);
  vo.validator_statement = Statements(ValidatorKey(9), v_tls->node_id, "root");
  Counter vh;
  absl::StatusOr<std::unique_ptr<Transport>> v = Transport::Start(vo, &vh, nullptr);
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_TRUE((*v)->AddPeer((*b)->self()));
  ASSERT_TRUE(Eventually([&] {
    return Contains((*b)->Connected(), v_tls->node_id) &&
           (*b)->ValidatorOf(v_tls->node_id) == bonded;
  })) << "the bonded validator was crowded out";
}

TEST(TlsSybilTest, AValidatorAtAFullTableTakesTheSlotOfAnotherPeer) {
  const crypto::Secp256k1PublicKey bonded =
      crypto::Secp256k1PublicKeyOf(ValidatorKey(9));
  const std::shared_ptr<const TlsIdentity> b_tls = Identity();
  TransportOptions bo = Options(b_tls);
  bo.shard_id = "root";
  bo.max_peers = 2;
  bo.reserved_validator_slots = 0;  // every slot open to anyone
  bo.is_bonded_validator = [bonded](const crypto::Secp256k1PublicKey& k) {
    return k == bonded;
  };
  Counter bh;
  absl::StatusOr<std::unique_ptr<Transport>> b = Transport::Start(bo, &bh, nullptr);
  ASSERT_TRUE(b.ok()) << b.status();
  std::vector<std::unique_ptr<::routing::TransportLayer::Stub>> stubs;
  for (int i = 0; i < 2; ++i) {
    const std::shared_ptr<const TlsIdentity> other = Identity();
    stubs.push_back(TlsStub((*b)->port(), *other));
    ::routing::Protocol beat = Envelope(other->node_id);
    beat.mutable_heartbeat();
    ASSERT_TRUE(RawSend(*stubs.back(), beat).ok());
  }
  ASSERT_EQ((*b)->Known().size(), 2u);

  const std::shared_ptr<const TlsIdentity> v_tls = Identity();
  TransportOptions vo = Options(v_tls);
  vo.validator_statement = Statements(ValidatorKey(9), v_tls->node_id, "root");
  Counter vh;
  absl::StatusOr<std::unique_ptr<Transport>> v = Transport::Start(vo, &vh, nullptr);
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_TRUE((*v)->AddPeer((*b)->self()));
  ASSERT_TRUE(Eventually([&] {
    return Contains((*b)->Connected(), v_tls->node_id);
  })) << "the validator found no room";
  EXPECT_EQ((*b)->counters().peers_evicted, 1u);
  EXPECT_EQ((*b)->Known().size(), 2u);
}

}  // namespace
}  // namespace rnode::node::p2p

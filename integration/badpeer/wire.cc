#include "integration/badpeer/wire.h"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "CasperMessage.pb.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_certificate_verifier.h"
#include "grpcpp/security/tls_credentials_options.h"

namespace rnode::badpeer {
namespace {

constexpr char kSendMethod[] = "/routing.TransportLayer/Send";
// Nothing listens on port 1 of 127.0.0.1: the node's calls back fail fast.
constexpr uint32_t kDeadPort = 1;

// Accepts any server certificate: the attacker does not pin the node.
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

std::chrono::system_clock::time_point Deadline() {
  return std::chrono::system_clock::now() + kCallDeadline;
}

// Streams `chunks` in order and returns the node's verdict. Writes stop at
// the first one the node no longer reads.
grpc::Status StreamChunks(::routing::TransportLayer::Stub& stub,
                          const std::vector<::routing::Chunk>& chunks) {
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  ::routing::TLResponse resp;
  std::unique_ptr<grpc::ClientWriter<::routing::Chunk>> writer =
      stub.Stream(&ctx, &resp);
  for (const ::routing::Chunk& c : chunks) {
    if (!writer->Write(c)) break;
  }
  writer->WritesDone();
  return writer->Finish();
}

::routing::Chunk HeaderChunk(const ::routing::Header& h, int32_t length,
                             bool compressed) {
  ::routing::Chunk c;
  *c.mutable_header()->mutable_sender() = h.sender();
  c.mutable_header()->set_typeid_("BlockMessage");
  c.mutable_header()->set_compressed(compressed);
  c.mutable_header()->set_contentlength(length);
  c.mutable_header()->set_networkid(h.networkid());
  return c;
}

::routing::Chunk DataChunk(std::string bytes) {
  ::routing::Chunk c;
  c.mutable_data()->set_contentdata(std::move(bytes));
  return c;
}

// Raw bytes as the body of a Send (no protobuf encoding on our side).
grpc::Status SendRaw(grpc::GenericStub& stub, const std::string& bytes) {
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  grpc::Slice slice(bytes.data(), bytes.size());
  grpc::ByteBuffer req(&slice, 1);
  grpc::ByteBuffer resp;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, kSendMethod, grpc::StubOptions(), &req, &resp,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  return done.get_future().get();
}

// Well-formed TLRequests that break the protocol's rules, one per `i`.
::routing::TLRequest Nonsense(int i, const ::routing::Header& header,
                              std::mt19937_64& rng) {
  ::routing::TLRequest req;
  ::routing::Protocol* p = req.mutable_protocol();
  *p->mutable_header() = header;
  switch (i % 8) {
    case 0:  // no protocol at all
      req.clear_protocol();
      break;
    case 1:  // a protocol without a header
      p->clear_header();
      p->mutable_heartbeat();
      break;
    case 2:  // a sender id of the wrong length
      p->mutable_header()->mutable_sender()->set_id(RandomBytes(rng, 7));
      p->mutable_heartbeat();
      break;
    case 3:  // an empty host
      p->mutable_header()->mutable_sender()->clear_host();
      p->mutable_heartbeat();
      break;
    case 4:  // a port out of range
      p->mutable_header()->mutable_sender()->set_tcp_port(70000);
      p->mutable_heartbeat();
      break;
    case 5:  // a header and no message
      break;
    case 6:  // a packet type with spaces and control bytes
      p->mutable_packet()->set_typeid_("Block Request\x01");
      p->mutable_packet()->set_content(RandomBytes(rng, 32));
      break;
    case 7:  // another network
      p->mutable_header()->set_networkid("not-" + header.networkid());
      p->mutable_heartbeat();
      break;
  }
  return req;
}

}  // namespace

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng() & 0xff);
  return out;
}

std::shared_ptr<grpc::Channel> NewChannel(
    const std::string& target, const node::p2p::TlsIdentity& identity) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  grpc::experimental::TlsChannelCredentialsOptions tls;
  tls.set_certificate_provider(
      std::make_shared<grpc::experimental::StaticDataCertificateProvider>(
          std::vector<grpc::experimental::IdentityKeyCertPair>{
              {identity.key_pem, identity.certificate_pem}}));
  tls.watch_identity_key_cert_pairs();
  tls.set_verify_server_certs(false);
  tls.set_check_call_host(false);
  tls.set_certificate_verifier(
      grpc::experimental::ExternalCertificateVerifier::Create<
          AcceptAnyServer>());
  return grpc::CreateCustomChannel(
      target, grpc::experimental::TlsCredentials(tls), args);
}

Sender MakeSender(std::string_view network_id) {
  absl::StatusOr<node::p2p::TlsIdentity> identity = node::p2p::NewTlsIdentity();
  if (!identity.ok()) {
    std::fprintf(stderr, "badpeer: no TLS identity: %s\n",
                 identity.status().ToString().c_str());
    std::abort();
  }
  Sender s;
  s.identity =
      std::make_shared<const node::p2p::TlsIdentity>(*std::move(identity));
  ::routing::Header& h = s.header;
  h.mutable_sender()->set_id(std::string(AsChars(s.identity->node_id)));
  h.mutable_sender()->set_host("127.0.0.1");
  h.mutable_sender()->set_tcp_port(kDeadPort);
  h.mutable_sender()->set_udp_port(kDeadPort);
  h.set_networkid(std::string(network_id));
  return s;
}

grpc::Status SendProtocol(::routing::TransportLayer::Stub& stub,
                          const ::routing::Protocol& p,
                          ::routing::TLResponse* resp) {
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  ::routing::TLRequest req;
  *req.mutable_protocol() = p;
  return stub.Send(&ctx, req, resp);
}

void SendTally::Add(const grpc::Status& status,
                    const ::routing::TLResponse& resp) {
  if (!status.ok()) {
    first_message.emplace(status.error_code(), status.error_message());
    if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++shed;
    } else {
      ++failed[status.error_code()];
    }
  } else if (resp.has_internalservererror()) {
    const std::string& e = resp.internalservererror().error();
    ++(e.compare(0, 4, "busy") == 0 ? busy : other_errors);
  } else {
    ++acked;
  }
}

void SendTally::Merge(const SendTally& o) {
  first_message.insert(o.first_message.begin(), o.first_message.end());
  acked += o.acked;
  busy += o.busy;
  shed += o.shed;
  other_errors += o.other_errors;
  for (auto [code, n] : o.failed) failed[code] += n;
}

uint64_t SendTally::failures() const {
  uint64_t n = 0;
  for (auto [code, k] : failed) n += k;
  return n;
}

uint64_t SendTally::total() const {
  return acked + busy + shed + other_errors + failures();
}

std::string Codes(const std::map<int, uint64_t>& codes) {
  std::string out;
  for (auto [code, n] : codes) {
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " x code " +
           std::to_string(code);
  }
  return out.empty() ? "none" : out;
}

std::string Describe(const SendTally& t) {
  std::string out = std::to_string(t.acked) + " acknowledged, " +
                    std::to_string(t.busy) + " busy, " +
                    std::to_string(t.shed) + " shed by gRPC, " +
                    std::to_string(t.other_errors) +
                    " other errors, failed: " + Codes(t.failed);
  for (const auto& [code, message] : t.first_message) {
    out += "\n    code " + std::to_string(code) + ": " + message;
  }
  return out;
}

GarbageResult SendGarbage(const std::string& target,
                          std::string_view network_id, int frames,
                          std::mt19937_64& rng) {
  const Sender sender = MakeSender(network_id);
  std::shared_ptr<grpc::Channel> channel = NewChannel(target, *sender.identity);
  grpc::GenericStub generic(channel);
  const ::routing::Header& header = sender.header;
  GarbageResult r;
  r.frames = frames;
  for (int i = 0; i < frames; ++i) {
    std::string bytes;
    if (i % 2 == 0) {
      bytes = RandomBytes(rng, 1 + rng() % 4096);
    } else {
      bytes = Nonsense(i / 2, header, rng).SerializeAsString();
    }
    const grpc::Status s = SendRaw(generic, bytes);
    if (s.ok()) ++r.accepted;
    ++r.codes[s.error_code()];
  }
  return r;
}

OversizedResult SendOversized(const std::string& target,
                              std::string_view network_id, size_t unary_bytes,
                              int32_t huge_stream_bytes, std::mt19937_64& rng) {
  OversizedResult r;
  {
    const Sender sender = MakeSender(network_id);
    std::unique_ptr<::routing::TransportLayer::Stub> stub =
        ::routing::TransportLayer::NewStub(
            NewChannel(target, *sender.identity));
    ::routing::Protocol p;
    *p.mutable_header() = sender.header;
    p.mutable_packet()->set_typeid_("BlockHashMessage");
    p.mutable_packet()->set_content(RandomBytes(rng, unary_bytes));
    ::routing::TLResponse resp;
    r.unary = SendProtocol(*stub, p, &resp);
    r.huge_stream = StreamChunks(
        *stub, {HeaderChunk(sender.header, huge_stream_bytes, false),
                DataChunk(RandomBytes(rng, 1024))});
  }
  struct Case {
    const char* what;
    bool compressed;
    size_t announced;
    size_t sent;
  };
  for (const Case& c :
       {Case{"data beyond the announced length", false, 1000, 64 << 10},
        Case{"a compression that does not decode", true, 4096, 512}}) {
    // A sender of its own, so that its ban is its own.
    const Sender sender = MakeSender(network_id);
    const ::routing::Header& header = sender.header;
    std::unique_ptr<::routing::TransportLayer::Stub> stub =
        ::routing::TransportLayer::NewStub(
            NewChannel(target, *sender.identity));
    OversizedResult::BrokenStream b;
    b.what = c.what;
    b.stream = StreamChunks(
        *stub,
        {HeaderChunk(header, static_cast<int32_t>(c.announced), c.compressed),
         DataChunk(RandomBytes(rng, c.sent))});
    ::routing::Protocol p;
    *p.mutable_header() = header;
    p.mutable_heartbeat();
    ::routing::TLResponse resp;
    b.next_send = SendProtocol(*stub, p, &resp);
    r.broken.push_back(std::move(b));
  }
  return r;
}

SendTally Flood(const std::string& target, const Sender& sender,
                const std::string& type_id, int count, uint64_t seed,
                FloodOptions options) {
  struct Call {
    grpc::ClientContext ctx;
    ::routing::TLResponse resp;
    grpc::Status status;
    std::unique_ptr<grpc::ClientAsyncResponseReader<::routing::TLResponse>>
        reader;
  };
  const int threads_n = std::max(1, options.threads);
  std::vector<SendTally> tallies(static_cast<size_t>(threads_n));
  std::vector<std::thread> threads;
  for (int t = 0; t < threads_n; ++t) {
    const int n = count / threads_n + (t < count % threads_n ? 1 : 0);
    threads.emplace_back([&, t, n] {
      std::mt19937_64 rng(seed + static_cast<uint64_t>(t));
      std::unique_ptr<::routing::TransportLayer::Stub> stub =
          ::routing::TransportLayer::NewStub(
              NewChannel(target, *sender.identity));
      grpc::CompletionQueue cq;
      SendTally& tally = tallies[static_cast<size_t>(t)];
      int started = 0, finished = 0;
      while (finished < n) {
        while (started < n && started - finished < options.window) {
          ::casper::HasBlockRequestProto hash;
          hash.set_hash(RandomBytes(rng, 32));
          ::routing::TLRequest req;
          *req.mutable_protocol()->mutable_header() = sender.header;
          req.mutable_protocol()->mutable_packet()->set_typeid_(type_id);
          req.mutable_protocol()->mutable_packet()->set_content(
              hash.SerializeAsString());
          auto* call = new Call;
          call->ctx.set_deadline(Deadline());
          call->reader = stub->AsyncSend(&call->ctx, req, &cq);
          call->reader->Finish(&call->resp, &call->status, call);
          ++started;
        }
        void* tag = nullptr;
        bool ok = false;
        if (!cq.Next(&tag, &ok)) break;
        std::unique_ptr<Call> call(static_cast<Call*>(tag));
        ++finished;
        tally.Add(call->status, call->resp);
      }
      cq.Shutdown();
      void* tag = nullptr;
      bool ok = false;
      while (cq.Next(&tag, &ok)) delete static_cast<Call*>(tag);
    });
  }
  for (std::thread& t : threads) t.join();
  SendTally total;
  for (const SendTally& t : tallies) total.Merge(t);
  return total;
}

SendTally Bystander(const std::string& target, const Sender& sender,
                    const std::atomic<bool>& stop) {
  std::unique_ptr<::routing::TransportLayer::Stub> stub =
      ::routing::TransportLayer::NewStub(NewChannel(target, *sender.identity));
  ::routing::Protocol p;
  *p.mutable_header() = sender.header;
  p.mutable_heartbeat();
  SendTally tally;
  while (!stop.load()) {
    ::routing::TLResponse resp;
    const grpc::Status s = SendProtocol(*stub, p, &resp);
    tally.Add(s, resp);
  }
  return tally;
}

grpc::Status Heartbeat(const std::string& target, const Sender& sender) {
  std::unique_ptr<::routing::TransportLayer::Stub> stub =
      ::routing::TransportLayer::NewStub(NewChannel(target, *sender.identity));
  ::routing::Protocol p;
  *p.mutable_header() = sender.header;
  p.mutable_heartbeat();
  ::routing::TLResponse resp;
  return SendProtocol(*stub, p, &resp);
}

grpc::Status OverrunStream(const std::string& target, const Sender& connection,
                           const Sender& named) {
  std::unique_ptr<::routing::TransportLayer::Stub> stub =
      ::routing::TransportLayer::NewStub(
          NewChannel(target, *connection.identity));
  return StreamChunks(*stub, {HeaderChunk(named.header, 10, false),
                              DataChunk(std::string(4096, 'x'))});
}

SybilResult Sybils(const std::string& target, std::string_view network_id,
                   int identities, std::chrono::milliseconds interval,
                   const std::atomic<bool>& stop,
                   const std::function<void(const SybilResult&)>& joined) {
  struct Member {
    Sender sender;
    std::unique_ptr<::routing::TransportLayer::Stub> stub;
  };
  SybilResult r;
  r.identities = identities;
  std::vector<Member> admitted;
  ::routing::Protocol p;
  p.mutable_heartbeat();
  for (int i = 0; i < identities && !stop.load(); ++i) {
    Member m{MakeSender(network_id), nullptr};
    m.stub = ::routing::TransportLayer::NewStub(
        NewChannel(target, *m.sender.identity));
    *p.mutable_header() = m.sender.header;
    ::routing::TLResponse resp;
    const grpc::Status s = SendProtocol(*m.stub, p, &resp);
    if (s.ok()) {
      ++r.admitted;
      admitted.push_back(std::move(m));
    } else if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++r.refused;
    } else {
      ++r.codes[static_cast<int>(s.error_code())];
    }
  }
  joined(r);
  while (!stop.load()) {
    const auto next = std::chrono::steady_clock::now() + interval;
    for (Member& m : admitted) {
      *p.mutable_header() = m.sender.header;
      ::routing::TLResponse resp;
      if (!SendProtocol(*m.stub, p, &resp).ok()) ++r.keepalive_failures;
    }
    while (!stop.load() && std::chrono::steady_clock::now() < next) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  return r;
}

ImpersonationResult Impersonate(const std::string& target,
                                const Sender& attacker, const Sender& victim) {
  std::unique_ptr<::routing::TransportLayer::Stub> stub =
      ::routing::TransportLayer::NewStub(
          NewChannel(target, *attacker.identity));
  ImpersonationResult r;
  ::routing::Protocol p;
  *p.mutable_header() = victim.header;
  p.mutable_heartbeat();
  ::routing::TLResponse resp;
  r.heartbeat = SendProtocol(*stub, p, &resp);
  p.mutable_disconnect();
  r.disconnect = SendProtocol(*stub, p, &resp);
  return r;
}

}  // namespace rnode::badpeer

#include "node/cli/client.h"

#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <thread>

#include "DeployServiceV1.grpc.pb.h"
#include "ProposeServiceV1.grpc.pb.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "casper/deploy.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "util/bytes.h"

namespace rnode::node {
namespace {

// How often `deploy --wait` asks for the deploy's state.
constexpr auto kWaitPoll = std::chrono::milliseconds(100);

std::string ToJson(const google::protobuf::Message& m) {
  std::string json;
  google::protobuf::util::JsonPrintOptions o;
  o.add_whitespace = true;
  o.preserve_proto_field_names = true;
  o.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(m, &json, o);
  return json;
}

std::shared_ptr<grpc::Channel> Connect(const ClientOptions& c, int port) {
  return grpc::CreateChannel(absl::StrCat(c.host, ":", port),
                             grpc::InsecureChannelCredentials());
}

void Deadline(grpc::ClientContext& ctx, const ClientOptions& c) {
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::seconds(c.timeout_seconds));
}

int RpcFailed(const grpc::Status& s, const ClientOptions& c, int port,
              std::ostream& err) {
  err << "error: " << c.host << ":" << port << ": " << s.error_message()
      << "\n";
  return 2;
}

template <typename Reply>
int ServiceFailed(const Reply& r, std::ostream& err) {
  err << "error: " << absl::StrJoin(r.error().messages(), "; ") << "\n";
  return 1;
}

bool ReadText(const std::string& path, std::string* text, std::ostream& err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err << "error: cannot read " << path << "\n";
    return false;
  }
  text->assign(std::istreambuf_iterator<char>(in),
               std::istreambuf_iterator<char>());
  return true;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int ClientDeploy(const ClientOptions& c, const DeployOptions& d,
                 std::ostream& out, std::ostream& err) {
  std::string key_hex = d.private_key;
  if (key_hex.empty() && !d.private_key_file.empty() &&
      !ReadText(d.private_key_file, &key_hex, err)) {
    return 1;
  }
  absl::StatusOr<crypto::Secp256k1PrivateKey> key =
      crypto::ParseSecp256k1PrivateKeyHex(key_hex);
  if (!key.ok()) {
    err << "error: give the signing key as --private-key HEX or "
           "--private-key-file PATH ("
        << key.status().message() << ")\n";
    return 1;
  }
  casper::DeployData data;
  data.term = d.term;
  if (data.term.empty() && !d.term_file.empty() &&
      !ReadText(d.term_file, &data.term, err)) {
    return 1;
  }
  auto stub = ::casper::v1::DeployService::NewStub(Connect(c, c.port));
  data.valid_after_block_number = d.valid_after_block_number;
  if (data.valid_after_block_number < 0) {
    grpc::ClientContext ctx;
    Deadline(ctx, c);
    ::casper::BlocksQuery q;
    q.set_depth(1);
    auto reader = stub->getBlocks(&ctx, q);
    ::casper::v1::BlockInfoResponse r;
    data.valid_after_block_number = 0;
    while (reader->Read(&r)) {
      if (r.has_blockinfo()) {
        data.valid_after_block_number = std::max(data.valid_after_block_number,
                                                 r.blockinfo().blocknumber());
      }
    }
    grpc::Status s = reader->Finish();
    if (!s.ok()) return RpcFailed(s, c, c.port, err);
  }
  data.timestamp = NowMs();
  data.phlo_price = d.phlo_price;
  data.phlo_limit = d.phlo_limit;
  data.shard_id = d.shard_id;
  absl::StatusOr<casper::SignedDeploy> signed_deploy =
      casper::SignedDeploy::Sign(data, *key);
  if (!signed_deploy.ok()) {
    err << "error: " << signed_deploy.status().message() << "\n";
    return 1;
  }
  grpc::ClientContext ctx;
  Deadline(ctx, c);
  ::casper::v1::DeployResponse r;
  grpc::Status s = stub->doDeploy(&ctx, signed_deploy->ToProto(), &r);
  if (!s.ok()) return RpcFailed(s, c, c.port, err);
  if (r.has_error()) return ServiceFailed(r, err);
  out << r.result() << "\n" << std::flush;
  if (!d.wait) return 0;
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::seconds(d.wait_seconds);
  while (std::chrono::steady_clock::now() < until) {
    grpc::ClientContext wctx;
    Deadline(wctx, c);
    ::casper::DeployFinalizationStatusQuery q;
    const Bytes& sig = signed_deploy->sig();
    q.set_deploysig(std::string(sig.begin(), sig.end()));
    ::casper::v1::DeployFinalizationStatusResponse fr;
    grpc::Status ws = stub->deployFinalizationStatus(&wctx, q, &fr);
    if (!ws.ok()) return RpcFailed(ws, c, c.port, err);
    // FINALIZED only when the finalized state holds its effect (a copy a
    // merge rejected reads PENDING and goes in a block again); FAILED and
    // EXPIRED are final too.
    if (fr.has_status()) {
      const ::casper::DeployFinalizationStatusInfo& st = fr.status();
      const std::string block = HexEncode(AsBytes(st.latestblockhash()));
      const std::string rejections =
          st.rejectioncount() == 0
              ? ""
              : absl::StrCat(" (rejected by ", st.rejectioncount(),
                             " merges before)");
      switch (st.state()) {
        case ::casper::DEPLOY_STATE_FINALIZED:
          out << "Finalized in block " << block << rejections << "\n";
          return 0;
        case ::casper::DEPLOY_STATE_FAILED:
          err << "error: failed in block " << block << rejections
              << " (it ran with an error; its charge is kept)\n";
          return 1;
        case ::casper::DEPLOY_STATE_EXPIRED:
          err << "error: expired: its window closed before a block kept it"
              << rejections << "\n";
          return 1;
        default:
          break;
      }
    }
    std::this_thread::sleep_for(kWaitPoll);
  }
  err << "error: not finalized within " << d.wait_seconds << " s\n";
  return 1;
}

int ClientPropose(const ClientOptions& c, std::ostream& out,
                  std::ostream& err) {
  auto stub =
      ::casper::v1::ProposeService::NewStub(Connect(c, c.internal_port));
  grpc::ClientContext ctx;
  Deadline(ctx, c);
  ::casper::v1::ProposeResponse r;
  grpc::Status s = stub->propose(&ctx, ::casper::ProposeQuery(), &r);
  if (!s.ok()) return RpcFailed(s, c, c.internal_port, err);
  if (r.has_error()) return ServiceFailed(r, err);
  out << r.result() << "\n";
  return 0;
}

int ClientShowBlock(const ClientOptions& c, const std::string& hash,
                    std::ostream& out, std::ostream& err) {
  auto stub = ::casper::v1::DeployService::NewStub(Connect(c, c.port));
  grpc::ClientContext ctx;
  Deadline(ctx, c);
  ::casper::BlockQuery q;
  q.set_hash(hash);
  ::casper::v1::BlockResponse r;
  grpc::Status s = stub->getBlock(&ctx, q, &r);
  if (!s.ok()) return RpcFailed(s, c, c.port, err);
  if (r.has_error()) return ServiceFailed(r, err);
  out << ToJson(r.blockinfo());
  return 0;
}

int ClientShowBlocks(const ClientOptions& c, int depth, std::ostream& out,
                     std::ostream& err) {
  auto stub = ::casper::v1::DeployService::NewStub(Connect(c, c.port));
  grpc::ClientContext ctx;
  Deadline(ctx, c);
  ::casper::BlocksQuery q;
  q.set_depth(depth);
  auto reader = stub->getBlocks(&ctx, q);
  ::casper::v1::BlockInfoResponse r;
  while (reader->Read(&r)) {
    if (r.has_error()) return ServiceFailed(r, err);
    out << ToJson(r.blockinfo());
  }
  grpc::Status s = reader->Finish();
  if (!s.ok()) return RpcFailed(s, c, c.port, err);
  return 0;
}

int ClientLastFinalizedBlock(const ClientOptions& c, std::ostream& out,
                             std::ostream& err) {
  auto stub = ::casper::v1::DeployService::NewStub(Connect(c, c.port));
  grpc::ClientContext ctx;
  Deadline(ctx, c);
  ::casper::v1::LastFinalizedBlockResponse r;
  grpc::Status s =
      stub->lastFinalizedBlock(&ctx, ::casper::LastFinalizedBlockQuery(), &r);
  if (!s.ok()) return RpcFailed(s, c, c.port, err);
  if (r.has_error()) return ServiceFailed(r, err);
  out << ToJson(r.blockinfo());
  return 0;
}

int ClientIsFinalized(const ClientOptions& c, const std::string& hash,
                      std::ostream& out, std::ostream& err) {
  auto stub = ::casper::v1::DeployService::NewStub(Connect(c, c.port));
  grpc::ClientContext ctx;
  Deadline(ctx, c);
  ::casper::IsFinalizedQuery q;
  q.set_hash(hash);
  ::casper::v1::IsFinalizedResponse r;
  grpc::Status s = stub->isFinalized(&ctx, q, &r);
  if (!s.ok()) return RpcFailed(s, c, c.port, err);
  if (r.has_error()) return ServiceFailed(r, err);
  out << (r.isfinalized() ? "true" : "false") << "\n";
  return 0;
}

int ClientFindDeploy(const ClientOptions& c, const std::string& deploy_id,
                     std::ostream& out, std::ostream& err) {
  absl::StatusOr<Bytes> id = HexDecode(deploy_id);
  if (!id.ok()) {
    err << "error: --deploy-id must be hex\n";
    return 1;
  }
  auto stub = ::casper::v1::DeployService::NewStub(Connect(c, c.port));
  grpc::ClientContext ctx;
  Deadline(ctx, c);
  ::casper::FindDeployQuery q;
  q.set_deployid(std::string(id->begin(), id->end()));
  ::casper::v1::FindDeployResponse r;
  grpc::Status s = stub->findDeploy(&ctx, q, &r);
  if (!s.ok()) return RpcFailed(s, c, c.port, err);
  if (r.has_error()) return ServiceFailed(r, err);
  out << ToJson(r);
  return 0;
}

int ClientStatus(const ClientOptions& c, std::ostream& out, std::ostream& err) {
  auto stub = ::casper::v1::DeployService::NewStub(Connect(c, c.port));
  grpc::ClientContext ctx;
  Deadline(ctx, c);
  ::casper::v1::StatusResponse r;
  grpc::Status s = stub->status(&ctx, google::protobuf::Empty(), &r);
  if (!s.ok()) return RpcFailed(s, c, c.port, err);
  if (r.has_error()) return ServiceFailed(r, err);
  out << ToJson(r.status());
  return 0;
}

}  // namespace rnode::node

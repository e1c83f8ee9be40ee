#include "node/api/grpc_api.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "DeployServiceV1.grpc.pb.h"
#include "ProposeServiceV1.grpc.pb.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/resource_quota.h"
#include "node/api/api_common.h"
#include "node/views/block_views.h"
#include "node/views/par_views.h"
#include "util/logging.h"
#include "util/mutex.h"

namespace rnode::node {
namespace {

using casper::block::Block;
using grpc::ServerContext;
using grpc::Status;

// How long Stop lets calls in flight finish before cancelling them.
constexpr auto kShutdownGrace = std::chrono::seconds(2);

template <typename Reply>
Status Fail(Reply* reply, const absl::Status& s) {
  reply->mutable_error()->add_messages(std::string(s.message()));
  return Status::OK;
}

absl::StatusOr<Hash32> ParseHash(std::string_view hex) {
  std::string h(hex);
  if (h.size() % 2 == 1) h = "0" + h;  // the public node pads odd lengths
  absl::StatusOr<Hash32> hash = HexDecodeFixed<32>(h);
  if (!hash.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", std::string(hex), "' is not a block hash (64 hex characters)"));
  }
  return *hash;
}

class DeployServiceImpl final : public ::casper::v1::DeployService::Service {
 public:
  explicit DeployServiceImpl(Node* node) : node_(node) {}

  Status doDeploy(ServerContext*, const ::casper::DeployDataProto* request,
                  ::casper::v1::DeployResponse* reply) override {
    absl::StatusOr<Bytes> id = node_->Deploy(*request);
    if (!id.ok()) return Fail(reply, id.status());
    reply->set_result(DeploySuccessText(*id));
    return Status::OK;
  }

  Status getBlock(ServerContext*, const ::casper::BlockQuery* request,
                  ::casper::v1::BlockResponse* reply) override {
    absl::StatusOr<Block> b = node_->FindBlock(request->hash());
    if (!b.ok()) return Fail(reply, b.status());
    *reply->mutable_blockinfo() =
        views::BlockInfoOf(*b, node_->dag().IsFinalized(b->hash));
    return Status::OK;
  }

  Status getBlocks(
      ServerContext* ctx, const ::casper::BlocksQuery* request,
      grpc::ServerWriter<::casper::v1::BlockInfoResponse>* writer) override {
    const int64_t top = node_->dag().MaxHeight();
    const int64_t depth = request->depth() <= 0 ? 1 : request->depth();
    return WriteBlocks(ctx, node_->BlocksByHeight(top - depth + 1, top),
                       writer);
  }

  Status getBlocksByHeights(
      ServerContext* ctx, const ::casper::BlocksQueryByHeight* request,
      grpc::ServerWriter<::casper::v1::BlockInfoResponse>* writer) override {
    if (request->endblocknumber() < request->startblocknumber()) {
      return Status(grpc::StatusCode::INVALID_ARGUMENT,
                    "endBlockNumber is below startBlockNumber");
    }
    return WriteBlocks(ctx,
                       node_->BlocksByHeight(request->startblocknumber(),
                                             request->endblocknumber()),
                       writer);
  }

  Status showMainChain(
      ServerContext* ctx, const ::casper::BlocksQuery* request,
      grpc::ServerWriter<::casper::v1::BlockInfoResponse>* writer) override {
    return WriteBlocks(ctx, node_->MainChain(request->depth()), writer);
  }

  Status findDeploy(ServerContext*, const ::casper::FindDeployQuery* request,
                    ::casper::v1::FindDeployResponse* reply) override {
    absl::StatusOr<DeployStatus> s =
        node_->FindDeploy(AsBytes(request->deployid()));
    if (s.ok() && !s->block.has_value()) {
      s = absl::NotFoundError(
          absl::StrCat("Couldn't find block containing deploy with id: ",
                       HexEncode(AsBytes(request->deployid()))));
    }
    if (!s.ok()) return Fail(reply, s.status());
    absl::StatusOr<Block> b = node_->GetBlock(*s->block);
    if (!b.ok()) return Fail(reply, b.status());
    *reply->mutable_blockinfo() =
        views::LightBlockInfoOf(*b, node_->dag().IsFinalized(b->hash));
    reply->set_finalizationstate(StateProto(s->state));
    reply->set_rejectioncount(s->rejection_count);
    return Status::OK;
  }

  Status deployFinalizationStatus(
      ServerContext*, const ::casper::DeployFinalizationStatusQuery* request,
      ::casper::v1::DeployFinalizationStatusResponse* reply) override {
    absl::StatusOr<DeployStatus> s =
        node_->FindDeploy(AsBytes(request->deploysig()));
    if (!s.ok()) return Fail(reply, s.status());
    ::casper::DeployFinalizationStatusInfo* info = reply->mutable_status();
    info->set_state(StateProto(s->state));
    info->set_rejectioncount(s->rejection_count);
    if (s->block.has_value()) {
      info->set_latestblockhash(s->block->data(), s->block->size());
    }
    return Status::OK;
  }

  Status lastFinalizedBlock(
      ServerContext*, const ::casper::LastFinalizedBlockQuery*,
      ::casper::v1::LastFinalizedBlockResponse* reply) override {
    absl::StatusOr<Block> b = node_->LastFinalizedBlock();
    if (!b.ok()) return Fail(reply, b.status());
    *reply->mutable_blockinfo() = views::BlockInfoOf(*b, true);
    return Status::OK;
  }

  Status isFinalized(ServerContext*, const ::casper::IsFinalizedQuery* request,
                     ::casper::v1::IsFinalizedResponse* reply) override {
    absl::StatusOr<Hash32> h = ParseHash(request->hash());
    if (!h.ok()) return Fail(reply, h.status());
    reply->set_isfinalized(node_->dag().IsFinalized(*h));
    return Status::OK;
  }

  Status exploratoryDeploy(
      ServerContext*, const ::casper::ExploratoryDeployQuery* request,
      ::casper::v1::ExploratoryDeployResponse* reply) override {
    std::optional<Hash32> at;
    if (!request->blockhash().empty()) {
      absl::StatusOr<Block> b = node_->FindBlock(request->blockhash());
      if (!b.ok()) return Fail(reply, b.status());
      at = b->hash;
    }
    absl::StatusOr<Exploration> e =
        node_->Explore(request->term(), at, request->useprestatehash());
    if (!e.ok()) {
      if (e.status().code() == absl::StatusCode::kUnavailable) {
        return Status(grpc::StatusCode::UNAVAILABLE,
                      std::string(e.status().message()));
      }
      return Fail(reply, e.status());
    }
    ::casper::DataWithBlockInfo* result = reply->mutable_result();
    for (const auto& p : e->data) {
      absl::StatusOr<::rhoapi::Par> par = views::ParToProto(*p);
      if (!par.ok()) return Fail(reply, par.status());
      *result->add_postblockdata() = *std::move(par);
    }
    absl::StatusOr<Block> b = node_->GetBlock(e->block);
    if (!b.ok()) return Fail(reply, b.status());
    *result->mutable_block() =
        views::LightBlockInfoOf(*b, node_->dag().IsFinalized(b->hash));
    reply->set_cost(static_cast<uint64_t>(e->cost));
    return Status::OK;
  }

  Status getDataAtName(ServerContext*,
                       const ::casper::DataAtNameByBlockQuery* request,
                       ::casper::v1::RhoDataResponse* reply) override {
    absl::StatusOr<rholang::ir::ParPtr> name =
        views::ParFromProto(request->par());
    if (!name.ok()) return Fail(reply, name.status());
    absl::StatusOr<Block> b = node_->FindBlock(request->blockhash());
    if (!b.ok()) return Fail(reply, b.status());
    absl::StatusOr<std::vector<rholang::ir::ParPtr>> data =
        node_->DataAtName(*name, b->hash, request->useprestatehash());
    if (!data.ok()) return Fail(reply, data.status());
    ::casper::v1::RhoDataPayload* payload = reply->mutable_payload();
    for (const auto& p : *data) {
      absl::StatusOr<::rhoapi::Par> par = views::ParToProto(*p);
      if (!par.ok()) return Fail(reply, par.status());
      *payload->add_par() = *std::move(par);
    }
    *payload->mutable_block() =
        views::LightBlockInfoOf(*b, node_->dag().IsFinalized(b->hash));
    return Status::OK;
  }

  Status listenForDataAtName(
      ServerContext*, const ::casper::DataAtNameQuery* request,
      ::casper::v1::ListeningNameDataResponse* reply) override {
    if (request->depth() > node_->config().max_blocks_limit) {
      return Fail(reply, absl::InvalidArgumentError(absl::StrCat(
                             "Your request depth ", request->depth(),
                             " exceeds the maximum depth limit ",
                             node_->config().max_blocks_limit)));
    }
    absl::StatusOr<rholang::ir::ParPtr> name =
        views::ParFromProto(request->name());
    if (!name.ok()) return Fail(reply, name.status());
    absl::StatusOr<std::vector<Block>> chain =
        node_->MainChain(std::max(1, request->depth()));
    if (!chain.ok()) return Fail(reply, chain.status());
    ::casper::v1::ListeningNameDataPayload* payload = reply->mutable_payload();
    for (const Block& b : *chain) {
      absl::StatusOr<std::vector<rholang::ir::ParPtr>> data =
          node_->DataAtName(*name, b.hash, false);
      if (!data.ok()) return Fail(reply, data.status());
      if (data->empty()) continue;
      ::casper::DataWithBlockInfo* entry = payload->add_blockinfo();
      for (const auto& p : *data) {
        absl::StatusOr<::rhoapi::Par> par = views::ParToProto(*p);
        if (!par.ok()) return Fail(reply, par.status());
        *entry->add_postblockdata() = *std::move(par);
      }
      *entry->mutable_block() =
          views::LightBlockInfoOf(b, node_->dag().IsFinalized(b.hash));
    }
    payload->set_length(payload->blockinfo_size());
    return Status::OK;
  }

  Status bondStatus(ServerContext*, const ::casper::BondStatusQuery* request,
                    ::casper::v1::BondStatusResponse* reply) override {
    absl::StatusOr<bool> bonded =
        node_->IsBonded(AsBytes(request->publickey()));
    if (!bonded.ok()) return Fail(reply, bonded.status());
    reply->set_isbonded(*bonded);
    return Status::OK;
  }

  Status status(ServerContext*, const google::protobuf::Empty*,
                ::casper::v1::StatusResponse* reply) override {
    *reply->mutable_status() = StatusOf(*node_);
    return Status::OK;
  }

 private:
  Status WriteBlocks(ServerContext* ctx,
                     const absl::StatusOr<std::vector<Block>>& blocks,
                     grpc::ServerWriter<::casper::v1::BlockInfoResponse>* w) {
    if (!blocks.ok()) {
      return Status(grpc::StatusCode::INTERNAL,
                    std::string(blocks.status().message()));
    }
    for (const Block& b : *blocks) {
      if (ctx->IsCancelled()) return Status::CANCELLED;
      ::casper::v1::BlockInfoResponse r;
      *r.mutable_blockinfo() =
          views::LightBlockInfoOf(b, node_->dag().IsFinalized(b.hash));
      if (!w->Write(r)) return Status::CANCELLED;
    }
    return Status::OK;
  }

  Node* node_;
};

class ProposeServiceImpl final : public ::casper::v1::ProposeService::Service {
 public:
  explicit ProposeServiceImpl(Node* node) : node_(node) {}

  Status propose(ServerContext*, const ::casper::ProposeQuery*,
                 ::casper::v1::ProposeResponse* reply) override {
    absl::StatusOr<Hash32> made = node_->Propose();
    if (!made.ok()) return Fail(reply, made.status());
    std::string text = ProposeSuccessText(*made);
    {
      MutexLock lock(&mu_);
      last_ = text;
    }
    reply->set_result(text);
    return Status::OK;
  }

  Status proposeResult(ServerContext*, const ::casper::ProposeResultQuery*,
                       ::casper::v1::ProposeResultResponse* reply) override {
    MutexLock lock(&mu_);
    if (last_.empty()) {
      return Fail(reply, absl::NotFoundError("No propose has run yet."));
    }
    reply->set_result(last_);
    return Status::OK;
  }

 private:
  Node* node_;
  Mutex mu_;
  std::string last_ ABSL_GUARDED_BY(mu_);
};

std::unique_ptr<grpc::Server> Build(
    const std::string& address, int* port, const NodeConfig& config,
    const std::vector<grpc::Service*>& services) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), port);
  grpc::ResourceQuota quota(absl::StrCat("rnode-api-", address));
  // Each synchronous handler takes a thread; the quota bounds them (plus
  // the few the server keeps for polling).
  quota.SetMaxThreads(static_cast<int>(config.api_max_in_flight) + 2);
  // And the memory gRPC's core accounts (read and write buffers, messages
  // being received): under pressure it reclaims idle connections' buffers
  // and stops reading more. Four of the largest messages, at least 128 MiB.
  quota.Resize(std::max<size_t>(
      kGrpcMemoryFloorBytes,
      4 * static_cast<size_t>(config.grpc_max_recv_message_bytes)));
  builder.SetResourceQuota(quota);
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(config.grpc_max_recv_message_bytes));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             kMaxStreamsPerConnection);
  // gRPC sets SO_REUSEPORT by default: a second node of the same user
  // could then bind this port too and answer a share of the calls.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  for (grpc::Service* s : services) builder.RegisterService(s);
  return builder.BuildAndStart();
}

}  // namespace

struct GrpcApi::Impl {
  explicit Impl(Node* node)
      : deploys(node), internal_deploys(node), proposes(node) {}
  // A service object serves one server.
  DeployServiceImpl deploys;
  DeployServiceImpl internal_deploys;
  ProposeServiceImpl proposes;
  std::unique_ptr<grpc::Server> external;
  std::unique_ptr<grpc::Server> internal;
  int external_port = 0;
  int internal_port = 0;
};

GrpcApi::GrpcApi(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GrpcApi::~GrpcApi() { Stop(); }

absl::StatusOr<std::unique_ptr<GrpcApi>> GrpcApi::Start(
    Node* node, const NodeConfig& config) {
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  auto impl = std::make_unique<Impl>(node);
  const std::string external =
      absl::StrCat(config.api_host, ":", config.port_grpc_external);
  impl->external =
      Build(external, &impl->external_port, config, {&impl->deploys});
  if (impl->external == nullptr || impl->external_port == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", external, " (external gRPC API)"));
  }
  const std::string internal =
      absl::StrCat(config.api_admin_host, ":", config.port_grpc_internal);
  impl->internal = Build(internal, &impl->internal_port, config,
                         {&impl->internal_deploys, &impl->proposes});
  if (impl->internal == nullptr || impl->internal_port == 0) {
    impl->external->Shutdown();
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", internal, " (internal gRPC API)"));
  }
  return std::unique_ptr<GrpcApi>(new GrpcApi(std::move(impl)));
}

void GrpcApi::Stop() {
  if (impl_ == nullptr) return;
  const auto deadline = std::chrono::system_clock::now() + kShutdownGrace;
  for (auto* server : {&impl_->external, &impl_->internal}) {
    if (*server != nullptr) {
      (*server)->Shutdown(deadline);
      (*server)->Wait();
      server->reset();
    }
  }
}

int GrpcApi::external_port() const { return impl_->external_port; }
int GrpcApi::internal_port() const { return impl_->internal_port; }

}  // namespace rnode::node

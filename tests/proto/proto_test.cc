// Wire-compatibility checks of proto/: field numbers and types that public
// clients rely on, gRPC method paths, and the signed deploy encoding.
#include <cstdint>
#include <string>
#include <vector>

#include "CasperMessage.pb.h"
#include "DeployServiceCommon.pb.h"
#include "DeployServiceV1.grpc.pb.h"
#include "DeployServiceV1.pb.h"
#include "ProposeServiceV1.grpc.pb.h"
#include "ProposeServiceV1.pb.h"
#include "RhoTypes.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "util/bytes.h"

namespace rnode {
namespace {

using ::google::protobuf::Descriptor;
using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::MethodDescriptor;
using ::google::protobuf::ServiceDescriptor;
using ::google::protobuf::util::MessageDifferencer;

constexpr auto kBool = FieldDescriptor::TYPE_BOOL;
constexpr auto kBytes = FieldDescriptor::TYPE_BYTES;
constexpr auto kFloat = FieldDescriptor::TYPE_FLOAT;
constexpr auto kInt32 = FieldDescriptor::TYPE_INT32;
constexpr auto kInt64 = FieldDescriptor::TYPE_INT64;
constexpr auto kMessage = FieldDescriptor::TYPE_MESSAGE;
constexpr auto kString = FieldDescriptor::TYPE_STRING;
constexpr auto kUint32 = FieldDescriptor::TYPE_UINT32;
constexpr auto kUint64 = FieldDescriptor::TYPE_UINT64;

struct FieldSpec {
  int number;
  const char* name;
  FieldDescriptor::Type type;
  bool repeated = false;
  // Full name of the message type, for message fields.
  const char* message_type = nullptr;
};

// Checks that `d` has exactly the fields in `specs`, nothing more.
void ExpectFields(const Descriptor* d, const std::vector<FieldSpec>& specs) {
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->field_count(), static_cast<int>(specs.size())) << d->full_name();
  for (const FieldSpec& spec : specs) {
    SCOPED_TRACE(d->full_name() + "." + spec.name);
    const FieldDescriptor* f = d->FindFieldByNumber(spec.number);
    ASSERT_NE(f, nullptr) << "no field number " << spec.number;
    EXPECT_EQ(f->name(), spec.name);
    EXPECT_EQ(f->type(), spec.type) << f->type_name();
    EXPECT_EQ(f->is_repeated(), spec.repeated);
    if (spec.message_type != nullptr) {
      ASSERT_NE(f->message_type(), nullptr);
      EXPECT_EQ(f->message_type()->full_name(), spec.message_type);
    }
  }
}

TEST(DeployDataProtoTest, FieldNumbersAndTypesMatchPublicClients) {
  EXPECT_EQ(casper::DeployDataProto::descriptor()->full_name(),
            "casper.DeployDataProto");
  ExpectFields(casper::DeployDataProto::descriptor(),
               {
                   {1, "deployer", kBytes},
                   {2, "term", kString},
                   {3, "timestamp", kInt64},
                   {4, "sig", kBytes},
                   {5, "sigAlgorithm", kString},
                   {7, "phloPrice", kInt64},
                   {8, "phloLimit", kInt64},
                   {10, "validAfterBlockNumber", kInt64},
                   {11, "shardId", kString},
                   {12, "language", kString},
                   {13, "expirationTimestamp", kInt64},
               });
}

TEST(LightBlockInfoTest, FieldNumbersAndTypesMatchPublicClients) {
  ExpectFields(
      casper::LightBlockInfo::descriptor(),
      {
          {1, "blockHash", kString},
          {2, "sender", kString},
          {3, "seqNum", kInt64},
          {4, "sig", kString},
          {5, "sigAlgorithm", kString},
          {6, "shardId", kString},
          {7, "extraBytes", kBytes},
          {8, "version", kInt64},
          {9, "timestamp", kInt64},
          {10, "headerExtraBytes", kBytes},
          {11, "parentsHashList", kString, true},
          {12, "blockNumber", kInt64},
          {13, "preStateHash", kString},
          {14, "postStateHash", kString},
          {15, "bodyExtraBytes", kBytes},
          {16, "bonds", kMessage, true, "casper.BondInfo"},
          {17, "blockSize", kString},
          {18, "deployCount", kInt32},
          {19, "faultTolerance", kFloat},
          {20, "justifications", kMessage, true, "casper.JustificationInfo"},
          {21, "rejectedDeploys", kMessage, true, "casper.RejectedDeployInfo"},
          {22, "isFinalized", kBool},
      });
}

TEST(DeployInfoTest, FieldNumbersAndTypesMatchPublicClients) {
  ExpectFields(casper::DeployInfo::descriptor(),
               {
                   {1, "deployer", kString},
                   {2, "term", kString},
                   {3, "timestamp", kInt64},
                   {4, "sig", kString},
                   {5, "sigAlgorithm", kString},
                   {7, "phloPrice", kInt64},
                   {8, "phloLimit", kInt64},
                   {9, "validAfterBlockNumber", kInt64},
                   {10, "cost", kUint64},
                   {11, "errored", kBool},
                   {12, "systemDeployError", kString},
                   {13, "transfers", kMessage, true, "casper.TransferInfo"},
                   {14, "transfersAvailable", kBool},
               });
}

TEST(BlockMessageProtoTest, FieldNumbersAndTypesMatchPeers) {
  ExpectFields(
      casper::BlockMessageProto::descriptor(),
      {
          {1, "blockHash", kBytes},
          {2, "header", kMessage, false, "casper.HeaderProto"},
          {3, "body", kMessage, false, "casper.BodyProto"},
          {4, "justifications", kMessage, true, "casper.JustificationProto"},
          {5, "sender", kBytes},
          {6, "seqNum", kInt32},
          {7, "sig", kBytes},
          {8, "sigAlgorithm", kString},
          {9, "shardId", kString},
          {10, "extraBytes", kBytes},
      });
}

TEST(HeaderProtoTest, FieldNumbersAndTypesMatchPeers) {
  ExpectFields(casper::HeaderProto::descriptor(),
               {
                   {1, "parentsHashList", kBytes, true},
                   {5, "timestamp", kInt64},
                   {6, "version", kInt64},
                   {7, "extraBytes", kBytes},
               });
}

TEST(BodyProtoTest, FieldNumbersAndTypesMatchPeers) {
  ExpectFields(
      casper::BodyProto::descriptor(),
      {
          {1, "state", kMessage, false, "casper.RChainStateProto"},
          {2, "deploys", kMessage, true, "casper.ProcessedDeployProto"},
          {3, "systemDeploys", kMessage, true,
           "casper.ProcessedSystemDeployProto"},
          {4, "extraBytes", kBytes},
          {5, "rejectedDeploys", kMessage, true, "casper.RejectedDeployProto"},
          {6, "appliedFromScope", kBytes, true},
          {7, "mergeBase", kBytes},
      });
}

TEST(StatusTest, FieldNumbersAndTypesMatchPublicClients) {
  ExpectFields(casper::Status::descriptor(),
               {
                   {1, "version", kMessage, false, "casper.VersionInfo"},
                   {2, "address", kString},
                   {3, "networkId", kString},
                   {4, "shardId", kString},
                   {5, "peers", kInt32},
                   {6, "nodes", kInt32},
                   {7, "minPhloPrice", kInt64},
                   {8, "peerList", kMessage, true, "casper.PeerInfo"},
                   {9, "nativeTokenName", kString},
                   {10, "nativeTokenSymbol", kString},
                   {11, "nativeTokenDecimals", kUint32},
                   {12, "lastFinalizedBlockNumber", kInt64},
                   {13, "isValidator", kBool},
                   {14, "isReadOnly", kBool},
                   {15, "isReady", kBool},
                   {16, "currentEpoch", kInt64},
                   {17, "epochLength", kInt32},
               });
}

struct MethodSpec {
  const char* name;
  const char* input;
  const char* output;
  bool server_streaming = false;
};

std::string FullPath(const MethodDescriptor* m) {
  return "/" + m->service()->full_name() + "/" + m->name();
}

// Checks that `service` is `full_name` and has exactly the methods in `specs`,
// none client-streaming, each routed at "/<full_name>/<method>".
void ExpectMethods(const ServiceDescriptor* service, const char* full_name,
                   const std::vector<MethodSpec>& specs) {
  ASSERT_NE(service, nullptr);
  EXPECT_EQ(service->full_name(), full_name);
  EXPECT_EQ(service->method_count(), static_cast<int>(specs.size()));
  for (const MethodSpec& spec : specs) {
    SCOPED_TRACE(spec.name);
    const MethodDescriptor* m = service->FindMethodByName(spec.name);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->input_type()->full_name(), spec.input);
    EXPECT_EQ(m->output_type()->full_name(), spec.output);
    EXPECT_EQ(m->server_streaming(), spec.server_streaming);
    EXPECT_FALSE(m->client_streaming());
    EXPECT_EQ(FullPath(m), std::string("/") + full_name + "/" + spec.name);
  }
}

TEST(DeployServiceTest, MethodsAndStreamingMatchPublicClients) {
  const ServiceDescriptor* service =
      casper::v1::DeployResponse::descriptor()->file()->FindServiceByName(
          "DeployService");
  EXPECT_STREQ(casper::v1::DeployService::service_full_name(),
               "casper.v1.DeployService");
  ExpectMethods(
      service, "casper.v1.DeployService",
      {
          {"doDeploy", "casper.DeployDataProto", "casper.v1.DeployResponse"},
          {"getBlock", "casper.BlockQuery", "casper.v1.BlockResponse"},
          {"visualizeDag", "casper.VisualizeDagQuery",
           "casper.v1.VisualizeBlocksResponse", true},
          {"machineVerifiableDag", "casper.MachineVerifyQuery",
           "casper.v1.MachineVerifyResponse"},
          {"showMainChain", "casper.BlocksQuery", "casper.v1.BlockInfoResponse",
           true},
          {"getBlocks", "casper.BlocksQuery", "casper.v1.BlockInfoResponse",
           true},
          {"getDataAtName", "casper.DataAtNameByBlockQuery",
           "casper.v1.RhoDataResponse"},
          {"listenForDataAtName", "casper.DataAtNameQuery",
           "casper.v1.ListeningNameDataResponse"},
          {"listenForContinuationAtName", "casper.ContinuationAtNameQuery",
           "casper.v1.ContinuationAtNameResponse"},
          {"findDeploy", "casper.FindDeployQuery",
           "casper.v1.FindDeployResponse"},
          {"previewPrivateNames", "casper.PrivateNamePreviewQuery",
           "casper.v1.PrivateNamePreviewResponse"},
          {"lastFinalizedBlock", "casper.LastFinalizedBlockQuery",
           "casper.v1.LastFinalizedBlockResponse"},
          {"isFinalized", "casper.IsFinalizedQuery",
           "casper.v1.IsFinalizedResponse"},
          {"deployFinalizationStatus", "casper.DeployFinalizationStatusQuery",
           "casper.v1.DeployFinalizationStatusResponse"},
          {"bondStatus", "casper.BondStatusQuery",
           "casper.v1.BondStatusResponse"},
          {"exploratoryDeploy", "casper.ExploratoryDeployQuery",
           "casper.v1.ExploratoryDeployResponse"},
          {"getBlocksByHeights", "casper.BlocksQueryByHeight",
           "casper.v1.BlockInfoResponse", true},
          {"getEventByHash", "casper.ReportQuery",
           "casper.v1.EventInfoResponse"},
          {"status", "google.protobuf.Empty", "casper.v1.StatusResponse"},
      });
}

TEST(DeployServiceTest, FullMethodPathsAreTheGrpcRoutes) {
  const ServiceDescriptor* service =
      casper::v1::DeployResponse::descriptor()->file()->FindServiceByName(
          "DeployService");
  ASSERT_NE(service, nullptr);
  const std::vector<std::string> expected = {
      "/casper.v1.DeployService/doDeploy",
      "/casper.v1.DeployService/getBlocks",
      "/casper.v1.DeployService/findDeploy",
      "/casper.v1.DeployService/listenForDataAtName",
      "/casper.v1.DeployService/deployFinalizationStatus",
      "/casper.v1.DeployService/status",
  };
  std::vector<std::string> paths;
  for (int i = 0; i < service->method_count(); ++i) {
    paths.push_back(FullPath(service->method(i)));
  }
  for (const std::string& path : expected) {
    EXPECT_THAT(paths, ::testing::Contains(path));
  }
}

TEST(ProposeServiceTest, MethodsAndPathsMatchPublicClients) {
  const ServiceDescriptor* service =
      casper::v1::ProposeResponse::descriptor()->file()->FindServiceByName(
          "ProposeService");
  ASSERT_NE(service, nullptr);
  EXPECT_STREQ(casper::v1::ProposeService::service_full_name(),
               "casper.v1.ProposeService");
  ExpectMethods(
      service, "casper.v1.ProposeService",
      {
          {"propose", "casper.ProposeQuery", "casper.v1.ProposeResponse"},
          {"proposeResult", "casper.ProposeResultQuery",
           "casper.v1.ProposeResultResponse"},
      });
  EXPECT_EQ(FullPath(service->FindMethodByName("propose")),
            "/casper.v1.ProposeService/propose");
  EXPECT_EQ(FullPath(service->FindMethodByName("proposeResult")),
            "/casper.v1.ProposeService/proposeResult");
}

struct SignedSubsetVector {
  const char* label;
  int64_t valid_after_block_number;
  int64_t expiration_timestamp;
  const char* hex;
};

// The signed bytes are a fresh DeployDataProto holding only the signed
// fields; zero values (vabn 0, no expiration) are absent on the wire.
TEST(DeployDataProtoTest, SignedSubsetEncodingMatchesPublicVector) {
  const SignedSubsetVector vectors[] = {
      {"vabn 0, no expiration", 0, 0,
       "12126e6577207820696e207b207821283129207d1880d095ffbc31380140a08d065a04"
       "726f6f74"},
      {"vabn -1, expiration set", -1, 1700000060000,
       "12126e6577207820696e207b207821283129207d1880d095ffbc31380140a08d0650ff"
       "ffffffffffffffff015a04726f6f7468e0a499ffbc31"},
  };
  for (const SignedSubsetVector& v : vectors) {
    SCOPED_TRACE(v.label);
    casper::DeployDataProto signed_subset;
    signed_subset.set_term("new x in { x!(1) }");
    signed_subset.set_timestamp(1700000000000);
    signed_subset.set_phloprice(1);
    signed_subset.set_phlolimit(100000);
    signed_subset.set_validafterblocknumber(v.valid_after_block_number);
    signed_subset.set_shardid("root");
    signed_subset.set_expirationtimestamp(v.expiration_timestamp);
    std::string bytes;
    ASSERT_TRUE(signed_subset.SerializeToString(&bytes));
    EXPECT_EQ(HexEncode(AsBytes(bytes)), v.hex);
  }
}

TEST(DeployDataProtoTest, UnsignedFieldsStayOutOfTheSignedSubset) {
  casper::DeployDataProto full;
  full.set_deployer(std::string(65, '\x04'));
  full.set_term("Nil");
  full.set_sig("sig");
  full.set_sigalgorithm("secp256k1");
  full.set_language("rholang");

  casper::DeployDataProto signed_subset;
  signed_subset.set_term(full.term());
  std::string bytes;
  ASSERT_TRUE(signed_subset.SerializeToString(&bytes));
  EXPECT_EQ(HexEncode(AsBytes(bytes)), "12034e696c");
}

casper::BlockMessageProto SampleBlock() {
  casper::BlockMessageProto block;
  block.set_blockhash(std::string(32, '\x11'));
  block.set_sender(std::string(65, '\x04'));
  block.set_seqnum(7);
  block.set_sig("\x30\x44signature");
  block.set_sigalgorithm("secp256k1");
  block.set_shardid("root");

  casper::HeaderProto* header = block.mutable_header();
  header->add_parentshashlist(std::string(32, '\x01'));
  header->add_parentshashlist(std::string(32, '\x02'));
  header->set_timestamp(1700000000123);
  header->set_version(1);

  casper::BodyProto* body = block.mutable_body();
  casper::RChainStateProto* state = body->mutable_state();
  state->set_prestatehash(std::string(32, '\xaa'));
  state->set_poststatehash(std::string(32, '\xbb'));
  state->set_blocknumber(42);
  casper::BondProto* bond = state->add_bonds();
  bond->set_validator(std::string(65, '\x04'));
  bond->set_stake(1000);

  casper::ProcessedDeployProto* deploy = body->add_deploys();
  deploy->mutable_deploy()->set_term("@0!(1)");
  deploy->mutable_deploy()->set_timestamp(1700000000000);
  deploy->mutable_deploy()->set_sig("deploy-sig");
  deploy->mutable_cost()->set_cost(321);
  casper::ProduceEventProto* produce =
      deploy->add_deploylog()->mutable_produce();
  produce->set_channelshash(std::string(32, '\x05'));
  produce->set_hash(std::string(32, '\x06'));
  produce->add_outputvalue("value");
  casper::CommEventProto* comm = deploy->add_deploylog()->mutable_comm();
  comm->mutable_consume()->add_channelshashes(std::string(32, '\x05'));
  comm->add_produces()->set_timesrepeated(2);
  comm->add_peeks()->set_channelindex(0);

  casper::ProcessedSystemDeployProto* close = body->add_systemdeploys();
  close->mutable_systemdeploy()->mutable_closeblocksystemdeploy();
  casper::RejectedDeployProto* rejected = body->add_rejecteddeploys();
  rejected->set_sig("rejected-sig");
  rejected->set_duplicate(true);

  casper::JustificationProto* justification = block.add_justifications();
  justification->set_validator(std::string(65, '\x04'));
  justification->set_latestblockhash(std::string(32, '\x01'));
  return block;
}

TEST(BlockMessageProtoTest, RoundTripPreservesEveryField) {
  const casper::BlockMessageProto block = SampleBlock();
  std::string bytes;
  ASSERT_TRUE(block.SerializeToString(&bytes));

  casper::BlockMessageProto decoded;
  ASSERT_TRUE(decoded.ParseFromString(bytes));
  EXPECT_TRUE(MessageDifferencer::Equals(block, decoded));
  EXPECT_EQ(decoded.body().deploys(0).deploylog(1).event_instance_case(),
            casper::EventProto::kComm);
  EXPECT_TRUE(decoded.body()
                  .systemdeploys(0)
                  .systemdeploy()
                  .has_closeblocksystemdeploy());

  std::string reencoded;
  ASSERT_TRUE(decoded.SerializeToString(&reencoded));
  EXPECT_EQ(reencoded, bytes);
}

TEST(DeployResponseTest, ErrorAndResultShareOneOneof) {
  const Descriptor* d = casper::v1::DeployResponse::descriptor();
  const FieldDescriptor* error = d->FindFieldByName("error");
  const FieldDescriptor* result = d->FindFieldByName("result");
  ASSERT_NE(error, nullptr);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(error->number(), 1);
  EXPECT_EQ(result->number(), 2);
  ASSERT_NE(error->containing_oneof(), nullptr);
  EXPECT_EQ(error->containing_oneof(), result->containing_oneof());
  EXPECT_EQ(error->containing_oneof()->name(), "message");
  EXPECT_EQ(error->message_type()->full_name(), "servicemodelapi.ServiceError");
}

TEST(DeployResponseTest, SettingResultReplacesErrorAndSurvivesDecoding) {
  casper::v1::DeployResponse response;
  response.mutable_error()->add_messages("Invalid shard id");
  EXPECT_EQ(response.message_case(), casper::v1::DeployResponse::kError);

  response.set_result("Success!\nDeployId is: 3044");
  EXPECT_EQ(response.message_case(), casper::v1::DeployResponse::kResult);
  EXPECT_FALSE(response.has_error());

  casper::v1::DeployResponse decoded;
  ASSERT_TRUE(decoded.ParseFromString(response.SerializeAsString()));
  EXPECT_EQ(decoded.message_case(), casper::v1::DeployResponse::kResult);
  EXPECT_EQ(decoded.result(), "Success!\nDeployId is: 3044");
}

TEST(DeployResponseTest, ErrorDecodesAsErrorWithItsMessages) {
  casper::v1::DeployResponse response;
  response.mutable_error()->add_messages("first");
  response.mutable_error()->add_messages("second");

  casper::v1::DeployResponse decoded;
  ASSERT_TRUE(decoded.ParseFromString(response.SerializeAsString()));
  ASSERT_EQ(decoded.message_case(), casper::v1::DeployResponse::kError);
  EXPECT_THAT(decoded.error().messages(),
              ::testing::ElementsAre("first", "second"));
}

// Public nodes write a oneof primitive even at its default; clients depend on
// seeing `g_int = 0` rather than an empty Expr.
TEST(ExprTest, DefaultValuedPrimitiveIsStillEncoded) {
  rhoapi::Expr expr;
  expr.set_g_int(0);
  EXPECT_EQ(HexEncode(AsBytes(expr.SerializeAsString())), "1000");

  rhoapi::Expr empty_string;
  empty_string.set_g_string("");
  EXPECT_EQ(HexEncode(AsBytes(empty_string.SerializeAsString())), "1a00");
}

TEST(GUnforgeableTest, DeployIdNameEncodesAsFieldTwo) {
  rhoapi::Par par;
  par.add_unforgeables()->mutable_g_deploy_id_body()->set_sig("\x01\x02");
  // Par.unforgeables=7 { GUnforgeable.g_deploy_id_body=2 { sig=1 } }
  EXPECT_EQ(HexEncode(AsBytes(par.SerializeAsString())), "3a0612040a020102");
}

// rhoapi.New is spelled New_ in our schema (C++ cannot compile a message
// named New); only the type name differs, the field stays Par.news = 4.
TEST(ParTest, NewsFieldKeepsItsNumberUnderTheCppSafeTypeName) {
  ExpectFields(rhoapi::Par::descriptor(),
               {
                   {1, "sends", kMessage, true, "rhoapi.Send"},
                   {2, "receives", kMessage, true, "rhoapi.Receive"},
                   {4, "news", kMessage, true, "rhoapi.New_"},
                   {5, "exprs", kMessage, true, "rhoapi.Expr"},
                   {6, "matches", kMessage, true, "rhoapi.Match"},
                   {7, "unforgeables", kMessage, true, "rhoapi.GUnforgeable"},
                   {8, "connectives", kMessage, true, "rhoapi.Connective"},
                   {9, "locallyFree", kBytes},
                   {10, "connective_used", kBool},
                   {11, "bundles", kMessage, true, "rhoapi.Bundle"},
                   {12, "conditionals", kMessage, true, "rhoapi.If"},
               });

  rhoapi::Par par;
  par.add_news()->set_bindcount(1);
  // Par.news=4 { New.bindCount=1 (sint32, zigzag 2) }
  EXPECT_EQ(HexEncode(AsBytes(par.SerializeAsString())), "22020802");
}

}  // namespace
}  // namespace rnode

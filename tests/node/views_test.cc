// Tests for the client API views: block and deploy messages, their JSON and
// the WebSocket envelopes; client rhoapi.Par values to the IR and back, the
// RhoExpr JSON and the RhoUnforg name form.
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "casper/block/block.h"
#include "casper/block/block_codec.h"
#include "crypto/hash.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "node/views/block_views.h"
#include "node/views/par_views.h"
#include "rholang/frontend/limits.h"
#include "tests/casper/test_key.h"
#include "tests/rholang/compile_util.h"
#include "tests/sanitizer.h"
#include "util/bytes.h"

namespace rnode::node::views {
namespace {

using rnode::testing::IntPar;
using rnode::testing::StrPar;

namespace block = casper::block;
namespace ir = rholang::ir;
using casper::testing::MakeTestKey;
using nlohmann::json;
using ::testing::HasSubstr;

// ---- Fixtures ----

Hash32 H(uint8_t tag) { return crypto::Blake2b256(Bytes{tag}); }

block::ProcessedDeploy Deploy(uint8_t seed, int64_t cost, bool errored) {
  casper::DeployData data;
  data.term = "@0!(" + std::to_string(seed) + ")";
  data.timestamp = 1'700'000'000'000 + seed;
  data.phlo_price = 2;
  data.phlo_limit = 100'000;
  data.valid_after_block_number = 3;
  data.shard_id = "root";
  auto signed_deploy = casper::SignedDeploy::Sign(data, MakeTestKey(seed).sk);
  EXPECT_TRUE(signed_deploy.ok());
  return block::MakeProcessedDeploy(*signed_deploy, cost, errored, "", {});
}

// A sealed block with every field the views show set.
block::Block SampleBlock() {
  block::Block b;
  b.header.parents = {H(10), H(11)};
  b.header.timestamp = 1'700'000'123'456;
  b.header.extra = {4, 5, 6};
  b.body.state.pre_state = H(12);
  b.body.state.post_state = H(13);
  b.body.state.bonds = {{MakeTestKey(1).pk, 100}, {MakeTestKey(2).pk, 200}};
  b.body.state.block_number = 7;
  b.body.deploys = {Deploy(3, 1234, false), Deploy(4, 99, true)};
  b.body.extra = {7, 8, 9};
  b.body.rejected = {{Bytes{0xAB, 0xCD}, false, {}}};
  b.justifications = {{MakeTestKey(1).pk, H(17)}, {MakeTestKey(2).pk, H(18)}};
  b.seq_num = 4;
  b.shard_id = "root";
  b.extra = {1, 2, 3};
  EXPECT_TRUE(block::SignBlock(b, MakeTestKey(1).sk).ok());
  return b;
}

std::set<std::string> Keys(const json& object) {
  std::set<std::string> out;
  for (const auto& [key, value] : object.items()) out.insert(key);
  return out;
}

bool IsLowerHex(const std::string& s) {
  return s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// ---- Block views ----

TEST(BlockViewsTest, LightBlockInfoShowsEveryBlockField) {
  const block::Block b = SampleBlock();
  const ::casper::LightBlockInfo info =
      LightBlockInfoOf(b, /*is_finalized=*/true, /*fault_tolerance=*/0.25f);
  EXPECT_EQ(info.blockhash(), HexEncode(b.hash));
  EXPECT_EQ(info.sender(), HexEncode(MakeTestKey(1).pk));
  EXPECT_EQ(info.sender().size(), 130u);
  EXPECT_EQ(info.seqnum(), 4);
  EXPECT_EQ(info.sig(), HexEncode(b.sig));
  EXPECT_FALSE(info.sig().empty());
  EXPECT_EQ(info.sigalgorithm(), "secp256k1");
  EXPECT_EQ(info.shardid(), "root");
  EXPECT_EQ(info.extrabytes(), std::string("\x01\x02\x03"));
  EXPECT_EQ(info.version(), block::kBlockVersion);
  EXPECT_EQ(info.timestamp(), 1'700'000'123'456);
  EXPECT_EQ(info.headerextrabytes(), std::string("\x04\x05\x06"));
  ASSERT_EQ(info.parentshashlist_size(), 2);
  EXPECT_EQ(info.parentshashlist(0), HexEncode(H(10)));
  EXPECT_EQ(info.parentshashlist(1), HexEncode(H(11)));
  EXPECT_EQ(info.blocknumber(), 7);
  EXPECT_EQ(info.prestatehash(), HexEncode(H(12)));
  EXPECT_EQ(info.poststatehash(), HexEncode(H(13)));
  EXPECT_EQ(info.bodyextrabytes(), std::string("\x07\x08\x09"));
  ASSERT_EQ(info.bonds_size(), 2);
  EXPECT_EQ(info.bonds(0).validator(), HexEncode(MakeTestKey(1).pk));
  EXPECT_EQ(info.bonds(0).stake(), 100);
  EXPECT_EQ(info.bonds(1).validator(), HexEncode(MakeTestKey(2).pk));
  EXPECT_EQ(info.bonds(1).stake(), 200);
  EXPECT_EQ(info.blocksize(), std::to_string(block::EncodeBlock(b).size()));
  EXPECT_EQ(info.deploycount(), 2);
  EXPECT_FLOAT_EQ(info.faulttolerance(), 0.25f);
  ASSERT_EQ(info.justifications_size(), 2);
  EXPECT_EQ(info.justifications(0).validator(), HexEncode(MakeTestKey(1).pk));
  EXPECT_EQ(info.justifications(0).latestblockhash(), HexEncode(H(17)));
  EXPECT_EQ(info.justifications(1).validator(), HexEncode(MakeTestKey(2).pk));
  EXPECT_EQ(info.justifications(1).latestblockhash(), HexEncode(H(18)));
  ASSERT_EQ(info.rejecteddeploys_size(), 1);
  EXPECT_EQ(info.rejecteddeploys(0).sig(), "abcd");
  EXPECT_TRUE(info.isfinalized());
  for (const std::string& hex :
       {info.blockhash(), info.sender(), info.sig(), info.prestatehash()}) {
    EXPECT_TRUE(IsLowerHex(hex)) << hex;
  }

  EXPECT_FALSE(LightBlockInfoOf(b, false).isfinalized());
  EXPECT_EQ(LightBlockInfoOf(b, false).faulttolerance(), 0.0f);
}

TEST(BlockViewsTest, GenesisHasEmptySenderAndSig) {
  block::Block genesis;
  genesis.shard_id = "root";
  genesis.hash = block::ComputeBlockHash(genesis);
  const ::casper::LightBlockInfo info = LightBlockInfoOf(genesis, true);
  EXPECT_EQ(info.sender(), "");
  EXPECT_EQ(info.sig(), "");
  EXPECT_EQ(info.blockhash(), HexEncode(genesis.hash));
  EXPECT_EQ(info.deploycount(), 0);
  const json event = json::parse(BlockEventJson("block-added", genesis));
  EXPECT_EQ(event["payload"]["creator"], "");
}

TEST(BlockViewsTest, DeployInfoShowsTheProcessedDeploy) {
  const block::Block b = SampleBlock();
  const block::ProcessedDeploy& d = b.body.deploys[1];
  const ::casper::DeployInfo info = DeployInfoOf(d);
  EXPECT_EQ(info.deployer(), HexEncode(MakeTestKey(4).pk));
  EXPECT_EQ(info.term(), "@0!(4)");
  EXPECT_EQ(info.timestamp(), 1'700'000'000'004);
  EXPECT_EQ(info.sig(), HexEncode(d.sig));
  EXPECT_TRUE(IsLowerHex(info.sig()));
  EXPECT_EQ(info.sigalgorithm(), "secp256k1");
  EXPECT_EQ(info.phloprice(), 2);
  EXPECT_EQ(info.phlolimit(), 100'000);
  EXPECT_EQ(info.validafterblocknumber(), 3);
  EXPECT_EQ(info.cost(), 99u);
  EXPECT_TRUE(info.errored());
  EXPECT_EQ(info.systemdeployerror(), "");
  EXPECT_EQ(info.transfers_size(), 0);
  EXPECT_FALSE(info.transfersavailable());

  block::ProcessedDeploy failed = d;
  failed.system_deploy_error = "Insufficient funds";
  failed.cost = 0;
  EXPECT_EQ(DeployInfoOf(failed).systemdeployerror(), "Insufficient funds");
}

TEST(BlockViewsTest, BlockInfoListsUserDeploysInOrder) {
  const block::Block b = SampleBlock();
  const ::casper::BlockInfo info = BlockInfoOf(b, false);
  EXPECT_EQ(info.blockinfo().blockhash(), HexEncode(b.hash));
  EXPECT_FALSE(info.blockinfo().isfinalized());
  ASSERT_EQ(info.deploys_size(), 2);
  EXPECT_EQ(info.deploys(0).sig(), HexEncode(b.body.deploys[0].sig));
  EXPECT_EQ(info.deploys(1).sig(), HexEncode(b.body.deploys[1].sig));
}

TEST(BlockViewsTest, LightBlockInfoJsonHasTheRustNodeShape) {
  const block::Block b = SampleBlock();
  const json j = LightBlockInfoJson(LightBlockInfoOf(b, true, 0.1f));
  EXPECT_EQ(Keys(j),
            (std::set<std::string>{"blockHash",       "sender",
                                   "seqNum",          "sig",
                                   "sigAlgorithm",    "shardId",
                                   "extraBytes",      "version",
                                   "timestamp",       "headerExtraBytes",
                                   "parentsHashList", "blockNumber",
                                   "preStateHash",    "postStateHash",
                                   "bodyExtraBytes",  "bonds",
                                   "blockSize",       "deployCount",
                                   "faultTolerance",  "justifications",
                                   "rejectedDeploys", "isFinalized"}));
  EXPECT_EQ(j["blockHash"], HexEncode(b.hash));
  EXPECT_EQ(j["seqNum"], 4);
  EXPECT_TRUE(j["seqNum"].is_number_integer());
  EXPECT_EQ(j["blockNumber"], 7);
  EXPECT_EQ(j["timestamp"], 1'700'000'123'456);
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["deployCount"], 2);
  EXPECT_TRUE(j["blockSize"].is_string());
  // Base64 as the Rust node writes it (its own test vectors).
  EXPECT_EQ(j["extraBytes"], "AQID");
  EXPECT_EQ(j["headerExtraBytes"], "BAUG");
  EXPECT_EQ(j["bodyExtraBytes"], "BwgJ");
  // The shortest decimal of the float, as serde writes an f32.
  EXPECT_EQ(j["faultTolerance"].get<double>(), 0.1);
  EXPECT_EQ(j["faultTolerance"].dump(), "0.1");
  EXPECT_EQ(j["isFinalized"], true);
  EXPECT_EQ(j["parentsHashList"],
            json::array({HexEncode(H(10)), HexEncode(H(11))}));
  EXPECT_EQ(j["bonds"][1], json({{"validator", HexEncode(MakeTestKey(2).pk)},
                                 {"stake", 200}}));
  EXPECT_EQ(j["justifications"][0],
            json({{"validator", HexEncode(MakeTestKey(1).pk)},
                  {"latestBlockHash", HexEncode(H(17))}}));
  EXPECT_EQ(j["rejectedDeploys"], json::parse(R"([{"sig":"abcd"}])"));
}

TEST(BlockViewsTest, DeployInfoJsonHasTheRustNodeShape) {
  const block::Block b = SampleBlock();
  const json j = DeployInfoJson(DeployInfoOf(b.body.deploys[0]));
  EXPECT_EQ(Keys(j), (std::set<std::string>{
                         "deployer", "term", "timestamp", "sig", "sigAlgorithm",
                         "phloPrice", "phloLimit", "validAfterBlockNumber",
                         "cost", "errored", "systemDeployError", "transfers"}));
  EXPECT_EQ(j["term"], "@0!(3)");
  EXPECT_EQ(j["cost"], 1234);
  EXPECT_EQ(j["phloPrice"], 2);
  EXPECT_EQ(j["errored"], false);
  EXPECT_EQ(j["transfers"], json::array());
}

TEST(BlockViewsTest, BlockInfoJsonHasDeploysOnlyWhenFull) {
  const block::Block b = SampleBlock();
  const ::casper::BlockInfo info = BlockInfoOf(b, true);
  const json full = BlockInfoJson(info, /*full=*/true);
  EXPECT_EQ(Keys(full), (std::set<std::string>{"blockInfo", "deploys"}));
  ASSERT_EQ(full["deploys"].size(), 2u);
  EXPECT_EQ(full["deploys"][0], DeployInfoJson(info.deploys(0)));
  EXPECT_EQ(full["blockInfo"], LightBlockInfoJson(info.blockinfo()));
  const json summary = BlockInfoJson(info, /*full=*/false);
  EXPECT_EQ(Keys(summary), (std::set<std::string>{"blockInfo"}));
}

TEST(BlockViewsTest, BlockEventHasTheEnvelopeAndKebabCasePayload) {
  const block::Block b = SampleBlock();
  const std::string text = BlockEventJson("block-finalised", b);
  EXPECT_EQ(text.find('\n'), std::string::npos);
  const json event = json::parse(text);
  EXPECT_EQ(Keys(event),
            (std::set<std::string>{"event", "schema-version", "payload"}));
  EXPECT_EQ(event["event"], "block-finalised");
  EXPECT_EQ(event["schema-version"], 1);
  const json& p = event["payload"];
  EXPECT_EQ(Keys(p), (std::set<std::string>{
                         "block-hash", "block-number", "timestamp",
                         "parent-hashes", "justification-hashes", "deploys",
                         "creator", "seq-num", "rejected-deploys"}));
  EXPECT_EQ(p["rejected-deploys"], json::array({"abcd"}));
  EXPECT_EQ(p["block-hash"], HexEncode(b.hash));
  EXPECT_EQ(p["block-number"], 7);
  EXPECT_EQ(p["timestamp"], 1'700'000'123'456);
  EXPECT_EQ(p["parent-hashes"],
            json::array({HexEncode(H(10)), HexEncode(H(11))}));
  EXPECT_EQ(
      p["justification-hashes"],
      json::array(
          {json::array({HexEncode(MakeTestKey(1).pk), HexEncode(H(17))}),
           json::array({HexEncode(MakeTestKey(2).pk), HexEncode(H(18))})}));
  EXPECT_EQ(p["creator"], HexEncode(MakeTestKey(1).pk));
  EXPECT_EQ(p["seq-num"], 4);
  ASSERT_EQ(p["deploys"].size(), 2u);
  EXPECT_EQ(p["deploys"][1], json({{"id", HexEncode(b.body.deploys[1].sig)},
                                   {"cost", 99},
                                   {"deployer", HexEncode(MakeTestKey(4).pk)},
                                   {"errored", true}}));
  // Without the finalized block's rejected copies, no "rejected" key.
  EXPECT_FALSE(p["deploys"][0].contains("rejected"));
}

// A finalized block's event marks each deploy whose copy there a merge
// rejected; the deploy events name the deploy and the block.
TEST(BlockViewsTest, FinalisedEventMarksRejectedCopiesAndDeployEvents) {
  const block::Block b = SampleBlock();
  const std::vector<Bytes> rejected{b.body.deploys[1].sig};
  const json p =
      json::parse(BlockEventJson("block-finalised", b, rejected))["payload"];
  EXPECT_EQ(p["deploys"][0]["rejected"], false);
  EXPECT_EQ(p["deploys"][1]["rejected"], true);
  const json d =
      json::parse(DeployEventJson("deploy-rejected", b.body.deploys[0].sig, b));
  EXPECT_EQ(d, json({{"event", "deploy-rejected"},
                     {"schema-version", 1},
                     {"payload",
                      {{"deploy-id", HexEncode(b.body.deploys[0].sig)},
                       {"block-hash", HexEncode(b.hash)},
                       {"block-number", 7}}}}));
}

TEST(BlockViewsTest, SimpleEventWrapsThePayload) {
  const json started = json::parse(
      SimpleEventJson("node-started", {{"address", "rnode://abc@host"}}));
  EXPECT_EQ(started, json::parse(R"({"event":"node-started",
      "schema-version":1, "payload":{"address":"rnode://abc@host"}})"));
  const json handshake = json::parse(SimpleEventJson("started", nullptr));
  EXPECT_EQ(handshake,
            json::parse(R"({"event":"started","schema-version":1})"));
  // A caller's invalid UTF-8 is replaced, not thrown.
  const json odd = json::parse(
      SimpleEventJson("entered-running-state", {{"block-hash", "\xff"}}));
  EXPECT_EQ(odd["payload"]["block-hash"], "\xEF\xBF\xBD");
}

// ---- Par views: values ----

ir::ParPtr Bool(bool v) { return ir::ParOf(ir::Expr::Bool(v)); }
ir::ParPtr Uri(std::string v) { return ir::ParOf(ir::Expr::Uri(v)); }
ir::ParPtr ByteArray(Bytes v) { return ir::ParOf(ir::Expr::ByteArray(v)); }
ir::ParPtr List(std::vector<ir::ParPtr> ps) {
  return ir::ParOf(ir::Expr::List(std::move(ps), std::nullopt));
}
ir::ParPtr Tuple(std::vector<ir::ParPtr> ps) {
  return ir::ParOf(ir::Expr::Tuple(std::move(ps)));
}
ir::ParPtr Set(std::vector<ir::ParPtr> ps) {
  return ir::ParOf(ir::Expr::Set(std::move(ps), std::nullopt));
}
ir::ParPtr Map(std::vector<std::pair<ir::ParPtr, ir::ParPtr>> kvs) {
  return ir::ParOf(ir::Expr::Map(std::move(kvs), std::nullopt));
}
ir::ParPtr Unforg(ir::UnforgeableKind kind, Bytes id) {
  return ir::ParBuilder().Add(ir::Unforgeable::Make(kind, id)).Build();
}
ir::ParPtr Private(uint8_t tag) {
  const Hash32 id = H(tag);
  return Unforg(ir::UnforgeableKind::kPrivate, Bytes(id.begin(), id.end()));
}
ir::ParPtr DeployId(Bytes sig) {
  return Unforg(ir::UnforgeableKind::kDeployId, std::move(sig));
}
ir::ParPtr DeployerId(uint8_t seed) {
  const auto pk = MakeTestKey(seed).pk;
  return Unforg(ir::UnforgeableKind::kDeployerId, Bytes(pk.begin(), pk.end()));
}
ir::ParPtr SysAuthToken() {
  return Unforg(ir::UnforgeableKind::kSysAuthToken, {});
}
ir::ParPtr Bundle(ir::ParPtr body, bool write, bool read) {
  return ir::ParBuilder()
      .Add(ir::Bundle::Make(std::move(body), write, read))
      .Build();
}
ir::ParPtr ParOf(std::vector<ir::ParPtr> ps) {
  ir::ParBuilder b;
  for (const ir::ParPtr& p : ps) b.AddAll(*p);
  return b.Build();
}

struct NamedValue {
  const char* name;
  ir::ParPtr value;
};

std::vector<NamedValue> ClosedValues() {
  return {
      {"nil", ir::Nil()},
      {"true", Bool(true)},
      {"false", Bool(false)},
      {"zero", IntPar(0)},
      {"minus one", IntPar(-1)},
      {"int min", IntPar(std::numeric_limits<int64_t>::min())},
      {"int max", IntPar(std::numeric_limits<int64_t>::max())},
      {"empty string", StrPar("")},
      {"string", StrPar("h\xc3\xa9llo")},
      {"uri", Uri("rho:io:stdout")},
      {"bytes", ByteArray({0x00, 0xff, 0x10})},
      {"empty bytes", ByteArray({})},
      {"empty list", List({})},
      {"list", List({IntPar(1), StrPar("a"), ir::Nil()})},
      {"nested list", List({List({IntPar(1)}), List({List({IntPar(2)})})})},
      {"tuple", Tuple({IntPar(1), StrPar("x"), Bool(false)})},
      {"set", Set({IntPar(3), IntPar(1), IntPar(2)})},
      {"empty set", Set({})},
      {"map", Map({{StrPar("a"), IntPar(1)}, {IntPar(2), List({IntPar(3)})}})},
      {"empty map", Map({})},
      {"map of unforgeable keys",
       Map({{Private(1), StrPar("p")}, {DeployerId(2), Tuple({IntPar(1)})}})},
      {"nested collections",
       Tuple({Map({{StrPar("k"),
                    Set({List({IntPar(1)}), Tuple({StrPar("t")})})}}),
              List({Map({})})})},
      {"private", Private(1)},
      {"deploy id", DeployId({0x30, 0x44, 0x02, 0x20, 0x01})},
      {"deployer id", DeployerId(3)},
      {"sys auth token", SysAuthToken()},
      {"bundle+", Bundle(Private(2), /*write=*/true, /*read=*/false)},
      {"bundle-", Bundle(Private(2), /*write=*/false, /*read=*/true)},
      {"bundle0", Bundle(Tuple({Private(3), IntPar(1)}), false, false)},
      {"bundle", Bundle(List({IntPar(1)}), true, true)},
      {"par of values",
       ParOf({IntPar(1), StrPar("a"), Private(4),
              Bundle(Private(5), true, false), DeployId({1, 2})})},
      {"list of pars",
       List({ParOf({IntPar(1), IntPar(2)}), ParOf({Private(6)})})},
  };
}

TEST(ParViewsTest, ClosedValuesRoundTripThroughTheProto) {
  for (const NamedValue& v : ClosedValues()) {
    SCOPED_TRACE(v.name);
    absl::StatusOr<::rhoapi::Par> proto = ParToProto(*v.value);
    ASSERT_TRUE(proto.ok()) << proto.status();
    absl::StatusOr<ir::ParPtr> back = ParFromProto(*proto);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_TRUE(ir::Equal(*back, v.value));
  }
}

TEST(ParViewsTest, ParToProtoIsThePublicForm) {
  absl::StatusOr<::rhoapi::Par> proto = ParToProto(*IntPar(42));
  ASSERT_TRUE(proto.ok()) << proto.status();
  ASSERT_EQ(proto->exprs_size(), 1);
  EXPECT_EQ(proto->exprs(0).g_int(), 42);

  proto = ParToProto(*DeployId({0xab}));
  ASSERT_TRUE(proto.ok()) << proto.status();
  ASSERT_EQ(proto->unforgeables_size(), 1);
  EXPECT_EQ(proto->unforgeables(0).g_deploy_id_body().sig(), "\xab");
}

TEST(ParViewsTest, ClientBuiltProtosDecode) {
  // As a client writes a name: a GDeployId and a tuple, unsorted, with a map
  // entry missing its value (Nil).
  ::rhoapi::Par name;
  name.add_unforgeables()->mutable_g_deploy_id_body()->set_sig("\x01\x02");
  ::rhoapi::ETuple* tuple = name.add_exprs()->mutable_e_tuple_body();
  tuple->add_ps()->add_exprs()->set_g_string("b");
  tuple->add_ps()->add_exprs()->set_g_int(0);
  ::rhoapi::KeyValuePair* kv =
      name.add_exprs()->mutable_e_map_body()->add_kvs();
  kv->mutable_key()->add_exprs()->set_g_bool(false);
  absl::StatusOr<ir::ParPtr> got = ParFromProto(name);
  ASSERT_TRUE(got.ok()) << got.status();
  const ir::ParPtr want =
      ParOf({DeployId({1, 2}), Tuple({StrPar("b"), IntPar(0)}),
             Map({{Bool(false), ir::Nil()}})});
  EXPECT_TRUE(ir::Equal(*got, want));
}

void AddSend(::rhoapi::Par& p) { p.add_sends()->mutable_chan(); }

TEST(ParViewsTest, ProcessesAndPatternsAreRefused) {
  using Mutate = void (*)(::rhoapi::Par&);
  struct Case {
    const char* name;
    Mutate mutate;
    const char* message;
  };
  const Case cases[] = {
      {"send", AddSend, "sends are not supported"},
      {"receive", [](::rhoapi::Par& p) { p.add_receives(); }, "receives"},
      {"new", [](::rhoapi::Par& p) { p.add_news(); }, "'new'"},
      {"match", [](::rhoapi::Par& p) { p.add_matches(); }, "'match'"},
      {"connective",
       [](::rhoapi::Par& p) { p.add_connectives()->set_conn_int(true); },
       "connectives"},
      {"if", [](::rhoapi::Par& p) { p.add_conditionals(); }, "'if'"},
      {"variable",
       [](::rhoapi::Par& p) {
         p.add_exprs()->mutable_e_var_body()->mutable_v()->set_bound_var(0);
       },
       "variables are not supported"},
      {"free variable",
       [](::rhoapi::Par& p) {
         p.add_exprs()->mutable_e_var_body()->mutable_v()->set_free_var(0);
       },
       "variables"},
      {"operator",
       [](::rhoapi::Par& p) { p.add_exprs()->mutable_e_plus_body(); },
       "operators"},
      {"method",
       [](::rhoapi::Par& p) { p.add_exprs()->mutable_e_method_body(); },
       "method calls"},
      {"matches",
       [](::rhoapi::Par& p) { p.add_exprs()->mutable_e_matches_body(); },
       "'matches'"},
      {"double", [](::rhoapi::Par& p) { p.add_exprs()->set_g_double(0); },
       "floating-point"},
      {"list remainder",
       [](::rhoapi::Par& p) {
         p.add_exprs()
             ->mutable_e_list_body()
             ->mutable_remainder()
             ->mutable_wildcard();
       },
       "list remainders"},
      {"send inside a list",
       [](::rhoapi::Par& p) {
         AddSend(*p.add_exprs()->mutable_e_list_body()->add_ps());
       },
       "sends"},
      {"variable in a bundle",
       [](::rhoapi::Par& p) {
         p.add_bundles()
             ->mutable_body()
             ->add_exprs()
             ->mutable_e_var_body()
             ->mutable_v()
             ->set_bound_var(1);
       },
       "variables"},
      {"empty expr", [](::rhoapi::Par& p) { p.add_exprs(); }, "no value"},
      {"empty unforgeable", [](::rhoapi::Par& p) { p.add_unforgeables(); },
       "no value"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ::rhoapi::Par p;
    p.add_exprs()->set_g_int(1);
    c.mutate(p);
    absl::StatusOr<ir::ParPtr> got = ParFromProto(p);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(got.status().message(), HasSubstr(c.message));
  }
}

// `levels` nested Pars: [[...[7]...]], built and torn down without
// recursion (a protobuf message destructor recurses).
class NestedLists {
 public:
  explicit NestedLists(uint32_t levels) {
    root_.add_exprs()->set_g_int(7);
    for (uint32_t i = 1; i < levels; ++i) {
      ::rhoapi::Par outer;
      *outer.add_exprs()->mutable_e_list_body()->add_ps() = std::move(root_);
      root_ = std::move(outer);
    }
  }
  ~NestedLists() {
    while (root_.exprs_size() > 0 && root_.exprs(0).has_e_list_body()) {
      ::rhoapi::Par inner = std::move(
          *root_.mutable_exprs(0)->mutable_e_list_body()->mutable_ps(0));
      root_ = std::move(inner);
    }
  }
  const ::rhoapi::Par& root() const { return root_; }

 private:
  ::rhoapi::Par root_;
};

TEST(ParViewsTest, HostileNestingIsRefusedWithoutRecursingIntoIt) {
  NestedLists deep(10'000);
  absl::StatusOr<ir::ParPtr> got = ParFromProto(deep.root());
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(got.status().message(), HasSubstr("nested deeper"));
}

TEST(ParViewsTest, NestingUpToTheLimitIsAcceptedAndEncodes) {
  {
    NestedLists at_limit(kMaxValueParDepth);
    absl::StatusOr<ir::ParPtr> got = ParFromProto(at_limit.root());
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_LE((*got)->height, rholang::kMaxIrDepth);
    absl::StatusOr<::rhoapi::Par> proto = ParToProto(**got);
    ASSERT_TRUE(proto.ok()) << proto.status();
    // Unwind the decoded copy iteratively too.
    while (proto->exprs_size() > 0 && proto->exprs(0).has_e_list_body()) {
      ::rhoapi::Par inner = std::move(
          *proto->mutable_exprs(0)->mutable_e_list_body()->mutable_ps(0));
      *proto = std::move(inner);
    }
  }
  NestedLists over(kMaxValueParDepth + 1);
  absl::StatusOr<ir::ParPtr> got = ParFromProto(over.root());
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(ParViewsTest, TooManyNodesAreRefused) {
  // Top Par + list Expr + (Par + Expr) per element.
  auto list_of = [](int n) {
    ::rhoapi::Par p;
    ::rhoapi::EList* list = p.add_exprs()->mutable_e_list_body();
    for (int i = 0; i < n; ++i) list->add_ps()->add_exprs()->set_g_int(i);
    return p;
  };
  const int fits = static_cast<int>((kMaxValueNodes - 2) / 2);
  absl::StatusOr<ir::ParPtr> ok = ParFromProto(list_of(fits));
  EXPECT_TRUE(ok.ok()) << ok.status();
  absl::StatusOr<ir::ParPtr> got = ParFromProto(list_of(fits + 1));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(got.status().message(), HasSubstr("nodes"));
}

// ---- RhoExpr JSON ----

TEST(RhoExprJsonTest, RendersAsTheRustNode) {
  const std::string private_hex = HexEncode(H(1));
  const std::string deployer_hex = HexEncode(MakeTestKey(3).pk);
  const ir::ParPtr send =
      ir::ParBuilder()
          .Add(ir::Send::Make(IntPar(0), {IntPar(1)}, false))
          .Build();
  const ir::ParPtr bound0 =
      ir::ParOf(ir::Expr::Variable({ir::VarKind::kBound, 0}));
  const ir::ParPtr wildcard =
      ir::ParOf(ir::Expr::Variable({ir::VarKind::kWildcard, 0}));
  struct Case {
    const char* name;
    ir::ParPtr value;
    std::string want;
  };
  const Case cases[] = {
      {"nil", ir::Nil(), "null"},
      {"int", IntPar(42), R"({"ExprInt":{"data":42}})"},
      {"negative int", IntPar(-7), R"({"ExprInt":{"data":-7}})"},
      {"bool", Bool(true), R"({"ExprBool":{"data":true}})"},
      {"string", StrPar("hi"), R"({"ExprString":{"data":"hi"}})"},
      {"uri", Uri("rho:io:stdout"), R"({"ExprUri":{"data":"rho:io:stdout"}})"},
      {"bytes", ByteArray({0xDE, 0xAD}), R"({"ExprBytes":{"data":"dead"}})"},
      {"list", List({IntPar(1), ir::Nil(), StrPar("a")}),
       R"({"ExprList":{"data":[{"ExprInt":{"data":1}},
                               {"ExprString":{"data":"a"}}]}})"},
      {"tuple", Tuple({Bool(false)}),
       R"({"ExprTuple":{"data":[{"ExprBool":{"data":false}}]}})"},
      {"set", Set({IntPar(2), IntPar(1)}),
       R"({"ExprSet":{"data":[{"ExprInt":{"data":1}},
                              {"ExprInt":{"data":2}}]}})"},
      {"map",
       Map({{StrPar("a"), IntPar(1)},
            {IntPar(2), Bool(true)},
            {Bool(false), StrPar("f")},
            {ir::Nil(), IntPar(9)}}),
       R"({"ExprMap":{"data":{"a":{"ExprInt":{"data":1}},
                              "2":{"ExprBool":{"data":true}},
                              "false":{"ExprString":{"data":"f"}}}}})"},
      {"map with bytes, unforgeable and tuple keys",
       Map({{ByteArray({0xAB}), IntPar(1)},
            {Private(1), IntPar(2)},
            {Tuple({IntPar(5)}), IntPar(3)}}),
       R"({"ExprMap":{"data":{"ab":{"ExprInt":{"data":1}},
            ")" +
           private_hex + R"(":{"ExprInt":{"data":2}},
            "{\"ExprTuple\":{\"data\":[{\"ExprInt\":{\"data\":5}}]}}":
              {"ExprInt":{"data":3}}}}})"},
      {"private", Private(1),
       R"({"ExprUnforg":{"data":{"UnforgPrivate":{"data":")" + private_hex +
           R"("}}}})"},
      {"deploy id", DeployId({0x0A, 0xBC}),
       R"({"ExprUnforg":{"data":{"UnforgDeploy":{"data":"0abc"}}}})"},
      {"deployer id", DeployerId(3),
       R"({"ExprUnforg":{"data":{"UnforgDeployer":{"data":")" + deployer_hex +
           R"("}}}})"},
      {"sys auth token", SysAuthToken(),
       R"({"ExprUnforg":{"data":"UnforgSysAuthToken"}})"},
      {"bundle", Bundle(IntPar(1), /*write=*/true, /*read=*/false),
       R"({"ExprBundle":{"data":{"ExprInt":{"data":1}},
                         "read":false,"write":true}})"},
      {"par", ParOf({IntPar(1), DeployId({0x01})}),
       R"({"ExprPar":{"data":[{"ExprInt":{"data":1}},
            {"ExprUnforg":{"data":{"UnforgDeploy":{"data":"01"}}}}]}})"},
      {"send", send, R"({"ExprUnknown":{"type_name":"Process"}})"},
      {"send beside a value", ParOf({send, IntPar(3)}),
       R"({"ExprInt":{"data":3}})"},
      {"plus",
       ir::ParOf(ir::Expr::Binary(ir::ExprKind::kAdd, IntPar(1), IntPar(2))),
       R"({"ExprPlus":{"left":{"ExprInt":{"data":1}},
                       "right":{"ExprInt":{"data":2}}}})"},
      {"concat",
       ir::ParOf(
           ir::Expr::Binary(ir::ExprKind::kPlusPlus, StrPar("a"), StrPar("b"))),
       R"({"ExprConcat":{"left":{"ExprString":{"data":"a"}},
                         "right":{"ExprString":{"data":"b"}}}})"},
      {"not", ir::ParOf(ir::Expr::Unary(ir::ExprKind::kNot, ir::Nil())),
       R"({"ExprNot":{"data":{"ExprUnknown":{"type_name":"Nil"}}}})"},
      {"variable", bound0, R"({"ExprVar":{"index":0}})"},
      {"wildcard", wildcard, R"({"ExprVar":{"index":-1}})"},
      {"method",
       ir::ParOf(ir::Expr::Method("nth", List({IntPar(1)}), {IntPar(0)})),
       R"({"ExprMethod":{"target":{"ExprList":{"data":[{"ExprInt":{"data":1}}]}},
                         "name":"nth","args":[{"ExprInt":{"data":0}}]}})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(RhoExprJson(*c.value), json::parse(c.want));
  }
}

TEST(RhoExprJsonTest, InvalidUtf8IsReplaced) {
  const json j = RhoExprJson(*StrPar("a\xff"));
  EXPECT_EQ(j["ExprString"]["data"], "a\xEF\xBF\xBD");
  EXPECT_NO_THROW(j.dump());
}

TEST(RhoExprJsonTest, OversizedAndOverdeepTermsAreNotRendered) {
  const ir::ParPtr big = ByteArray(Bytes(kMaxRhoExprJsonSize + 1, 0x11));
  EXPECT_EQ(RhoExprJson(*big),
            json::parse(R"({"ExprUnknown":{"type_name":"TooLarge"}})"));

  if (::rnode::testing::kUnderThreadSanitizer) {
    GTEST_SKIP() << "a term at the depth limit overruns ThreadSanitizer's "
                    "shadow stack when destroyed (tests/sanitizer.h); "
                    "single-threaded, run by the release and asan suites";
  }
  ir::ParPtr deep = IntPar(1);
  for (uint32_t i = 0; i < rholang::kMaxIrDepth; ++i) deep = List({deep});
  EXPECT_EQ(RhoExprJson(*deep),
            json::parse(R"({"ExprUnknown":{"type_name":"TooDeep"}})"));
}

// ---- RhoUnforg names ----

TEST(RhoUnforgJsonTest, AcceptsTheThreeNameKinds) {
  struct Case {
    const char* json_text;
    ir::ParPtr want;
  };
  const Case cases[] = {
      {R"({"UnforgDeploy":{"data":"ABcd"}})", DeployId({0xAB, 0xCD})},
      {R"({"UnforgPrivate":{"data":"00ff"}})",
       Unforg(ir::UnforgeableKind::kPrivate, {0x00, 0xFF})},
      {R"({"UnforgDeployer":{"data":"04"}})",
       Unforg(ir::UnforgeableKind::kDeployerId, {0x04})},
      {R"({"UnforgDeploy":{"data":"01","extra":1}})", DeployId({0x01})},
      {R"("UnforgSysAuthToken")", SysAuthToken()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json_text);
    absl::StatusOr<ir::ParPtr> got =
        ParFromRhoUnforgJson(json::parse(c.json_text));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(ir::Equal(*got, c.want));
  }
}

TEST(RhoUnforgJsonTest, RefusesOtherShapes) {
  struct Case {
    const char* json_text;
    const char* message;
  };
  const Case cases[] = {
      {"42", "a name is"},
      {R"("UnforgDeploy")", "a name is"},
      {"[]", "a name is"},
      {"{}", "a name is"},
      {R"({"UnforgDeploy":{"data":"ab"},"UnforgPrivate":{"data":"ab"}})",
       "a name is"},
      {R"({"UnforgFoo":{"data":"ab"}})", "unknown kind \"UnforgFoo\""},
      {R"({"ExprInt":{"data":1}})", "unknown kind"},
      {R"({"UnforgDeploy":"ab"})", "UnforgDeploy must be {\"data\": hex}"},
      {R"({"UnforgDeploy":{}})", "must be"},
      {R"({"UnforgDeploy":{"data":12}})", "must be"},
      {R"({"UnforgDeploy":{"data":"zz"}})", "UnforgDeploy.data"},
      {R"({"UnforgPrivate":{"data":"abc"}})", "UnforgPrivate.data"},
      {R"({"UnforgDeployer":{"data":"0xab"}})", "UnforgDeployer.data"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json_text);
    absl::StatusOr<ir::ParPtr> got =
        ParFromRhoUnforgJson(json::parse(c.json_text));
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(got.status().message(), HasSubstr(c.message));
  }
}

TEST(RhoUnforgJsonTest, NameRoundTripsThroughRhoExprJson) {
  const ir::ParPtr name = DeployId({0x30, 0x45, 0xFF});
  const json rendered = RhoExprJson(*name);
  absl::StatusOr<ir::ParPtr> back =
      ParFromRhoUnforgJson(rendered["ExprUnforg"]["data"]);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(ir::Equal(*back, name));
}

}  // namespace
}  // namespace rnode::node::views

// The system processes: the tables (URIs, bytes, body refs, arities), every
// handler with good and bad arguments, published hash / signature / address /
// registry URI vectors, and the stdout format.
#include "rholang/interpreter/system_processes.h"

#include <set>
#include <string>
#include <vector>

#include "crypto/base58.h"
#include "crypto/ed25519.h"
#include "crypto/hash.h"
#include "crypto/rev_address.h"
#include "crypto/secp256k1.h"
#include "gtest/gtest.h"
#include "rholang/frontend/ir.h"
#include "rholang/frontend/limits.h"
#include "rholang/interpreter/registry_semver.h"
#include "rholang/interpreter/registry_uri.h"
#include "tests/bytes_util.h"
#include "tests/rholang/compile_util.h"
#include "tests/sanitizer.h"

namespace rnode::rholang::interp {
namespace {

using rnode::testing::IntPar;
using rnode::testing::StrPar;

using ir::Expr;
using ir::ExprKind;
using ir::ParPtr;
using ir::UnforgeableKind;

using rnode::testing::Unhex;

ParPtr BoolP(bool v) { return ir::ParOf(Expr::Bool(v)); }
ParPtr BytesP(ByteView v) { return ir::ParOf(Expr::ByteArray(v)); }
ParPtr BytesP(const Bytes& v) { return BytesP(ByteView(v)); }
ParPtr HexP(std::string_view hex) { return BytesP(Unhex(hex)); }
ParPtr UnfP(UnforgeableKind kind, ByteView id) {
  return ir::ParBuilder().Add(ir::Unforgeable::Make(kind, id)).Build();
}
ParPtr UnfP(UnforgeableKind kind, const Bytes& id) {
  return UnfP(kind, ByteView(id));
}
ParPtr Ack() { return UnfP(UnforgeableKind::kPrivate, ToBytes("ack")); }

class RecordingSink : public OutputSink {
 public:
  void Stdout(std::string_view line) override { out.emplace_back(line); }
  void Stderr(std::string_view line) override { err.emplace_back(line); }
  std::vector<std::string> out;
  std::vector<std::string> err;
};

const SystemProcessDef* Find(std::string_view uri) {
  for (const auto* table :
       {&StandardSystemProcesses(), &TestSystemProcesses()}) {
    for (const SystemProcessDef& d : *table) {
      if (d.uri == uri) return &d;
    }
  }
  return nullptr;
}

ProcessContext MakeContext(OutputSink* sink, PhloMeter* meter) {
  ProcessContext ctx;
  ctx.output = sink;
  ctx.meter = meter;
  return ctx;
}

class SysprocTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::vector<Reply>> Call(std::string_view uri,
                                          std::vector<ParPtr> args) {
    const SystemProcessDef* def = Find(uri);
    EXPECT_NE(def, nullptr) << uri;
    if (def == nullptr || !def->handler) {
      return absl::NotFoundError(std::string(uri));
    }
    return def->handler(args, ctx_);
  }

  // Calls `uri` expecting exactly one reply on Ack(); returns its data.
  std::vector<ParPtr> CallAck(std::string_view uri, std::vector<ParPtr> args) {
    absl::StatusOr<std::vector<Reply>> r = Call(uri, std::move(args));
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return {};
    EXPECT_EQ(r->size(), 1u);
    if (r->size() != 1) return {};
    EXPECT_TRUE(ir::Equal((*r)[0].channel, Ack()));
    return (*r)[0].data;
  }

  // The single value `uri` replies with.
  ParPtr CallOne(std::string_view uri, std::vector<ParPtr> args) {
    std::vector<ParPtr> data = CallAck(uri, std::move(args));
    EXPECT_EQ(data.size(), 1u);
    return data.empty() ? ir::Nil() : data[0];
  }

  void ExpectInvalid(std::string_view uri, std::vector<ParPtr> args,
                     std::string_view fragment) {
    absl::StatusOr<std::vector<Reply>> r = Call(uri, std::move(args));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
        << r.status();
    EXPECT_NE(r.status().message().find(std::string(uri)), std::string::npos)
        << r.status();
    EXPECT_NE(r.status().message().find(std::string(fragment)),
              std::string::npos)
        << r.status();
  }

  PhloMeter meter_{-1};
  RecordingSink sink_;
  ProcessContext ctx_ = MakeContext(&sink_, &meter_);
};

std::string BytesOf(const ParPtr& p) {
  const Expr* e = p->SingleExpr();
  EXPECT_TRUE(e != nullptr && e->kind == ExprKind::kByteArray);
  return e == nullptr ? "" : HexEncode(AsBytes(e->text));
}

std::string TextOf(const ParPtr& p) {
  const Expr* e = p->SingleExpr();
  EXPECT_TRUE(e != nullptr &&
              (e->kind == ExprKind::kString || e->kind == ExprKind::kUri));
  return e == nullptr ? "" : e->text;
}

// ---------------------------------------------------------------------------
// The tables.

struct Row {
  const char* uri;
  int byte;
  int body_ref;
  int arity;
  bool has_handler;
};

// rholang.md §5, RUST column.
const Row kStandardRows[] = {
    {"rho:io:stdout", 0, 0, 1, true},
    {"rho:io:stdoutAck", 1, 1, 2, true},
    {"rho:io:stderr", 2, 2, 1, true},
    {"rho:io:stderrAck", 3, 3, 2, true},
    {"rho:crypto:ed25519Verify", 4, 4, 4, true},
    {"rho:crypto:sha256Hash", 5, 5, 2, true},
    {"rho:crypto:keccak256Hash", 6, 6, 2, true},
    {"rho:crypto:blake2b256Hash", 7, 7, 2, true},
    {"rho:crypto:secp256k1Verify", 8, 9, 4, true},
    {"rho:block:data", 10, 11, 1, true},
    {"rho:casper:invalidBlocks", 11, 12, 1, true},
    {"rho:vault:address", 12, 13, 3, true},
    {"rho:system:deployerId:ops", 13, 14, 3, true},
    {"rho:registry:lookup", 14, 0, 0, false},
    {"rho:registry:insertArbitrary", 15, 0, 0, false},
    {"rho:registry:insertSigned:secp256k1", 16, 0, 0, false},
    {"rho:registry:ops", 17, 15, 3, true},
    {"sys:authToken:ops", 18, 16, 3, true},
    {"rho:registry:v1:internal", 19, 0, 0, false},
    {"rho:registry:ops:1.0.0", 23, 17, 3, true},
    {"rho:registry:1.0.0", 24, 0, 0, false},
    {"rho:io:devNull", 26, 24, 1, true},
    {"rho:execution:abort", 27, 25, 1, true},
    {"rho:deploy:data", 31, 29, 1, true},
};

const Row kTestRows[] = {
    {"rho:test:assertAck", 101, 101, 5, true},
    {"rho:test:testSuiteCompleted", 102, 102, 1, true},
    {"rho:io:stdlog", 103, 103, 2, true},
    {"rho:test:deployerId:make", 104, 104, 3, true},
    {"rho:test:crypto:secp256k1Sign", 105, 105, 3, true},
    {"sys:test:authToken:make", 106, 106, 1, true},
    {"rho:test:block:data:set", 107, 107, 3, true},
    {"rho:test:casper:invalidBlocks:set", 108, 108, 2, true},
};

void ExpectTable(const std::vector<SystemProcessDef>& table,
                 std::span<const Row> rows) {
  ASSERT_EQ(table.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(rows[i].uri);
    EXPECT_EQ(table[i].uri, rows[i].uri);
    EXPECT_EQ(table[i].channel_byte, rows[i].byte);
    EXPECT_EQ(table[i].body_ref, static_cast<uint32_t>(rows[i].body_ref));
    EXPECT_EQ(table[i].arity, static_cast<uint32_t>(rows[i].arity));
    EXPECT_EQ(static_cast<bool>(table[i].handler), rows[i].has_handler);
  }
}

TEST(SystemProcessTableTest, StandardTableMatchesThePublicNode) {
  ExpectTable(StandardSystemProcesses(), kStandardRows);
}

TEST(SystemProcessTableTest, TestTableMatchesRhoSpec) {
  ExpectTable(TestSystemProcesses(), kTestRows);
}

TEST(SystemProcessTableTest, UrisBytesAndBodyRefsAreUniqueAcrossBothTables) {
  std::set<std::string> uris;
  std::set<int> bytes;
  std::set<uint32_t> refs;
  for (const auto* table :
       {&StandardSystemProcesses(), &TestSystemProcesses()}) {
    for (const SystemProcessDef& d : *table) {
      EXPECT_TRUE(uris.insert(d.uri).second) << d.uri;
      EXPECT_TRUE(bytes.insert(d.channel_byte).second) << d.uri;
      if (d.handler) {
        EXPECT_TRUE(refs.insert(d.body_ref).second) << d.uri;
      }
    }
  }
}

TEST(SystemProcessTableTest, NonDeterministicProcessesAreAbsent) {
  for (const char* uri :
       {"rho:ai:gpt4", "rho:ai:dalle3", "rho:ai:textToAudio", "rho:io:grpcTell",
        "rho:ollama:chat", "rho:ollama:generate", "rho:ollama:models",
        "rho:chroma:collection:new", "rho:internal:registry_lookup"}) {
    EXPECT_EQ(Find(uri), nullptr) << uri;
  }
}

TEST(FixedChannelTest, IsAOneBytePrivateName) {
  ParPtr c = FixedChannel(17);
  ASSERT_EQ(c->ComponentCount(), 1u);
  ASSERT_EQ(c->unforgeables.size(), 1u);
  EXPECT_EQ(c->unforgeables[0]->kind, UnforgeableKind::kPrivate);
  EXPECT_EQ(c->unforgeables[0]->id, Bytes{17});
  EXPECT_TRUE(ir::Equal(c, FixedChannel(17)));
  EXPECT_FALSE(ir::Equal(c, FixedChannel(18)));
}

TEST(SystemUriValueTest, IsAWriteOnlyBundleOfTheFixedChannel) {
  std::optional<ParPtr> v =
      SystemUriValue("rho:registry:ops", StandardSystemProcesses());
  ASSERT_TRUE(v.has_value());
  ASSERT_EQ((*v)->bundles.size(), 1u);
  EXPECT_EQ((*v)->ComponentCount(), 1u);
  const ir::Bundle& b = *(*v)->bundles[0];
  EXPECT_TRUE(b.write_flag);
  EXPECT_FALSE(b.read_flag);
  EXPECT_TRUE(ir::Equal(b.body, FixedChannel(17)));
}

TEST(SystemUriValueTest, FixedOnlyChannelsAreBoundToo) {
  std::optional<ParPtr> v =
      SystemUriValue("rho:registry:lookup", StandardSystemProcesses());
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(ir::Equal((*v)->bundles[0]->body, FixedChannel(14)));
}

TEST(SystemUriValueTest, UnknownUriIsNullopt) {
  EXPECT_FALSE(SystemUriValue("rho:io:nope", StandardSystemProcesses()));
  EXPECT_FALSE(SystemUriValue("rho:test:assertAck", StandardSystemProcesses()));
  EXPECT_TRUE(SystemUriValue("rho:test:assertAck", TestSystemProcesses()));
}

// ---------------------------------------------------------------------------
// stdout / stderr.

struct PrintCase {
  ParPtr value;
  std::string text;
};

TEST_F(SysprocTest, StdoutPrintsValuesInRholangSyntax) {
  const PrintCase cases[] = {
      {IntPar(1), "1"},
      {IntPar(-42), "-42"},
      {StrPar("x"), "\"x\""},
      {BoolP(true), "true"},
      {ir::Nil(), "Nil"},
      {ir::ParOf(Expr::Uri("rho:id:abc")), "`rho:id:abc`"},
      {HexP("00ff"), "\"00ff\".hexToBytes()"},
      {ir::ParOf(Expr::List({IntPar(1), StrPar("a")}, std::nullopt)),
       "[1, \"a\"]"},
      {ir::ParOf(Expr::Tuple({IntPar(1), IntPar(2)})), "(1, 2)"},
      {ir::ParOf(Expr::Map({{StrPar("a"), IntPar(1)}}, std::nullopt)),
       "{\"a\": 1}"},
      {UnfP(UnforgeableKind::kPrivate, Bytes{0xab}),
       "Unforgeable(GPrivate, 0xab)"},
  };
  for (const PrintCase& c : cases) {
    sink_.out.clear();
    absl::StatusOr<std::vector<Reply>> r = Call("rho:io:stdout", {c.value});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->empty());
    ASSERT_EQ(sink_.out.size(), 1u);
    EXPECT_EQ(sink_.out[0], c.text);
  }
  EXPECT_TRUE(sink_.err.empty());
}

TEST_F(SysprocTest, StdoutOneLinePerCall) {
  ASSERT_TRUE(Call("rho:io:stdout", {IntPar(1)}).ok());
  ASSERT_TRUE(Call("rho:io:stdout", {IntPar(2)}).ok());
  EXPECT_EQ(sink_.out, (std::vector<std::string>{"1", "2"}));
}

TEST_F(SysprocTest, StdoutWithoutSinkIsDroppedButCostsTheSame) {
  ASSERT_TRUE(Call("rho:io:stdout", {StrPar("hello")}).ok());
  int64_t with_sink = meter_.spent();
  PhloMeter other(-1);
  ProcessContext no_sink = MakeContext(nullptr, &other);
  ASSERT_TRUE(Find("rho:io:stdout")
                  ->handler(std::vector<ParPtr>{StrPar("hello")}, no_sink)
                  .ok());
  EXPECT_EQ(other.spent(), with_sink);
  EXPECT_GT(with_sink, 0);
}

TEST_F(SysprocTest, StdoutOfATermTooDeepToPrintWritesAPlaceholder) {
  if (::rnode::testing::kUnderThreadSanitizer) {
    GTEST_SKIP() << "recursion at the depth limit overruns ThreadSanitizer's "
                    "shadow stack (tests/sanitizer.h); single-threaded, run "
                    "by the release and asan suites";
  }
  ParPtr deep = IntPar(0);
  for (uint32_t i = 0; i < kMaxIrDepth + 8; ++i) {
    deep = ir::ParOf(Expr::List({deep}, std::nullopt));
  }
  absl::StatusOr<std::vector<Reply>> r = Call("rho:io:stdout", {deep});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(sink_.out.size(), 1u);
  EXPECT_EQ(sink_.out[0].rfind("<unprintable: ", 0), 0u) << sink_.out[0];
}

TEST_F(SysprocTest, StdoutAckPrintsThenRepliesNil) {
  std::vector<ParPtr> data = CallAck("rho:io:stdoutAck", {IntPar(7), Ack()});
  ASSERT_EQ(data.size(), 1u);
  EXPECT_TRUE(data[0]->IsNil());
  EXPECT_EQ(sink_.out, std::vector<std::string>{"7"});
}

TEST_F(SysprocTest, StderrGoesToStderr) {
  ASSERT_TRUE(Call("rho:io:stderr", {StrPar("oops")}).ok());
  EXPECT_TRUE(sink_.out.empty());
  EXPECT_EQ(sink_.err, std::vector<std::string>{"\"oops\""});
}

TEST_F(SysprocTest, StderrAckPrintsThenRepliesNil) {
  std::vector<ParPtr> data = CallAck("rho:io:stderrAck", {IntPar(3), Ack()});
  ASSERT_EQ(data.size(), 1u);
  EXPECT_TRUE(data[0]->IsNil());
  EXPECT_EQ(sink_.err, std::vector<std::string>{"3"});
}

TEST_F(SysprocTest, WrongArgumentCountIsInvalidArgument) {
  ExpectInvalid("rho:io:stdout", {IntPar(1), IntPar(2)}, "expected 1");
  ExpectInvalid("rho:crypto:sha256Hash", {HexP("00")}, "expected 2");
  ExpectInvalid("rho:vault:address", {}, "expected 3");
}

// ---------------------------------------------------------------------------
// Hashes.

struct HashCase {
  const char* uri;
  const char* input;  // ASCII
  const char* digest;
};

const HashCase kHashCases[] = {
    {"rho:crypto:sha256Hash", "",
     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"rho:crypto:sha256Hash", "abc",
     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    {"rho:crypto:keccak256Hash", "",
     "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"},
    {"rho:crypto:keccak256Hash", "abc",
     "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"},
    {"rho:crypto:blake2b256Hash", "",
     "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8"},
    {"rho:crypto:blake2b256Hash", "abc",
     "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319"},
};

class HashVectorTest : public SysprocTest,
                       public ::testing::WithParamInterface<HashCase> {};

TEST_P(HashVectorTest, RepliesTheKnownDigest) {
  const HashCase& c = GetParam();
  ParPtr out = CallOne(c.uri, {BytesP(ToBytes(c.input)), Ack()});
  EXPECT_EQ(BytesOf(out), c.digest);
}

INSTANTIATE_TEST_SUITE_P(Vectors, HashVectorTest,
                         ::testing::ValuesIn(kHashCases));

class HashBadArgTest : public SysprocTest,
                       public ::testing::WithParamInterface<const char*> {};

TEST_P(HashBadArgTest, NonByteArrayInputIsInvalidArgument) {
  ExpectInvalid(GetParam(), {StrPar("abc"), Ack()}, "argument 1 (bytes)");
  ExpectInvalid(GetParam(), {ir::Nil(), Ack()}, "got Nil");
  ExpectInvalid(GetParam(), {IntPar(1), Ack()}, "got Int");
}

INSTANTIATE_TEST_SUITE_P(AllHashes, HashBadArgTest,
                         ::testing::Values("rho:crypto:sha256Hash",
                                           "rho:crypto:keccak256Hash",
                                           "rho:crypto:blake2b256Hash"));

TEST_F(SysprocTest, HashIgnoresNamesInParallelWithTheBytesAsThePublicNode) {
  // The public node reads a Par with one expression and any unforgeables as
  // that expression.
  ParPtr mixed =
      ir::ParBuilder()
          .Add(Expr::ByteArray(ToBytes("abc")))
          .Add(ir::Unforgeable::Make(UnforgeableKind::kPrivate, Bytes{1, 2}))
          .Build();
  EXPECT_EQ(BytesOf(CallOne("rho:crypto:sha256Hash", {mixed, Ack()})),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  ParPtr two_exprs = ir::ParBuilder()
                         .Add(Expr::ByteArray(ToBytes("abc")))
                         .Add(Expr::Int(1))
                         .Build();
  ExpectInvalid("rho:crypto:sha256Hash", {two_exprs, Ack()}, "got process");
}

TEST_F(SysprocTest, HashCostGrowsWithInput) {
  ASSERT_TRUE(Call("rho:crypto:sha256Hash", {BytesP(Bytes(10)), Ack()}).ok());
  int64_t small = meter_.spent();
  PhloMeter big(-1);
  ctx_.meter = &big;
  ASSERT_TRUE(Call("rho:crypto:sha256Hash", {BytesP(Bytes(1010)), Ack()}).ok());
  EXPECT_EQ(big.spent() - small, 1000 * cost::kPerByte);
}

TEST_F(SysprocTest, OutOfPhloStopsAHash) {
  PhloMeter tiny(5);
  ctx_.meter = &tiny;
  absl::StatusOr<std::vector<Reply>> r =
      Call("rho:crypto:blake2b256Hash", {BytesP(Bytes(100)), Ack()});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsOutOfPhlo(r.status()));
}

TEST_F(SysprocTest, MissingMeterIsInternal) {
  ctx_.meter = nullptr;
  absl::StatusOr<std::vector<Reply>> r = Call("rho:io:devNull", {IntPar(1)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
}

// ---------------------------------------------------------------------------
// Signatures.

// The public node's Ed25519 test vector (RFC 8032 style key and message).
constexpr char kEdKey[] =
    "77f48b59caeda77751ed138b0ec667ff50f8768c25d48309a8f386a2bad187fb";
constexpr char kEdMessage[] =
    "916c7d1d268fc0e77c1bef238432573c39be577bbea0998936add2b50a653171ce18a542"
    "b0b7f96c1691a3be6031522894a8634183eda38798a0c5d5d79fbd01dd04a8646d71873b"
    "77b221998a81922d8105f892316369d5224c9983372d2313c6b1f4556ea26ba49d46e8b5"
    "61e0fc76633ac9766e68e21fba7edca93c4c7460376d7f3ac22ff372c18f613f2ae2e856"
    "af40";
constexpr char kEdSig[] =
    "6bd710a368c1249923fc7a1610747403040f0cc30815a00f9ff548a896bbda0b4eb2ca19"
    "ebcf917f0f34200a9edbad3901b64ab09cc5ef7b9bcc3c40c0ff7509";

bool BoolOf(const ParPtr& p) {
  const Expr* e = p->SingleExpr();
  EXPECT_TRUE(e != nullptr && e->kind == ExprKind::kBool);
  return e != nullptr && e->bool_value;
}

TEST_F(SysprocTest, Ed25519VerifiesThePublishedVector) {
  EXPECT_TRUE(
      BoolOf(CallOne("rho:crypto:ed25519Verify",
                     {HexP(kEdMessage), HexP(kEdSig), HexP(kEdKey), Ack()})));
}

TEST_F(SysprocTest, Ed25519RejectsATamperedMessage) {
  Bytes msg = Unhex(kEdMessage);
  msg[0] ^= 1;
  EXPECT_FALSE(
      BoolOf(CallOne("rho:crypto:ed25519Verify",
                     {BytesP(msg), HexP(kEdSig), HexP(kEdKey), Ack()})));
}

TEST_F(SysprocTest, Ed25519SignedHereVerifies) {
  Bytes sk(32, 7);
  absl::StatusOr<Bytes> pk = crypto::Ed25519PublicKeyOf(sk);
  ASSERT_TRUE(pk.ok());
  Bytes msg = ToBytes("transfer 10");
  absl::StatusOr<Bytes> sig = crypto::Ed25519Sign(msg, sk);
  ASSERT_TRUE(sig.ok());
  EXPECT_TRUE(BoolOf(CallOne("rho:crypto:ed25519Verify",
                             {BytesP(msg), BytesP(*sig), BytesP(*pk), Ack()})));
  Bytes other_pk = Unhex(kEdKey);
  EXPECT_FALSE(
      BoolOf(CallOne("rho:crypto:ed25519Verify",
                     {BytesP(msg), BytesP(*sig), BytesP(other_pk), Ack()})));
}

TEST_F(SysprocTest, Ed25519MalformedKeyOrSignatureIsFalse) {
  EXPECT_FALSE(
      BoolOf(CallOne("rho:crypto:ed25519Verify",
                     {HexP(kEdMessage), HexP(kEdSig), HexP("0011"), Ack()})));
  EXPECT_FALSE(
      BoolOf(CallOne("rho:crypto:ed25519Verify",
                     {HexP(kEdMessage), HexP("00"), HexP(kEdKey), Ack()})));
}

TEST_F(SysprocTest, Ed25519NonByteArrayArgumentsAreInvalid) {
  ExpectInvalid("rho:crypto:ed25519Verify",
                {StrPar("m"), HexP(kEdSig), HexP(kEdKey), Ack()},
                "argument 1 (data)");
  ExpectInvalid("rho:crypto:ed25519Verify",
                {HexP(kEdMessage), IntPar(1), HexP(kEdKey), Ack()},
                "argument 2 (signature)");
  ExpectInvalid("rho:crypto:ed25519Verify",
                {HexP(kEdMessage), HexP(kEdSig), ir::Nil(), Ack()},
                "argument 3 (public key)");
}

// NonNegativeNumber.rho's signed-registry row: secp256k1 key, the protobuf
// `toSign` bytes and the DER signature of their blake2b256 digest.
constexpr char kNnnPk[] =
    "04e1559d809924e564dce57e34646e155b144d2a504ce7ee519d7a5108fd42f1038d08d7"
    "45e5ea21cb53d6aa7c7174a768fa373207a83bc947a20c6a02ece7a60e";
constexpr char kNnnToSign[] =
    "2a65aa01620a092a0710a0f2a2cfe05a0a462a44ca014104e1559d809924e564dce57e34"
    "646e155b144d2a504ce7ee519d7a5108fd42f1038d08d745e5ea21cb53d6aa7c7174a768"
    "fa373207a83bc947a20c6a02ece7a60e0a0d2a0b10feffffffffffffffff01";
constexpr char kNnnSig[] =
    "3044022063a76499f5b658d976c0cc108d7335464f806d43a5a80cf9bf772259810f9d90"
    "02202c77c368f2b2338315bad9060bad75d4e59ad55ea8a09fe3fcb06c364bacb1a9";
constexpr char kNnnUri[] =
    "rho:id:hxyadh1ffypra47ry9mk6b8r1i33ar1w9wjsez4khfe9huzrfcytx9";

TEST_F(SysprocTest, Secp256k1VerifiesAGenesisRegistrySignature) {
  Hash32 digest = crypto::Blake2b256(Unhex(kNnnToSign));
  EXPECT_TRUE(
      BoolOf(CallOne("rho:crypto:secp256k1Verify",
                     {BytesP(digest), HexP(kNnnSig), HexP(kNnnPk), Ack()})));
}

TEST_F(SysprocTest, Secp256k1SignedHereVerifiesAndOtherDigestDoesNot) {
  absl::StatusOr<crypto::Secp256k1PrivateKey> sk =
      crypto::ParseSecp256k1PrivateKey(Unhex(
          "54d4e576251b6c7b95af0349a5a31e583e982edeb9856a59bde14f6be5a302b3"));
  ASSERT_TRUE(sk.ok());
  crypto::Secp256k1PublicKey pk = crypto::Secp256k1PublicKeyOf(*sk);
  Hash32 digest = crypto::Sha256(ToBytes("testing"));
  absl::StatusOr<Bytes> sig = crypto::Secp256k1SignDer(digest, *sk);
  ASSERT_TRUE(sig.ok());
  EXPECT_TRUE(
      BoolOf(CallOne("rho:crypto:secp256k1Verify",
                     {BytesP(digest), BytesP(*sig), BytesP(pk), Ack()})));
  Hash32 other = crypto::Sha256(ToBytes("wrong data"));
  EXPECT_FALSE(
      BoolOf(CallOne("rho:crypto:secp256k1Verify",
                     {BytesP(other), BytesP(*sig), BytesP(pk), Ack()})));
}

TEST_F(SysprocTest, Secp256k1AcceptsACompressedKeyAsThePublicNodeDoes) {
  absl::StatusOr<crypto::Secp256k1PrivateKey> sk =
      crypto::ParseSecp256k1PrivateKey(Unhex(
          "54d4e576251b6c7b95af0349a5a31e583e982edeb9856a59bde14f6be5a302b3"));
  ASSERT_TRUE(sk.ok());
  crypto::Secp256k1PublicKey pk = crypto::Secp256k1PublicKeyOf(*sk);
  Bytes compressed(pk.begin(), pk.begin() + 33);
  compressed[0] = (pk[64] & 1) ? 0x03 : 0x02;
  Hash32 digest = crypto::Sha256(ToBytes("compressed"));
  absl::StatusOr<Bytes> sig = crypto::Secp256k1SignDer(digest, *sk);
  ASSERT_TRUE(sig.ok());
  EXPECT_TRUE(BoolOf(
      CallOne("rho:crypto:secp256k1Verify",
              {BytesP(digest), BytesP(*sig), BytesP(compressed), Ack()})));
  compressed[0] ^= 1;  // the negated point: another key
  EXPECT_FALSE(BoolOf(
      CallOne("rho:crypto:secp256k1Verify",
              {BytesP(digest), BytesP(*sig), BytesP(compressed), Ack()})));
}

// Flips S to n - S: the same signature in its malleated (high-S) form.
Bytes HighS(const Bytes& der) {
  absl::StatusOr<Bytes> compact = crypto::Secp256k1DerToCompact(der);
  EXPECT_TRUE(compact.ok());
  Bytes c = *compact;
  Bytes n =
      Unhex("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141");
  int borrow = 0;
  for (int i = 31; i >= 0; --i) {
    int v = n[i] - c[32 + i] - borrow;
    borrow = v < 0;
    c[32 + i] = static_cast<uint8_t>(v + (borrow ? 256 : 0));
  }
  absl::StatusOr<Bytes> out = crypto::Secp256k1CompactToDer(c);
  EXPECT_TRUE(out.ok());
  return *out;
}

TEST_F(SysprocTest, Secp256k1HighSIsFalseAsInThePublicNode) {
  Hash32 digest = crypto::Blake2b256(Unhex(kNnnToSign));
  Bytes high = HighS(Unhex(kNnnSig));
  EXPECT_NE(high, Unhex(kNnnSig));
  EXPECT_FALSE(
      BoolOf(CallOne("rho:crypto:secp256k1Verify",
                     {BytesP(digest), BytesP(high), HexP(kNnnPk), Ack()})));
}

TEST_F(SysprocTest, Secp256k1DigestNot32BytesIsFalse) {
  EXPECT_FALSE(
      BoolOf(CallOne("rho:crypto:secp256k1Verify",
                     {HexP(kNnnToSign), HexP(kNnnSig), HexP(kNnnPk), Ack()})));
}

TEST_F(SysprocTest, Secp256k1MalformedSignatureOrKeyIsFalse) {
  Hash32 digest = crypto::Blake2b256(Unhex(kNnnToSign));
  EXPECT_FALSE(
      BoolOf(CallOne("rho:crypto:secp256k1Verify",
                     {BytesP(digest), HexP("300201"), HexP(kNnnPk), Ack()})));
  EXPECT_FALSE(
      BoolOf(CallOne("rho:crypto:secp256k1Verify",
                     {BytesP(digest), HexP(kNnnSig), HexP("04"), Ack()})));
  EXPECT_FALSE(BoolOf(
      CallOne("rho:crypto:secp256k1Verify",
              {BytesP(digest), HexP(kNnnSig), BytesP(Bytes(65, 4)), Ack()})));
}

TEST_F(SysprocTest, Secp256k1NonByteArrayArgumentsAreInvalid) {
  ExpectInvalid("rho:crypto:secp256k1Verify",
                {HexP("00"), HexP(kNnnSig), StrPar("pk"), Ack()},
                "argument 3 (public key)");
  ExpectInvalid("rho:crypto:secp256k1Verify",
                {BoolP(true), HexP(kNnnSig), HexP(kNnnPk), Ack()}, "got Bool");
}

TEST_F(SysprocTest, VerifyChargesMoreThanAHash) {
  Hash32 digest = crypto::Blake2b256(Unhex(kNnnToSign));
  ASSERT_TRUE(Call("rho:crypto:secp256k1Verify",
                   {BytesP(digest), HexP(kNnnSig), HexP(kNnnPk), Ack()})
                  .ok());
  int64_t verify = meter_.spent();
  PhloMeter hash(-1);
  ctx_.meter = &hash;
  ASSERT_TRUE(Call("rho:crypto:sha256Hash", {BytesP(digest), Ack()}).ok());
  EXPECT_GT(verify, 10 * hash.spent());
}

// ---------------------------------------------------------------------------
// Block, Casper and deploy data.

TEST_F(SysprocTest, BlockDataRepliesThreeValues) {
  BlockInfo block{.block_number = 12,
                  .timestamp = 1700000000000,
                  .sender_public_key = Unhex(kNnnPk)};
  ctx_.block = &block;
  std::vector<ParPtr> data = CallAck("rho:block:data", {Ack()});
  ASSERT_EQ(data.size(), 3u);
  EXPECT_TRUE(ir::Equal(data[0], IntPar(12)));
  EXPECT_TRUE(ir::Equal(data[1], IntPar(1700000000000)));
  EXPECT_EQ(BytesOf(data[2]), kNnnPk);
}

TEST_F(SysprocTest, BlockDataWithoutBlockIsZerosAndEmptyKey) {
  std::vector<ParPtr> data = CallAck("rho:block:data", {Ack()});
  ASSERT_EQ(data.size(), 3u);
  EXPECT_TRUE(ir::Equal(data[0], IntPar(0)));
  EXPECT_TRUE(ir::Equal(data[1], IntPar(0)));
  EXPECT_EQ(BytesOf(data[2]), "");
}

TEST_F(SysprocTest, InvalidBlocksRepliesTheMapCasperSet) {
  ParPtr map = ir::ParOf(Expr::Map({{HexP("aa"), HexP("bb")}}, std::nullopt));
  ctx_.invalid_blocks = map;
  EXPECT_TRUE(ir::Equal(CallOne("rho:casper:invalidBlocks", {Ack()}), map));
}

TEST_F(SysprocTest, InvalidBlocksDefaultsToTheEmptyMap) {
  ParPtr out = CallOne("rho:casper:invalidBlocks", {Ack()});
  const Expr* e = out->SingleExpr();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->kind, ExprKind::kMap);
  EXPECT_TRUE(e->operands.empty());
}

TEST_F(SysprocTest, DeployDataRepliesTimestampDeployerIdAndDeployId) {
  DeployInfo deploy{.timestamp = 1559156251792,
                    .deployer_public_key = Unhex(kNnnPk),
                    .deploy_id = Unhex(kNnnSig)};
  ctx_.deploy = &deploy;
  std::vector<ParPtr> data = CallAck("rho:deploy:data", {Ack()});
  ASSERT_EQ(data.size(), 3u);
  EXPECT_TRUE(ir::Equal(data[0], IntPar(1559156251792)));
  EXPECT_TRUE(
      ir::Equal(data[1], UnfP(UnforgeableKind::kDeployerId, Unhex(kNnnPk))));
  EXPECT_TRUE(
      ir::Equal(data[2], UnfP(UnforgeableKind::kDeployId, Unhex(kNnnSig))));
}

TEST_F(SysprocTest, DeployDataWithoutDeployIsThePublicNodesEmptyDeploy) {
  std::vector<ParPtr> data = CallAck("rho:deploy:data", {Ack()});
  ASSERT_EQ(data.size(), 3u);
  EXPECT_TRUE(ir::Equal(data[0], IntPar(0)));
  EXPECT_TRUE(ir::Equal(data[1], UnfP(UnforgeableKind::kDeployerId, Bytes{0})));
  EXPECT_TRUE(ir::Equal(data[2], UnfP(UnforgeableKind::kDeployId, Bytes{0})));
}

// ---------------------------------------------------------------------------
// REV addresses.

struct KeyAddress {
  const char* public_key;
  const char* address;
};

// Published development keys and their addresses (tests/crypto).
const KeyAddress kAddresses[] = {
    {"04ffc016579a68050d655d55df4e09f04605164543e257c8e6df10361e6068a533"
     "6588e9b355ea859c5ab4285a5ef0efdf62bc28b80320ce99e26bb1607b3ad93d",
     "1111AtahZeefej4tvVR6ti9TJtv8yxLebT31SCEVDCKMNikBk5r3g"},
    {"04fa70d7be5eb750e0915c0f6d19e7085d18bb1c22d030feb2a877ca2cd226d044"
     "38aa819359c56c720142fbc66e9da03a5ab960a3d8b75363a226b7c800f60420",
     "111127RX5ZgiAdRaQy4AWy57RdvAAckdELReEBxzvWYVvdnR32PiHA"},
    {"04837a4cff833e3157e3135d7b40b8e1f33c6e6b5a4342b9fc784230ca4c4f9d35"
     "6f258debef56ad4984726d6ab3e7709e1632ef079b4bcd653db00b68b2df065f",
     "111129p33f7vaRrpLqK8Nr35Y2aacAjrR5pd6PCzqcdrMuPHzymczH"},
    {"0457febafcc25dd34ca5e5c025cd445f60e5ea6918931a54eb8c3a204f51760248"
     "090b0c757c2bdad7b8c4dca757e109f8ef64737d90712724c8216c94b4ae661c",
     "1111LAd2PWaHsw84gxarNx99YVK2aZhCThhrPsWTV7cs1BPcvHftP"},
};

class AddressVectorTest : public SysprocTest,
                          public ::testing::WithParamInterface<KeyAddress> {};

TEST_P(AddressVectorTest, FromPublicKey) {
  EXPECT_EQ(TextOf(CallOne(
                "rho:vault:address",
                {StrPar("fromPublicKey"), HexP(GetParam().public_key), Ack()})),
            GetParam().address);
}

TEST_P(AddressVectorTest, FromDeployerId) {
  EXPECT_EQ(
      TextOf(CallOne("rho:vault:address", {StrPar("fromDeployerId"),
                                           UnfP(UnforgeableKind::kDeployerId,
                                                Unhex(GetParam().public_key)),
                                           Ack()})),
      GetParam().address);
}

TEST_P(AddressVectorTest, ValidatesToNil) {
  EXPECT_TRUE(CallOne("rho:vault:address",
                      {StrPar("validate"), StrPar(GetParam().address), Ack()})
                  ->IsNil());
}

INSTANTIATE_TEST_SUITE_P(Published, AddressVectorTest,
                         ::testing::ValuesIn(kAddresses));

TEST_F(SysprocTest, FromPublicKeyChecksOnlyTheLength) {
  // The public node hashes any 65 bytes (no point or tag check).
  Bytes not_a_point(65, 0x01);
  ParPtr out = CallOne("rho:vault:address",
                       {StrPar("fromPublicKey"), BytesP(not_a_point), Ack()});
  std::string address = TextOf(out);
  EXPECT_EQ(address.substr(0, 4), "1111");
  EXPECT_TRUE(crypto::ParseRevAddress(address).ok());
}

TEST_F(SysprocTest, FromPublicKeyOfWrongLengthIsNil) {
  EXPECT_TRUE(CallOne("rho:vault:address",
                      {StrPar("fromPublicKey"), BytesP(Bytes(33, 2)), Ack()})
                  ->IsNil());
  EXPECT_TRUE(CallOne("rho:vault:address",
                      {StrPar("fromPublicKey"), StrPar("04ab"), Ack()})
                  ->IsNil());
}

TEST_F(SysprocTest, FromDeployerIdOfOtherNamesIsNil) {
  EXPECT_TRUE(CallOne("rho:vault:address",
                      {StrPar("fromDeployerId"),
                       UnfP(UnforgeableKind::kDeployId, Unhex(kNnnPk)), Ack()})
                  ->IsNil());
  EXPECT_TRUE(CallOne("rho:vault:address",
                      {StrPar("fromDeployerId"), HexP(kNnnPk), Ack()})
                  ->IsNil());
}

TEST_F(SysprocTest, FromUnforgeableHashesTheProtobufGPrivate) {
  Bytes id(32);
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<uint8_t>(i * 7);
  Bytes encoded = {0x0a, 0x20};
  encoded.insert(encoded.end(), id.begin(), id.end());
  std::string expected =
      crypto::RevAddressFromKeyHash(crypto::Keccak256(encoded));
  std::string got = TextOf(CallOne(
      "rho:vault:address",
      {StrPar("fromUnforgeable"), UnfP(UnforgeableKind::kPrivate, id), Ack()}));
  EXPECT_EQ(got, expected);
  EXPECT_TRUE(
      CallOne("rho:vault:address", {StrPar("validate"), StrPar(got), Ack()})
          ->IsNil());
}

TEST_F(SysprocTest, FromUnforgeableOfEmptyIdHashesNothing) {
  EXPECT_EQ(TextOf(CallOne("rho:vault:address",
                           {StrPar("fromUnforgeable"),
                            UnfP(UnforgeableKind::kPrivate, Bytes{}), Ack()})),
            crypto::RevAddressFromKeyHash(crypto::Keccak256(Bytes{})));
}

TEST_F(SysprocTest, FromUnforgeableOfNonPrivateIsNil) {
  EXPECT_TRUE(
      CallOne("rho:vault:address",
              {StrPar("fromUnforgeable"),
               UnfP(UnforgeableKind::kDeployerId, Unhex(kNnnPk)), Ack()})
          ->IsNil());
  EXPECT_TRUE(CallOne("rho:vault:address",
                      {StrPar("fromUnforgeable"), IntPar(3), Ack()})
                  ->IsNil());
}

struct BadAddress {
  std::string address;
  const char* error;
};

TEST_F(SysprocTest, ValidateReportsThePublicNodesMessages) {
  std::string good = kAddresses[0].address;
  std::string bad_checksum = good;
  bad_checksum.back() = bad_checksum.back() == 'g' ? 'h' : 'g';
  // 40 bytes with a non-zero prefix and a correct checksum.
  Bytes payload(36, 0);
  payload[0] = 1;
  Hash32 check = crypto::Blake2b256(payload);
  payload.insert(payload.end(), check.begin(), check.begin() + 4);
  std::string bad_prefix = crypto::Base58Encode(payload);
  const BadAddress cases[] = {
      {"0OIl", "Invalid Base58 encoding"},
      {"", "Invalid address length"},
      {"1111", "Invalid address length"},
      {good + "1", "Invalid address length"},
      {bad_checksum, "Invalid checksum"},
      {bad_prefix, "Invalid prefix"},
      {std::string(2000, 'z'), "Invalid address length"},
      {std::string(2000, 'z') + "0", "Invalid Base58 encoding"},
  };
  for (const BadAddress& c : cases) {
    SCOPED_TRACE(c.address.substr(0, 60));
    ParPtr out = CallOne("rho:vault:address",
                         {StrPar("validate"), StrPar(c.address), Ack()});
    EXPECT_EQ(TextOf(out), c.error);
  }
}

TEST_F(SysprocTest, ValidateOfNonStringIsNil) {
  EXPECT_TRUE(
      CallOne("rho:vault:address", {StrPar("validate"), IntPar(1), Ack()})
          ->IsNil());
}

TEST_F(SysprocTest, ErrorsQuoteAtMostAShortPrefixOfADeploysString) {
  absl::StatusOr<std::vector<Reply>> r = Call(
      "rho:vault:address", {StrPar(std::string(10000, 'q')), ir::Nil(), Ack()});
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(r.status().message().size(), 300u) << r.status();
  EXPECT_NE(r.status().message().find("\"..."), std::string::npos);
}

TEST_F(SysprocTest, VaultAddressUnknownOperationIsInvalid) {
  ExpectInvalid("rho:vault:address", {StrPar("fromEth"), StrPar("x"), Ack()},
                "argument 1 (operation)");
  ExpectInvalid("rho:vault:address", {IntPar(1), StrPar("x"), Ack()},
                "argument 1 (operation) must be a String");
}

// ---------------------------------------------------------------------------
// deployerId ops, registry ops, auth token ops.

TEST_F(SysprocTest, PubKeyBytesOfDeployerId) {
  EXPECT_EQ(BytesOf(CallOne(
                "rho:system:deployerId:ops",
                {StrPar("pubKeyBytes"),
                 UnfP(UnforgeableKind::kDeployerId, Unhex(kNnnPk)), Ack()})),
            kNnnPk);
}

TEST_F(SysprocTest, PubKeyBytesOfAnythingElseIsNil) {
  EXPECT_TRUE(CallOne("rho:system:deployerId:ops",
                      {StrPar("pubKeyBytes"), HexP(kNnnPk), Ack()})
                  ->IsNil());
  EXPECT_TRUE(CallOne("rho:system:deployerId:ops",
                      {StrPar("pubKeyBytes"),
                       UnfP(UnforgeableKind::kPrivate, Unhex(kNnnPk)), Ack()})
                  ->IsNil());
}

TEST_F(SysprocTest, DeployerIdOpsUnknownOperationIsInvalid) {
  ExpectInvalid("rho:system:deployerId:ops",
                {StrPar("pubKey"), ir::Nil(), Ack()}, "\"pubKeyBytes\"");
}

struct UriVector {
  const char* key_hex;
  const char* uri;
};

// Genesis contract tables: signing key -> registry URI.
const UriVector kUriVectors[] = {
    {kNnnPk, kNnnUri},
};

TEST_F(SysprocTest, BuildUriMatchesTheGenesisTable) {
  for (const UriVector& v : kUriVectors) {
    ParPtr out = CallOne("rho:registry:ops",
                         {StrPar("buildUri"), HexP(v.key_hex), Ack()});
    const Expr* e = out->SingleExpr();
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->kind, ExprKind::kUri);
    EXPECT_EQ(e->text, v.uri);
  }
}

TEST_F(SysprocTest, BuildUriOfRhoSpecKeyIsThePublishedLookupUri) {
  absl::StatusOr<crypto::Secp256k1PrivateKey> sk =
      crypto::ParseSecp256k1PrivateKey(Unhex(
          "abaa20c1d578612b568a7c3d9b16e81c68d73b931af92cf79727e02011c558c6"));
  ASSERT_TRUE(sk.ok());
  crypto::Secp256k1PublicKey pk = crypto::Secp256k1PublicKeyOf(*sk);
  EXPECT_EQ(TextOf(CallOne("rho:registry:ops",
                           {StrPar("buildUri"), BytesP(pk), Ack()})),
            "rho:id:zphjgsfy13h1k85isc8rtwtgt3t9zzt5pjd5ihykfmyapfc4wt3x5h");
}

TEST_F(SysprocTest, BuildUriOfNonByteArrayIsNil) {
  EXPECT_TRUE(
      CallOne("rho:registry:ops", {StrPar("buildUri"), StrPar("k"), Ack()})
          ->IsNil());
}

TEST_F(SysprocTest, RegistryOpsUnknownOperationIsInvalid) {
  ExpectInvalid("rho:registry:ops",
                {StrPar("parseVersionedUri"), StrPar("x"), Ack()},
                "\"buildUri\"");
}

TEST_F(SysprocTest, AuthTokenCheck) {
  EXPECT_TRUE(
      BoolOf(CallOne("sys:authToken:ops",
                     {StrPar("check"),
                      UnfP(UnforgeableKind::kSysAuthToken, Bytes{}), Ack()})));
  EXPECT_FALSE(BoolOf(CallOne(
      "sys:authToken:ops",
      {StrPar("check"), UnfP(UnforgeableKind::kPrivate, Bytes{1}), Ack()})));
  EXPECT_FALSE(BoolOf(
      CallOne("sys:authToken:ops", {StrPar("check"), IntPar(1), Ack()})));
  // A token in parallel with something else is not a token.
  ParPtr two =
      ir::ParBuilder()
          .Add(ir::Unforgeable::Make(UnforgeableKind::kSysAuthToken, Bytes{}))
          .Add(Expr::Int(1))
          .Build();
  EXPECT_FALSE(
      BoolOf(CallOne("sys:authToken:ops", {StrPar("check"), two, Ack()})));
}

TEST_F(SysprocTest, AuthTokenUnknownOperationIsInvalid) {
  ExpectInvalid("sys:authToken:ops", {StrPar("make"), ir::Nil(), Ack()},
                "\"check\"");
}

TEST_F(SysprocTest, DevNullDiscards) {
  absl::StatusOr<std::vector<Reply>> r = Call("rho:io:devNull", {IntPar(1)});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
  EXPECT_TRUE(sink_.out.empty());
}

TEST_F(SysprocTest, AbortIsUserAbort) {
  absl::StatusOr<std::vector<Reply>> r =
      Call("rho:execution:abort", {StrPar("reason")});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsUserAbort(r.status()));
  EXPECT_GT(meter_.spent(), 0);
}

// ---------------------------------------------------------------------------
// Registry URI building blocks.

TEST(RegistryUriTest, ZBase32UsesTheZBase32Alphabet) {
  const uint8_t zeros[2] = {0, 0};
  EXPECT_EQ(ZBase32Encode(zeros, 10), "yy");
  const uint8_t ones[2] = {0xff, 0xff};
  EXPECT_EQ(ZBase32Encode(ones, 10), "99");
  const uint8_t first[1] = {0x08};  // 00001 000
  EXPECT_EQ(ZBase32Encode(first, 5), "b");
  // A partial last group is padded with zeros: 1 bit "1" -> 10000.
  const uint8_t top[1] = {0x80};
  EXPECT_EQ(ZBase32Encode(top, 1), "o");
}

TEST(RegistryUriTest, Crc14IsFourteenBitsAndZeroForEmpty) {
  EXPECT_EQ(RegistryCrc14({}), 0);
  for (int i = 0; i < 256; ++i) {
    const uint8_t b[1] = {static_cast<uint8_t>(i)};
    EXPECT_LT(RegistryCrc14(b), 1 << 14);
  }
}

TEST(RegistryUriTest, Crc14OfOneBitIsThePolynomialShifted) {
  // A single 0x01 byte: the remainder of x^14 mod the polynomial.
  const uint8_t b[1] = {0x01};
  EXPECT_EQ(RegistryCrc14(b), 0x0805);
}

TEST(RegistryUriTest, UriHas54CharactersAfterThePrefix) {
  std::string uri = RegistryUriFromKey(ToBytes("anything"));
  EXPECT_EQ(uri.substr(0, 7), "rho:id:");
  EXPECT_EQ(uri.size(), 7u + 54u);
  EXPECT_EQ(uri, RegistryUriFromHash(crypto::Blake2b256(ToBytes("anything"))));
}

// ---------------------------------------------------------------------------
// Test-only processes.

ParPtr Tuple3(ParPtr a, ParPtr b, ParPtr c) {
  return ir::ParOf(Expr::Tuple({std::move(a), std::move(b), std::move(c)}));
}

TEST_F(SysprocTest, AssertAckEqualityHolds) {
  EXPECT_TRUE(BoolOf(CallOne(
      "rho:test:assertAck",
      {StrPar("t1"), IntPar(0), Tuple3(IntPar(1), StrPar("=="), IntPar(1)),
       StrPar("one is one"), Ack()})));
  ASSERT_EQ(sink_.out.size(), 1u);
  EXPECT_EQ(sink_.out[0], "assert t1 (attempt 0): ok: one is one");
}

TEST_F(SysprocTest, AssertAckReportsFailures) {
  EXPECT_FALSE(BoolOf(CallOne(
      "rho:test:assertAck",
      {StrPar("t2"), IntPar(1), Tuple3(IntPar(1), StrPar("=="), IntPar(2)),
       StrPar("c"), Ack()})));
  EXPECT_TRUE(BoolOf(CallOne(
      "rho:test:assertAck",
      {StrPar("t3"), IntPar(1), Tuple3(IntPar(1), StrPar("!="), IntPar(2)),
       StrPar("c"), Ack()})));
  EXPECT_FALSE(BoolOf(
      CallOne("rho:test:assertAck",
              {StrPar("t4"), IntPar(1), BoolP(false), StrPar("c"), Ack()})));
  EXPECT_EQ(sink_.out[0], "assert t2 (attempt 1): FAILED: c");
}

TEST_F(SysprocTest, AssertAckCountsAMalformedAssertionAsFailed) {
  EXPECT_FALSE(
      BoolOf(CallOne("rho:test:assertAck",
                     {StrPar("t"), IntPar(0), IntPar(5), StrPar("c"), Ack()})));
  EXPECT_FALSE(BoolOf(CallOne(
      "rho:test:assertAck",
      {StrPar("u"), IntPar(0), Tuple3(IntPar(1), StrPar("<"), IntPar(2)),
       StrPar("d"), Ack()})));
  ASSERT_EQ(sink_.out.size(), 2u);
  EXPECT_EQ(sink_.out[0],
            "assert t (attempt 0): FAILED: c (not an assertion: got Int)");
  EXPECT_EQ(sink_.out[1],
            "assert u (attempt 0): FAILED: d (not an assertion: got Tuple)");
}

TEST_F(SysprocTest, AssertAckBadNameOrAttemptIsInvalid) {
  ExpectInvalid("rho:test:assertAck",
                {StrPar("t"), StrPar("0"), BoolP(true), StrPar("c"), Ack()},
                "argument 2 (attempt)");
  ExpectInvalid("rho:test:assertAck",
                {IntPar(1), IntPar(0), BoolP(true), StrPar("c"), Ack()},
                "argument 1 (test name)");
}

TEST_F(SysprocTest, TestSuiteCompletedWritesALine) {
  absl::StatusOr<std::vector<Reply>> r =
      Call("rho:test:testSuiteCompleted", {BoolP(true)});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
  EXPECT_EQ(sink_.out, std::vector<std::string>{"testSuiteCompleted true"});
}

TEST_F(SysprocTest, StdlogWritesLevelAndMessageToStderr) {
  ASSERT_TRUE(Call("rho:io:stdlog", {StrPar("info"), StrPar("hi")}).ok());
  EXPECT_EQ(sink_.err, std::vector<std::string>{"[info] \"hi\""});
  ExpectInvalid("rho:io:stdlog", {StrPar("loud"), StrPar("hi")},
                "argument 1 (level)");
}

TEST_F(SysprocTest, DeployerIdMakeWrapsTheKey) {
  EXPECT_TRUE(ir::Equal(CallOne("rho:test:deployerId:make",
                                {StrPar("deployerId"), HexP(kNnnPk), Ack()}),
                        UnfP(UnforgeableKind::kDeployerId, Unhex(kNnnPk))));
  ExpectInvalid("rho:test:deployerId:make", {StrPar("x"), HexP(kNnnPk), Ack()},
                "argument 1");
}

TEST_F(SysprocTest, BlockDataSetChangesWhatBlockDataAnswers) {
  TestOverrides test;
  ctx_.test = &test;
  EXPECT_FALSE(test.active());
  BlockInfo base;
  base.block_number = 7;
  base.timestamp = 99;
  base.sender_public_key = Unhex("01");
  EXPECT_TRUE(ir::Equal(CallOne("rho:test:block:data:set",
                                {StrPar("blockNumber"), IntPar(42), Ack()}),
                        ir::Nil()));
  EXPECT_TRUE(test.active());
  EXPECT_EQ(test.Block(&base).block_number, 42);
  EXPECT_EQ(test.Block(&base).sender_public_key, Unhex("01"));
  ASSERT_TRUE(
      Call("rho:test:block:data:set", {StrPar("sender"), HexP("04ab"), Ack()})
          .ok());
  const BlockInfo b = test.Block(&base);
  EXPECT_EQ(b.block_number, 42);
  EXPECT_EQ(b.timestamp, 99);
  EXPECT_EQ(b.sender_public_key, Unhex("04ab"));
  EXPECT_EQ(test.Block(nullptr).timestamp, 0);

  ExpectInvalid("rho:test:block:data:set", {StrPar("time"), IntPar(1), Ack()},
                "argument 1 (operation)");
  ExpectInvalid("rho:test:block:data:set",
                {StrPar("blockNumber"), StrPar("1"), Ack()}, "an Int");
  ExpectInvalid("rho:test:block:data:set", {StrPar("sender"), IntPar(1), Ack()},
                "a ByteArray");
  // A refused call changes nothing.
  EXPECT_EQ(test.Block(&base).block_number, 42);
}

TEST_F(SysprocTest, InvalidBlocksSetReplacesTheMap) {
  TestOverrides test;
  ctx_.test = &test;
  const ParPtr base = IntPar(1);
  EXPECT_TRUE(ir::Equal(test.InvalidBlocks(base), base));
  EXPECT_TRUE(ir::Equal(
      CallOne("rho:test:casper:invalidBlocks:set", {StrPar("blocks"), Ack()}),
      ir::Nil()));
  EXPECT_TRUE(ir::Equal(test.InvalidBlocks(base), StrPar("blocks")));
}

TEST_F(SysprocTest, SetProcessesNeedTheTestState) {
  for (auto [uri, args] :
       {std::pair<std::string_view, std::vector<ParPtr>>{
            "rho:test:block:data:set",
            {StrPar("blockNumber"), IntPar(1), Ack()}},
        std::pair<std::string_view, std::vector<ParPtr>>{
            "rho:test:casper:invalidBlocks:set", {IntPar(1), Ack()}}}) {
    absl::StatusOr<std::vector<Reply>> r = Call(uri, args);
    ASSERT_FALSE(r.ok()) << uri;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  }
}

TEST_F(SysprocTest, Secp256k1SignThenVerify) {
  Bytes sk =
      Unhex("abaa20c1d578612b568a7c3d9b16e81c68d73b931af92cf79727e02011c558c6");
  Hash32 digest = crypto::Blake2b256(ToBytes("data"));
  ParPtr sig = CallOne("rho:test:crypto:secp256k1Sign",
                       {BytesP(digest), BytesP(sk), Ack()});
  absl::StatusOr<crypto::Secp256k1PrivateKey> parsed =
      crypto::ParseSecp256k1PrivateKey(sk);
  ASSERT_TRUE(parsed.ok());
  crypto::Secp256k1PublicKey pk = crypto::Secp256k1PublicKeyOf(*parsed);
  EXPECT_TRUE(BoolOf(CallOne("rho:crypto:secp256k1Verify",
                             {BytesP(digest), sig, BytesP(pk), Ack()})));
  ExpectInvalid("rho:test:crypto:secp256k1Sign",
                {BytesP(digest), BytesP(Bytes(31, 1)), Ack()},
                "argument 2 (private key)");
}

TEST_F(SysprocTest, AuthTokenMakeMakesATokenThatChecks) {
  ParPtr token = CallOne("sys:test:authToken:make", {Ack()});
  EXPECT_TRUE(
      BoolOf(CallOne("sys:authToken:ops", {StrPar("check"), token, Ack()})));
}

// ---------------------------------------------------------------------------
// Versioned registry ops (rho:registry:ops:1.0.0) and their parsers.

TEST(SemverTest, ParsesReleasesAndPrereleases) {
  std::optional<SemVersion> v = ParseSemVersion("2.6.3-alpha");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->major, 2u);
  EXPECT_EQ(v->minor, 6u);
  EXPECT_EQ(v->patch, 3u);
  EXPECT_EQ(v->pre, "alpha");
  EXPECT_EQ(v->ToString(), "2.6.3-alpha");
  EXPECT_EQ(ParseSemVersion("4294967295.0.0")->major, 4294967295u);
  // Components parse as unsigned integers: '+' and leading zeros are
  // accepted and normalised away.
  EXPECT_EQ(ParseSemVersion("+1.02.3")->ToString(), "1.2.3");
  // Everything after the first '-' is the prerelease tag.
  EXPECT_EQ(ParseSemVersion("1.2.3-a-b.c")->pre, "a-b.c");
}

TEST(SemverTest, RejectsMalformedVersions) {
  for (const char* s :
       {"", "1", "1.2", "1.2.3.4", "1.2.3-", "1..3", ".2.3", "1.x.3", "1.2.*",
        "4294967296.0.0", "+.1.1", "-1.2.3", "1.-2.3", " 1.2.3"}) {
    EXPECT_FALSE(ParseSemVersion(s).has_value()) << s;
  }
}

TEST(SemverTest, PatternsAndMatching) {
  SemVersion v120{1, 2, 0, std::nullopt};
  SemVersion v130{1, 3, 0, std::nullopt};
  SemVersion pre{1, 2, 3, "alpha"};
  EXPECT_TRUE(ParseVersionPattern("*")->Matches(v120));
  EXPECT_TRUE(ParseVersionPattern("1.*")->Matches(v130));
  EXPECT_TRUE(ParseVersionPattern("1.2.*")->Matches(v120));
  EXPECT_FALSE(ParseVersionPattern("1.2.*")->Matches(v130));
  EXPECT_FALSE(ParseVersionPattern("*")->Matches(pre));
  EXPECT_FALSE(ParseVersionPattern("1.2.*")->Matches(pre));
  EXPECT_TRUE(ParseVersionPattern("1.2.3-alpha")->Matches(pre));
  EXPECT_FALSE(ParseVersionPattern("1.2.3")->Matches(pre));
  for (const char* s : {"", "*.2", "1.*.3", "*.2.3", "2.6.*-alpha", "*-rc1",
                        "*.*", "1.2", "1.2.3.*", "1.2.3-al.pha"}) {
    EXPECT_FALSE(ParseVersionPattern(s).has_value()) << s;
  }
}

TEST(SemverTest, OrderPutsReleasesAbovePrereleases) {
  SemVersion stable{1, 2, 3, std::nullopt};
  SemVersion alpha{1, 2, 3, "alpha"};
  SemVersion beta{1, 2, 3, "beta"};
  EXPECT_GT(CompareVersions(stable, alpha), 0);
  EXPECT_LT(CompareVersions(alpha, beta), 0);
  EXPECT_LT(CompareVersions({1, 0, 1, std::nullopt}, {1, 1, 0, std::nullopt}),
            0);
}

TEST(VersionedUrnTest, ParsesTheThreeShapes) {
  std::optional<VersionedUrn> lib =
      ParseVersionedUrn("rho:lib:1.0.0:abc123:myproj:2.6.*");
  ASSERT_TRUE(lib.has_value());
  EXPECT_EQ(lib->ns, "lib");
  EXPECT_EQ(lib->service_version, "1.0.0");
  EXPECT_EQ(lib->public_key, "abc123");
  EXPECT_EQ(lib->project_id, "myproj");
  EXPECT_EQ(lib->project_version, "2.6.*");
  std::optional<VersionedUrn> reg = ParseVersionedUrn("rho:registry:1.*");
  ASSERT_TRUE(reg.has_value());
  EXPECT_EQ(reg->ns, "registry");
  EXPECT_FALSE(reg->public_key.has_value());
  EXPECT_EQ(ParseVersionedUrn("rho:serve:1:pk:p:2")->ns, "serve");
  for (const char* s :
       {"", "rho:id:zphj", "rho:io:stdout", "rho:registry",
        "rho:registry:", "rho:registry:1:extra", "rho:lib:1.0.0:abc:proj",
        "rho:lib::a:b:c", "foo:lib:1:a:b:c", "rho:lib:1:a:b:c:d"}) {
    EXPECT_FALSE(ParseVersionedUrn(s).has_value()) << s;
  }
}

ParPtr Pair(ParPtr a, ParPtr b) {
  return ir::ParOf(Expr::Tuple({std::move(a), std::move(b)}));
}

TEST_F(SysprocTest, RegistryOpsV1BuildUriIsTheLegacyOne) {
  EXPECT_EQ(TextOf(CallOne("rho:registry:ops:1.0.0",
                           {StrPar("buildUri"), HexP(kNnnPk), Ack()})),
            kNnnUri);
}

TEST_F(SysprocTest, RegistryOpsV1ParseVersionedUri) {
  ParPtr out = CallOne(
      "rho:registry:ops:1.0.0",
      {StrPar("parseVersionedUri"), StrPar("rho:registry:1.0.0"), Ack()});
  EXPECT_TRUE(ir::Equal(
      out, ir::ParOf(Expr::Tuple({StrPar("registry"), StrPar("1.0.0"),
                                  ir::Nil(), ir::Nil(), ir::Nil()}))));
  EXPECT_TRUE(
      CallOne("rho:registry:ops:1.0.0",
              {StrPar("parseVersionedUri"), StrPar("rho:io:stdout"), Ack()})
          ->IsNil());
  // A Uri value is not a String: Nil, as in the public node.
  EXPECT_TRUE(CallOne("rho:registry:ops:1.0.0",
                      {StrPar("parseVersionedUri"),
                       ir::ParOf(Expr::Uri("rho:registry:1.0.0")), Ack()})
                  ->IsNil());
}

TEST_F(SysprocTest, RegistryOpsV1MatchesVersion) {
  EXPECT_TRUE(BoolOf(CallOne("rho:registry:ops:1.0.0",
                             {StrPar("matchesVersion"),
                              Pair(StrPar("1.*"), StrPar("1.4.2")), Ack()})));
  EXPECT_FALSE(BoolOf(CallOne("rho:registry:ops:1.0.0",
                              {StrPar("matchesVersion"),
                               Pair(StrPar("1.*"), StrPar("2.0.0")), Ack()})));
  EXPECT_FALSE(
      BoolOf(CallOne("rho:registry:ops:1.0.0",
                     {StrPar("matchesVersion"),
                      Pair(StrPar("1.*.3"), StrPar("1.0.3")), Ack()})));
  EXPECT_FALSE(
      BoolOf(CallOne("rho:registry:ops:1.0.0",
                     {StrPar("matchesVersion"), StrPar("1.*"), Ack()})));
}

TEST_F(SysprocTest, RegistryOpsV1SelectBestVersion) {
  ParPtr versions = ir::ParOf(
      Expr::List({StrPar("1.0.0"), StrPar("1.1.0-alpha"), StrPar("1.0.1"),
                  IntPar(7), StrPar("bad"), StrPar("2.0.0")},
                 std::nullopt));
  EXPECT_EQ(TextOf(CallOne("rho:registry:ops:1.0.0",
                           {StrPar("selectBestVersion"),
                            Pair(StrPar("1.*"), versions), Ack()})),
            "1.0.1");
  EXPECT_EQ(TextOf(CallOne("rho:registry:ops:1.0.0",
                           {StrPar("selectBestVersion"),
                            Pair(StrPar("*"), versions), Ack()})),
            "2.0.0");
  EXPECT_TRUE(
      CallOne("rho:registry:ops:1.0.0", {StrPar("selectBestVersion"),
                                         Pair(StrPar("3.*"), versions), Ack()})
          ->IsNil());
  EXPECT_TRUE(
      CallOne("rho:registry:ops:1.0.0", {StrPar("selectBestVersion"),
                                         Pair(StrPar("*"), IntPar(1)), Ack()})
          ->IsNil());
}

TEST_F(SysprocTest, RegistryOpsV1UnknownOperationIsInvalid) {
  ExpectInvalid("rho:registry:ops:1.0.0", {StrPar("lookup"), ir::Nil(), Ack()},
                "\"selectBestVersion\"");
}

}  // namespace
}  // namespace rnode::rholang::interp

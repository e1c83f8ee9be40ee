// EncodePublicPar against the signed-registry vectors published in the
// public genesis contracts and against hand-derived protobuf encodings.
#include "rholang/frontend/public_par.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "rholang/frontend/ir.h"
#include "rholang/frontend/limits.h"
#include "rholang/frontend/normalizer.h"
#include "tests/bytes_util.h"
#include "tests/rholang/compile_util.h"
#include "tests/sanitizer.h"
#include "util/bytes.h"

namespace rnode::rholang {
namespace {

using rnode::testing::IntPar;
using rnode::testing::StrPar;

using ir::Expr;
using ir::ExprKind;
using ir::ParOf;
using ir::ParPtr;

std::string EncodeHex(const ir::Par& p) {
  absl::StatusOr<Bytes> b = EncodePublicPar(p);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? HexEncode(*b) : "<error>";
}

using rnode::testing::Unhex;

ParPtr Bool(bool b) { return ParOf(Expr::Bool(b)); }
ParPtr Uri(std::string s) { return ParOf(Expr::Uri(std::move(s))); }
ParPtr Blob(std::string_view hex) {
  Bytes b = Unhex(hex);
  return ParOf(Expr::ByteArray(b));
}
ParPtr Tuple(std::vector<ParPtr> ps) {
  return ParOf(Expr::Tuple(std::move(ps)));
}
ParPtr List(std::vector<ParPtr> ps) {
  return ParOf(Expr::List(std::move(ps), std::nullopt));
}
ParPtr Set(std::vector<ParPtr> ps) {
  return ParOf(Expr::Set(std::move(ps), std::nullopt));
}
ParPtr Map(std::vector<std::pair<ParPtr, ParPtr>> kvs) {
  return ParOf(Expr::Map(std::move(kvs), std::nullopt));
}
ParPtr Unf(ir::UnforgeableKind k, std::string_view hex) {
  Bytes b = Unhex(hex);
  return ir::ParBuilder().Add(ir::Unforgeable::Make(k, b)).Build();
}
ParPtr Private(std::string_view hex) {
  return Unf(ir::UnforgeableKind::kPrivate, hex);
}

// Independent protobuf framing for expected values: tag/length prefix.
std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += HexEncode(Bytes{static_cast<uint8_t>((v & 0x7f) | 0x80)});
    v >>= 7;
  }
  out += HexEncode(Bytes{static_cast<uint8_t>(v)});
  return out;
}
std::string Field(uint32_t number, const std::string& hex_body) {
  return Varint((uint64_t{number} << 3) | 2) + Varint(hex_body.size() / 2) +
         hex_body;
}
// A Par holding one ESet (22) / EList (20) of the given element Pars.
std::string CollectionOf(uint32_t expr_field,
                         const std::vector<std::string>& elements) {
  std::string body;
  for (const std::string& e : elements) body += Field(1, e);
  return Field(5, Field(expr_field, body));
}

// --- Published vectors ---------------------------------------------------

struct SignedVector {
  const char* contract;
  int64_t timestamp;
  int64_t nonce;
  const char* pk;
  const char* to_sign;
};

// From the header table of each public genesis contract (and
// RhoSpecContract.rho): toSign = protobuf of (timestamp, pk bytes, nonce),
// the value Registry.rho hashes with blake2b256 and checks with secp256k1.
const SignedVector kSignedVectors[] = {
    {"AuthKey", 1559156356769, INT64_MAX,
     "04f4b4417f930e6fab5765ac0defcf9fce169982acfd046e7c27f9b14c0804014623c0439"
     "e5c8035e9607599a549303b5b6b90cd9685e6965278bddca65dac7510",
     "2a65aa01620a092a0710c2daafcfe05a0a462a44ca014104f4b4417f930e6fab5765ac0de"
     "fcf9fce169982acfd046e7c27f9b14c0804014623c0439e5c8035e9607599a549303b5b6b"
     "90cd9685e6965278bddca65dac75100a0d2a0b10feffffffffffffffff01"},
    {"Either", 1559156217509, INT64_MAX,
     "04c71f6c7b87edf4bec14f16f715ee49c6fea918549abdf06c734d384b60ba922990317cc"
     "4bf68da8c85b455a65595cf7007f1e54bfd6be26ffee53d1ea6d7406b",
     "2a65aa01620a092a0710cada9ecfe05a0a462a44ca014104c71f6c7b87edf4bec14f16f71"
     "5ee49c6fea918549abdf06c734d384b60ba922990317cc4bf68da8c85b455a65595cf7007"
     "f1e54bfd6be26ffee53d1ea6d7406b0a0d2a0b10feffffffffffffffff01"},
    {"ListOps", 1559156082324, INT64_MAX,
     "040126690519dc9b0f52876cb13458e15697794dd87d7c6477707c7efa4cce8a36b634eab"
     "5056bd4e3ba385ab14a638e4ac7d3b3e4968da3d66933fc04bc7038b5",
     "2a65aa01620a092a0710a89a8ecfe05a0a462a44ca0141040126690519dc9b0f52876cb13"
     "458e15697794dd87d7c6477707c7efa4cce8a36b634eab5056bd4e3ba385ab14a638e4ac7"
     "d3b3e4968da3d66933fc04bc7038b50a0d2a0b10feffffffffffffffff01"},
    {"MakeMint", 1559156452968, INT64_MAX,
     "0470256c078e105d2958b9cf66f2161d83368f483c0219790277fb726a459be7f56a9a48b"
     "becf72bcaed6a3515bd0a144faf6a6a8de8f6c9b3b7dff297eb371f28",
     "2a65aa01620a092a0710d0b9bbcfe05a0a462a44ca01410470256c078e105d2958b9cf66f"
     "2161d83368f483c0219790277fb726a459be7f56a9a48bbecf72bcaed6a3515bd0a144faf"
     "6a6a8de8f6c9b3b7dff297eb371f280a0d2a0b10feffffffffffffffff01"},
    {"MultiSigSystemVault", 1571408470880, INT64_MAX,
     "04fe2eb1e0e7462b1a8f64600389e1e76727f8b2d38804eaa4b48f7a7d6715130fc24d3c4"
     "dac2d8bdc19e0b49879dbaf07c30773cd9740a9d14a092ef76339207a",
     "2a65aa01620a092a0710c08df3f3bb5b0a462a44ca014104fe2eb1e0e7462b1a8f6460038"
     "9e1e76727f8b2d38804eaa4b48f7a7d6715130fc24d3c4dac2d8bdc19e0b49879dbaf07c3"
     "0773cd9740a9d14a092ef76339207a0a0d2a0b10feffffffffffffffff01"},
    {"NonNegativeNumber", 1559156251792, INT64_MAX,
     "04e1559d809924e564dce57e34646e155b144d2a504ce7ee519d7a5108fd42f1038d08d74"
     "5e5ea21cb53d6aa7c7174a768fa373207a83bc947a20c6a02ece7a60e",
     "2a65aa01620a092a0710a0f2a2cfe05a0a462a44ca014104e1559d809924e564dce57e346"
     "46e155b144d2a504ce7ee519d7a5108fd42f1038d08d745e5ea21cb53d6aa7c7174a768fa"
     "373207a83bc947a20c6a02ece7a60e0a0d2a0b10feffffffffffffffff01"},
    {"PoS", 1559156420651, INT64_MAX,
     "047b43d6548b72813b89ac1b9f9ca67624a8b372feedd71d4e2da036384a3e1236812227e"
     "524e6f237cde5f80dbb921cac12e6500791e9a9ed1254a745a816fe1f",
     "2a65aa01620a092a0710d6c0b7cfe05a0a462a44ca0141047b43d6548b72813b89ac1b9f9"
     "ca67624a8b372feedd71d4e2da036384a3e1236812227e524e6f237cde5f80dbb921cac12"
     "e6500791e9a9ed1254a745a816fe1f0a0d2a0b10feffffffffffffffff01"},
    {"Stack", 1751539590099, INT64_MAX,
     "04d545071374ee35b3c68dea1446f992a8539627f9c77ce6a99f4946cb3d9514c5c3e13cb"
     "74af509d4e5a31aa82253d927e9d549273a69c8ec22209cf05a8ff9c1",
     "2a65aa01620a092a0710a68fa9fef9650a462a44ca014104d545071374ee35b3c68dea144"
     "6f992a8539627f9c77ce6a99f4946cb3d9514c5c3e13cb74af509d4e5a31aa82253d927e9"
     "d549273a69c8ec22209cf05a8ff9c10a0d2a0b10feffffffffffffffff01"},
    {"SystemVault", 1559156183943, INT64_MAX,
     "040f035630a5d2199184890b4b6b83440c842da0b6becca539f788f7b35d6e873561f673c"
     "d6ebe2e32236398a86f29dad992e8fba32534734300fcc5104bcfea0e",
     "2a65aa01620a092a07108ece9acfe05a0a462a44ca0141040f035630a5d2199184890b4b6"
     "b83440c842da0b6becca539f788f7b35d6e873561f673cd6ebe2e32236398a86f29dad992"
     "e8fba32534734300fcc5104bcfea0e0a0d2a0b10feffffffffffffffff01"},
    {"TokenMetadata", 1737500000000, INT64_MAX,
     "04856ecb339aa2462bc25f4d4d5f5e5317c58e366222bed85f488c576f423ff7136ba22c4"
     "198b1b7b8d5d2c61722b948fee9d8d8e10e468dc52b490d3393444fd0",
     "2a65aa01620a092a071080fc8fb191650a462a44ca014104856ecb339aa2462bc25f4d4d5"
     "f5e5317c58e366222bed85f488c576f423ff7136ba22c4198b1b7b8d5d2c61722b948fee9"
     "d8d8e10e468dc52b490d3393444fd00a0d2a0b10feffffffffffffffff01"},
    {"RhoSpecContract", 1559158671800, INT64_MAX,
     "0401f5d998c9be9b1a753771920c6e968def63fe95b20c71a163a7f7311b6131ac65a49f7"
     "96b5947fa9d94b0542895e7b7ebe8b91eefcbc5c7604aaf281922ccac",
     "2a65aa01620a092a0710f0a6cad1e05a0a462a44ca01410401f5d998c9be9b1a753771920"
     "c6e968def63fe95b20c71a163a7f7311b6131ac65a49f796b5947fa9d94b0542895e7b7eb"
     "e8b91eefcbc5c7604aaf281922ccac0a0d2a0b10feffffffffffffffff01"},
};

class SignedRegistryVectorTest : public ::testing::TestWithParam<SignedVector> {
};

TEST_P(SignedRegistryVectorTest, TupleOfTimestampKeyNonceMatchesToSign) {
  const SignedVector& v = GetParam();
  ParPtr value = Tuple({IntPar(v.timestamp), Blob(v.pk), IntPar(v.nonce)});
  EXPECT_EQ(EncodeHex(*value), v.to_sign) << v.contract;
}

INSTANTIATE_TEST_SUITE_P(
    Genesis, SignedRegistryVectorTest, ::testing::ValuesIn(kSignedVectors),
    [](const ::testing::TestParamInfo<SignedVector>& info) {
      return std::string(info.param.contract);
    });

TEST(PublicParTest, CompiledTupleEncodesLikeBuiltTuple) {
  absl::StatusOr<ParPtr> compiled =
      Compile("(1559156356769, \"ab\", 9223372036854775807)");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ParPtr built =
      Tuple({IntPar(1559156356769), StrPar("ab"), IntPar(INT64_MAX)});
  EXPECT_EQ(EncodeHex(**compiled), EncodeHex(*built));
}

// --- Hand-derived vectors ------------------------------------------------

struct HandVector {
  const char* name;
  ParPtr (*make)();
  const char* hex;
};

const HandVector kHandVectors[] = {
    {"Nil", [] { return ir::Nil(); }, ""},
    {"IntZeroIsEmitted", [] { return IntPar(0); }, "2a021000"},
    {"IntOneZigzag", [] { return IntPar(1); }, "2a021002"},
    {"IntMinusOneZigzag", [] { return IntPar(-1); }, "2a021001"},
    {"Int64TwoByteVarint", [] { return IntPar(64); }, "2a03108001"},
    {"IntMin", [] { return IntPar(INT64_MIN); }, "2a0b10ffffffffffffffffff01"},
    {"IntMax", [] { return IntPar(INT64_MAX); }, "2a0b10feffffffffffffffff01"},
    {"BoolTrue", [] { return Bool(true); }, "2a020801"},
    {"BoolFalseIsEmitted", [] { return Bool(false); }, "2a020800"},
    {"String", [] { return StrPar("a"); }, "2a031a0161"},
    {"EmptyString", [] { return StrPar(""); }, "2a021a00"},
    {"Uri", [] { return Uri("rho:x"); }, "2a07220572686f3a78"},
    {"ByteArray", [] { return Blob("dead"); }, "2a05ca0102dead"},
    {"EmptyByteArray", [] { return Blob(""); }, "2a03ca0100"},
    {"ListKeepsOrder",
     [] {
       return List({IntPar(2), IntPar(1)});
     },
     "2a0fa2010c0a042a0210040a042a021002"},
    {"EmptyList", [] { return List({}); }, "2a03a20100"},
    {"SingletonTuple", [] { return Tuple({IntPar(1)}); },
     "2a09aa01060a042a021002"},
    {"SetSortsInts",
     [] {
       return Set({IntPar(3), IntPar(1), IntPar(2)});
     },
     "2a15b201120a042a0210020a042a0210040a042a021006"},
    {"MapSortsKeys",
     [] {
       return Map({{StrPar("b"), IntPar(1)}, {StrPar("a"), IntPar(2)}});
     },
     "2a21ba011e0a0d0a052a031a016112042a0210040a0d0a052a031a016212042a021002"},
    {"NestedTupleInList", [] { return List({Tuple({IntPar(1)})}); },
     "2a10a2010d0a0b2a09aa01060a042a021002"},
    {"GPrivate", [] { return Private("0102"); }, "3a060a040a020102"},
    {"GDeployId", [] { return Unf(ir::UnforgeableKind::kDeployId, "aa"); },
     "3a0512030a01aa"},
    {"GDeployerId", [] { return Unf(ir::UnforgeableKind::kDeployerId, "bb"); },
     "3a051a030a01bb"},
    {"GSysAuthToken",
     [] { return Unf(ir::UnforgeableKind::kSysAuthToken, ""); }, "3a022200"},
    {"BundleWrite",
     [] {
       return ir::ParBuilder()
           .Add(ir::Bundle::Make(Private("0102"), true, false))
           .Build();
     },
     "5a0c0a083a060a040a0201021001"},
    {"BundleRead",
     [] {
       return ir::ParBuilder()
           .Add(ir::Bundle::Make(Private("0102"), false, true))
           .Build();
     },
     "5a0c0a083a060a040a0201021801"},
    {"BundleZero",
     [] {
       return ir::ParBuilder()
           .Add(ir::Bundle::Make(Private("0102"), false, false))
           .Build();
     },
     "5a0a0a083a060a040a020102"},
    {"ParTrueSortsBeforeFalse",
     [] {
       return ir::ParBuilder()
           .Add(Expr::Bool(false))
           .Add(Expr::Bool(true))
           .Build();
     },
     "2a0208012a020800"},
    {"ParExprsBeforeUnforgeables",
     [] {
       return ir::ParBuilder()
           .AddAll(*Private("01"))
           .Add(Expr::String("b"))
           .Build();
     },
     "2a031a01623a050a030a0101"},
    {"Send",
     [] {
       return ir::ParBuilder()
           .Add(ir::Send::Make(IntPar(1), {IntPar(2)}, false))
           .Build();
     },
     "0a0c0a042a02100212042a021004"},
    {"PersistentSend",
     [] {
       return ir::ParBuilder()
           .Add(ir::Send::Make(IntPar(1), {IntPar(2)}, true))
           .Build();
     },
     "0a0e0a042a02100212042a0210041801"},
    {"IfIsConditional",
     [] {
       return ir::ParBuilder()
           .Add(ir::If::Make(Bool(true), IntPar(1), IntPar(2)))
           .Build();
     },
     "62120a042a02080112042a0210021a042a021004"},
    {"Match",
     [] {
       return ir::ParBuilder()
           .Add(ir::Match::Make(IntPar(1),
                                {ir::MatchCase{IntPar(1), ir::Nil(), 0}}))
           .Build();
     },
     "32100a042a02100212080a042a0210021200"},
    {"EPlusUnevaluated",
     [] { return ParOf(Expr::Binary(ExprKind::kAdd, IntPar(1), IntPar(2))); },
     "2a0e4a0c0a042a02100212042a021004"},
};

class HandVectorTest : public ::testing::TestWithParam<HandVector> {};

TEST_P(HandVectorTest, EncodesAsDerived) {
  const HandVector& v = GetParam();
  ParPtr p = v.make();
  EXPECT_EQ(EncodeHex(*p), v.hex) << v.name;
}

INSTANTIATE_TEST_SUITE_P(Public, HandVectorTest,
                         ::testing::ValuesIn(kHandVectors),
                         [](const ::testing::TestParamInfo<HandVector>& info) {
                           return std::string(info.param.name);
                         });

// --- Ordering rules ------------------------------------------------------

std::string Enc(const ParPtr& p) { return EncodeHex(*p); }

TEST(PublicParOrderTest, SetOfBoolsPutsTrueFirst) {
  EXPECT_EQ(Enc(Set({Bool(false), Bool(true)})),
            CollectionOf(22, {Enc(Bool(true)), Enc(Bool(false))}));
}

TEST(PublicParOrderTest, SetOfBytesComparesUnsigned) {
  EXPECT_EQ(
      Enc(Set({Blob("80"), Blob("01"), Blob("0100")})),
      CollectionOf(22, {Enc(Blob("01")), Enc(Blob("0100")), Enc(Blob("80"))}));
}

TEST(PublicParOrderTest, SetOfStringsIsBytewiseWithPrefixFirst) {
  EXPECT_EQ(Enc(Set({StrPar("b"), StrPar("ab"), StrPar("a")})),
            CollectionOf(
                22, {Enc(StrPar("a")), Enc(StrPar("ab")), Enc(StrPar("b"))}));
}

TEST(PublicParOrderTest, SetOfNegativeAndPositiveIntsIsNumeric) {
  EXPECT_EQ(Enc(Set({IntPar(3), IntPar(-5), IntPar(INT64_MIN)})),
            CollectionOf(
                22, {Enc(IntPar(INT64_MIN)), Enc(IntPar(-5)), Enc(IntPar(3))}));
}

TEST(PublicParOrderTest, SetAcrossKindsFollowsScoreConstants) {
  // Nil (no components) < Int 2 < String 3 < Private 5 < EList 6 <
  // ETuple 7 < ByteArray 116.
  std::vector<ParPtr> in = {Tuple({IntPar(1)}), Blob("00"),  List({IntPar(1)}),
                            Private("05"),      StrPar("s"), IntPar(5),
                            ir::Nil()};
  EXPECT_EQ(Enc(Set(in)),
            CollectionOf(22, {Enc(ir::Nil()), Enc(IntPar(5)), Enc(StrPar("s")),
                              Enc(Private("05")), Enc(List({IntPar(1)})),
                              Enc(Tuple({IntPar(1)})), Enc(Blob("00"))}));
}

TEST(PublicParOrderTest, SetOfUnforgeablesSortsByIdUnsigned) {
  EXPECT_EQ(Enc(Set({Private("ff"), Private("7f")})),
            CollectionOf(22, {Enc(Private("7f")), Enc(Private("ff"))}));
}

TEST(PublicParOrderTest, MapSortsBoolKeysTrueFirst) {
  std::string expected_body =
      Field(1, Field(1, Enc(Bool(true))) + Field(2, Enc(IntPar(2)))) +
      Field(1, Field(1, Enc(Bool(false))) + Field(2, Enc(IntPar(1))));
  EXPECT_EQ(Enc(Map({{Bool(false), IntPar(1)}, {Bool(true), IntPar(2)}})),
            Field(5, Field(23, expected_body)));
}

TEST(PublicParOrderTest, MapSortsNegativeIntKeysFirst) {
  std::string expected_body =
      Field(1, Field(1, Enc(IntPar(-1))) + Field(2, Enc(StrPar("y")))) +
      Field(1, Field(1, Enc(IntPar(2))) + Field(2, Enc(StrPar("x"))));
  EXPECT_EQ(Enc(Map({{IntPar(2), StrPar("x")}, {IntPar(-1), StrPar("y")}})),
            Field(5, Field(23, expected_body)));
}

TEST(PublicParOrderTest, ListOfListsSortsNothing) {
  EXPECT_EQ(Enc(List({IntPar(3), IntPar(1), IntPar(2)})),
            CollectionOf(20, {Enc(IntPar(3)), Enc(IntPar(1)), Enc(IntPar(2))}));
}

TEST(PublicParOrderTest, ParSendsSortByChannelScore) {
  ParPtr p = ir::ParBuilder()
                 .Add(ir::Send::Make(IntPar(2), {}, false))
                 .Add(ir::Send::Make(IntPar(1), {}, false))
                 .Build();
  EXPECT_EQ(Enc(p), Field(1, Field(1, Enc(IntPar(1)))) +
                        Field(1, Field(1, Enc(IntPar(2)))));
}

TEST(PublicParOrderTest, NonPersistentSendSortsBeforePersistent) {
  ParPtr p = ir::ParBuilder()
                 .Add(ir::Send::Make(IntPar(1), {}, true))
                 .Add(ir::Send::Make(IntPar(2), {}, false))
                 .Build();
  EXPECT_EQ(Enc(p), Field(1, Field(1, Enc(IntPar(2)))) +
                        Field(1, Field(1, Enc(IntPar(1))) + "1801"));
}

TEST(PublicParOrderTest, ParExprsGoGroundVarsArithmeticComparisonLogical) {
  ir::ExprPtr eq = Expr::Binary(ExprKind::kEq, IntPar(4), IntPar(3));
  ir::ExprPtr div = Expr::Binary(ExprKind::kDiv, IntPar(1), IntPar(5));
  ir::ExprPtr var = Expr::Variable(ir::Var{ir::VarKind::kBound, 1});
  ir::ExprPtr orr = Expr::Binary(ExprKind::kOr, Bool(false), Bool(true));
  ir::ExprPtr one = Expr::Int(1);
  ParPtr p =
      ir::ParBuilder().Add(eq).Add(div).Add(var).Add(orr).Add(one).Build();
  EXPECT_EQ(Enc(p), Enc(ParOf(one)) + Enc(ParOf(var)) + Enc(ParOf(div)) +
                        Enc(ParOf(eq)) + Enc(ParOf(orr)));
}

TEST(PublicParOrderTest, MethodsSortByScoreCodeAmongOperators) {
  // EPlus 104 < EMethod 115 < EMod 122.
  ir::ExprPtr method = Expr::Method("nth", List({IntPar(1)}), {IntPar(0)});
  ir::ExprPtr mod = Expr::Binary(ExprKind::kMod, IntPar(7), IntPar(2));
  ir::ExprPtr add = Expr::Binary(ExprKind::kAdd, IntPar(7), IntPar(2));
  ParPtr p = ir::ParBuilder().Add(mod).Add(method).Add(add).Build();
  EXPECT_EQ(Enc(p), Enc(ParOf(add)) + Enc(ParOf(method)) + Enc(ParOf(mod)));
}

TEST(PublicParOrderTest, ShortCircuitOpsUseOurFieldsAndSortAfterMod) {
  // `&&` is our Expr field 38 and `||` 39 (scores 123 and 124, after
  // EMod 122), each with p1 and p2 like every binary operator.
  ir::ExprPtr sand = Expr::Binary(ExprKind::kShortAnd, Bool(true), Bool(false));
  ir::ExprPtr sor = Expr::Binary(ExprKind::kShortOr, Bool(false), Bool(true));
  ir::ExprPtr mod = Expr::Binary(ExprKind::kMod, IntPar(7), IntPar(2));
  EXPECT_EQ(Enc(ParOf(sand)),
            Field(5, Field(38, Field(1, Enc(Bool(true))) +
                                   Field(2, Enc(Bool(false))))));
  EXPECT_EQ(Enc(ParOf(sor)),
            Field(5, Field(39, Field(1, Enc(Bool(false))) +
                                   Field(2, Enc(Bool(true))))));
  ParPtr p = ir::ParBuilder().Add(sor).Add(sand).Add(mod).Build();
  EXPECT_EQ(Enc(p), Enc(ParOf(mod)) + Enc(ParOf(sand)) + Enc(ParOf(sor)));
}

TEST(PublicParOrderTest, MethodEncodesNameTargetArguments) {
  ParPtr p = ParOf(Expr::Method("nth", List({IntPar(1)}), {IntPar(0)}));
  std::string body = Field(1, "6e7468") + Field(2, Enc(List({IntPar(1)}))) +
                     Field(3, Enc(IntPar(0)));
  EXPECT_EQ(Enc(p), Field(5, Field(24, body)));
}

TEST(PublicParOrderTest, BundlesSortByPolarityCode) {
  // bundle0 (305) < bundle- (306) < bundle+ (307) < bundle (308).
  ParPtr p = ir::ParBuilder()
                 .Add(ir::Bundle::Make(IntPar(1), true, true))
                 .Add(ir::Bundle::Make(IntPar(1), true, false))
                 .Add(ir::Bundle::Make(IntPar(1), false, true))
                 .Add(ir::Bundle::Make(IntPar(1), false, false))
                 .Build();
  std::string body = Field(1, Enc(IntPar(1)));
  EXPECT_EQ(Enc(p), Field(11, body) + Field(11, body + "1801") +
                        Field(11, body + "1001") +
                        Field(11, body + "10011801"));
}

// --- Processes from the front end ----------------------------------------

TEST(PublicParProcessTest, ReceiveBodyKeepsLocallyFreeOfItsBinder) {
  absl::StatusOr<ParPtr> p = Compile("for (x <- @1) { x!(2) }");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(EncodeHex(**p),
            "1237"
            "0a15"                          // bind
            "0a0b2a079a01040a0210005001"    // pattern x (free, cu)
            "12042a021002"                  // source @1
            "2001"                          // freeCount 1
            "121c"                          // body
            "0a17"                          // send
            "0a0c2a079a01040a0208004a0101"  // chan x (bound 0)
            "12042a021004"                  // data 2
            "2a0101"                        // send locallyFree
            "4a0101"                        // body locallyFree
            "2801");                        // bindCount 1
}

TEST(PublicParProcessTest, NewBodyKeepsLocallyFreeOfItsNames) {
  absl::StatusOr<ParPtr> p = Compile("new x in { x!(1) }");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(EncodeHex(**p),
            "2220"
            "0802"                                  // bindCount 1 (sint32)
            "121c0a170a0c2a079a01040a0208004a0101"  // body, send chan
            "12042a0210022a01014a0101");
}

TEST(PublicParProcessTest, CompiledIfUsesConditionals) {
  absl::StatusOr<ParPtr> p = Compile("if (true) { @1!(2) }");
  ASSERT_TRUE(p.ok()) << p.status();
  std::string send =
      Field(1, Field(1, Enc(IntPar(1))) + Field(2, Enc(IntPar(2))));
  EXPECT_EQ(EncodeHex(**p),
            Field(12, Field(1, Enc(Bool(true))) + Field(2, send) + "1a00"));
}

TEST(PublicParProcessTest, CompiledBundleOfSetMatchesBuilt) {
  absl::StatusOr<ParPtr> p = Compile("bundle+ { Set(2, 1) }");
  ASSERT_TRUE(p.ok()) << p.status();
  ParPtr built =
      ir::ParBuilder()
          .Add(ir::Bundle::Make(Set({IntPar(1), IntPar(2)}), true, false))
          .Build();
  EXPECT_EQ(EncodeHex(**p), EncodeHex(*built));
  EXPECT_EQ(
      EncodeHex(*built),
      Field(11, Field(1, CollectionOf(22, {Enc(IntPar(1)), Enc(IntPar(2))})) +
                    "1001"));
}

TEST(PublicParProcessTest, PatternWithWildcardMarksConnectiveUsed) {
  absl::StatusOr<ParPtr> p = Compile("for (_ <- @1) { Nil }");
  ASSERT_TRUE(p.ok()) << p.status();
  // Pattern Par: EVar{wildcard} with connective_used; the receive itself
  // does not count its patterns.
  std::string pattern = Field(5, Field(19, Field(1, Field(3, "")))) + "5001";
  std::string bind = Field(1, pattern) + Field(2, Enc(IntPar(1)));
  EXPECT_EQ(EncodeHex(**p), Field(2, Field(1, bind) + Field(2, "")));
}

TEST(PublicParProcessTest, SimpleTypePatternIsAConnective) {
  absl::StatusOr<ParPtr> p = Compile("for (@Int <- @1) { Nil }");
  ASSERT_TRUE(p.ok()) << p.status();
  // Pattern Par: connectives [conn_int: true], connective_used.
  EXPECT_EQ(EncodeHex(**p),
            "1212"
            "0a0e0a06420230015001"  // bind: pattern
            "12042a021002"          // source
            "1200");                // empty body (present)
}

TEST(PublicParProcessTest, ListRemainderPatternCarriesRemainderVar) {
  absl::StatusOr<ParPtr> p = Compile("for (@[a ...b] <- @1) { Nil }");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(EncodeHex(**p),
            "122a"
            "0a24"
            "0a1a2a16a201130a0b2a079a01040a0210005001"  // element a (free 0)
            "2001"                                      // EList cu
            "2a021002"                                  // remainder free 1
            "5001"                                      // pattern Par cu
            "12042a021002"                              // source
            "2002"                                      // freeCount 2
            "1200"                                      // body
            "2802");                                    // bindCount 2
}

TEST(PublicParProcessTest, NestedBindersKeepInnerIndices) {
  absl::StatusOr<ParPtr> p = Compile("new x in { for (y <- x) { y!(1) } }");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(EncodeHex(**p),
            "224b0802"
            "1247"                            // new body
            "1242"                            // receive
            "0a1d0a0b2a079a01040a0210005001"  // bind: pattern y
            "120c2a079a01040a0208004a0101"    // source x, lf [1]
            "2001"
            "121c0a170a0c2a079a01040a0208004a0101"  // body: y!(1)
            "12042a0210022a01014a0101"
            "2801"      // bindCount
            "320101"    // receive lf [1]
            "4a0101");  // new body lf [1]
}

// `for (a <- @<lo> & b <- @<hi>) { @0!(*a, *b) }` as the public node holds it:
// binds ordered by source score, `a` (first bind) is level 0, so index 1.
std::string PublicJoin(const ParPtr& lo, const ParPtr& hi) {
  std::string pattern = "2a079a01040a0210005001";  // free var 0, cu
  std::string bind_lo = Field(1, pattern) + Field(2, Enc(lo)) + "2001";
  std::string bind_hi = Field(1, pattern) + Field(2, Enc(hi)) + "2001";
  std::string a = "2a079a01040a020802" + Field(9, "0001");  // bound 1
  std::string b = "2a079a01040a020800" + Field(9, "01");    // bound 0
  std::string send =
      Field(1, Enc(IntPar(0))) + Field(2, a) + Field(2, b) + Field(5, "0101");
  std::string body = Field(1, send) + Field(9, "0101");
  return Field(2,
               Field(1, bind_lo) + Field(1, bind_hi) + Field(2, body) + "2802");
}

TEST(PublicParProcessTest, JoinUsesPublicBindOrderAndNumbering) {
  struct Case {
    const char* lo;
    const char* hi;
    ParPtr lo_par;
    ParPtr hi_par;
  };
  const Case cases[] = {
      {"1", "2", IntPar(1), IntPar(2)},
      {"\"x\"", "\"y\"", StrPar("x"), StrPar("y")},
      {"5", "\"a\"", IntPar(5), StrPar("a")},
      {"true", "false", Bool(true), Bool(false)},
  };
  int reordered = 0;
  for (const Case& c : cases) {
    for (bool swap : {false, true}) {
      std::string src = swap ? absl::StrCat("for (b <- @", c.hi, " & a <- @",
                                            c.lo, ") { @0!(*a, *b) }")
                             : absl::StrCat("for (a <- @", c.lo, " & b <- @",
                                            c.hi, ") { @0!(*a, *b) }");
      absl::StatusOr<ParPtr> p = Compile(src);
      ASSERT_TRUE(p.ok()) << p.status();
      EXPECT_EQ(EncodeHex(**p), PublicJoin(c.lo_par, c.hi_par)) << src;
      if (!swap &&
          !ir::Equal((*p)->receives.at(0)->binds.at(0).source, c.lo_par)) {
        ++reordered;
      }
    }
  }
  // Our hash order differs from the public order in at least one case, so
  // the renumbering is exercised.
  EXPECT_GT(reordered, 0);
}

TEST(PublicParTest, EncodesTermsAtTheDepthLimit) {
  ParPtr p = IntPar(0);
  while (p->height + 2 <= kMaxIrDepth) p = List({p});
  absl::StatusOr<Bytes> b = EncodePublicPar(*p);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_GT(b->size(), 2 * (kMaxIrDepth / 2));
}

TEST(PublicParTest, RejectsTermsDeeperThanTheLimit) {
  if (::rnode::testing::kUnderThreadSanitizer) {
    GTEST_SKIP() << "recursion at the depth limit overruns ThreadSanitizer's "
                    "shadow stack (tests/sanitizer.h); single-threaded, run "
                    "by the release and asan suites";
  }
  ParPtr p = IntPar(0);
  for (uint32_t i = 0; i <= kMaxIrDepth; ++i) p = List({p});
  absl::StatusOr<Bytes> b = EncodePublicPar(*p);
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace rnode::rholang

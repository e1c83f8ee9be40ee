// IR construction, canonical order, encoding, decoding and hashing.
#include <gtest/gtest.h>

#include <string>

#include "crypto/hash.h"
#include "rholang/frontend/ir.h"
#include "rholang/frontend/ir_encoding.h"
#include "rholang/frontend/limits.h"
#include "rholang/frontend/normalizer.h"
#include "rholang/frontend/printer.h"
#include "tests/rholang/compile_util.h"
#include "tests/sanitizer.h"
#include "util/bytes.h"

namespace rnode::rholang::ir {
namespace {

using rnode::testing::IntPar;
using rnode::testing::StrPar;

using rnode::testing::MustCompile;

TEST(IndexSetTest, AddContainsAndVector) {
  IndexSet s;
  EXPECT_TRUE(s.empty());
  s.Add(3);
  s.Add(70);
  s.Add(0);
  EXPECT_TRUE(s.Contains(70));
  EXPECT_FALSE(s.Contains(69));
  EXPECT_EQ(s.ToVector(), (std::vector<uint32_t>{0, 3, 70}));
}

TEST(IndexSetTest, ShiftedDownDropsBoundIndices) {
  IndexSet s;
  s.Add(0);
  s.Add(2);
  s.Add(65);
  EXPECT_EQ(s.ShiftedDown(2).ToVector(), (std::vector<uint32_t>{0, 63}));
  EXPECT_TRUE(s.ShiftedDown(66).empty());
  EXPECT_EQ(s.ShiftedDown(66), IndexSet());
}

TEST(IndexSetTest, UnionWith) {
  IndexSet a, b;
  a.Add(1);
  b.Add(100);
  a.UnionWith(b);
  EXPECT_EQ(a.ToVector(), (std::vector<uint32_t>{1, 100}));
}

TEST(IrSizeTest, CountsNodesOfTheExpandedTree) {
  struct Case {
    const char* name;
    ParPtr par;
    uint64_t size;
  };
  ParPtr one = IntPar(1);
  const Case cases[] = {
      {"Nil", Nil(), 1},
      // Par(Expr)
      {"Int", one, 2},
      // Par(Expr list(Par(Expr)))
      {"ListOfOne", ParOf(Expr::List({one}, std::nullopt)), 4},
      {"ListSharingAnElement", ParOf(Expr::List({one, one}, std::nullopt)), 6},
      {"ParOfTwoExprs",
       ParBuilder().Add(Expr::Int(1)).Add(Expr::Int(2)).Build(), 3},
      {"Send",
       ParBuilder().Add(Send::Make(StrPar("c"), {one, Nil()}, false)).Build(),
       1 + 1 + (2 + 1) + 2 + 1},
      // Text and ids weigh one per byte.
      {"String", StrPar("abc"), 2 + 3},
      {"Unforgeable",
       ParBuilder()
           .Add(Unforgeable::Make(UnforgeableKind::kPrivate, Bytes(32, 7)))
           .Build(),
       2 + 32},
      {"ListSharingAString",
       ParOf(Expr::List({StrPar("abcd"), StrPar("abcd")}, std::nullopt)),
       2 + 2 * (2 + 4)},
      {"Bundle", ParBuilder().Add(Bundle::Make(one, true, false)).Build(), 4},
      {"If",
       ParBuilder().Add(If::Make(ParOf(Expr::Bool(true)), one, Nil())).Build(),
       1 + 1 + 2 + 2 + 1},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.par->size, c.size) << c.name;
  }
}

TEST(IrSizeTest, CompiledTermsCountEveryNode) {
  // new x in { x!(1) }: Par(New(Par(Send(Par(Expr var), Par(Expr int))))).
  EXPECT_EQ(MustCompile("new x in { x!(1) }")->size, 8u);
}

TEST(IrSizeTest, SharedSubtermsCountPerOccurrenceAndSaturate) {
  // [l, l] nested 70 times: 2^70 leaves in 70 distinct nodes. The size is
  // computed from the children's cached sizes, so this takes 70 steps.
  ParPtr l = ParOf(Expr::List({IntPar(1)}, std::nullopt));
  uint64_t expected = l->size;
  for (int i = 0; i < 70; ++i) {
    l = ParOf(Expr::List({l, l}, std::nullopt));
    if (expected != UINT64_MAX) {
      expected =
          expected > (UINT64_MAX - 2) / 2 ? UINT64_MAX : 2 * expected + 2;
    }
    EXPECT_EQ(l->size, expected) << "level " << i + 1;
  }
  EXPECT_EQ(l->size, UINT64_MAX);
  // Saturated sizes stay saturated.
  EXPECT_EQ(ParOf(Expr::List({l, IntPar(1)}, std::nullopt))->size, UINT64_MAX);
}

TEST(IrSizeTest, SizeIsNotPartOfHashOrEncoding) {
  ParPtr a = ParOf(Expr::List({IntPar(1), IntPar(2)}, std::nullopt));
  auto enc = EncodePar(*a);
  ASSERT_TRUE(enc.ok());
  auto back = DecodePar(*enc);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->hash, a->hash);
  EXPECT_EQ((*back)->size, a->size);
}

TEST(IrTest, NilIsEmptyWithAPinnedHash) {
  EXPECT_TRUE(Nil()->IsNil());
  EXPECT_EQ(ParBuilder().Build()->hash, Nil()->hash);
  // Computed by this code: the empty process's hash is consensus-visible.
  EXPECT_EQ(HexEncode(Nil()->hash),
            "b6905196fcc32ae0d19cf0d70b02043515bda9b3d1285f13d49b0ef4b0e2950f");
}

TEST(IrTest, EqualTermsBuiltSeparatelyHaveEqualHashes) {
  ParPtr a =
      ParBuilder().Add(Send::Make(IntPar(0), {IntPar(1)}, false)).Build();
  ParPtr b =
      ParBuilder().Add(Send::Make(IntPar(0), {IntPar(1)}, false)).Build();
  EXPECT_NE(a.get(), b.get());
  EXPECT_TRUE(Equal(a, b));
}

TEST(IrTest, ParComponentsAreSortedRegardlessOfInsertionOrder) {
  SendPtr s1 = Send::Make(IntPar(0), {IntPar(1)}, false);
  SendPtr s2 = Send::Make(IntPar(1), {IntPar(2)}, true);
  ExprPtr e = Expr::Int(5);
  ParPtr a = ParBuilder().Add(s1).Add(e).Add(s2).Build();
  ParPtr b = ParBuilder().Add(s2).Add(s1).Add(e).Build();
  EXPECT_TRUE(Equal(a, b));
  EXPECT_EQ(a->sends[0]->hash, b->sends[0]->hash);
}

TEST(IrTest, GroundValuesOrderNaturallyAcrossTypes) {
  ExprPtr set = Expr::Set({StrPar("b"), IntPar(10), ParOf(Expr::Bool(true)),
                           IntPar(-3), StrPar("a"), ParOf(Expr::Uri("rho:x")),
                           ParOf(Expr::ByteArray(Bytes{1, 2}))},
                          std::nullopt);
  ASSERT_EQ(set->operands.size(), 7u);
  EXPECT_EQ(set->operands[0]->SingleExpr()->kind, ExprKind::kBool);
  EXPECT_EQ(set->operands[1]->SingleExpr()->int_value, -3);
  EXPECT_EQ(set->operands[2]->SingleExpr()->int_value, 10);
  EXPECT_EQ(set->operands[3]->SingleExpr()->text, "a");
  EXPECT_EQ(set->operands[4]->SingleExpr()->text, "b");
  EXPECT_EQ(set->operands[5]->SingleExpr()->kind, ExprKind::kUri);
  EXPECT_EQ(set->operands[6]->SingleExpr()->kind, ExprKind::kByteArray);
}

TEST(IrTest, SetDeduplicates) {
  ExprPtr a = Expr::Set({IntPar(1), IntPar(1), IntPar(2)}, std::nullopt);
  EXPECT_EQ(a->operands.size(), 2u);
  ExprPtr b = Expr::Set({IntPar(2), IntPar(1)}, std::nullopt);
  EXPECT_EQ(a->hash, b->hash);
}

TEST(IrTest, MapKeepsLastDuplicateKeyAndSortsKeys) {
  ExprPtr m = Expr::Map({{StrPar("b"), IntPar(1)},
                         {StrPar("a"), IntPar(2)},
                         {StrPar("b"), IntPar(3)}},
                        std::nullopt);
  ASSERT_EQ(m->operands.size(), 4u);
  EXPECT_EQ(m->operands[0]->SingleExpr()->text, "a");
  EXPECT_EQ(m->operands[3]->SingleExpr()->int_value, 3);
}

TEST(IrTest, NestedBundlesMergeFlagsWithAnd) {
  ParPtr body = IntPar(1);
  BundlePtr inner = Bundle::Make(body, true, false);
  BundlePtr outer = Bundle::Make(ParBuilder().Add(inner).Build(), true, true);
  EXPECT_TRUE(outer->write_flag);
  EXPECT_FALSE(outer->read_flag);
  EXPECT_EQ(outer->body->hash, body->hash);
}

TEST(IrTest, DerivedFlagsOfVariables) {
  ExprPtr bound = Expr::Variable({VarKind::kBound, 4});
  EXPECT_EQ(bound->locally_free.ToVector(), (std::vector<uint32_t>{4}));
  EXPECT_FALSE(bound->connective_used);
  ExprPtr free = Expr::Variable({VarKind::kFree, 0});
  EXPECT_TRUE(free->connective_used);
  EXPECT_TRUE(free->locally_free.empty());
  NewPtr n = New::Make(2, ParOf(bound), {}, {});
  EXPECT_EQ(n->locally_free.ToVector(), (std::vector<uint32_t>{2}));
}

TEST(IrTest, SharedLeavesMatchFreshlyBuiltOnes) {
  // Small ints, bools and low-index variables are shared instances; larger
  // ones are built fresh. Both must hash by the same rule.
  for (int64_t v : {int64_t{7}, int64_t{-16}, int64_t{255}, int64_t{256},
                    int64_t{-17}, int64_t{100000}}) {
    Bytes pre = {0x04, 0x01};
    uint64_t z =
        (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
    while (z >= 0x80) {
      pre.push_back(static_cast<uint8_t>(z | 0x80));
      z >>= 7;
    }
    pre.push_back(static_cast<uint8_t>(z));
    EXPECT_EQ(Expr::Int(v)->hash, crypto::Blake2b256(pre)) << v;
    EXPECT_EQ(Expr::Int(v)->int_value, v);
  }
  EXPECT_EQ(Expr::Int(3).get(), Expr::Int(3).get());
  EXPECT_EQ(Expr::Bool(true)->hash,
            crypto::Blake2b256(Bytes{0x04, 0x00, 0x01}));
  for (uint32_t i : {0u, 63u, 64u, 1000u}) {
    ExprPtr b = Expr::Variable({VarKind::kBound, i});
    EXPECT_EQ(b->locally_free.ToVector(), (std::vector<uint32_t>{i}));
    EXPECT_EQ(b->var.index, i);
    EXPECT_EQ(VarPar({VarKind::kBound, i})->hash, b->hash);
    ExprPtr f = Expr::Variable({VarKind::kFree, i});
    EXPECT_TRUE(f->connective_used);
    EXPECT_NE(f->hash, b->hash);
  }
  EXPECT_EQ(Expr::Variable({VarKind::kWildcard, 9})->hash,
            Expr::Variable({VarKind::kWildcard, 0})->hash);
}

TEST(IrTest, HeightGrowsWithNesting) {
  ParPtr p = IntPar(1);
  EXPECT_EQ(p->height, 2u);
  ParPtr q = ParOf(Expr::List({p}, std::nullopt));
  EXPECT_EQ(q->height, 4u);
}

TEST(IrEncodingTest, NilEncodingIsVersionAndNineEmptyGroups) {
  auto bytes = EncodePar(*Nil());
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(HexEncode(*bytes), "01000000000000000000");
}

TEST(IrEncodingTest, SendEncodingIsByteExact) {
  auto bytes = EncodePar(*MustCompile("@0!(1)"));
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(HexEncode(*bytes),
            "01"                      // version
            "01"                      // one send
            "00"                      // not persistent
            "0000000101000000000000"  // chan: one expr, Int 0
            "01"                      // one datum
            "0000000101020000000000"  // Int 1 (zigzag 2)
            "0000000000000000");      // the other eight groups
}

TEST(IrEncodingTest, NodeHashIsBlake2bOfTaggedShallowEncoding) {
  ParPtr p = MustCompile("@0!(1) | @1!(2)");
  ASSERT_EQ(p->sends.size(), 2u);
  Bytes pre = {0x50, 0x02};
  for (const SendPtr& s : p->sends) {
    pre.insert(pre.end(), s->hash.begin(), s->hash.end());
  }
  for (int i = 0; i < 8; ++i) pre.push_back(0);
  EXPECT_EQ(p->hash, crypto::Blake2b256(pre));
  // Send: tag 0x01, flag, channel hash, data count, datum hash.
  const Send& s = *p->sends[0];
  Bytes send_pre = {0x01, 0x00};
  send_pre.insert(send_pre.end(), s.chan->hash.begin(), s.chan->hash.end());
  send_pre.push_back(0x01);
  send_pre.insert(send_pre.end(), s.data[0]->hash.begin(),
                  s.data[0]->hash.end());
  EXPECT_EQ(s.hash, crypto::Blake2b256(send_pre));
  // Expr Int: tag 0x04, kind 0x01, zigzag value (0 -> 0x00, 1 -> 0x02).
  int64_t chan = s.chan->SingleExpr()->int_value;
  EXPECT_EQ(s.chan->hash, crypto::Blake2b256(Bytes{
                              0x04, 0x01, static_cast<uint8_t>(chan * 2)}));
}

TEST(IrEncodingTest, OneComponentParSharesTheComponentHash) {
  ParPtr p = MustCompile("@0!(1)");
  EXPECT_EQ(p->hash, p->sends[0]->hash);
  ParPtr two = MustCompile("@0!(1) | @0!(1)");
  EXPECT_NE(two->hash, p->hash);
  EXPECT_NE(Nil()->hash, p->hash);
}

TEST(IrEncodingTest, NilHashIsStable) {
  EXPECT_EQ(
      HexEncode(Nil()->hash),
      HexEncode(crypto::Blake2b256(Bytes{0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0})));
}

TEST(IrEncodingTest, IntsEncodeZigzag) {
  for (int64_t v :
       {int64_t{0}, int64_t{-1}, int64_t{1}, INT64_MIN, INT64_MAX}) {
    ParPtr p = IntPar(v);
    auto bytes = EncodePar(*p);
    ASSERT_TRUE(bytes.ok());
    auto back = DecodePar(*bytes);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ((*back)->SingleExpr()->int_value, v);
  }
}

TEST(IrEncodingTest, UnforgeablesRoundTrip) {
  ParPtr p =
      ParBuilder()
          .Add(Unforgeable::Make(UnforgeableKind::kPrivate, Bytes(32, 0xAB)))
          .Add(Unforgeable::Make(UnforgeableKind::kDeployerId, Bytes{4, 5}))
          .Add(Unforgeable::Make(UnforgeableKind::kSysAuthToken, {}))
          .Build();
  auto bytes = EncodePar(*p);
  ASSERT_TRUE(bytes.ok());
  auto back = DecodePar(*bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->hash, p->hash);
  EXPECT_EQ((*back)->unforgeables.size(), 3u);
  auto text = rholang::Print(*p);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("GPrivate"), std::string::npos);
}

TEST(IrEncodingTest, ByteArraysRoundTripAndPrintAsHex) {
  ParPtr p = ParOf(Expr::ByteArray(Bytes{0xde, 0xad}));
  auto bytes = EncodePar(*p);
  ASSERT_TRUE(bytes.ok());
  auto back = DecodePar(*bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ((*back)->hash, p->hash);
  auto text = rholang::Print(*p);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "\"dead\".hexToBytes()");
}

struct BadEncoding {
  const char* name;
  const char* hex;
  const char* reason;  // substring of the error message
};

class DecodeRejectsTest : public ::testing::TestWithParam<BadEncoding> {};

TEST_P(DecodeRejectsTest, ReturnsInvalidArgument) {
  auto bytes = HexDecode(GetParam().hex);
  ASSERT_TRUE(bytes.ok());
  auto r = DecodePar(*bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
      << r.status();
  EXPECT_NE(std::string(r.status().message()).find(GetParam().reason),
            std::string::npos)
      << r.status();
}

const BadEncoding kBadEncodings[] = {
    {"Empty", "", "truncated"},
    {"WrongVersion", "02000000000000000000", "unknown encoding version"},
    {"Truncated", "0100000000", "truncated"},
    {"TrailingByte", "0100000000000000000000", "trailing bytes"},
    {"CountLargerThanInput", "01ff0f", "count larger"},
    {"NonMinimalVarint", "018000000000000000000000", "non-minimal varint"},
    {"BadExprKind", "010000000163000000000000", "bad expression kind"},
    {"BadBool", "010000000100020000000000", "bad boolean"},
    {"BadVarKind", "010000000105030000000000", "bad variable kind"},
    {"BadUnforgeableKind", "010000000000010900000000", "bad unforgeable kind"},
    {"BadBundleFlags", "0100000000000001080000000000000000000000000000",
     "bad bundle flags"},
    {"BadConnectiveKind", "0100000000000000010900", "bad connective kind"},
    {"BadReceiveFlags", "01000104", "bad receive flags"},
    // Two Int exprs out of canonical order (2 then 1).
    {"UnsortedExprs", "0100000002010401020000000000", "not canonical"},
    // A set holding the same element twice.
    {"DuplicateSetElement",
     "01000000011b0200000001010200000000000000000101020000000000ff"
     "0000000000",
     "not canonical"},
};

INSTANTIATE_TEST_SUITE_P(Encodings, DecodeRejectsTest,
                         ::testing::ValuesIn(kBadEncodings),
                         [](const ::testing::TestParamInfo<BadEncoding>& info) {
                           return std::string(info.param.name);
                         });

TEST(IrEncodingTest, DecodeRejectsTermsDeeperThanTheLimit) {
  Bytes bytes = {kEncodingVersion};
  // Each level: one expr, a single-element tuple holding the next level.
  for (uint32_t i = 0; i < kMaxIrDepth + 8; ++i) {
    for (uint8_t b : {0, 0, 0, 1, 26, 1}) bytes.push_back(b);
  }
  auto r = DecodePar(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(IrEncodingTest, EncodeAndPrintRejectTermsDeeperThanTheLimit) {
  if (::rnode::testing::kUnderThreadSanitizer) {
    GTEST_SKIP() << "recursion at the depth limit overruns ThreadSanitizer's "
                    "shadow stack (tests/sanitizer.h); single-threaded, run "
                    "by the release and asan suites";
  }
  ParPtr p = Nil();
  for (uint32_t i = 0; i < kMaxIrDepth; ++i) {
    p = ParOf(Expr::Tuple({p}));
  }
  EXPECT_GT(p->height, kMaxIrDepth);
  auto bytes = EncodePar(*p);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kResourceExhausted);
  auto text = rholang::Print(*p);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(IrEncodingTest, ProgramHashIsRootHash) {
  ParPtr p = MustCompile("new x in { x!(1) }");
  EXPECT_EQ(ProgramHash(*p), p->hash);
}

}  // namespace
}  // namespace rnode::rholang::ir

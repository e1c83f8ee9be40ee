// The native registry: lookup, insertArbitrary, insertSigned and the
// system contracts' shorthands.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "casper/contracts/registry.h"
#include "crypto/hash.h"
#include "crypto/secp256k1.h"
#include "gtest/gtest.h"
#include "rholang/frontend/public_par.h"
#include "rholang/interpreter/native_contract.h"
#include "rholang/interpreter/registry_uri.h"
#include "tests/casper/contract_env.h"
#include "util/bytes.h"

namespace rnode::casper {
namespace {

using testing::ContractEnv;
using testing::MakeTestKey;
using testing::TestKey;
namespace ir = rholang::ir;
namespace interp = rholang::interp;

// The timestamp ContractEnv::Run gives its deploys.
constexpr int64_t kRunTimestamp = 1'700'000'000'000;

// The signature insertSigned expects from `key` for `nonce` in a deploy by
// `deployer` (the tests run their programs as MakeTestKey(1)): over
// (deploy timestamp, the deployer's public key, nonce), as the public
// Registry.rho signs it.
std::string SignedInsertSig(const TestKey& key, int64_t nonce,
                            const TestKey& deployer = MakeTestKey(1)) {
  ir::ParPtr to_sign = ir::ParOf(ir::Expr::Tuple(
      {interp::IntPar(kRunTimestamp), interp::BytesPar(ByteView(deployer.pk)),
       interp::IntPar(nonce)}));
  Bytes encoded = *rholang::EncodePublicPar(*to_sign);
  Hash32 digest = crypto::Blake2b256(encoded);
  return HexEncode(*crypto::Secp256k1SignDer(digest, key.sk));
}

std::string InsertSigned(const TestKey& key, int64_t nonce,
                         const std::string& value, const std::string& sig) {
  return absl::StrCat(R"(
new ins(`rho:registry:insertSigned:secp256k1`), rl(`rho:registry:lookup`),
    stdout(`rho:io:stdout`), uriCh, valueCh in {
  ins!(")",
                      HexEncode(ByteView(key.pk)), R"(".hexToBytes(), ()",
                      nonce, ", ", value, R"(), ")", sig,
                      R"(".hexToBytes(), *uriCh) |
  for (@uri <- uriCh) {
    stdout!(("uri", uri)) |
    rl!(uri, *valueCh) |
    for (@v <- valueCh) { stdout!(("value", v)) }
  }
})");
}

// Looks up the URI of `key`'s signed insert and prints ("value", v).
std::string Lookup(const TestKey& key) {
  return absl::StrCat(R"(
new rl(`rho:registry:lookup`), stdout(`rho:io:stdout`), ch in {
  rl!(`)",
                      interp::RegistryUriFromKey(ByteView(key.pk)), R"(`, *ch) |
  for (@v <- ch) { stdout!(("value", v)) }
})");
}

TEST(RegistryTest, SystemContractsResolveUnderEveryName) {
  for (const char* uri :
       {"rho:vault:system", "rho:rchain:revVault",
        "rho:id:6zcfqnwnaqcwpeyuysx1rm48ndr6sgsbbgjuwf45i5nor3io7dr76j",
        "rho:system:pos", "rho:rchain:pos"}) {
    ContractEnv env;
    auto r = env.Run(MakeTestKey(1), absl::StrCat(R"(
new rl(`rho:registry:lookup`), stdout(`rho:io:stdout`), ch in {
  rl!(`)",
                                                  uri, R"(`, *ch) |
  for (@(nonce, _) <- ch) { stdout!(nonce) }
})"));
    ASSERT_TRUE(r.error.ok()) << r.error;
    ASSERT_EQ(env.lines.out.size(), 1u) << uri;
    EXPECT_EQ(env.lines.out[0], "9223372036854775807") << uri;
  }
}

TEST(RegistryTest, UnknownUriLooksUpNil) {
  ContractEnv env;
  auto r = env.Run(MakeTestKey(1), R"(
new rl(`rho:registry:lookup`), stdout(`rho:io:stdout`), ch in {
  rl!(`rho:id:ybndrfg8ejkmcpqxot1uwisza345h769ybndrfg8ejkmcpqxot1uwi`, *ch) |
  rl!(`rho:lang:listOps`, *ch) |
  for (@a <- ch; @b <- ch) { stdout!([a, b]) }
})");
  ASSERT_TRUE(r.error.ok()) << r.error;
  ASSERT_EQ(env.lines.out.size(), 1u);
  EXPECT_EQ(env.lines.out[0], "[Nil, Nil]");
}

TEST(RegistryTest, InsertArbitraryThenLookupReturnsTheValue) {
  ContractEnv env;
  auto r = env.Run(MakeTestKey(1), R"(
new ins(`rho:registry:insertArbitrary`), rl(`rho:registry:lookup`),
    stdout(`rho:io:stdout`), uriCh, valueCh in {
  ins!({"answer": 42}, *uriCh) |
  for (@uri <- uriCh) {
    rl!(uri, *valueCh) |
    for (@v <- valueCh) { stdout!(v) }
  }
})");
  ASSERT_TRUE(r.error.ok()) << r.error;
  ASSERT_EQ(env.lines.out.size(), 1u);
  EXPECT_EQ(env.lines.out[0], "{\"answer\": 42}");
}

TEST(RegistryTest, InsertSignedStoresNonceAndValueAtTheKeysUri) {
  ContractEnv env;
  TestKey key = MakeTestKey(7);
  auto r = env.Run(MakeTestKey(1),
                   InsertSigned(key, 5, "\"v5\"", SignedInsertSig(key, 5)));
  ASSERT_TRUE(r.error.ok()) << r.error;
  const std::string uri = interp::RegistryUriFromKey(ByteView(key.pk));
  ASSERT_EQ(env.lines.out.size(), 2u);
  EXPECT_EQ(env.lines.out[0], "(\"uri\", `" + uri + "`)");
  EXPECT_EQ(env.lines.out[1], "(\"value\", (5, \"v5\"))");
}

TEST(RegistryTest, InsertSignedNeedsAValidSignatureAndAHigherNonce) {
  ContractEnv env;
  TestKey key = MakeTestKey(7);
  ASSERT_TRUE(env.Run(MakeTestKey(1),
                      InsertSigned(key, 5, "\"v5\"", SignedInsertSig(key, 5)))
                  .error.ok());
  env.lines.out.clear();
  // Runs a signed insert that must be refused: no URI and no value in the
  // reply, and the lookup still finds the value of nonce 5.
  auto expect_refused = [&](const std::string& insert) {
    auto r = env.Run(MakeTestKey(1), insert);
    ASSERT_TRUE(r.error.ok());
    EXPECT_EQ(env.lines.out,
              (std::vector<std::string>{"(\"uri\", Nil)", "(\"value\", Nil)"}));
    env.lines.out.clear();
    ASSERT_TRUE(env.Run(MakeTestKey(1), Lookup(key)).error.ok());
    EXPECT_EQ(env.lines.out,
              (std::vector<std::string>{"(\"value\", (5, \"v5\"))"}));
    env.lines.out.clear();
  };
  // The same nonce again: refused, the old value stays.
  expect_refused(InsertSigned(key, 5, "\"again\"", SignedInsertSig(key, 5)));
  // A signature for another nonce: refused.
  expect_refused(InsertSigned(key, 9, "\"bad\"", SignedInsertSig(key, 8)));
  // A signature over the inserting key's own public key instead of the
  // deployer's: refused (the deployer here is MakeTestKey(1)).
  expect_refused(InsertSigned(key, 9, "\"bad\"", SignedInsertSig(key, 9, key)));
  // A higher nonce replaces the value.
  auto up = env.Run(MakeTestKey(1),
                    InsertSigned(key, 6, "\"v6\"", SignedInsertSig(key, 6)));
  ASSERT_TRUE(up.error.ok());
  ASSERT_EQ(env.lines.out.size(), 2u);
  EXPECT_EQ(env.lines.out[1], "(\"value\", (6, \"v6\"))");
}

TEST(RegistryTest, ShorthandTableMapsToPublicIds) {
  EXPECT_EQ(*contracts::ResolveShorthand("rho:vault:system"),
            "rho:id:6zcfqnwnaqcwpeyuysx1rm48ndr6sgsbbgjuwf45i5nor3io7dr76j");
  EXPECT_EQ(*contracts::ResolveShorthand("rho:lang:nonNegativeNumber"),
            "rho:id:hxyadh1ffypra47ry9mk6b8r1i33ar1w9wjsez4khfe9huzrfcytx9");
  EXPECT_FALSE(contracts::ResolveShorthand("rho:vault:nothing").has_value());
}

}  // namespace
}  // namespace rnode::casper

// The genesis block and state from bonds.txt / wallets.txt.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "casper/block/block_codec.h"
#include "casper/contracts/helper_contracts.h"
#include "casper/contracts/names.h"
#include "casper/genesis/genesis.h"
#include "gtest/gtest.h"
#include "tests/casper/contract_env.h"
#include "util/bytes.h"

namespace rnode::casper {
namespace {

using testing::ContractEnv;
using testing::MakeTestKey;

genesis::GenesisParams Params() {
  std::string bonds;
  std::string wallets;
  for (uint8_t i = 1; i <= 3; ++i) {
    auto k = MakeTestKey(i);
    absl::StrAppend(&bonds, HexEncode(ByteView(k.pk)), " ", 1000 * i, "\n");
    absl::StrAppend(&wallets, k.address, ",", 50'000'000'000 + i, "\n");
  }
  absl::StrAppend(&wallets, MakeTestKey(9).address, ",0\n");
  genesis::GenesisParams p;
  p.shard_id = "root";
  p.timestamp = 1'700'000'000'000;
  p.bonds = *genesis::ParseBonds(bonds, "bonds.txt");
  p.wallets = *genesis::ParseWallets(wallets, "wallets.txt");
  return p;
}

absl::StatusOr<genesis::GenesisBlock> Build(ContractEnv& env,
                                            const genesis::GenesisParams& p) {
  return genesis::CreateGenesis(p, env.space.get(), env.contracts.get(),
                                env.runtime.get());
}

// The same files always give this block (and on any thread count: below).
// Computed by this code: a change to genesis, the contracts' state layout or
// the block encoding changes them, and must be deliberate.
TEST(GenesisTest, SameFilesGiveThePinnedBlock) {
  ContractEnv env;
  auto b = Build(env, Params());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE(b->post_state(), b->pre_state());
  EXPECT_EQ(HexEncode(ByteView(b->post_state())),
            "23edcbe189a94e5884228ebaba948bebf8ef0efcdd701dc03e9d6e6566f31f7d");
  EXPECT_EQ(HexEncode(ByteView(b->hash())),
            "ba99259337593c604e781aec79e2ca8e49697afc0aa5a4859a4e0cc9ca0bcdaa");
}

TEST(GenesisTest, ThreadCountDoesNotChangeTheBlock) {
  // The helper contracts' deploys run in the interpreter's parallel rounds.
  ContractEnv one(1);
  auto expected = Build(one, Params());
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (int threads : {2, 4}) {
    ContractEnv env(threads);
    auto b = Build(env, Params());
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(b->post_state(), expected->post_state()) << threads;
    EXPECT_EQ(b->hash(), expected->hash()) << threads;
  }
}

TEST(GenesisTest, UserProgramsFindTheHelperContracts) {
  ContractEnv env;
  ASSERT_TRUE(Build(env, Params()).ok());
  auto r = env.Run(MakeTestKey(1), R"(
    new lookup(`rho:registry:lookup`), out(`rho:io:stdout`),
        listCh, mapCh, stackCh in {
      lookup!(`rho:lang:listOps`, *listCh) |
      lookup!(`rho:lang:treeHashMap`, *mapCh) |
      lookup!(`rho:lang:stack`, *stackCh) |
      for (@(_, ListOps) <- listCh & TreeHashMap <- mapCh &
           @(_, Stack) <- stackCh) {
        new sumCh, mapRet, setAck, getRet, stackRet, pushRet in {
          @ListOps!("sum", [1, 2, 3], *sumCh) |
          for (@sum <- sumCh) { out!(["sum", sum]) } |
          TreeHashMap!("init", 2, *mapRet) |
          for (@map <- mapRet) {
            TreeHashMap!("set", map, "k", 7, *setAck) |
            for (_ <- setAck) {
              TreeHashMap!("get", map, "k", *getRet) |
              for (@v <- getRet) { out!(["get", v]) }
            }
          } |
          @Stack!("init", *stackRet) |
          for (@stack <- stackRet) {
            @Stack!("push", stack, 5, *pushRet) |
            for (@size <- pushRet) { out!(["size", size]) }
          }
        }
      }
    })");
  ASSERT_FALSE(r.failed()) << r.error;
  std::vector<std::string> out = env.lines.out;
  std::sort(out.begin(), out.end());
  EXPECT_EQ(out, (std::vector<std::string>{R"(["get", 7])", R"(["size", 1])",
                                           R"(["sum", 6])"}));
}

// What rho:system:tokenMetadata's ("all", ret) replies, as printed.
std::string TokenAll(ContractEnv& env) {
  auto r = env.Run(MakeTestKey(1), R"(
    new lookup(`rho:registry:lookup`), out(`rho:io:stdout`), ch, all in {
      lookup!(`rho:system:tokenMetadata`, *ch) |
      for (@(_, Token) <- ch) {
        @Token!("all", *all) | for (@t <- all) { out!(t) }
      }
    })");
  EXPECT_FALSE(r.failed()) << r.error;
  return env.lines.out.size() == 1 ? env.lines.out[0] : "<no single line>";
}

TEST(HelperContractsTest, TokenMetadataAnswersTheGivenToken) {
  ContractEnv env;
  contracts::TokenInfo token{
      .name = "Test Coin", .symbol = "TST", .decimals = 4};
  ASSERT_TRUE(contracts::DeployHelperContracts(*env.runtime, *env.space,
                                               env.block, token)
                  .ok());
  EXPECT_EQ(TokenAll(env), R"(("Test Coin", "TST", 4))");
}

TEST(HelperContractsTest, ABadTokenIsRefusedBeforeAnythingRuns) {
  for (const contracts::TokenInfo& bad :
       {contracts::TokenInfo{.name = ""},
        contracts::TokenInfo{.name = "quote\""},
        contracts::TokenInfo{.symbol = "back\\slash"},
        contracts::TokenInfo{.symbol = std::string(33, 'x')},
        contracts::TokenInfo{.decimals = -1},
        contracts::TokenInfo{.decimals = 19}}) {
    ContractEnv env;
    const Hash32 before = env.space->root();
    const size_t overlay = env.space->OverlaySize();
    EXPECT_EQ(contracts::DeployHelperContracts(*env.runtime, *env.space,
                                               env.block, bad)
                  .code(),
              absl::StatusCode::kInvalidArgument)
        << bad.name << " " << bad.symbol << " " << bad.decimals;
    EXPECT_EQ(env.space->OverlaySize(), overlay);
    EXPECT_EQ(env.space->root(), before);
  }
}

TEST(GenesisTest, GenesisIsAnUnsignedBlockOfNumberZero) {
  ContractEnv env;
  auto g = Build(env, Params());
  ASSERT_TRUE(g.ok()) << g.status();
  const block::Block& b = g->block;
  EXPECT_TRUE(b.header.parents.empty());
  EXPECT_EQ(b.number(), 0);
  EXPECT_EQ(b.header.timestamp, 1'700'000'000'000);
  EXPECT_EQ(b.shard_id, "root");
  EXPECT_TRUE(b.body.deploys.empty());
  EXPECT_TRUE(b.justifications.empty());
  EXPECT_TRUE(b.sig.empty());
  EXPECT_EQ(b.sender, crypto::Secp256k1PublicKey{});
  EXPECT_EQ(b.hash, block::ComputeBlockHash(b));
  ASSERT_EQ(b.body.state.bonds.size(), g->bonds.size());
  for (size_t i = 0; i < g->bonds.size(); ++i) {
    EXPECT_EQ(Bytes(b.body.state.bonds[i].validator.begin(),
                    b.body.state.bonds[i].validator.end()),
              g->bonds[i].validator);
    EXPECT_EQ(b.body.state.bonds[i].stake, g->bonds[i].stake);
  }
  auto decoded = block::DecodeBlock(block::EncodeBlock(b));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, b);
}

TEST(GenesisTest, StateHoldsTheWalletsAndTheStakes) {
  ContractEnv env;
  auto b = Build(env, Params());
  ASSERT_TRUE(b.ok()) << b.status();
  for (uint8_t i = 1; i <= 3; ++i) {
    EXPECT_EQ(env.Balance(MakeTestKey(i).address), 50'000'000'000 + i);
  }
  EXPECT_EQ(env.Balance(MakeTestKey(9).address), 0);
  EXPECT_EQ(env.Balance(contracts::PosVaultAddress()), 6000);
  EXPECT_EQ(b->total_supply, 150'000'000'006 + 6000);
  ASSERT_EQ(b->bonds.size(), 3u);
  EXPECT_TRUE(std::is_sorted(
      b->bonds.begin(), b->bonds.end(),
      [](const auto& x, const auto& y) { return x.validator < y.validator; }));
}

TEST(GenesisTest, BondsAreReadNativelyFromTheStateRoot) {
  ContractEnv env;
  auto b = Build(env, Params());
  ASSERT_TRUE(b.ok()) << b.status();
  contracts::ValidatorsCache cache(&env.space->history());
  auto v = cache.Get(b->post_state());
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ((*v)->bonds, b->bonds);
  EXPECT_EQ((*v)->active.size(), 3u);
  EXPECT_EQ(cache.Get(b->pre_state()).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(GenesisTest, FileContentChangesTheRoot) {
  ContractEnv a;
  ContractEnv b;
  genesis::GenesisParams p = Params();
  auto x = Build(a, p);
  p.wallets[0].balance += 1;
  auto y = Build(b, p);
  ASSERT_TRUE(x.ok() && y.ok());
  EXPECT_NE(x->post_state(), y->post_state());
  EXPECT_NE(x->hash(), y->hash());
}

TEST(GenesisTest, RefusesNoBondsAndOverflowingSupply) {
  ContractEnv env;
  genesis::GenesisParams p = Params();
  p.bonds.clear();
  EXPECT_EQ(Build(env, p).status().code(), absl::StatusCode::kInvalidArgument);
  p = Params();
  p.wallets[0].balance = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(Build(env, p).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(GenesisTest, PosParametersMustBeTheContracts) {
  ContractEnv env;
  genesis::GenesisParams p = Params();
  p.pos.epoch_length = 7;
  auto b = Build(env, p);
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  contracts::ContractsOptions o;
  o.pos.epoch_length = 7;
  ContractEnv matching(1, o);
  EXPECT_TRUE(Build(matching, p).ok());
}

TEST(GenesisTest, ATransferRunsOnTheGenesisState) {
  ContractEnv env;
  ASSERT_TRUE(Build(env, Params()).ok());
  auto a = MakeTestKey(1);
  auto out =
      env.Deploy(a, absl::StrCat(R"(
new rl(`rho:registry:lookup`), deployerId(`rho:system:deployerId`), v, f, k, r in {
  rl!(`rho:vault:system`, *v) |
  for (@(_, V) <- v) {
    @V!("findOrCreate", ")",
                                 a.address, R"(", *f) |
    @V!("deployerAuthKey", *deployerId, *k) |
    for (@(true, from) <- f; key <- k) {
      @from!("transfer", ")",
                                 MakeTestKey(9).address, R"(", 123, *key, *r)
    }
  }
})"));
  ASSERT_TRUE(out.ok() && !out->failed());
  EXPECT_EQ(env.Balance(MakeTestKey(9).address), 123);
}

// A program that funds the coop vault from `funder`'s vault (100) and asks
// the coop vault to pay `target` 40 signed by its deployer's key; prints
// the transfer's reply and the coop vault's balance after it.
std::string CoopTransferProgram(const std::string& funder,
                                const std::string& target) {
  return absl::StrCat(R"(
new rl(`rho:registry:lookup`), deployerId(`rho:system:deployerId`),
    out(`rho:io:stdout`), posCh, sysCh, msCh, coopCh, ownCh, keyCh, funded,
    signerCh, moved, balance in {
  rl!(`rho:system:pos`, *posCh) | rl!(`rho:vault:system`, *sysCh) |
  rl!(`rho:vault:multiSig`, *msCh) |
  for (@(_, PoS) <- posCh & @(_, SystemVault) <- sysCh &
       @(_, MultiSig) <- msCh) {
    @PoS!("getCoopVault", *coopCh) |
    @SystemVault!("findOrCreate", ")",
                      funder, R"(", *ownCh) |
    @SystemVault!("deployerAuthKey", *deployerId, *keyCh) |
    for (@(multi, address, _) <- coopCh & @(true, own) <- ownCh &
         @key <- keyCh) {
      @own!("transfer", address, 100, key, *funded) |
      for (@(true, _) <- funded) {
        @MultiSig!("deployerAuthKey", *deployerId, *signerCh) |
        for (@signer <- signerCh) {
          @multi!("transfer", ")",
                      target, R"(", 40, signer, *moved) |
          for (@r <- moved) {
            @multi!("balance", *balance) |
            for (@b <- balance) { out!([r, b]) }
          }
        }
      }
    }
  }
})");
}

TEST(GenesisTest, TheCoopVaultIsAMajorityOfTheValidatorsMultiSigVault) {
  ContractEnv env;
  ASSERT_TRUE(Build(env, Params()).ok());
  const std::string target = MakeTestKey(9).address;
  // Three validators: two must sign. The first signature leaves it pending.
  auto r = env.Run(MakeTestKey(1),
                   CoopTransferProgram(MakeTestKey(1).address, target));
  ASSERT_FALSE(r.failed()) << r.error;
  EXPECT_EQ(env.lines.out,
            (std::vector<std::string>{R"([(true, (true, 0)), 100])"}));
  EXPECT_EQ(env.Balance(target), 0);
  // The second validator confirms nonce 0: the funds move.
  auto c =
      env.Run(MakeTestKey(2), absl::StrCat(R"(
new rl(`rho:registry:lookup`), deployerId(`rho:system:deployerId`),
    out(`rho:io:stdout`), posCh, msCh, coopCh, signerCh, done in {
  rl!(`rho:system:pos`, *posCh) | rl!(`rho:vault:multiSig`, *msCh) |
  for (@(_, PoS) <- posCh & @(_, MultiSig) <- msCh) {
    @PoS!("getCoopVault", *coopCh) |
    @MultiSig!("deployerAuthKey", *deployerId, *signerCh) |
    for (@(multi, _, _) <- coopCh & @signer <- signerCh) {
      @multi!("confirm", ")",
                                           target, R"(", 40, signer, 0, *done) |
      for (@r <- done) { out!(r) }
    }
  }
})"));
  ASSERT_FALSE(c.failed()) << c.error;
  ASSERT_EQ(env.lines.out.size(), 2u);
  EXPECT_EQ(env.lines.out[1], R"((true, (false, "done")))");
  EXPECT_EQ(env.Balance(target), 40);
}

TEST(GenesisTest, ConfiguredCoopSignersAndQuorum) {
  ContractEnv env;
  genesis::GenesisParams p = Params();
  const auto signer = MakeTestKey(4);
  p.coop_keys = {signer.pk_bytes()};
  p.coop_quorum = 1;
  p.wallets.push_back(
      genesis::ParseWallets(absl::StrCat(signer.address, ",1000\n"), "w")
          ->front());
  ASSERT_TRUE(Build(env, p).ok());
  const std::string target = MakeTestKey(9).address;
  auto r = env.Run(signer, CoopTransferProgram(signer.address, target));
  ASSERT_FALSE(r.failed()) << r.error;
  EXPECT_EQ(env.lines.out,
            (std::vector<std::string>{R"([(true, (false, "done")), 60])"}));
  EXPECT_EQ(env.Balance(target), 40);
}

TEST(GenesisTest, RefusesBadCoopSigners) {
  genesis::GenesisParams p = Params();
  p.coop_keys = {MakeTestKey(4).pk_bytes()};
  p.coop_quorum = 2;
  {
    ContractEnv env;
    auto b = Build(env, p);
    EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument)
        << b.status();
  }
  p.coop_quorum = 1;
  p.coop_keys = {Bytes(33, 0x02)};
  {
    ContractEnv env;
    auto b = Build(env, p);
    EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument)
        << b.status();
  }
}

TEST(GenesisTest, TheTokenIsTheGenesisParameters) {
  ContractEnv env;
  genesis::GenesisParams p = Params();
  p.token =
      contracts::TokenInfo{.name = "Test Coin", .symbol = "TST", .decimals = 4};
  ASSERT_TRUE(Build(env, p).ok());
  EXPECT_EQ(TokenAll(env), R"(("Test Coin", "TST", 4))");
}

}  // namespace
}  // namespace rnode::casper

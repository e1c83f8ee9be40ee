// Proof of stake (casper/contracts/pos.h): native system operations and the
// rho:system:pos object called from Rholang, over a real RSpace.
#include "casper/contracts/pos.h"

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "casper/contracts/ledger.h"
#include "casper/contracts/names.h"
#include "casper/contracts/system_contracts.h"
#include "crypto/rev_address.h"
#include "gtest/gtest.h"
#include "rholang/frontend/ir.h"
#include "rholang/frontend/printer.h"
#include "rholang/interpreter/native_contract.h"
#include "rholang/interpreter/native_space.h"
#include "rholang/interpreter/reducer.h"
#include "rholang/interpreter/system_processes.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/event_log.h"
#include "rspace/history/trie.h"
#include "rspace/space.h"
#include "rspace/storage/kv_store.h"

namespace rnode::casper::contracts {
namespace {

namespace ir = rholang::ir;
namespace interp = rholang::interp;

// Column families of the history store.
constexpr size_t kStoreColumns = 3;
// Phlo for one test deploy: far above what any of them spends.
constexpr int64_t kPhlo = 10'000'000;

// Small parameters so epoch and quarantine boundaries are reachable.
PosParams TestParams() {
  PosParams p;
  p.minimum_bond = 10;
  p.maximum_bond = 1'000;
  p.epoch_length = 10;
  p.quarantine_length = 20;
  p.number_of_active_validators = 3;
  p.fault_tolerance_threshold_ppm = 123'456;
  return p;
}

// A 65-byte key (only its length matters to the contract).
Bytes Key(uint8_t n) {
  Bytes k(65, 0x04);
  k[64] = n;
  return k;
}

std::string AddressOf(const Bytes& key) {
  return *crypto::RevAddressFromKeyBytes(key);
}

// Test keys print as "k<n>" (any other key as hex) so failures read well.
std::string Name(const Bytes& key) {
  if (key.size() == 65 && key == Key(key[64])) {
    return absl::StrCat("k", key[64]);
  }
  return HexEncode(key);
}

using BondMap = std::map<std::string, int64_t>;

// The map value `p` as key -> Int (keys must be ByteArrays).
BondMap AsBondMap(const ir::Par& p) {
  BondMap out;
  const ir::Expr* e = p.SingleExpr();
  EXPECT_TRUE(e != nullptr && e->kind == ir::ExprKind::kMap);
  if (e == nullptr || e->kind != ir::ExprKind::kMap) return out;
  for (size_t i = 0; i + 1 < e->operands.size(); i += 2) {
    const ir::Expr* k = e->operands[i]->SingleExpr();
    const ir::Expr* v = e->operands[i + 1]->SingleExpr();
    EXPECT_TRUE(k != nullptr && k->kind == ir::ExprKind::kByteArray);
    EXPECT_TRUE(v != nullptr && v->kind == ir::ExprKind::kInt);
    if (k == nullptr || v == nullptr) continue;
    out[Name(ToBytes(k->text))] = v->int_value;
  }
  return out;
}

std::vector<std::string> AsKeySet(const ir::Par& p) {
  std::vector<std::string> out;
  const ir::Expr* e = p.SingleExpr();
  EXPECT_TRUE(e != nullptr && e->kind == ir::ExprKind::kSet);
  if (e == nullptr) return out;
  for (const ir::ParPtr& k : e->operands) {
    out.push_back(Name(ToBytes(k->SingleExpr()->text)));
  }
  return out;
}

std::string Printed(const ir::ParPtr& p) {
  absl::StatusOr<std::string> s = rholang::Print(*p);
  return s.ok() ? *s : "<print error>";
}

BondMap BondsOf(const Validators& v) {
  BondMap out;
  for (const Bond& b : v.bonds) out[Name(b.validator)] = b.stake;
  return out;
}

// A space with the PoS object installed and a runtime that serves it.
class PosFixture {
 public:
  explicit PosFixture(PosParams params = TestParams())
      : pos_(&ledger_, params) {
    rspace::SpaceOptions options;
    options.term_factory = interp::StoredTermFactory();
    space_ = *rspace::Space::Open(&store_, std::move(options));
    objects_.push_back(pos_.Object());
    interp::RuntimeOptions ro;
    ro.objects = &objects_;
    runtime_ = *interp::Runtime::Create(space_.get(), ro);
    // Programs find the PoS object on @"pos" (peeked, so it stays).
    EXPECT_TRUE(
        Native()
            .Put(interp::StringPar("pos"), {WriteOnlyObject(kPosObject, "")})
            .ok());
  }

  interp::SpaceNative Native() {
    return interp::SpaceNative(space_.get(),
                               rspace::OpContext{&log_, &matcher_}, nullptr);
  }

  absl::Status Genesis(const std::vector<Bond>& bonds) {
    interp::SpaceNative native = Native();
    return pos_.Genesis(native, bonds);
  }
  absl::Status CloseBlock(int64_t number) {
    interp::SpaceNative native = Native();
    interp::BlockInfo block;
    block.block_number = number;
    return pos_.CloseBlock(native, block);
  }
  absl::Status Slash(const Bytes& validator) {
    interp::SpaceNative native = Native();
    return pos_.Slash(native, validator);
  }
  void Mint(const std::string& address, int64_t amount) {
    interp::SpaceNative native = Native();
    ASSERT_TRUE(ledger_.Mint(native, address, amount).ok());
  }
  int64_t Balance(const std::string& address) {
    interp::SpaceNative native = Native();
    absl::StatusOr<int64_t> b = ledger_.Balance(native, address);
    EXPECT_TRUE(b.ok()) << b.status();
    return b.value_or(-1);
  }

  // Takes the value a program sent on @"out" (nullptr if none).
  ir::ParPtr TakeOut() {
    interp::SpaceNative native = Native();
    auto datum = native.Take(interp::StringPar("out"));
    EXPECT_TRUE(datum.ok()) << datum.status();
    if (!datum.ok() || !datum->has_value() || (*datum)->size() != 1) {
      return nullptr;
    }
    return (**datum)[0];
  }

  // Runs `call` (a send on `pos` whose reply channel is `*ret`) as a deploy
  // of `deployer` in block `block`; returns its error and the reply.
  struct CallResult {
    absl::Status error;
    ir::ParPtr reply;
    int64_t cost = 0;
    std::vector<rspace::Event> events;  // the deploy's log (play only)
  };
  CallResult Call(const std::string& call, const Bytes& deployer = Key(0xEE),
                  int64_t block = 1,
                  const std::vector<rspace::Event>* replay = nullptr) {
    std::string source = absl::StrCat(
        "new deployerId(`rho:system:deployerId`), ret in {\n"
        "  for (pos <<- @\"pos\") { ",
        call,
        " } |\n"
        "  for (@r <- ret) { @\"out\"!(r) }\n"
        "}");
    interp::DeployInfo deploy;
    deploy.timestamp = 1;
    deploy.deployer_public_key = deployer;
    deploy.deploy_id = Bytes(64, static_cast<uint8_t>(++deploys_));
    interp::BlockInfo info;
    info.block_number = block;
    std::unique_ptr<rspace::EventLog> log =
        std::make_unique<rspace::EventLog>();
    if (replay != nullptr) {
      absl::StatusOr<std::unique_ptr<rspace::EventLog>> r =
          rspace::EventLog::ForReplay(*replay);
      EXPECT_TRUE(r.ok()) << r.status();
      if (r.ok()) log = std::move(*r);
    }
    interp::EvalResult r =
        runtime_->EvaluateSource(source, deploy, kPhlo, log.get(), &info);
    CallResult out;
    out.error = r.error;
    out.cost = r.cost;
    if (replay == nullptr) out.events = log->Take();
    if (r.error.ok()) out.reply = TakeOut();
    return out;
  }
  ir::ParPtr Get(const std::string& method) {
    CallResult r = Call(absl::StrCat("pos!(\"", method, "\", *ret)"));
    EXPECT_TRUE(r.error.ok()) << method << ": " << r.error;
    return r.reply != nullptr ? r.reply : ir::Nil();
  }
  std::string Bond(const Bytes& deployer, int64_t amount) {
    CallResult r =
        Call(absl::StrCat("pos!(\"bond\", *deployerId, ", amount, ", *ret)"),
             deployer);
    if (!r.error.ok()) return "error: " + r.error.ToString();
    return r.reply != nullptr ? Printed(r.reply) : "<no reply>";
  }
  std::string Withdraw(const Bytes& deployer, int64_t block) {
    CallResult r =
        Call("pos!(\"withdraw\", *deployerId, *ret)", deployer, block);
    if (!r.error.ok()) return "error: " + r.error.ToString();
    return r.reply != nullptr ? Printed(r.reply) : "<no reply>";
  }

  // Sends `data` (a reply channel @"out" appended) to the PoS object from
  // an IR program: what Casper's system deploys do with the auth token.
  CallResult Send(std::vector<ir::ParPtr> data, int64_t block = 1) {
    data.push_back(interp::StringPar("out"));
    ir::ParPtr program =
        ir::ParBuilder()
            .Add(ir::Send::Make(WriteOnlyObject(kPosObject, ""),
                                std::move(data), false))
            .Build();
    interp::DeployInfo deploy;
    deploy.deploy_id = Bytes(64, static_cast<uint8_t>(++deploys_));
    deploy.deployer_public_key = Key(0xEE);
    interp::BlockInfo info;
    info.block_number = block;
    rspace::EventLog log;
    interp::EvalResult r =
        runtime_->Evaluate(program, deploy, kPhlo, &log, &info);
    CallResult out;
    out.error = r.error;
    if (r.error.ok()) out.reply = TakeOut();
    return out;
  }

  BondMap Bonds() { return AsBondMap(*Get("getBonds")); }
  std::vector<std::string> Active() {
    return AsKeySet(*Get("getActiveValidators"));
  }

  Hash32 Checkpoint() { return *space_->CreateCheckpoint(); }

  rspace::Space& space() { return *space_; }
  interp::Runtime& runtime() { return *runtime_; }
  Ledger& ledger() { return ledger_; }

 private:
  rspace::InMemoryStore store_{kStoreColumns};
  std::unique_ptr<rspace::Space> space_;
  Ledger ledger_;
  ProofOfStake pos_;
  std::vector<interp::NativeObjectDef> objects_;
  std::unique_ptr<interp::Runtime> runtime_;
  interp::StoredMatcher matcher_;
  rspace::EventLog log_;
  int deploys_ = 0;
};

ir::ParPtr Token() {
  return interp::UnforgeablePar(ir::UnforgeableKind::kSysAuthToken, {});
}

// --- Genesis and getters ---

TEST(PosTest, GetBondsAfterGenesisListsTheGenesisStakes) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}, {Key(2), 300}}).ok());
  EXPECT_EQ(f.Bonds(), (BondMap{{"k1", 100}, {"k2", 300}}));
  EXPECT_EQ(f.Active(), (std::vector<std::string>{"k1", "k2"}));
  EXPECT_EQ(f.Balance(PosVaultAddress()), 400);
}

TEST(PosTest, GenesisRejectsBadBonds) {
  struct Case {
    std::string name;
    std::vector<Bond> bonds;
  };
  const std::vector<Case> cases = {
      {"short key", {{Bytes(33, 2), 100}}},
      {"below minimum", {{Key(1), 9}}},
      {"above maximum", {{Key(1), 1'001}}},
      {"duplicate key", {{Key(1), 100}, {Key(1), 200}}},
  };
  for (const Case& c : cases) {
    PosFixture f;
    absl::Status s = f.Genesis(c.bonds);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name << s;
  }
}

TEST(PosTest, GenesisTwiceFails) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}}).ok());
  EXPECT_EQ(f.Genesis({{Key(2), 100}}).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(PosTest, ParameterGettersReplyTheParameters) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}}).ok());
  EXPECT_EQ(Printed(f.Get("getEpochLength")), "10");
  EXPECT_EQ(Printed(f.Get("getQuarantineLength")), "20");
  EXPECT_EQ(Printed(f.Get("getFaultToleranceThresholdPpm")), "123456");
}

TEST(PosTest, GetInitialPosVaultRepliesAddressAndWriteOnlyVault) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}}).ok());
  ir::ParPtr reply = f.Get("getInitialPosVault");
  const ir::Expr* t = reply->SingleExpr();
  ASSERT_TRUE(t != nullptr && t->kind == ir::ExprKind::kTuple);
  ASSERT_EQ(t->operands.size(), 2u);
  EXPECT_TRUE(ir::Equal(t->operands[0], interp::StringPar(PosVaultAddress())));
  EXPECT_TRUE(ir::Equal(t->operands[1],
                        WriteOnlyObject(kVaultObject, PosVaultAddress())));
}

TEST(PosTest, CallsBeforeGenesisFailTheDeploy) {
  PosFixture f;
  PosFixture::CallResult r = f.Call("pos!(\"getBonds\", *ret)");
  EXPECT_EQ(r.error.code(), absl::StatusCode::kFailedPrecondition) << r.error;
}

TEST(PosTest, UnknownMethodAndWrongArityFailNamingThePosAndMethod) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}}).ok());
  struct Case {
    std::string call;
    std::string method;
  };
  const std::vector<Case> cases = {
      {"pos!(\"noSuchMethod\", *ret)", "noSuchMethod"},
      {"pos!(\"getBonds\", 1, *ret)", "getBonds"},
      {"pos!(\"bond\", *deployerId, *ret)", "bond"},
      {"pos!(\"withdraw\", *ret)", "withdraw"},
      {"pos!(\"closeBlock\", *ret)", "closeBlock"},
      {"pos!(\"slash\", 1, *ret)", "slash"},
  };
  for (const Case& c : cases) {
    PosFixture::CallResult r = f.Call(c.call);
    EXPECT_EQ(r.error.code(), absl::StatusCode::kInvalidArgument) << c.call;
    EXPECT_NE(r.error.message().find("rho:system:pos"), absl::string_view::npos)
        << r.error;
    EXPECT_NE(r.error.message().find(c.method), absl::string_view::npos)
        << r.error;
  }
  // The state is untouched by failed deploys.
  EXPECT_EQ(f.Bonds(), (BondMap{{"k1", 100}}));
}

TEST(PosTest, BondWithoutDeployerIdFailsTheDeploy) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}}).ok());
  PosFixture::CallResult r = f.Call("pos!(\"bond\", \"me\", 100, *ret)");
  EXPECT_EQ(r.error.code(), absl::StatusCode::kInvalidArgument);
  r = f.Call("pos!(\"bond\", *deployerId, \"100\", *ret)");
  EXPECT_EQ(r.error.code(), absl::StatusCode::kInvalidArgument);
}

// --- bond ---

TEST(PosTest, BondFailuresReplyThePublicMessagesInOrder) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}}).ok());
  f.Mint(AddressOf(Key(1)), 10'000);
  f.Mint(AddressOf(Key(2)), 50);
  struct Case {
    Bytes deployer;
    int64_t amount;
    std::string reply;
  };
  const std::vector<Case> cases = {
      // Already bonded wins over every amount check.
      {Key(1), 0, "(false, \"Public key is already bonded.\")"},
      {Key(1), 100, "(false, \"Public key is already bonded.\")"},
      {Key(2), 0, "(false, \"Bond amount must be positive.\")"},
      {Key(2), -5, "(false, \"Bond amount must be positive.\")"},
      {Key(2), 9, "(false, \"Bond is less than minimum!\")"},
      {Key(2), 1'001, "(false, \"Bond is greater than maximum!\")"},
      {Key(2), 100, "(false, \"Bond deposit failed: Insufficient funds\")"},
      {Key(3), 10, "(false, \"Bond deposit failed: Insufficient funds\")"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(f.Bond(c.deployer, c.amount), c.reply) << c.amount;
  }
  EXPECT_EQ(f.Bonds(), (BondMap{{"k1", 100}}));
  EXPECT_EQ(f.Balance(AddressOf(Key(2))), 50);
  EXPECT_EQ(f.Balance(PosVaultAddress()), 100);
}

TEST(PosTest, BondMovesFundsAndActivatesAtTheNextEpoch) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}}).ok());
  f.Mint(AddressOf(Key(2)), 500);
  EXPECT_EQ(f.Bond(Key(2), 200), "(true, Nil)");
  EXPECT_EQ(f.Balance(AddressOf(Key(2))), 300);
  EXPECT_EQ(f.Balance(PosVaultAddress()), 300);
  EXPECT_EQ(f.Bonds(), (BondMap{{"k1", 100}, {"k2", 200}}));
  EXPECT_EQ(f.Active(), (std::vector<std::string>{"k1"}));
  // Not a boundary: nothing changes.
  ASSERT_TRUE(f.CloseBlock(7).ok());
  EXPECT_EQ(f.Active(), (std::vector<std::string>{"k1"}));
  ASSERT_TRUE(f.CloseBlock(10).ok());
  EXPECT_EQ(f.Active(), (std::vector<std::string>{"k1", "k2"}));
  // Bonding twice is refused.
  EXPECT_EQ(f.Bond(Key(2), 50), "(false, \"Public key is already bonded.\")");
}

// --- withdraw ---

TEST(PosTest, WithdrawOfUnbondedKeyIsRefused) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}}).ok());
  EXPECT_EQ(f.Withdraw(Key(9), 1), "(false, \"User is not bonded\")");
  EXPECT_TRUE(AsBondMap(*f.Get("getPendingWithdrawer")).empty());
}

TEST(PosTest, WithdrawIsQuarantinedThenPaidWithRewards) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}, {Key(2), 300}}).ok());
  EXPECT_EQ(f.Withdraw(Key(1), 3), "(true, Nil)");
  // end = quarantine + epoch * (1 + 3 / epoch) = 20 + 10.
  EXPECT_EQ(AsBondMap(*f.Get("getPendingWithdrawer")), (BondMap{{"k1", 30}}));
  // A second withdraw keeps the first end block.
  EXPECT_EQ(f.Withdraw(Key(1), 8), "(true, Nil)");
  EXPECT_EQ(AsBondMap(*f.Get("getPendingWithdrawer")), (BondMap{{"k1", 30}}));
  // Fees of the first epoch: Key(1) still earns its share.
  f.Mint(PosVaultAddress(), 400);
  ASSERT_TRUE(f.CloseBlock(10).ok());
  EXPECT_TRUE(AsBondMap(*f.Get("getPendingWithdrawer")).empty());
  EXPECT_EQ(
      Printed(f.Get("getWithdrawers")).find("100, 30") != std::string::npos,
      true)
      << Printed(f.Get("getWithdrawers"));
  EXPECT_EQ(f.Bonds(), (BondMap{{"k2", 300}}));
  EXPECT_EQ(f.Active(), (std::vector<std::string>{"k2"}));
  EXPECT_EQ(AsBondMap(*f.Get("getRewards")),
            (BondMap{{"k1", 100}, {"k2", 300}}));
  // Still quarantined at 20.
  ASSERT_TRUE(f.CloseBlock(20).ok());
  EXPECT_EQ(f.Balance(AddressOf(Key(1))), 0);
  // Paid at 30: bond + committed rewards.
  ASSERT_TRUE(f.CloseBlock(30).ok());
  EXPECT_EQ(f.Balance(AddressOf(Key(1))), 200);
  EXPECT_EQ(f.Balance(PosVaultAddress()), 300 + 300);
  EXPECT_EQ(Printed(f.Get("getWithdrawers")), "{}");
  EXPECT_EQ(AsBondMap(*f.Get("getRewards")), (BondMap{{"k2", 300}}));
  // Withdrawn: not bonded any more; may bond again.
  EXPECT_EQ(f.Withdraw(Key(1), 31), "(false, \"User is not bonded\")");
  EXPECT_EQ(f.Bond(Key(1), 150), "(true, Nil)");
}

TEST(PosTest, WithdrawAtABoundaryWaitsForTheNextBoundary) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}, {Key(2), 300}}).ok());
  EXPECT_EQ(f.Withdraw(Key(1), 10), "(true, Nil)");
  EXPECT_EQ(AsBondMap(*f.Get("getPendingWithdrawer")), (BondMap{{"k1", 40}}));
  ASSERT_TRUE(f.CloseBlock(10).ok());
  EXPECT_EQ(AsBondMap(*f.Get("getPendingWithdrawer")), (BondMap{{"k1", 40}}));
  EXPECT_EQ(f.Bonds().size(), 2u);
  ASSERT_TRUE(f.CloseBlock(20).ok());
  EXPECT_TRUE(AsBondMap(*f.Get("getPendingWithdrawer")).empty());
  EXPECT_EQ(f.Bonds(), (BondMap{{"k2", 300}}));
}

// --- rewards ---

TEST(PosTest, RewardsSplitThePotByActiveStakeRoundingDown) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}, {Key(2), 200}}).ok());
  f.Mint(PosVaultAddress(), 1'000);
  EXPECT_EQ(AsBondMap(*f.Get("getCurrentEpochRewards")),
            (BondMap{{"k1", 333}, {"k2", 666}}));
  EXPECT_TRUE(AsBondMap(*f.Get("getRewards")) ==
              (BondMap{{"k1", 333}, {"k2", 666}}));
  ASSERT_TRUE(f.CloseBlock(10).ok());
  // The remainder (1) stays in the pot and is too small to split.
  EXPECT_EQ(AsBondMap(*f.Get("getCurrentEpochRewards")), BondMap{});
  EXPECT_EQ(AsBondMap(*f.Get("getRewards")),
            (BondMap{{"k1", 333}, {"k2", 666}}));
  // More fees in the next epoch add to the committed rewards; the pot now
  // holds 1 + 299 = 300.
  f.Mint(PosVaultAddress(), 299);
  EXPECT_EQ(AsBondMap(*f.Get("getCurrentEpochRewards")),
            (BondMap{{"k1", 100}, {"k2", 200}}));
  ASSERT_TRUE(f.CloseBlock(20).ok());
  EXPECT_EQ(AsBondMap(*f.Get("getRewards")),
            (BondMap{{"k1", 433}, {"k2", 866}}));
  EXPECT_EQ(f.Balance(PosVaultAddress()), 300 + 1'000 + 299);
}

TEST(PosTest, RewardsGoOnlyToActiveValidators) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}}).ok());
  f.Mint(AddressOf(Key(2)), 1'000);
  ASSERT_EQ(f.Bond(Key(2), 900), "(true, Nil)");
  f.Mint(PosVaultAddress(), 50);
  ASSERT_TRUE(f.CloseBlock(10).ok());
  // Key(2) was bonded but not active during the epoch.
  EXPECT_EQ(AsBondMap(*f.Get("getRewards")), (BondMap{{"k1", 50}}));
}

TEST(PosTest, RewardsWithHugeStakesDoNotOverflow) {
  PosParams p = TestParams();
  p.maximum_bond = int64_t{1} << 61;
  PosFixture f(p);
  const int64_t big = int64_t{1} << 61;
  ASSERT_TRUE(f.Genesis({{Key(1), big}, {Key(2), big / 2}}).ok());
  const int64_t fees = int64_t{3} << 60;
  f.Mint(PosVaultAddress(), fees);
  // pot * stake exceeds 64 bits; shares are exact: 2/3 and 1/3 of fees.
  EXPECT_EQ(AsBondMap(*f.Get("getCurrentEpochRewards")),
            (BondMap{{"k1", int64_t{1} << 61}, {"k2", int64_t{1} << 60}}));
}

// --- active set ---

TEST(PosTest, ActiveSetIsTheLargestStakesTiesByKey) {
  PosParams p = TestParams();
  p.number_of_active_validators = 2;
  PosFixture f(p);
  ASSERT_TRUE(f.Genesis({{Key(3), 100}, {Key(1), 100}, {Key(2), 100}}).ok());
  EXPECT_EQ(f.Active(), (std::vector<std::string>{"k1", "k2"}));
  f.Mint(AddressOf(Key(4)), 1'000);
  f.Mint(AddressOf(Key(5)), 1'000);
  ASSERT_EQ(f.Bond(Key(4), 500), "(true, Nil)");
  ASSERT_EQ(f.Bond(Key(5), 200), "(true, Nil)");
  EXPECT_EQ(f.Active(), (std::vector<std::string>{"k1", "k2"}));
  ASSERT_TRUE(f.CloseBlock(10).ok());
  EXPECT_EQ(f.Active(), (std::vector<std::string>{"k4", "k5"}));
  // A slashed validator leaves at once and is not picked again.
  ASSERT_TRUE(f.Slash(Key(4)).ok());
  EXPECT_EQ(f.Active(), (std::vector<std::string>{"k5"}));
  ASSERT_TRUE(f.CloseBlock(20).ok());
  EXPECT_EQ(f.Active(), (std::vector<std::string>{"k1", "k5"}));
}

// --- slash ---

TEST(PosTest, SlashMovesTheStakeToTheCoopVault) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}, {Key(2), 300}}).ok());
  f.Mint(PosVaultAddress(), 40);
  ASSERT_TRUE(f.CloseBlock(10).ok());  // Key(1) has 10 committed rewards.
  ASSERT_TRUE(f.Slash(Key(1)).ok());
  EXPECT_EQ(f.Balance(CoopVaultAddress()), 100);
  EXPECT_EQ(f.Balance(PosVaultAddress()), 300 + 40);
  EXPECT_EQ(f.Bonds(), (BondMap{{"k1", 0}, {"k2", 300}}));
  EXPECT_EQ(f.Active(), (std::vector<std::string>{"k2"}));
  // Key(1)'s dropped rewards return to the pot, all of it Key(2)'s current
  // share: 30 committed + 10 current.
  EXPECT_EQ(AsBondMap(*f.Get("getCurrentEpochRewards")), (BondMap{{"k2", 10}}));
  EXPECT_EQ(AsBondMap(*f.Get("getRewards")), (BondMap{{"k2", 40}}));
  ASSERT_TRUE(f.CloseBlock(20).ok());
  EXPECT_EQ(AsBondMap(*f.Get("getCurrentEpochRewards")), BondMap{});
  EXPECT_EQ(AsBondMap(*f.Get("getRewards")), (BondMap{{"k2", 40}}));
  // Again: no stake, no change; a slashed key cannot bond again.
  Hash32 before = f.Checkpoint();
  ASSERT_TRUE(f.Slash(Key(1)).ok());
  ASSERT_TRUE(f.Slash(Key(9)).ok());
  EXPECT_EQ(f.Checkpoint(), before);
  f.Mint(AddressOf(Key(1)), 500);
  EXPECT_EQ(f.Bond(Key(1), 100), "(false, \"Public key is already bonded.\")");
}

// The coop vault genesis makes (CreateCoopVault; tested with the real
// multi-signature vault in genesis_test.cc), here a stand-in triple.
ir::ParPtr CoopTriple(const std::string& address) {
  return ir::ParOf(
      ir::Expr::Tuple({interp::StringPar("multi"), interp::StringPar(address),
                       interp::StringPar("system")}));
}

TEST(PosTest, GetCoopVaultWithoutOneFailsTheDeploy) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}}).ok());
  PosFixture::CallResult r = f.Call("pos!(\"getCoopVault\", *ret)");
  EXPECT_EQ(r.error.code(), absl::StatusCode::kFailedPrecondition) << r.error;
  EXPECT_NE(r.error.message().find("getCoopVault"), absl::string_view::npos)
      << r.error;
}

TEST(PosTest, GetCoopVaultRepliesTheTripleAndSlashPaysItsAddress) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}, {Key(2), 300}}).ok());
  const std::string coop = AddressOf(Key(7));
  {
    interp::SpaceNative native = f.Native();
    ASSERT_TRUE(native.Put(CoopVaultChannel(), {CoopTriple(coop)}).ok());
  }
  EXPECT_TRUE(ir::Equal(f.Get("getCoopVault"), CoopTriple(coop)));
  ASSERT_TRUE(f.Slash(Key(2)).ok());
  EXPECT_EQ(f.Balance(coop), 300);
  EXPECT_EQ(f.Balance(CoopVaultAddress()), 0);
  // It is peeked, not taken.
  EXPECT_TRUE(ir::Equal(f.Get("getCoopVault"), CoopTriple(coop)));
}

TEST(PosTest, PosVaultTransferOnlyForTheConfiguredKey) {
  PosParams params = TestParams();
  params.vault_transfer_key = Key(5);
  PosFixture f(params);
  ASSERT_TRUE(f.Genesis({{Key(1), 100}}).ok());
  auto transfer = [&](const Bytes& deployer, const std::string& target,
                      const std::string& amount) {
    PosFixture::CallResult r =
        f.Call(absl::StrCat("pos!(\"posVaultTransfer\", \"", target, "\", ",
                            amount, ", *deployerId, *ret)"),
               deployer);
    if (!r.error.ok()) return "error: " + r.error.ToString();
    return r.reply != nullptr ? Printed(r.reply) : std::string("<no reply>");
  };
  const std::string target = AddressOf(Key(3));
  EXPECT_EQ(transfer(Key(6), target, "30"),
            "(false, \"You have not permission to transfer.\")");
  EXPECT_EQ(f.Balance(PosVaultAddress()), 100);
  EXPECT_EQ(transfer(Key(5), target, "0"),
            "(false, \"Amount must be positive value\")");
  EXPECT_EQ(transfer(Key(5), target, "101"), "(false, \"Insufficient funds\")");
  EXPECT_EQ(transfer(Key(5), target, "30"), "(true, Nil)");
  EXPECT_EQ(f.Balance(PosVaultAddress()), 70);
  EXPECT_EQ(f.Balance(target), 30);
  // Not a deployer id: the deploy fails.
  PosFixture::CallResult r =
      f.Call(absl::StrCat("pos!(\"posVaultTransfer\", \"", target,
                          "\", 1, \"me\", *ret)"),
             Key(5));
  EXPECT_EQ(r.error.code(), absl::StatusCode::kInvalidArgument) << r.error;
}

TEST(PosTest, PosVaultTransferWithoutAConfiguredKeyRefusesEveryone) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}}).ok());
  for (uint8_t k : {1, 5, 0xEE}) {
    PosFixture::CallResult r =
        f.Call(absl::StrCat("pos!(\"posVaultTransfer\", \"", AddressOf(Key(3)),
                            "\", 10, *deployerId, *ret)"),
               Key(k));
    ASSERT_TRUE(r.error.ok()) << r.error;
    EXPECT_EQ(Printed(r.reply),
              "(false, \"You have not permission to transfer.\")");
  }
  EXPECT_EQ(f.Balance(PosVaultAddress()), 100);
}

TEST(PosTest, AVaultTransferKeyOfTheWrongLengthIsRefusedAtGenesis) {
  PosParams params = TestParams();
  params.vault_transfer_key = Bytes(33, 0x02);
  PosFixture f(params);
  EXPECT_EQ(f.Genesis({{Key(1), 100}}).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PosTest, SlashReachesQuarantinedWithdrawers) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}, {Key(2), 300}}).ok());
  ASSERT_EQ(f.Withdraw(Key(1), 1), "(true, Nil)");
  ASSERT_TRUE(f.CloseBlock(10).ok());
  ASSERT_TRUE(f.Slash(Key(1)).ok());
  EXPECT_EQ(f.Balance(CoopVaultAddress()), 100);
  EXPECT_EQ(Printed(f.Get("getWithdrawers")), "{}");
  ASSERT_TRUE(f.CloseBlock(30).ok());
  EXPECT_EQ(f.Balance(AddressOf(Key(1))), 0);
}

TEST(PosTest, SlashThroughTheObjectUsesTheInvalidBlocksMap) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}, {Key(2), 300}}).ok());
  const Bytes block_hash(32, 0xAB);
  f.runtime().SetInvalidBlocks(ir::ParOf(
      ir::Expr::Map({{interp::BytesPar(block_hash), interp::BytesPar(Key(2))}},
                    std::nullopt)));
  PosFixture::CallResult r =
      f.Send({interp::StringPar("slash"), interp::BytesPar(Key(1)),
              interp::BytesPar(Bytes(32, 0xCD)), Token()});
  ASSERT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(Printed(r.reply), "(false, \"invalid slash evidence\")");
  r = f.Send({interp::StringPar("slash"), interp::BytesPar(Key(1)),
              interp::BytesPar(block_hash), interp::StringPar("token")});
  ASSERT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(Printed(r.reply), "(false, \"Invalid system auth token\")");
  EXPECT_EQ(f.Bonds(), (BondMap{{"k1", 100}, {"k2", 300}}));
  r = f.Send({interp::StringPar("slash"), interp::BytesPar(Key(1)),
              interp::BytesPar(block_hash), Token()});
  ASSERT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(Printed(r.reply), "(true, Nil)");
  EXPECT_EQ(f.Bonds(), (BondMap{{"k1", 100}, {"k2", 0}}));
  EXPECT_EQ(f.Balance(CoopVaultAddress()), 300);
}

// --- closeBlock through the object ---

TEST(PosTest, CloseBlockThroughTheObjectNeedsTheAuthToken) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}}).ok());
  f.Mint(AddressOf(Key(2)), 1'000);
  ASSERT_EQ(f.Bond(Key(2), 200), "(true, Nil)");
  // From Rholang: a program has no token.
  PosFixture::CallResult c =
      f.Call("pos!(\"closeBlock\", *deployerId, *ret)", Key(0xEE), 10);
  ASSERT_TRUE(c.error.ok()) << c.error;
  EXPECT_EQ(Printed(c.reply), "(false, \"Invalid system auth token\")");
  // Two tokens in parallel are not one token.
  ir::ParPtr two =
      ir::ParBuilder()
          .Add(ir::Unforgeable::Make(ir::UnforgeableKind::kSysAuthToken, {}))
          .Add(ir::Expr::Int(1))
          .Build();
  PosFixture::CallResult r = f.Send({interp::StringPar("closeBlock"), two}, 10);
  ASSERT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(Printed(r.reply), "(false, \"Invalid system auth token\")");
  EXPECT_EQ(f.Active(), (std::vector<std::string>{"k1"}));
  r = f.Send({interp::StringPar("closeBlock"), Token()}, 10);
  ASSERT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(Printed(r.reply), "(true, Nil)");
  EXPECT_EQ(f.Active(), (std::vector<std::string>{"k1", "k2"}));
}

// --- through the registry ---

TEST(PosTest, RegistryLookupOfRhoSystemPosReachesTheObject) {
  rspace::InMemoryStore store(kStoreColumns);
  rspace::SpaceOptions options;
  options.term_factory = interp::StoredTermFactory();
  std::unique_ptr<rspace::Space> space =
      *rspace::Space::Open(&store, std::move(options));
  SystemContracts contracts(ContractsOptions{.pos = TestParams()});
  std::unique_ptr<interp::Runtime> runtime =
      *interp::Runtime::Create(space.get(), contracts.RuntimeOptionsFor(1));
  interp::StoredMatcher matcher;
  rspace::EventLog native_log;
  interp::SpaceNative native(space.get(), {&native_log, &matcher}, nullptr);
  ASSERT_TRUE(contracts.pos().Genesis(native, {{Key(1), 100}}).ok());
  ASSERT_TRUE(contracts.ledger().Mint(native, AddressOf(Key(2)), 500).ok());

  interp::DeployInfo deploy;
  deploy.deployer_public_key = Key(2);
  deploy.deploy_id = Bytes(64, 7);
  rspace::EventLog log;
  interp::EvalResult r = runtime->EvaluateSource(R"(
new rl(`rho:registry:lookup`), deployerId(`rho:system:deployerId`),
    ch, ret, bonds in {
  rl!(`rho:system:pos`, *ch) |
  for (@(_, pos) <- ch) {
    @pos!("bond", *deployerId, 200, *ret) |
    for (@r <- ret) {
      @pos!("getBonds", *bonds) |
      for (@b <- bonds) { @"out"!((r, b)) }
    }
  }
})",
                                                 deploy, kPhlo, &log);
  ASSERT_TRUE(r.error.ok()) << r.error;
  auto out = native.Take(interp::StringPar("out"));
  ASSERT_TRUE(out.ok() && out->has_value()) << out.status();
  const ir::Expr* t = (**out)[0]->SingleExpr();
  ASSERT_TRUE(t != nullptr && t->kind == ir::ExprKind::kTuple);
  EXPECT_EQ(Printed(t->operands[0]), "(true, Nil)");
  EXPECT_EQ(AsBondMap(*t->operands[1]), (BondMap{{"k1", 100}, {"k2", 200}}));
  EXPECT_EQ(*contracts.ledger().Balance(native, PosVaultAddress()), 300);
}

// --- costs ---

TEST(PosTest, GetBondsCostGrowsWithTheValidatorSet) {
  PosFixture small;
  ASSERT_TRUE(small.Genesis({{Key(1), 100}}).ok());
  PosFixture large;
  std::vector<Bond> bonds;
  for (uint8_t i = 1; i <= 20; ++i) bonds.push_back({Key(i), 100});
  ASSERT_TRUE(large.Genesis(bonds).ok());
  PosFixture::CallResult a = small.Call("pos!(\"getBonds\", *ret)");
  PosFixture::CallResult b = large.Call("pos!(\"getBonds\", *ret)");
  ASSERT_TRUE(a.error.ok() && b.error.ok());
  EXPECT_GT(a.cost, 0);
  EXPECT_GT(b.cost, a.cost);
}

// --- native decoding and the cache ---

TEST(PosTest, DecodeValidatorsEqualsGetBonds) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}, {Key(2), 300}, {Key(3), 50}}).ok());
  f.Mint(AddressOf(Key(4)), 1'000);
  ASSERT_EQ(f.Bond(Key(4), 700), "(true, Nil)");
  ASSERT_TRUE(f.Slash(Key(3)).ok());
  Hash32 root = f.Checkpoint();
  ValidatorsCache cache(&f.space().history());
  absl::StatusOr<std::shared_ptr<const Validators>> v = cache.Get(root);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(BondsOf(**v), f.Bonds());
  std::vector<std::string> active;
  for (const Bytes& k : (*v)->active) active.push_back(Name(k));
  EXPECT_EQ(active, f.Active());
  EXPECT_EQ((*v)->epoch_length, 10);
  EXPECT_EQ((*v)->quarantine_length, 20);
  EXPECT_EQ((*v)->fault_tolerance_threshold_ppm, 123'456);
  // Ascending by key.
  ASSERT_EQ((*v)->bonds.size(), 4u);
  EXPECT_EQ((*v)->bonds[0], (Bond{Key(1), 100}));
  EXPECT_EQ((*v)->bonds[2], (Bond{Key(3), 0}));
}

TEST(PosTest, DecodeValidatorsRejectsOtherChannelStates) {
  rspace::ChannelState empty;
  EXPECT_EQ(DecodeValidators(empty).status().code(),
            absl::StatusCode::kFailedPrecondition);
  BalanceCodec codec;
  absl::StatusOr<rspace::ChannelState> balance = codec.Write(Hash32{}, 5);
  ASSERT_TRUE(balance.ok());
  EXPECT_EQ(DecodeValidators(*balance).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(PosTest, CacheCountsHitsAndMissesAndReportsMissingState) {
  PosFixture f;
  ValidatorsCache cache(&f.space().history());
  Hash32 before = f.Checkpoint();
  EXPECT_EQ(cache.Get(before).status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(f.Genesis({{Key(1), 100}}).ok());
  Hash32 root = f.Checkpoint();
  absl::StatusOr<std::shared_ptr<const Validators>> first = cache.Get(root);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*first)->bonds, (std::vector<Bond>{{Key(1), 100}}));
  absl::StatusOr<std::shared_ptr<const Validators>> second = cache.Get(root);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->get(), first->get());  // the cached value itself
  ASSERT_TRUE(cache.Get(root).ok());
  EXPECT_EQ(cache.hits(), 2u);
  EXPECT_EQ(cache.misses(), 2u);
}

TEST(PosTest, CacheEvictsTheLeastRecentlyUsedRootBeyondCapacity) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}}).ok());
  std::vector<Hash32> roots;
  for (size_t i = 0; i <= ValidatorsCache::kDefaultCapacity; ++i) {
    f.Mint(AddressOf(Key(2)), 1);  // a new root, the same PoS state
    roots.push_back(f.Checkpoint());
  }
  ValidatorsCache cache(&f.space().history());
  for (const Hash32& r : roots) ASSERT_TRUE(cache.Get(r).ok());
  EXPECT_EQ(cache.misses(), ValidatorsCache::kDefaultCapacity + 1);
  // The newest kDefaultCapacity are cached; the first was evicted.
  ASSERT_TRUE(cache.Get(roots.back()).ok());
  ASSERT_TRUE(cache.Get(roots[1]).ok());
  EXPECT_EQ(cache.hits(), 2u);
  ASSERT_TRUE(cache.Get(roots[0]).ok());
  EXPECT_EQ(cache.misses(), ValidatorsCache::kDefaultCapacity + 2);
  // Re-reading roots[0] evicted the least recently used root, roots[2]
  // (roots[1] was just used).
  ASSERT_TRUE(cache.Get(roots[1]).ok());
  EXPECT_EQ(cache.hits(), 3u);
  ASSERT_TRUE(cache.Get(roots[2]).ok());
  EXPECT_EQ(cache.misses(), ValidatorsCache::kDefaultCapacity + 3);
}

TEST(PosTest, CacheIsSafeFromManyThreads) {
  PosFixture f;
  ASSERT_TRUE(f.Genesis({{Key(1), 100}, {Key(2), 200}}).ok());
  std::vector<Hash32> roots;
  for (int i = 0; i < 8; ++i) {
    f.Mint(AddressOf(Key(3)), 1);
    roots.push_back(f.Checkpoint());
  }
  ValidatorsCache cache(&f.space().history());
  constexpr int kThreads = 4;
  constexpr int kCallsPerThread = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCallsPerThread; ++i) {
        auto v = cache.Get(roots[(i + t) % roots.size()]);
        if (!v.ok() || (*v)->bonds.size() != 2) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(cache.hits() + cache.misses(),
            static_cast<size_t>(kThreads * kCallsPerThread));
  EXPECT_GE(cache.misses(), roots.size());
}

// --- determinism ---

// The same operations give the same state root.
Hash32 Scenario() {
  PosFixture f;
  EXPECT_TRUE(f.Genesis({{Key(1), 100}, {Key(2), 300}}).ok());
  f.Mint(AddressOf(Key(3)), 1'000);
  EXPECT_EQ(f.Bond(Key(3), 250), "(true, Nil)");
  EXPECT_EQ(f.Withdraw(Key(1), 4), "(true, Nil)");
  f.Mint(PosVaultAddress(), 777);
  EXPECT_TRUE(f.CloseBlock(10).ok());
  EXPECT_TRUE(f.Slash(Key(2)).ok());
  EXPECT_TRUE(f.CloseBlock(30).ok());
  return f.Checkpoint();
}

TEST(PosTest, BondAndWithdrawDeploysReplayToTheSameRoot) {
  const std::vector<std::string> calls = {
      "pos!(\"bond\", *deployerId, 250, *ret)",
      "pos!(\"getRewards\", *ret)",
      "pos!(\"withdraw\", *deployerId, *ret)",
  };
  PosFixture play;
  PosFixture replay;
  for (PosFixture* f : {&play, &replay}) {
    ASSERT_TRUE(f->Genesis({{Key(1), 100}}).ok());
    f->Mint(AddressOf(Key(3)), 1'000);
    f->Mint(PosVaultAddress(), 77);
  }
  ASSERT_EQ(play.Checkpoint(), replay.Checkpoint());
  for (const std::string& call : calls) {
    PosFixture::CallResult p = play.Call(call, Key(3), 4);
    ASSERT_TRUE(p.error.ok()) << call << p.error;
    ASSERT_FALSE(p.events.empty());
    PosFixture::CallResult r = replay.Call(call, Key(3), 4, &p.events);
    ASSERT_TRUE(r.error.ok()) << call << r.error;
    EXPECT_EQ(Printed(r.reply), Printed(p.reply)) << call;
    EXPECT_EQ(play.Checkpoint(), replay.Checkpoint()) << call;
  }
}

TEST(PosTest, SameOperationsGiveTheSameRoot) {
  Hash32 a = Scenario();
  Hash32 b = Scenario();
  EXPECT_EQ(a, b);
  EXPECT_NE(a, rspace::kEmptyRoot);
}

}  // namespace
}  // namespace rnode::casper::contracts

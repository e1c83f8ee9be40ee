// Tests for block creation and the validation pipeline: a created block is
// valid on another node, and each invalid-block kind is reported with its
// exact reason; a block with a missing dependency is a missing-dependency
// verdict, then valid once the dependency arrives.
#include <algorithm>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "casper/block/block_codec.h"
#include "casper/validation/validator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/casper/test_node.h"

namespace rnode::casper {
namespace {

using ::testing::HasSubstr;
using testing::kGenesisTime;
using testing::MakeTestKey;
using testing::TestNode;
using validation::InvalidReason;
using validation::Verdict;

constexpr int64_t kT = kGenesisTime + 1000;

void Reseal(block::Block& b, uint8_t key) {
  ASSERT_TRUE(block::SignBlock(b, MakeTestKey(key).sk).ok());
}

TEST(BlockCreationTest, ACreatedBlockIsValidOnAnotherNode) {
  TestNode a(1, 3), b(2, 3);
  EXPECT_EQ(a.genesis().hash, b.genesis().hash);
  // Nothing to include: no block unless asked.
  EXPECT_FALSE(a.Propose(kT).has_value());
  ASSERT_TRUE(a.pool().Add(a.Sign("@0!(1)", kT), 0, kT).ok());
  auto blk = a.Propose(kT);
  ASSERT_TRUE(blk.has_value());
  EXPECT_EQ(blk->number(), 1);
  EXPECT_EQ(blk->seq_num, 1);
  EXPECT_EQ(blk->body.deploys.size(), 1u);
  EXPECT_EQ(blk->justifications.size(), 3u);
  Verdict v = b.Receive(*blk, kT);
  ASSERT_TRUE(v.valid()) << validation::InvalidReasonName(v.reason) << ": "
                         << v.detail << v.error;
  EXPECT_EQ(b.space().root(), blk->body.state.post_state);
  // The creator validates its own block the same way.
  EXPECT_TRUE(a.Receive(*blk, kT).valid());
  // The deploy is not proposed twice.
  EXPECT_FALSE(a.Propose(kT + 1).has_value());
  // An empty block when asked for one.
  auto empty = a.Propose(kT + 2, /*allow_empty=*/true);
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->seq_num, 2);
  EXPECT_TRUE(b.Receive(*empty, kT + 2).valid());
}

using Why = proposer::BlockCreator::LeftOut::Why;

// The signatures of the deploys `node`'s creator left out, all for `why`.
std::vector<Bytes> LeftOutSigs(TestNode& node, Why why) {
  std::vector<Bytes> out;
  for (const auto& l : node.creator().TakeLeftOut()) {
    EXPECT_EQ(l.why, why);
    out.push_back(l.sig);
  }
  return out;
}

// A deploy whose deployer cannot pay phloLimit x phloPrice stays out of the
// block and leaves the pool, reported by TakeUnpaid; the block made without
// it is valid elsewhere. (Before, it went in as a failed deploy at cost 0:
// an unfunded key could fill blocks for nothing.)
TEST(BlockCreationTest, ADeployItsDeployerCannotPayIsLeftOut) {
  TestNode a(1, 3), b(2, 3);  // key 1 funded; keys 7 and 8 hold nothing
  const SignedDeploy paid = a.Sign("@0!(1)", kT);
  const SignedDeploy unfunded = a.Sign("@0!(2)", kT + 1, /*signer=*/7);
  const SignedDeploy other = a.Sign("@0!(3)", kT + 2, /*signer=*/8);
  for (const SignedDeploy& d : {paid, unfunded, other}) {
    ASSERT_TRUE(a.pool().Add(d, 0, kT).ok());
  }
  auto blk = a.Propose(kT + 3);
  ASSERT_TRUE(blk.has_value());
  ASSERT_EQ(blk->body.deploys.size(), 1u);
  EXPECT_EQ(blk->body.deploys[0].sig, paid.sig());
  EXPECT_TRUE(blk->body.deploys[0].system_deploy_error.empty());
  EXPECT_FALSE(a.pool().Contains(unfunded.sig()));
  EXPECT_FALSE(a.pool().Contains(other.sig()));
  std::vector<Bytes> left = LeftOutSigs(a, Why::kUnpaid);
  std::sort(left.begin(), left.end());
  std::vector<Bytes> expected = {unfunded.sig(), other.sig()};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(left, expected);
  EXPECT_TRUE(a.creator().TakeLeftOut().empty());  // taken once
  const Verdict v = b.Receive(*blk, kT + 3);
  EXPECT_TRUE(v.valid()) << validation::InvalidReasonName(v.reason) << ": "
                         << v.detail << v.error;
  // Only an unpaid deploy new: no block at all.
  ASSERT_TRUE(a.Receive(*blk, kT + 3).valid());
  const SignedDeploy later = a.Sign("@0!(4)", kT + 4, 7);
  ASSERT_TRUE(a.pool().Add(later, 0, kT).ok());
  EXPECT_FALSE(a.Propose(kT + 5).has_value());
  EXPECT_EQ(LeftOutSigs(a, Why::kUnpaid), std::vector<Bytes>{later.sig()});
  EXPECT_FALSE(a.pool().Contains(later.sig()));
}

// A block stops short of max_block_bytes: the deploys past it wait in the
// pool for the next block; a deploy over the limit alone leaves the pool.
TEST(BlockCreationTest, ABlockStaysWithinMaxBlockBytes) {
  TestNode a(1, 3), b(2, 3);
  constexpr size_t kLimit = 48 << 10;
  proposer::CreatorOptions small;
  small.max_block_bytes = kLimit;
  a.SetCreatorOptions(small);
  // Six deploys of about 10 KiB each: about three fit.
  std::vector<SignedDeploy> waiting;
  for (int i = 0; i < 6; ++i) {
    const std::string term =
        absl::StrCat("@", i, "!(\"", std::string(10 << 10, 'a' + i), "\")");
    waiting.push_back(a.Sign(term, kT + i));
    ASSERT_TRUE(a.pool().Add(waiting.back(), 0, kT).ok());
  }
  size_t included = 0;
  for (int round = 0; round < 4 && included < waiting.size(); ++round) {
    auto blk = a.Propose(kT + 10 + round);
    ASSERT_TRUE(blk.has_value()) << "round " << round;
    EXPECT_LE(block::EncodedBlockSize(*blk), kLimit);
    EXPECT_EQ(block::EncodeBlock(*blk).size(), block::EncodedBlockSize(*blk));
    EXPECT_GE(blk->body.deploys.size(), 1u);
    EXPECT_LT(blk->body.deploys.size(), waiting.size());
    included += blk->body.deploys.size();
    ASSERT_TRUE(a.Receive(*blk, kT + 10 + round).valid());
    ASSERT_TRUE(b.Receive(*blk, kT + 10 + round).valid());
  }
  EXPECT_EQ(included, waiting.size());
  EXPECT_TRUE(a.creator().TakeLeftOut().empty());
  // One deploy whose block alone is over the limit.
  const SignedDeploy huge =
      a.Sign(absl::StrCat("@0!(\"", std::string(kLimit, 'z'), "\")"), kT + 20);
  ASSERT_TRUE(a.pool().Add(huge, 0, kT).ok());
  EXPECT_FALSE(a.Propose(kT + 21).has_value());
  EXPECT_EQ(LeftOutSigs(a, Why::kTooLarge), std::vector<Bytes>{huge.sig()});
  EXPECT_FALSE(a.pool().Contains(huge.sig()));
}

// A block made by node a (validator 1), altered, checked by node b.
class InvalidBlockTest : public ::testing::Test {
 protected:
  InvalidBlockTest() : a(1, 3), b(2, 3) {
    deploy = a.Sign("@0!(7)", kT);
    EXPECT_TRUE(a.pool().Add(deploy, 0, kT).ok());
    good = *a.Propose(kT);
  }

  // Alters a copy of the good block, reseals it by `key`, validates on b.
  Verdict Check(const std::function<void(block::Block&)>& change,
                uint8_t key = 1, bool reseal = true) {
    block::Block x = good;
    change(x);
    if (reseal) Reseal(x, key);
    return b.Receive(x, kT);
  }

  void ExpectInvalid(const Verdict& v, InvalidReason reason,
                     const std::string& detail) {
    ASSERT_EQ(v.kind, Verdict::Kind::kInvalid)
        << "expected " << validation::InvalidReasonName(reason) << " "
        << v.error;
    EXPECT_EQ(validation::InvalidReasonName(v.reason),
              validation::InvalidReasonName(reason))
        << v.detail;
    EXPECT_THAT(v.detail, HasSubstr(detail));
  }

  TestNode a, b;
  SignedDeploy deploy = a.Sign("Nil", 0);
  block::Block good;
};

TEST_F(InvalidBlockTest, TheUnalteredBlockIsValid) {
  EXPECT_TRUE(b.Receive(good, kT).valid());
}

TEST_F(InvalidBlockTest, InvalidBlockHash) {
  ExpectInvalid(Check([](block::Block& x) { x.seq_num = 9; }, 1, false),
                InvalidReason::kInvalidBlockHash, "is not the block's");
}

TEST_F(InvalidBlockTest, InvalidSignature) {
  ExpectInvalid(
      Check(
          [](block::Block& x) {
            block::Block other = x;
            ASSERT_TRUE(block::SignBlock(other, MakeTestKey(2).sk).ok());
            x.sig = other.sig;
          },
          1, false),
      InvalidReason::kInvalidSignature, "not the sender's");
}

TEST_F(InvalidBlockTest, InvalidFormatVersion) {
  ExpectInvalid(Check([](block::Block& x) { x.header.version = 2; }),
                InvalidReason::kInvalidFormat, "version 2, expected 1");
}

TEST_F(InvalidBlockTest, InvalidShardId) {
  ExpectInvalid(Check([](block::Block& x) { x.shard_id = "other"; }),
                InvalidReason::kInvalidShardId, "shard 'other'");
}

TEST_F(InvalidBlockTest, InvalidParents) {
  ExpectInvalid(Check([](block::Block& x) {
                  x.header.parents.push_back(x.header.parents[0]);
                }),
                InvalidReason::kInvalidParents, "repeated");
}

TEST_F(InvalidBlockTest, InvalidSender) {
  ExpectInvalid(Check([](block::Block&) {}, /*key=*/9),
                InvalidReason::kInvalidSender, "is not bonded");
}

TEST_F(InvalidBlockTest, InvalidFollows) {
  ExpectInvalid(Check([](block::Block& x) { x.justifications.pop_back(); }),
                InvalidReason::kInvalidFollows,
                "justifies 2 validators; the main parent bonds 3");
}

TEST_F(InvalidBlockTest, InvalidBlockNumber) {
  ExpectInvalid(Check([](block::Block& x) { x.body.state.block_number = 2; }),
                InvalidReason::kInvalidBlockNumber, "number 2, expected 1");
}

TEST_F(InvalidBlockTest, InvalidSequenceNumber) {
  ExpectInvalid(Check([](block::Block& x) { x.seq_num = 3; }),
                InvalidReason::kInvalidSequenceNumber,
                "sequence number 3, expected 1");
}

// A block stored as invalid with the largest sequence number, then a block
// of the same sender after it: the expected number does not overflow.
TEST_F(InvalidBlockTest, SequenceNumberAfterTheLargest) {
  TestNode c(3, 3);
  auto first = c.Propose(kT, /*allow_empty=*/true);
  ASSERT_TRUE(first.has_value());
  block::Block largest = *first;
  largest.seq_num = INT32_MAX;
  Reseal(largest, 3);
  ASSERT_EQ(b.Receive(largest, kT).reason,
            InvalidReason::kInvalidSequenceNumber);
  block::Block next = *first;
  for (auto& j : next.justifications) {
    if (j.validator == MakeTestKey(3).pk) j.latest_block = largest.hash;
  }
  Reseal(next, 3);
  ExpectInvalid(b.Receive(next, kT), InvalidReason::kInvalidSequenceNumber,
                "sequence number 1, expected 2147483648");
}

TEST_F(InvalidBlockTest, InvalidTimestamp) {
  ExpectInvalid(Check([](block::Block& x) { x.header.timestamp = 5; }),
                InvalidReason::kInvalidTimestamp, "before its parent's");
  ExpectInvalid(
      Check([](block::Block& x) { x.header.timestamp = kT + 60'000; }),
      InvalidReason::kInvalidTimestamp, "ahead of now");
}

TEST_F(InvalidBlockTest, ContainsFutureDeploy) {
  ExpectInvalid(Check([](block::Block& x) {
                  x.body.deploys[0].data.valid_after_block_number = 1;
                }),
                InvalidReason::kContainsFutureDeploy, "valid after block 1");
}

TEST_F(InvalidBlockTest, ContainsExpiredDeploy) {
  ExpectInvalid(Check([](block::Block& x) {
                  x.body.deploys[0].data.valid_after_block_number = -60;
                }),
                InvalidReason::kContainsExpiredDeploy, "past its lifespan");
}

TEST_F(InvalidBlockTest, ExpiredDeployWithTheSmallestValidAfterNumber) {
  ExpectInvalid(Check([](block::Block& x) {
                  x.body.deploys[0].data.valid_after_block_number = INT64_MIN;
                }),
                InvalidReason::kContainsExpiredDeploy, "past its lifespan");
}

TEST_F(InvalidBlockTest, ContainsTimeExpiredDeploy) {
  ExpectInvalid(Check([](block::Block& x) {
                  x.body.deploys[0].data.expiration_timestamp = 5;
                }),
                InvalidReason::kContainsTimeExpiredDeploy, "expired at 5");
}

// Regression (issue 43): a block holding a deploy that pays nothing (or
// asks for unbounded phlo, or carries a term above the shard's limit) was
// valid, and the deploy ran for free. The rules are checked before the
// signatures (the altered deploys here no longer verify).
TEST_F(InvalidBlockTest, LowDeployCost) {
  ExpectInvalid(
      Check([](block::Block& x) { x.body.deploys[0].data.phlo_price = 0; }),
      InvalidReason::kLowDeployCost, "Phlo price 0 is less than minimum");
}

TEST_F(InvalidBlockTest, DeployAboveThePhloLimit) {
  ExpectInvalid(Check([](block::Block& x) {
                  x.body.deploys[0].data.phlo_limit = INT64_MAX;
                }),
                InvalidReason::kDeployAboveLimits,
                "outside this shard's range");
}

TEST_F(InvalidBlockTest, DeployAboveTheTermLimit) {
  ExpectInvalid(Check([](block::Block& x) {
                  x.body.deploys[0].data.term =
                      std::string(kDefaultMaxDeployTermBytes + 1, ' ');
                }),
                InvalidReason::kDeployAboveLimits, "more than this shard's");
}

// A deploy signed as it is that pays nothing makes its block invalid too
// (the signature vouches for the deployer, not for the shard's rules), and
// not slashable: the rules are each node's genesis parameters.
TEST_F(InvalidBlockTest, ASignedDeployThatPaysNothing) {
  DeployData d = deploy.data();
  d.phlo_price = 0;
  d.phlo_limit = INT64_MAX;
  const SignedDeploy free = *SignedDeploy::Sign(d, MakeTestKey(1).sk);
  const Verdict v = Check([&](block::Block& x) {
    x.body.deploys[0].data = free.data();
    x.body.deploys[0].sig = free.sig();
  });
  ExpectInvalid(v, InvalidReason::kLowDeployCost, "minimum price 1");
  EXPECT_FALSE(validation::IsSlashable(v.reason));
}

// A block encoded above the shard's max-block-bytes is invalid, and not
// slashable: the limit is each node's genesis parameter.
TEST_F(InvalidBlockTest, BlockTooLarge) {
  const size_t bytes = block::EncodedBlockSize(good);
  validation::ValidatorOptions limit;
  limit.max_block_bytes = bytes;
  b.SetValidatorOptions(limit);
  EXPECT_TRUE(b.validator().Validate(good, kT).valid());
  limit.max_block_bytes = bytes - 1;
  b.SetValidatorOptions(limit);
  const Verdict v = b.Receive(good, kT);
  ExpectInvalid(
      v, InvalidReason::kBlockTooLarge,
      absl::StrCat("encoded in ", bytes,
                   " bytes, more than the shard's limit of ", bytes - 1));
  EXPECT_FALSE(validation::IsSlashable(v.reason));
}

// A block holding a deploy whose deployer could not pay, played and
// recorded as it is (so replay agrees), is invalid, and slashable: the
// rule is the code's, not a node's setting. (Before, it was valid: an
// unfunded key's deploys filled blocks at cost 0.)
TEST_F(InvalidBlockTest, AnUnpaidDeploy) {
  const SignedDeploy unfunded = a.Sign("@0!(9)", kT, /*signer=*/7);
  const std::vector<SignedDeploy> deploys = {unfunded};
  auto played = a.blocks().Play(
      good.body.state.pre_state, deploys, {},
      BlockEnv{good.number(), good.header.timestamp, good.sender});
  ASSERT_TRUE(played.ok()) << played.status();
  ASSERT_FALSE(played->deploys[0].system_deploy_error.empty());
  const Verdict v = Check([&](block::Block& x) {
    x.body.deploys = played->deploys;
    x.body.system_deploys = played->system_deploys;
    x.body.state.post_state = played->post_state;
  });
  ExpectInvalid(v, InvalidReason::kUnpaidDeploy, "unable to pay its precharge");
  EXPECT_TRUE(validation::IsSlashable(v.reason));
}

TEST_F(InvalidBlockTest, RepeatDeployInTheBlock) {
  ExpectInvalid(Check([](block::Block& x) {
                  x.body.deploys.push_back(x.body.deploys[0]);
                }),
                InvalidReason::kInvalidRepeatDeploy, "appears twice");
}

TEST_F(InvalidBlockTest, RepeatDeployInTheAncestry) {
  ASSERT_TRUE(b.Receive(good, kT).valid());
  ASSERT_TRUE(a.Receive(good, kT).valid());
  // a's next block, with the deploy of its first one put back in.
  auto next = a.Propose(kT + 1, /*allow_empty=*/true);
  ASSERT_TRUE(next.has_value());
  block::Block x = *next;
  x.body.deploys.push_back(good.body.deploys[0]);
  Reseal(x, 1);
  ExpectInvalid(b.Receive(x, kT + 1), InvalidReason::kInvalidRepeatDeploy,
                "already has its effect");
}

TEST_F(InvalidBlockTest, DeployNotSigned) {
  ExpectInvalid(
      Check([](block::Block& x) { x.body.deploys[0].data.term = "@0!(8)"; }),
      InvalidReason::kDeployNotSigned, "does not verify");
}

TEST_F(InvalidBlockTest, UnauthorizedSlash) {
  ExpectInvalid(
      Check([&](block::Block& x) {
        x.body.system_deploys.insert(
            x.body.system_deploys.begin(),
            block::ProcessedSystemDeploy{
                block::SlashDeploy{b.genesis().hash, MakeTestKey(1).pk, 0},
                {},
                ""});
      }),
      InvalidReason::kUnauthorizedSlash, "which is not invalid");
}

TEST_F(InvalidBlockTest, NeglectedInvalidBlock) {
  // Validator 3's block is invalid on b (a bad sequence number); a's block
  // justifies it without slashing 3.
  TestNode c(3, 3);
  auto c_block = c.Propose(kT, /*allow_empty=*/true);
  ASSERT_TRUE(c_block.has_value());
  block::Block bad = *c_block;
  bad.seq_num = 5;
  Reseal(bad, 3);
  ASSERT_EQ(b.Receive(bad, kT).reason, InvalidReason::kInvalidSequenceNumber);
  ASSERT_TRUE(b.dag().Meta(bad.hash).value()->invalid);
  ExpectInvalid(Check([&](block::Block& x) {
                  for (auto& j : x.justifications) {
                    if (j.validator == MakeTestKey(3).pk) {
                      j.latest_block = bad.hash;
                    }
                  }
                }),
                InvalidReason::kNeglectedInvalidBlock,
                "without slashing its sender");
}

TEST_F(InvalidBlockTest, InvalidPreState) {
  ExpectInvalid(Check([](block::Block& x) { x.body.state.pre_state[0] ^= 1; }),
                InvalidReason::kInvalidPreState, "is not the parents'");
}

TEST_F(InvalidBlockTest, InvalidRejectedDeploy) {
  ExpectInvalid(
      Check([](block::Block& x) { x.body.merge_base = x.header.parents[0]; }),
      InvalidReason::kInvalidRejectedDeploy, "merge base");
  ExpectInvalid(Check([](block::Block& x) {
                  x.body.rejected.push_back({Bytes{0x30, 1}, false, {}});
                }),
                InvalidReason::kInvalidRejectedDeploy,
                "records 1 rejected deploys; the merge rejects 0");
  EXPECT_FALSE(validation::IsSlashable(InvalidReason::kInvalidRejectedDeploy));
}

// A block of two parents holding a deploy must name a stored merge base:
// the repeat check walks the merge's record from it. Without one (or with
// a hash nobody stored) the block is invalid for that, before any deploy
// is looked up.
TEST(MergeBaseTest, ABlockOfTwoParentsWithDeploysNamesAStoredMergeBase) {
  // Validators 1 and 2 propose on genesis; validator 3 merges both.
  TestNode a(1, 3, 1'000'000'000, 1, /*max_parents=*/3);
  TestNode c(2, 3, 1'000'000'000, 1, /*max_parents=*/3);
  TestNode m(3, 3, 1'000'000'000, 1, /*max_parents=*/3);
  ASSERT_TRUE(a.pool().Add(a.Sign("@1!(1)", kT), 0, kT).ok());
  ASSERT_TRUE(c.pool().Add(c.Sign("@2!(2)", kT), 0, kT).ok());
  const std::optional<block::Block> from_a = a.Propose(kT);
  const std::optional<block::Block> from_c = c.Propose(kT);
  ASSERT_TRUE(from_a.has_value() && from_c.has_value());
  ASSERT_TRUE(c.Receive(*from_a, kT).valid());
  ASSERT_TRUE(c.Receive(*from_c, kT).valid());
  ASSERT_TRUE(m.Receive(*from_a, kT).valid());
  ASSERT_TRUE(m.Receive(*from_c, kT).valid());
  ASSERT_TRUE(m.pool().Add(m.Sign("@3!(3)", kT + 1), 0, kT).ok());
  const std::optional<block::Block> merged = m.Propose(kT + 1);
  ASSERT_TRUE(merged.has_value());
  ASSERT_EQ(merged->header.parents.size(), 2u);
  ASSERT_EQ(merged->body.deploys.size(), 1u);
  ASSERT_TRUE(merged->body.merge_base.has_value());

  for (const std::optional<Hash32>& base :
       {std::optional<Hash32>(), std::optional<Hash32>(Hash32{77})}) {
    block::Block x = *merged;
    x.body.merge_base = base;
    Reseal(x, 3);
    const Verdict v = c.Receive(x, kT + 1);
    ASSERT_EQ(v.kind, Verdict::Kind::kInvalid) << v.error;
    EXPECT_EQ(v.reason, InvalidReason::kInvalidRejectedDeploy);
    EXPECT_THAT(v.detail, HasSubstr("names no stored merge base"));
  }
  EXPECT_TRUE(c.Receive(*merged, kT + 1).valid());
}

// `rounds` rounds in which each of `makers` in turn makes a block (empty
// ones allowed) on its own chain and stores it; the blocks in the order
// made (fewer, with a failure, when one is not made or not valid).
std::vector<block::Block> OwnChains(std::initializer_list<TestNode*> makers,
                                    int rounds) {
  std::vector<block::Block> made;
  for (int i = 0; i < rounds; ++i) {
    for (TestNode* maker : makers) {
      const std::optional<block::Block> next = maker->Propose(kT + i, true);
      if (!next.has_value() || !maker->Receive(*next, kT + i).valid()) {
        ADD_FAILURE() << "round " << i << ": no valid block made";
        return made;
      }
      made.push_back(*next);
    }
  }
  return made;
}

// The parents of a block meet within max_merge_depth numbers of it
// (docs/validation.md "Parents"): a creator leaves out a tip whose main
// chain meets the main parent's further down, and a block that names one
// anyway is InvalidParents. Validators 1 and 3 each make six blocks on
// their own chain from genesis, unheard by the other; at depth 3 the
// seventh block of validator 1 cannot merge validator 3's (the chains meet
// at genesis, 7 numbers down, though both tips are numbered 6), at depth
// 100 it can. Before the rule the merge was valid at any depth.
TEST(MergeDepthTest, ParentsWhoseChainsMeetTooFarDownAreLeftOutAndRefused) {
  TestNode a(1, 3, 1'000'000'000, 1, /*max_parents=*/3);
  TestNode b(2, 3, 1'000'000'000, 1, /*max_parents=*/3);
  TestNode stale(3, 3, 1'000'000'000, 1, /*max_parents=*/3);
  const std::vector<block::Block> made = OwnChains({&a, &stale}, 6);
  ASSERT_EQ(made.size(), 12u);
  const Hash32 old = made.back().hash;  // the stale chain's tip, number 6
  for (const block::Block& x : made) {
    if (x.sender != a.key().pk) {
      ASSERT_TRUE(a.Receive(x, kT + 6).valid());
    }
    ASSERT_TRUE(b.Receive(x, kT + 6).valid());
  }
  constexpr int64_t kDepth = 3;

  proposer::CreatorOptions shallow;
  shallow.max_parents = 3;
  shallow.max_merge_depth = kDepth;
  a.SetCreatorOptions(shallow);
  const std::optional<block::Block> left_out = a.Propose(kT + 7, true);
  ASSERT_TRUE(left_out.has_value());
  EXPECT_EQ(left_out->number(), 7);
  EXPECT_EQ(left_out->header.parents.size(), 1u);

  proposer::CreatorOptions deep = shallow;
  deep.max_merge_depth = 100;
  a.SetCreatorOptions(deep);
  const std::optional<block::Block> merging = a.Propose(kT + 7, true);
  ASSERT_TRUE(merging.has_value());
  ASSERT_EQ(merging->header.parents.size(), 2u);
  EXPECT_THAT(merging->header.parents, ::testing::Contains(old));

  validation::ValidatorOptions strict;
  strict.max_merge_depth = kDepth;
  b.SetValidatorOptions(strict);
  const Verdict v = b.Receive(*merging, kT + 7);
  ASSERT_EQ(v.kind, Verdict::Kind::kInvalid) << v.error;
  EXPECT_EQ(v.reason, InvalidReason::kInvalidParents);
  EXPECT_THAT(v.detail, HasSubstr("meet below block number 4"));
  EXPECT_TRUE(b.Receive(*left_out, kT + 7).valid());
  // At a depth that reaches genesis the merge is valid.
  TestNode c(2, 3, 1'000'000'000, 1, /*max_parents=*/3);
  validation::ValidatorOptions loose;
  loose.max_merge_depth = 7;
  c.SetValidatorOptions(loose);
  for (const block::Block& x : made) ASSERT_TRUE(c.Receive(x, kT + 7).valid());
  const Verdict at_seven = c.Receive(*merging, kT + 7);
  EXPECT_TRUE(at_seven.valid()) << at_seven.detail << at_seven.error;
}

// A node with a floor (retention deleted what lies below it) cannot check
// a block that reaches below: it is stale, dropped, never judged and never
// fetched for. Before this verdict such a block was validated against the
// deleted blocks and states (an internal error once the states were
// collected, and the block asked for again every 10 s).
TEST(FloorTest, BlocksReachingBelowTheFloorAreStale) {
  constexpr dag::DagStoreOptions kNoWindow{.kept_below_finalized = 0};
  TestNode a(1, 3, 1'000'000'000, 1, /*max_parents=*/3);
  TestNode b(2, 3, 1'000'000'000, 1, /*max_parents=*/3, 1, kNoWindow);
  TestNode other(3, 3, 1'000'000'000, 1, /*max_parents=*/3);
  // Two chains of six blocks that meet only at the genesis, and a block
  // merging them.
  const std::vector<block::Block> made = OwnChains({&a, &other}, 6);
  ASSERT_EQ(made.size(), 12u);
  for (const block::Block& x : made) {
    if (x.sender != a.key().pk) {
      ASSERT_TRUE(a.Receive(x, kT + 6).valid());
    }
  }
  proposer::CreatorOptions deep;
  deep.max_parents = 3;
  deep.max_merge_depth = 100;
  a.SetCreatorOptions(deep);
  const std::optional<block::Block> merging = a.Propose(kT + 7, true);
  ASSERT_TRUE(merging.has_value());
  ASSERT_EQ(merging->header.parents.size(), 2u);
  // A node that keeps everything finds it valid.
  TestNode keeps_all(2, 3, 1'000'000'000, 1, /*max_parents=*/3);
  for (const block::Block& x : made) {
    ASSERT_TRUE(keeps_all.Receive(x, kT + 7).valid());
  }
  EXPECT_TRUE(keeps_all.Receive(*merging, kT + 7).valid());

  // b holds both chains, then deletes what lies below #4.
  for (const block::Block& x : made) ASSERT_TRUE(b.Receive(x, kT + 6).valid());
  ASSERT_TRUE(b.dag().SetLastFinalized(made.back().hash).ok());
  auto pruned = b.dag().PruneBelow(4);
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  ASSERT_GT(pruned->blocks_deleted, 0u);

  // Above the floor, but the parents' chains meet below it.
  const Verdict merged = b.Receive(*merging, kT + 7);
  ASSERT_EQ(merged.kind, Verdict::Kind::kStale)
      << merged.detail << merged.error;
  EXPECT_THAT(merged.detail, HasSubstr("do not meet at or above this node's "
                                       "floor 4"));

  // A late first block, numbered at or below the floor: stale before its
  // dependencies are looked at.
  TestNode late(2, 3, 1'000'000'000, 1, /*max_parents=*/3);
  const std::optional<block::Block> first = late.Propose(kT + 1, true);
  ASSERT_TRUE(first.has_value());
  const Verdict old = b.Receive(*first, kT + 7);
  ASSERT_EQ(old.kind, Verdict::Kind::kStale) << old.detail << old.error;
  EXPECT_THAT(old.detail,
              HasSubstr("its number 1 is at or below this node's floor 4"));
  EXPECT_TRUE(old.missing.empty());

  // Above the floor with a parent kept below it (the genesis is).
  block::Block low_parent = *merging;
  low_parent.header.parents[1] = made.front().header.parents[0];
  Reseal(low_parent, 1);
  const Verdict low = b.Receive(low_parent, kT + 7);
  ASSERT_EQ(low.kind, Verdict::Kind::kStale) << low.detail << low.error;
  EXPECT_THAT(low.detail, HasSubstr("is numbered 0, below this node's floor"));
}

TEST_F(InvalidBlockTest, InvalidTransaction) {
  ExpectInvalid(Check([](block::Block& x) { ++x.body.deploys[0].cost; }),
                InvalidReason::kInvalidTransaction, "recorded cost");
  ExpectInvalid(Check([](block::Block& x) { x.body.state.post_state[0] ^= 1; }),
                InvalidReason::kInvalidTransaction, "post-state");
}

TEST_F(InvalidBlockTest, InvalidBondsCache) {
  ExpectInvalid(Check([](block::Block& x) { ++x.body.state.bonds[0].stake; }),
                InvalidReason::kInvalidBondsCache, "post-state");
}

TEST_F(InvalidBlockTest, Equivocation) {
  ASSERT_TRUE(b.Receive(good, kT).valid());
  // Validator 1 signs another first block (a different deploy) on a node
  // that has not seen its first.
  TestNode a2(1, 3);
  ASSERT_TRUE(a2.pool().Add(a2.Sign("@0!(8)", kT), 0, kT).ok());
  auto twin = a2.Propose(kT);
  ASSERT_TRUE(twin.has_value());
  ASSERT_EQ(twin->seq_num, good.seq_num);
  ExpectInvalid(b.Receive(*twin, kT), InvalidReason::kEquivocation,
                "already made block");
  EXPECT_TRUE(b.dag().Meta(twin->hash).value()->invalid);
}

TEST_F(InvalidBlockTest, JustificationRegression) {
  // a's first block justifies b's first block; a's second then justifies
  // genesis for b again.
  auto b1 = b.Propose(kT, /*allow_empty=*/true);
  ASSERT_TRUE(b1.has_value());
  ASSERT_TRUE(a.Receive(*b1, kT).valid());
  ASSERT_TRUE(b.Receive(*b1, kT).valid());
  TestNode a_fresh(1, 3);  // Without a's earlier (unsent) block.
  ASSERT_TRUE(a_fresh.Receive(*b1, kT).valid());
  auto a1 = a_fresh.Propose(kT + 1, true);
  ASSERT_TRUE(a1.has_value());
  ASSERT_TRUE(b.Receive(*a1, kT + 1).valid());
  ASSERT_TRUE(a_fresh.Receive(*a1, kT + 1).valid());
  auto a2 = a_fresh.Propose(kT + 2, true);
  ASSERT_TRUE(a2.has_value());
  block::Block x = *a2;
  for (auto& j : x.justifications) {
    if (j.validator == MakeTestKey(2).pk) j.latest_block = b.genesis().hash;
  }
  Reseal(x, 1);
  ExpectInvalid(b.Receive(x, kT + 2), InvalidReason::kJustificationRegression,
                "older than its previous block's");
}

TEST_F(InvalidBlockTest, MissingDependencyIsBufferedNotJudged) {
  // a makes two blocks; b first sees only the second.
  ASSERT_TRUE(a.Receive(good, kT).valid());
  auto second = a.Propose(kT + 1, /*allow_empty=*/true);
  ASSERT_TRUE(second.has_value());
  Verdict v = b.Receive(*second, kT + 1);
  ASSERT_EQ(v.kind, Verdict::Kind::kMissingDependency);
  EXPECT_THAT(v.missing, ::testing::Contains(good.hash));
  EXPECT_FALSE(b.dag().Contains(second->hash));
  ASSERT_TRUE(b.Receive(good, kT + 1).valid());
  EXPECT_TRUE(b.Receive(*second, kT + 1).valid());
}

TEST(InvalidReasonTest, SlashableKinds) {
  EXPECT_TRUE(validation::IsSlashable(InvalidReason::kInvalidTransaction));
  EXPECT_TRUE(validation::IsSlashable(InvalidReason::kEquivocation));
  EXPECT_FALSE(validation::IsSlashable(InvalidReason::kInvalidSignature));
  EXPECT_FALSE(validation::IsSlashable(InvalidReason::kInvalidTimestamp));
  EXPECT_FALSE(validation::IsSlashable(InvalidReason::kLowDeployCost));
  EXPECT_FALSE(validation::IsSlashable(InvalidReason::kDeployAboveLimits));
}

}  // namespace
}  // namespace rnode::casper

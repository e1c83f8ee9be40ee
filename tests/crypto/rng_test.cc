// Tests for the splittable name generator: determinism and independence.
#include "crypto/rng.h"

#include <set>

#include "gtest/gtest.h"

namespace rnode::crypto {
namespace {

TEST(SplittableRngTest, DifferentSeedsGiveDifferentDraws) {
  EXPECT_NE(SplittableRng::FromSeed(AsBytes("deploy-sih")).Next(),
            SplittableRng::FromSeed(AsBytes("deploy-sig")).Next());
}

TEST(SplittableRngTest, MatchesDocumentedDerivation) {
  // Values computed outside this code base (Python's hashlib.blake2b) from
  // the derivation in docs/formats/rng.md. Changing the derivation changes
  // every unforgeable name, so it must be deliberate.
  SplittableRng rng = SplittableRng::FromSeed(AsBytes("seed"));
  EXPECT_EQ(HexEncode(rng.state()),
            "52abd213445e016299daacaa094b0745c9d8bdccf1b67296f1e5504d62999f8f");
  SplittableRng child = rng.Split(5);
  EXPECT_EQ(HexEncode(child.state()),
            "11983e632f8ec647ce862658e98ca864acdc930afb9d6ae4a8bfee175d49e36c");
  EXPECT_EQ(HexEncode(child.Next()),
            "84a990aed2d8dbf4fd96b7eca9f4421d528f354abbfa68de8a7aa0c4739e91ee");
  EXPECT_EQ(HexEncode(rng.Next()),
            "5ad34e949027f2286e08198af961a491a22df519ea3e6ba0bcb3c9039c3a515d");
  EXPECT_EQ(HexEncode(rng.Next()),
            "633130a0a21f2aed7d7bfae8875c9c4a18c360d81b0279fb4abf8a672b74f960");
  EXPECT_EQ(rng.counter(), 2u);
}

TEST(SplittableRngTest, SplitIsIndexed) {
  SplittableRng root = SplittableRng::FromSeed(AsBytes("seed"));
  EXPECT_NE(root.Split(3).state(), root.Split(4).state());
}

TEST(SplittableRngTest, SplitAfterDrawDiffers) {
  SplittableRng a = SplittableRng::FromSeed(AsBytes("seed"));
  SplittableRng before = a.Split(0);
  a.Next();
  EXPECT_NE(before.state(), a.Split(0).state());
}

TEST(SplittableRngTest, NoCollisionsAcrossATreeOfDraws) {
  std::set<Hash32> seen;
  SplittableRng root = SplittableRng::FromSeed(AsBytes("tree"));
  for (uint64_t i = 0; i < 20; ++i) {
    SplittableRng child = root.Split(i);
    for (uint64_t j = 0; j < 20; ++j) {
      SplittableRng grandchild = child.Split(j);
      for (int k = 0; k < 5; ++k) EXPECT_TRUE(seen.insert(grandchild.Next()).second);
      EXPECT_TRUE(seen.insert(grandchild.state()).second);
    }
    EXPECT_TRUE(seen.insert(child.Next()).second);
  }
  EXPECT_EQ(seen.size(), 20u * 20u * 6u + 20u);
}

TEST(SplittableRngTest, MergeDependsOnOrderAndState) {
  SplittableRng a = SplittableRng::FromSeed(AsBytes("a"));
  SplittableRng b = SplittableRng::FromSeed(AsBytes("b"));
  SplittableRng ab[] = {a, b};
  SplittableRng ba[] = {b, a};
  // Computed by this code (not by an outside implementation): a change in
  // the merge changes every name created after a join.
  EXPECT_EQ(HexEncode(SplittableRng::Merge(ab).state()),
            "2021beaf4b8837fb8873760127c062d2abd2713f305ea13835e65c5c2a507846");
  EXPECT_NE(SplittableRng::Merge(ab).state(), SplittableRng::Merge(ba).state());
  SplittableRng a2 = a;
  a2.Next();
  SplittableRng a2b[] = {a2, b};
  EXPECT_NE(SplittableRng::Merge(ab).state(), SplittableRng::Merge(a2b).state());
}

}  // namespace
}  // namespace rnode::crypto

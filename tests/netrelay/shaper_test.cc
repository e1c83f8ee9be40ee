// The links file's rules and what a link does to packets (shaper.h).
#include "integration/netrelay/shaper.h"

#include <gtest/gtest.h>

#include <random>

namespace rnode::netrelay {
namespace {

TEST(ParseLinksTest, ReadsEveryFieldAndIgnoresCommentsAndBlankLines) {
  absl::StatusOr<std::vector<LinkRule>> rules = ParseLinks(
      "# the whole shard\n"
      "* * delay=50 jitter=2.5   # ms\n"
      "\n"
      "a b loss=1 rate=1000 cut\n"
      "a\tb up\n");
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_EQ(rules->size(), 3u);
  EXPECT_EQ((*rules)[0].from, "*");
  EXPECT_EQ((*rules)[0].delay_us, 50'000);
  EXPECT_EQ((*rules)[0].jitter_us, 2'500);
  EXPECT_FALSE((*rules)[0].loss.has_value());
  EXPECT_DOUBLE_EQ(*(*rules)[1].loss, 0.01);
  EXPECT_EQ((*rules)[1].rate_bps, 1'000'000);
  EXPECT_EQ((*rules)[1].cut, true);
  EXPECT_EQ((*rules)[2].cut, false);
}

TEST(ParseLinksTest, AMalformedLineIsRefusedByNumber) {
  const struct {
    const char* text;
    const char* says;
  } cases[] = {
      {"a\n", "line 1: a rule starts with <from> <to>"},
      {"* *\n* * delay=-1\n", "line 2: delay must be milliseconds"},
      {"* * delay=10001\n", "line 1: delay must be milliseconds in [0, 10000]"},
      {"* * jitter=x\n", "jitter must be milliseconds"},
      {"* * loss=101\n", "loss must be a percentage"},
      {"* * loss=nan\n", "loss must be a percentage"},
      {"* * rate=7\n", "rate must be kbit/s"},
      {"* * rate=1.5\n", "rate must be kbit/s"},
      {"* * slow\n", "unknown word 'slow'"},
      {"* * bandwidth=10\n", "unknown field 'bandwidth'"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<std::vector<LinkRule>> rules = ParseLinks(c.text);
    ASSERT_FALSE(rules.ok()) << c.text;
    EXPECT_EQ(rules.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(rules.status().message().find(c.says), std::string::npos)
        << rules.status().message();
  }
}

TEST(ResolveTest, LaterRulesRefineEarlierOnesForTheLinksTheyMatch) {
  absl::StatusOr<std::vector<LinkRule>> rules = ParseLinks(
      "* * delay=50 jitter=5\n"
      "a * loss=1\n"
      "a b cut\n"
      "* b delay=100\n");
  ASSERT_TRUE(rules.ok());
  EXPECT_EQ(Resolve(*rules, "a", "b"),
            (LinkParams{100'000, 5'000, 0.01, 0, true}));
  EXPECT_EQ(Resolve(*rules, "a", "c"),
            (LinkParams{50'000, 5'000, 0.01, 0, false}));
  EXPECT_EQ(Resolve(*rules, "b", "a"),
            (LinkParams{50'000, 5'000, 0, 0, false}));
  EXPECT_EQ(Resolve(*rules, "c", "b"),
            (LinkParams{100'000, 5'000, 0, 0, false}));
  EXPECT_EQ(Resolve({}, "a", "b"), LinkParams{});
}

TEST(LinkTest, DelayIsAddedToEveryPacket) {
  std::mt19937_64 rng(1);
  Link link;
  const LinkParams p{.delay_us = 50'000};
  EXPECT_EQ(link.Admit(p, 1'000, 100, rng), 51'000);
  EXPECT_EQ(link.Admit(p, 2'000, 100, rng), 52'000);
  EXPECT_EQ(link.delivered(), 2u);
}

TEST(LinkTest, JitterNeverReordersPackets) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  Link link;
  const LinkParams p{.delay_us = 10'000, .jitter_us = 5'000};
  int64_t last = 0;
  bool varied = false;
  for (int64_t now = 0; now < 100'000; now += 100) {
    const std::optional<int64_t> at = link.Admit(p, now, 100, rng);
    ASSERT_TRUE(at.has_value());
    EXPECT_GE(*at, last);
    EXPECT_GE(*at, now + 5'000);
    EXPECT_LE(*at, std::max(last, now + 15'000));
    varied = varied || *at != now + 10'000;
    last = *at;
  }
  EXPECT_TRUE(varied);
}

TEST(LinkTest, RateSerializesPacketsOneAfterAnother) {
  std::mt19937_64 rng(1);
  Link link;
  // 8 Mbit/s: a 1,000-byte packet takes 1 ms on the wire.
  const LinkParams p{.delay_us = 20'000, .rate_bps = 8'000'000};
  EXPECT_EQ(link.Admit(p, 0, 1'000, rng), 21'000);
  EXPECT_EQ(link.Admit(p, 0, 1'000, rng), 22'000);
  EXPECT_EQ(link.Admit(p, 0, 500, rng), 22'500);
  // After the queue drained, a packet waits only for itself.
  EXPECT_EQ(link.Admit(p, 100'000, 1'000, rng), 121'000);
}

TEST(LinkTest, ARateLimitedLinkDropsWhatItsQueueCannotHold) {
  std::mt19937_64 rng(1);
  Link link;
  const LinkParams p{.rate_bps = 8'000'000};
  const int64_t fits = kLinkQueueBytes / 1'000;
  for (int64_t i = 0; i < fits; ++i) {
    ASSERT_TRUE(link.Admit(p, 0, 1'000, rng).has_value()) << i;
  }
  Link::Fate why = Link::Fate::kDelivered;
  EXPECT_FALSE(link.Admit(p, 0, 1'000, rng, &why).has_value());
  EXPECT_EQ(why, Link::Fate::kQueueFull);
  EXPECT_EQ(link.queue_full(), 1u);
  // Once a millisecond has drained a packet's worth, one more fits.
  EXPECT_TRUE(link.Admit(p, 1'000, 1'000, rng).has_value());
}

TEST(LinkTest, ACutLinkDropsEverything) {
  std::mt19937_64 rng(1);
  Link link;
  Link::Fate why = Link::Fate::kDelivered;
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(link.Admit(LinkParams{.cut = true}, i, 100, rng, &why));
  }
  EXPECT_EQ(why, Link::Fate::kCut);
  EXPECT_EQ(link.cut(), 10u);
  EXPECT_EQ(link.delivered(), 0u);
}

TEST(LinkTest, LossDropsAboutItsShare) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  Link link;
  const LinkParams p{.loss = 0.1};
  for (int i = 0; i < 100'000; ++i) link.Admit(p, i, 100, rng);
  // 10,000 expected; the binomial's standard deviation is ~95.
  EXPECT_NEAR(static_cast<double>(link.lost()), 10'000, 600);
  EXPECT_EQ(link.lost() + link.delivered(), 100'000u);
}

}  // namespace
}  // namespace rnode::netrelay

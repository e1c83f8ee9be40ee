// The load generator's workloads: the terms each deploy carries.
#include "integration/loadgen/workload.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/loadgen/sender.h"

namespace rnode::loadgen {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Workload Of(WorkloadKind kind) {
  return Workload{kind, "t1", {"1111A", "1111B", "1111C"}, 5};
}

TEST(WorkloadTest, NamesParseBackAndUnknownOnesAreRefused) {
  for (WorkloadKind k :
       {WorkloadKind::kNoop, WorkloadKind::kCounter, WorkloadKind::kTransfer,
        WorkloadKind::kRegistry, WorkloadKind::kMix}) {
    EXPECT_EQ(*ParseWorkload(WorkloadName(k)), k);
  }
  EXPECT_EQ(ParseWorkload("payments").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(WorkloadTest, NoopIsThePublicMethodologysTerm) {
  EXPECT_EQ(WorkloadTerm(Of(WorkloadKind::kNoop), 3), DeployTerm(3));
}

TEST(WorkloadTest, TheCounterIsSetOnceThenIncremented) {
  const Workload w = Of(WorkloadKind::kCounter);
  EXPECT_EQ(CounterChannel(w), "loadgen-counter-t1");
  EXPECT_EQ(WorkloadTerm(w, 0), "@\"loadgen-counter-t1\"!(0)");
  EXPECT_EQ(WorkloadTerm(w, 7),
            "for (@n <- @\"loadgen-counter-t1\") { "
            "@\"loadgen-counter-t1\"!(n + 1) }");
}

// Deploy i is signed by key i mod 3: it moves from that key's wallet to
// another, the step changing each round so that wallets pair both ways.
TEST(WorkloadTest, TransfersGoFromTheSignersWalletToAnother) {
  const Workload w = Of(WorkloadKind::kTransfer);
  const std::string first = WorkloadTerm(w, 0);
  EXPECT_THAT(first, HasSubstr("\"findOrCreate\", \"1111A\""));
  EXPECT_THAT(first, HasSubstr("\"transfer\", \"1111B\", 5,"));
  const std::string next_round = WorkloadTerm(w, 3);  // signer A again
  EXPECT_THAT(next_round, HasSubstr("\"findOrCreate\", \"1111A\""));
  EXPECT_THAT(next_round, HasSubstr("\"transfer\", \"1111C\", 5,"));
  EXPECT_THAT(WorkloadTerm(w, 4), HasSubstr("\"transfer\", \"1111A\", 5,"));
  for (int i = 0; i < 12; ++i) {
    const std::string t = WorkloadTerm(w, i);
    const std::string from = std::string("1111") + char('A' + i % 3);
    EXPECT_THAT(t, Not(HasSubstr("\"transfer\", \"" + from + "\""))) << i;
  }
}

TEST(WorkloadTest, RegistryAndMixTerms) {
  EXPECT_THAT(WorkloadTerm(Of(WorkloadKind::kRegistry), 2),
              HasSubstr("insert!(100002, *uriCh)"));
  const Workload mix = Of(WorkloadKind::kMix);
  EXPECT_EQ(WorkloadTerm(mix, 0), WorkloadTerm(Of(WorkloadKind::kCounter), 0));
  EXPECT_EQ(WorkloadTerm(mix, 1), WorkloadTerm(Of(WorkloadKind::kTransfer), 1));
  EXPECT_EQ(WorkloadTerm(mix, 2), WorkloadTerm(Of(WorkloadKind::kRegistry), 2));
  EXPECT_EQ(WorkloadTerm(mix, 3), WorkloadTerm(Of(WorkloadKind::kCounter), 3));
}

// With read_answers each deploy receives its own sends; without, the terms
// are unchanged.
TEST(WorkloadTest, ReadAnswersReceivesWhatEachDeploySends) {
  Workload w = Of(WorkloadKind::kNoop);
  w.read_answers = true;
  EXPECT_EQ(WorkloadTerm(w, 3),
            "@100003!(100003) | for (_ <- @100003) { Nil }");
  w.kind = WorkloadKind::kTransfer;
  EXPECT_THAT(WorkloadTerm(w, 1),
              HasSubstr("*doneCh) | for (_ <- doneCh) { Nil }"));
  w.kind = WorkloadKind::kRegistry;
  EXPECT_THAT(WorkloadTerm(w, 1),
              HasSubstr("*valueCh) | for (_ <- valueCh) { Nil }"));
  for (WorkloadKind k : {WorkloadKind::kTransfer, WorkloadKind::kRegistry}) {
    EXPECT_THAT(WorkloadTerm(Of(k), 1), Not(HasSubstr("for (_ <-"))) << int(k);
    EXPECT_THAT(WorkloadTerm(Of(k), 1), Not(HasSubstr("$READ"))) << int(k);
  }
}

TEST(WorkloadTest, TransfersNeedTwoWalletsAndAPositiveAmount) {
  Workload w = Of(WorkloadKind::kTransfer);
  EXPECT_TRUE(CheckWorkload(w).ok());
  w.wallets.resize(1);
  EXPECT_FALSE(CheckWorkload(w).ok());
  w = Of(WorkloadKind::kMix);
  w.transfer_amount = 0;
  EXPECT_FALSE(CheckWorkload(w).ok());
  w = Of(WorkloadKind::kCounter);
  w.wallets.clear();
  EXPECT_TRUE(CheckWorkload(w).ok());
  w.run_tag.clear();
  EXPECT_FALSE(CheckWorkload(w).ok());
}

}  // namespace
}  // namespace rnode::loadgen

#include "util/check.h"

#include "gtest/gtest.h"

namespace rnode {
namespace {

TEST(CheckDeathTest, AFailedCheckAbortsNamingTheConditionAndTheMessage) {
  int size = 2;
  EXPECT_DEATH(CHECK(size > 3, "needs more than three"),
               "CHECK failed: size > 3: needs more than three");
}

TEST(CheckTest, AHoldingCheckGoesOn) {
  int calls = 0;
  CHECK(++calls == 1, "evaluated once");
  EXPECT_EQ(calls, 1);
}

TEST(CheckTest, DCheckEvaluatesItsConditionOnlyInDebugBuilds) {
  int calls = 0;
  DCHECK(++calls == 1, "evaluated in debug builds");
#ifdef NDEBUG
  EXPECT_EQ(calls, 0);
#else
  EXPECT_EQ(calls, 1);
#endif
}

}  // namespace
}  // namespace rnode

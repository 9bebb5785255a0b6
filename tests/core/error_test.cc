#include "cadclip/core/error.h"

#include <gtest/gtest.h>

namespace cadclip {
namespace {

TEST(StatusTest, OkAndFailureCarryTheirReason) {
  EXPECT_TRUE(Status::ok().is_ok());
  EXPECT_EQ(Status::ok().reason(), "");
  const Status failed = Status::failure("file.step: no solid");
  EXPECT_FALSE(failed.is_ok());
  EXPECT_EQ(failed.reason(), "file.step: no solid");
}

TEST(ResultTest, HoldsAValueOrAFailure) {
  Result<int> good = 42;
  ASSERT_TRUE(good.is_ok());
  EXPECT_EQ(good.value(), 42);
  Result<int> bad = Status::failure("too many faces: 1200 > 1000");
  EXPECT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().reason(), "too many faces: 1200 > 1000");
}

TEST(CheckDeathTest, BrokenInvariantAbortsWithFileAndLine) {
  EXPECT_DEATH(CADCLIP_CHECK(1 + 1 == 3, "arithmetic is {}", "broken"),
               "internal error at .*error_test.cc:[0-9]+: check '1 \\+ 1 == 3' failed: "
               "arithmetic is broken");
}

TEST(CheckDeathTest, ValueOfAFailedResultAborts) {
  Result<int> bad = Status::failure("no face");
  EXPECT_DEATH((void)bad.value(), "value\\(\\) of a failed Result: no face");
}

}  // namespace
}  // namespace cadclip

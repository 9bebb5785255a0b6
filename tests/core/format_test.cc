#include "cadclip/core/format.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cadclip {
namespace {

TEST(FormatTest, FillsPlaceholdersInOrder) {
  EXPECT_EQ(format("{} of {} files", 3, 10), "3 of 10 files");
  EXPECT_EQ(format("no placeholders"), "no placeholders");
  EXPECT_EQ(format("{}{}", "a", 'b'), "ab");
  EXPECT_EQ(format("braces {{}} stay, {} fills", 1), "braces {} stay, 1 fills");
}

TEST(FormatTest, MissingArgumentsLeaveTheRestAndExtraOnesAreAppended) {
  EXPECT_EQ(format("{} and {}", 1), "1 and ");
  EXPECT_EQ(format("x", 7), "x7");
}

TEST(FormatTest, NumberHelpers) {
  EXPECT_EQ(with_commas(0), "0");
  EXPECT_EQ(with_commas(999), "999");
  EXPECT_EQ(with_commas(1204), "1,204");
  EXPECT_EQ(with_commas(-1234567), "-1,234,567");
  EXPECT_EQ(with_commas(INT64_MIN), "-9,223,372,036,854,775,808");
  EXPECT_EQ(fixed(0.12345, 3), "0.123");
  EXPECT_EQ(human_duration(42), "42s");
  EXPECT_EQ(human_duration(187), "3m07s");
  EXPECT_EQ(human_duration(7500), "2h05m");
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(1536), "1.5 KiB");
}

TEST(FormatTest, JoinListsItemsForMessages) {
  EXPECT_EQ(join(std::vector<std::string>{}), "");
  EXPECT_EQ(join(std::vector<std::string>{"a"}), "a");
  EXPECT_EQ(join(std::vector<std::string>{"a", "b", "c"}), "a, b, c");
  EXPECT_EQ(join(std::vector<std::string>{"x", "y"}, " | "), "x | y");
}

}  // namespace
}  // namespace cadclip

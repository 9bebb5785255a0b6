#include "cadclip/data/splits.h"

#include <gtest/gtest.h>

#include <set>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "test_graphs.h"

namespace cadclip::data {
namespace {

std::vector<std::string> many_ids(int n) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) ids.push_back("part_" + std::to_string(i));
  return ids;
}

TEST(Splits, HashSplitIsDeterministicAndNearTheRatios) {
  const SplitRatios ratios{/*validation=*/0.1, /*test=*/0.2};
  const std::vector<std::string> ids = many_ids(10000);
  const Splits a = split_by_hash(ids, ratios);
  const Splits b = split_by_hash(ids, ratios);
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.validation, b.validation);
  EXPECT_EQ(a.test, b.test);
  EXPECT_EQ(a.train.size() + a.validation.size() + a.test.size(), ids.size());
  // Binomial standard deviation at n = 10000 is about 40 for p = 0.2: allow 5 sigma.
  EXPECT_NEAR(static_cast<double>(a.test.size()), 2000, 200);
  EXPECT_NEAR(static_cast<double>(a.validation.size()), 1000, 150);
}

TEST(Splits, AnIdKeepsItsSplitWhenOthersChange) {
  const SplitRatios ratios;
  const std::vector<std::string> ids = many_ids(500);
  const std::vector<std::string> fewer(ids.begin() + 100, ids.end());
  const Splits all = split_by_hash(ids, ratios);
  const Splits some = split_by_hash(fewer, ratios);
  const std::set<std::string> all_test(all.test.begin(), all.test.end());
  for (const auto& id : some.test) EXPECT_TRUE(all_test.count(id)) << id;
  EXPECT_EQ(hash_split("0070/00702684", ratios), hash_split("0070/00702684", ratios));
}

TEST(Splits, ExtremeRatiosAndBadRatios) {
  const std::vector<std::string> ids = many_ids(50);
  EXPECT_EQ(split_by_hash(ids, {0, 0}).train.size(), 50u);
  EXPECT_EQ(split_by_hash(ids, {0, 1}).test.size(), 50u);
  EXPECT_THROW(split_by_hash(ids, {0.7, 0.7}), Error);
  EXPECT_THROW(split_by_hash(ids, {-0.1, 0.1}), Error);
}

TEST(Splits, Text2CadFileReadsAndWritesBack) {
  testing::ScratchDir dir("splits");
  write_text_atomic(dir.path() / "in.json",
                    R"({"train": ["0000/01", "0000/02"], "validation": ["0000/03"], "test": []})");
  const Splits splits = read_splits(dir.path() / "in.json");
  EXPECT_EQ(splits.train, (std::vector<std::string>{"0000/01", "0000/02"}));
  EXPECT_EQ(splits.validation, (std::vector<std::string>{"0000/03"}));
  EXPECT_TRUE(splits.test.empty());
  write_splits(dir.path() / "out.json", splits);
  const Splits back = read_splits(dir.path() / "out.json");
  EXPECT_EQ(back.train, splits.train);
  EXPECT_EQ(back.validation, splits.validation);
}

TEST(Splits, BadFilesAreErrorsNamingTheProblem) {
  testing::ScratchDir dir("splits-bad");
  auto message_for = [&](const std::string& text) -> std::string {
    write_text_atomic(dir.path() / "s.json", text);
    try {
      read_splits(dir.path() / "s.json");
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message_for("[1, 2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(message_for(R"({"train": ["a"], "test": ["a"]})").find("'a'"), std::string::npos);
  EXPECT_NE(message_for(R"({"training": []})").find("training"), std::string::npos);
  EXPECT_NE(message_for(R"({"train": [1]})").find("not a string"), std::string::npos);
  EXPECT_NE(message_for("{broken").find("not a JSON object"), std::string::npos);
}

TEST(Splits, SplitNamesParseOnceAndPickTheirList) {
  Splits splits;
  splits.train = {"a"};
  splits.validation = {"b"};
  splits.test = {"c"};
  for (const Split split : {Split::kTrain, Split::kValidation, Split::kTest})
    EXPECT_EQ(parse_split(split_name(split)), split);
  EXPECT_EQ(parse_split("val"), Split::kValidation);  // Text2CAD's spelling
  EXPECT_EQ(splits.of(Split::kValidation), std::vector<std::string>{"b"});
  EXPECT_EQ(splits.of(Split::kTest), std::vector<std::string>{"c"});
  try {
    parse_split("dev");
    FAIL() << "an unknown split was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("split 'dev' is not train, validation or test"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace cadclip::data

// The one bulk text path: tokenized once, run in passes of similar length,
// results in input order.
#include "cadclip/text/length_groups.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "cadclip/core/error.h"
#include "cadclip/text/text_model.h"
#include "fixtures.h"

namespace cadclip::text {
namespace {

const std::vector<std::string> kTexts = {
    "a plate",
    "a rectangular plate with two holes near its corners and a slot along one edge",
    "ring",
    "an L-shaped bracket with a hole in each leg",
    "a cylindrical ring, 40 mm across, 10 mm thick, with a centred bore of 20 mm",
    "a washer"};

TEST(LengthGroupsTest, RowsAreCutOnceAndReportTheirFullLength) {
  const TextModel model = load_text_model(testing::data_dir() / "bert", {});
  const Tokenizer& tokenizer = *model.tokenizer;
  const TokenRows rows = tokenize_rows(tokenizer, kTexts, 8);
  int64_t cut = 0;
  for (size_t i = 0; i < kTexts.size(); ++i) {
    const std::vector<int64_t> full = tokenizer.encode(kTexts[i]);
    EXPECT_EQ(rows.full_lengths[i], static_cast<int64_t>(full.size()));
    EXPECT_EQ(rows.ids[i], tokenizer.encode(kTexts[i], 8)) << kTexts[i];  // the tokenizer's cut
    cut += full.size() > 8;
  }
  EXPECT_GT(cut, 0);
  EXPECT_EQ(rows.truncated, cut);
  EXPECT_THROW(tokenize_rows(tokenizer, kTexts, 1), Error);
}

TEST(LengthGroupsTest, PassesRunShortestFirstPaddedToTheirOwnLongestInInputOrder) {
  TokenRows rows;
  rows.ids = {{1, 2, 3, 4, 5}, {1, 2}, {1, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8}, {1, 2}};
  std::vector<std::vector<int64_t>> seen;
  std::vector<int64_t> widths;
  const at::Tensor out = forward_in_length_groups(
      rows, /*pad_id=*/0, {.max_rows = 2}, at::kCPU,
      [&](const at::Tensor& ids, const at::Tensor& mask, std::span<const int64_t> pass) {
        seen.emplace_back(pass.begin(), pass.end());
        widths.push_back(ids.size(1));
        EXPECT_EQ(mask.sum().item<int64_t>(), (ids != 0).sum().item<int64_t>());
        return mask.sum(1, /*keepdim=*/true).to(at::kFloat);  // each row's length
      });
  EXPECT_EQ(seen, (std::vector<std::vector<int64_t>>{{1, 4}, {2, 0}, {3}}));
  EXPECT_EQ(widths, (std::vector<int64_t>{2, 5, 8}));
  ASSERT_EQ(out.sizes(), (at::IntArrayRef{5, 1}));
  for (size_t i = 0; i < rows.ids.size(); ++i)
    EXPECT_EQ(out[static_cast<int64_t>(i)][0].item<float>(), rows.ids[i].size());
  // With a pass overhead, group_by_size makes the cuts (a long outlier alone).
  seen.clear();
  forward_in_length_groups(
      rows, 0, {.max_rows = 8, .group_overhead = 4}, at::kCPU,
      [&](const at::Tensor& ids, const at::Tensor&, std::span<const int64_t> pass) {
        seen.emplace_back(pass.begin(), pass.end());
        return at::zeros({ids.size(0), 1});
      });
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen.back(), std::vector<int64_t>{3});
}

TEST(LengthGroupsTest, EmbeddingsDoNotDependOnHowTheTextsAreBatched) {
  const TextModel model = load_text_model(testing::data_dir() / "bert", {});
  const at::Tensor together = model.embed(kTexts, true, 32);
  const at::Tensor alone = model.embed(kTexts, true, 1);
  ASSERT_EQ(together.sizes(), alone.sizes());
  EXPECT_TRUE(at::allclose(together, alone, 1e-5, 1e-6));
  for (size_t i = 0; i < kTexts.size(); ++i) {
    const std::vector<std::string> one = {kTexts[i]};
    EXPECT_TRUE(at::allclose(model.embed(one)[0], together[static_cast<int64_t>(i)], 1e-5, 1e-6));
  }
}

}  // namespace
}  // namespace cadclip::text

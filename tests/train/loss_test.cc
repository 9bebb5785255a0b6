#include "cadclip/train/loss.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>

namespace cadclip::train {
namespace {

TEST(FalseNegativeMaskTest, SharedCaptionOrGeometryButNeverTheDiagonal) {
  const at::Tensor caption = at::tensor(std::vector<int64_t>{1, 2, 1, 3});
  const at::Tensor geometry = at::tensor(std::vector<int64_t>{7, 8, 9, 8});
  const at::Tensor mask = false_negative_mask(caption, geometry);
  const at::Tensor expected = at::tensor(std::vector<int64_t>{0, 0, 1, 0,  //
                                                              0, 0, 0, 1,  //
                                                              1, 0, 0, 0,  //
                                                              0, 1, 0, 0})
                                  .view({4, 4})
                                  .to(at::kBool);
  EXPECT_TRUE(mask.equal(expected)) << mask;
}

ContrastivePairs identical_rows(int n) {
  ContrastivePairs p;
  p.text = at::ones({n, 4}) / 2;  // unit vectors, all the same
  p.cad = at::ones({n, 4}) / 2;
  p.caption_key = at::arange(n, at::kLong);
  p.geometry_key = at::arange(n, at::kLong) + 100;
  return p;
}

TEST(FalseNegativeMaskTest, CaptionsStatingTheSameFactsAreNotNegatives) {
  const std::string plate = R"({"family":"plate","hole_count":6,"width":80})";
  const std::string washer = R"({"family":"washer","outer_diameter":20})";
  // A hand-built batch of 5 pairs: 0 and 1 say the same facts in other words;
  // 2 has other facts; 3 and 4 have no facts (or empty ones) and other texts.
  const std::vector<std::pair<std::string, std::string>> captions = {
      {"A flat plate, 80 mm wide, with six holes.", plate},
      {"Rectangular plate of width 80 mm; 6 holes.", plate},
      {"A flat plate, 80 mm wide, with six holes.", washer},  // same text, other facts
      {"Some kind of plate.", "{}"},
      {"Some  kind of plate. ", ""}};
  std::vector<int64_t> keys;
  for (const auto& [text, facts] : captions) keys.push_back(caption_key(text, facts));
  EXPECT_EQ(keys[0], keys[1]) << "equal facts, different texts";
  EXPECT_NE(keys[0], keys[2]) << "equal texts, different facts";
  EXPECT_EQ(keys[3], keys[4]) << "no (or empty) facts: the text decides, whitespace aside";
  EXPECT_NE(keys[3], caption_key("Some kind of washer.", "{}"));

  auto comm = make_single_process_communicator();
  ContrastivePairs pairs = identical_rows(5);
  pairs.caption_key = at::tensor(keys);
  const auto result = contrastive_loss(*comm, pairs, at::full({}, 10.0), {}, {});
  EXPECT_EQ(result.masked_pairs, 4);  // (0,1), (1,0), (3,4), (4,3)
  const at::Tensor mask = false_negative_mask(pairs.caption_key, pairs.geometry_key);
  EXPECT_TRUE(mask[0][1].item<bool>() && mask[1][0].item<bool>());
  EXPECT_FALSE(mask[0][2].item<bool>() || mask[1][2].item<bool>());
}

TEST(FalseNegativeMaskTest, GeometryKeyFromTheHashOrAUniqueFallback) {
  EXPECT_EQ(geometry_key("00000000000000ff0000", -5), 255);
  EXPECT_EQ(geometry_key("abc", -5), -5);
  EXPECT_EQ(geometry_key("not-hex-at-all-xyz", -7), -7);
}

TEST(ContrastiveLossTest, IdenticalEmbeddingsGiveTheChanceLevelLoss) {
  auto comm = make_single_process_communicator();
  const auto result = contrastive_loss(*comm, identical_rows(8), at::full({}, 10.0), {}, {});
  EXPECT_NEAR(result.loss.item<double>(), std::log(8.0), 1e-5);
  EXPECT_EQ(result.global_count, 8);
  EXPECT_EQ(result.masked_pairs, 0);
}

TEST(ContrastiveLossTest, MaskedFalseNegativesLeaveTheDenominator) {
  auto comm = make_single_process_communicator();
  ContrastivePairs pairs = identical_rows(4);
  pairs.caption_key = at::tensor(std::vector<int64_t>{5, 5, 6, 7});  // rows 0 and 1 say the same
  const auto masked = contrastive_loss(*comm, pairs, at::full({}, 10.0), {}, {});
  EXPECT_EQ(masked.masked_pairs, 2);
  // Rows 0 and 1 now compete with 2 candidates, rows 2 and 3 with 3; both directions alike.
  const double expected = (2 * std::log(3.0) + 2 * std::log(4.0)) / 4;
  EXPECT_NEAR(masked.loss.item<double>(), expected, 1e-5);
  LossOptions off;
  off.mask_false_negatives = false;
  EXPECT_NEAR(contrastive_loss(*comm, pairs, at::full({}, 10.0), {}, off).loss.item<double>(),
              std::log(4.0), 1e-5);
}

TEST(ContrastiveLossTest, PerfectAlignmentGivesALowLoss) {
  auto comm = make_single_process_communicator();
  ContrastivePairs p;
  p.text = at::eye(4);
  p.cad = at::eye(4);
  p.caption_key = at::arange(4, at::kLong);
  p.geometry_key = at::arange(4, at::kLong);
  const auto result = contrastive_loss(*comm, p, at::full({}, 100.0), {}, {});
  EXPECT_LT(result.loss.item<double>(), 1e-10);
}

TEST(ContrastiveLossTest, SigLipMatchesItsFormula) {
  auto comm = make_single_process_communicator();
  ContrastivePairs p;
  p.text = at::eye(3);
  p.cad = at::eye(3);
  p.caption_key = at::arange(3, at::kLong);
  p.geometry_key = at::arange(3, at::kLong);
  LossOptions options;
  options.kind = LossKind::kSigLip;
  const double t = 5.0, b = -1.0;
  const auto result = contrastive_loss(*comm, p, at::full({}, t), at::full({}, b), options);
  auto log_sigmoid = [](double x) { return -std::log1p(std::exp(-x)); };
  const double expected = -(3 * log_sigmoid(t + b) + 6 * log_sigmoid(-(0 + b))) / 3;
  EXPECT_NEAR(result.loss.item<double>(), expected, 1e-5);
}

}  // namespace
}  // namespace cadclip::train

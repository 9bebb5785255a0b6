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

#include "cadclip/train/loss_scaler.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <limits>

namespace cadclip::train {
namespace {

std::vector<at::Tensor> parameters_with_grads(float g0, float g1) {
  at::Tensor a = at::zeros({2}).set_requires_grad(true);
  at::Tensor b = at::zeros({1}).set_requires_grad(true);
  a.mutable_grad() = at::full({2}, g0);
  b.mutable_grad() = at::full({1}, g1);
  return {a, b};
}

TEST(DynamicLossScalerTest, UnscalesFiniteGradientsAndGrowsAfterTheInterval) {
  LossScalerOptions options;
  options.init_scale = 1024;
  options.interval = 2;
  DynamicLossScaler scaler(true, options, at::kCPU);
  EXPECT_DOUBLE_EQ(scaler.scale(at::full({}, 2.0f)).item<double>(), 2048);
  auto params = parameters_with_grads(512, 1024);
  EXPECT_FALSE(scaler.unscale_and_check(params));
  EXPECT_FLOAT_EQ(params[0].grad()[0].item<float>(), 0.5f);
  EXPECT_FLOAT_EQ(params[1].grad()[0].item<float>(), 1.0f);
  scaler.update(false);
  scaler.update(false);
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 2048);
}

TEST(DynamicLossScalerTest, AnInfiniteGradientIsFoundAndTheScaleBacksOff) {
  LossScalerOptions options;
  options.init_scale = 1024;
  DynamicLossScaler scaler(true, options, at::kCPU);
  auto params = parameters_with_grads(1, std::numeric_limits<float>::infinity());
  EXPECT_TRUE(scaler.unscale_and_check(params));
  scaler.update(true);
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 512);
}

TEST(DynamicLossScalerTest, DisabledItStillFindsNaN) {
  DynamicLossScaler scaler(false, {}, at::kCPU);
  auto params = parameters_with_grads(std::numeric_limits<float>::quiet_NaN(), 1);
  EXPECT_TRUE(scaler.unscale_and_check(params));
  auto fine = parameters_with_grads(3, 4);
  EXPECT_FALSE(scaler.unscale_and_check(fine));
  EXPECT_FLOAT_EQ(fine[0].grad()[0].item<float>(), 3.0f) << "no scaling when disabled";
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 1.0);
}

}  // namespace
}  // namespace cadclip::train

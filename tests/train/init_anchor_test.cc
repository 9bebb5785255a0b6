// The L2-SP pull toward the --init weights: how far it moves a tensor, which
// tensors it leaves alone, and what it refuses.
#include "cadclip/train/init_anchor.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adamw.h>

#include <memory>
#include <string>
#include <vector>

#include "cadclip/core/error.h"

namespace cadclip::train {
namespace {

// Two layers; the second one frozen, as a frozen text tower is.
struct TwoLayers : torch::nn::Module {
  TwoLayers() {
    trained = register_module("trained", torch::nn::Linear(4, 3));
    frozen = register_module("frozen", torch::nn::Linear(3, 2));
    for (auto& p : frozen->parameters()) p.requires_grad_(false);
  }
  torch::nn::Linear trained{nullptr}, frozen{nullptr};
};

std::unique_ptr<torch::optim::AdamW> optimizer_of(TwoLayers& model, const at::Tensor& extra,
                                                  double lr) {
  std::vector<at::Tensor> params;
  for (auto& p : model.parameters())
    if (p.requires_grad()) params.push_back(p);
  params.push_back(extra);
  return std::make_unique<torch::optim::AdamW>(params, torch::optim::AdamWOptions(lr));
}

TEST(InitAnchor, PullsEachTensorTowardItsStartByLrTimesStrength) {
  at::manual_seed(1);
  TwoLayers start, model;
  const at::Tensor extra = at::ones({2}).set_requires_grad(true);  // outside the model
  const at::Tensor frozen_before = model.frozen->weight.clone();
  const InitAnchor anchor(model, start, /*strength=*/5);
  EXPECT_EQ(anchor.tensors(), 2) << "the trained layer's weight and bias only";
  const at::Tensor gap = model.trained->weight.detach() - start.trained->weight;
  const double drift = anchor.rms_drift();
  EXPECT_NEAR(drift,
              (at::cat({gap.flatten(), (model.trained->bias - start.trained->bias).flatten()})
                   .square()
                   .mean()
                   .sqrt()
                   .item<double>()),
              1e-6);

  auto optimizer = optimizer_of(model, extra, /*lr=*/0.1);  // 0.1 x 5: half the way back
  anchor.pull(*optimizer);
  EXPECT_TRUE(
      at::allclose(model.trained->weight.detach() - start.trained->weight, gap * 0.5, 1e-5, 1e-6));
  EXPECT_NEAR(anchor.rms_drift(), drift * 0.5, 1e-6);
  EXPECT_TRUE(at::equal(model.frozen->weight, frozen_before)) << "frozen tensors stay";
  EXPECT_TRUE(at::equal(extra, at::ones({2}))) << "a tensor without an anchor stays";

  auto strong = optimizer_of(model, extra, /*lr=*/1.0);  // lr x strength above 1: all the way
  anchor.pull(*strong);
  EXPECT_TRUE(at::allclose(model.trained->weight, start.trained->weight));
  EXPECT_EQ(anchor.rms_drift(), 0.0);
}

TEST(InitAnchor, RefusesAMissingTensorAndAStrengthThatIsNotPositive) {
  TwoLayers model;
  torch::nn::Module empty;
  EXPECT_THROW(InitAnchor(model, empty, 1.0), Error);
  TwoLayers start;
  EXPECT_THROW(InitAnchor(model, start, 0.0), Error);
  EXPECT_THROW(InitAnchor(model, start, -2.0), Error);
}

TEST(InitAnchor, LeavesATensorThatMayStartFreshWithoutAnAnchor) {
  TwoLayers model;
  // A start that holds "trained.bias" and no "trained.weight".
  struct Bias : torch::nn::Module {
    Bias() { register_parameter("bias", at::zeros({3})); }
  };
  struct OnlyTheBias : torch::nn::Module {
    OnlyTheBias() { register_module("trained", std::make_shared<Bias>()); }
  } start;
  auto weight_may_be_new = [](const std::string& name) { return name == "trained.weight"; };
  const InitAnchor anchor(model, start, 1.0, weight_may_be_new);
  EXPECT_EQ(anchor.tensors(), 1) << "the bias is anchored, the new weight is not";
  auto nothing_may_be_new = [](const std::string&) { return false; };
  EXPECT_THROW(InitAnchor(model, start, 1.0, nothing_may_be_new), Error);
}

}  // namespace
}  // namespace cadclip::train

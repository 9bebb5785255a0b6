// Activation checkpointing gives the gradients of the plain run, dropout included.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>
#include <algorithm>

#include "cadclip/text/checkpoint.h"
#include "cadclip/text/text_model.h"
#include "fixtures.h"

namespace cadclip::text {
namespace {

// Gradients of every parameter after one training-mode backward.
std::map<std::string, torch::Tensor> gradients(const std::string& model, bool checkpointing) {
  auto encoder = load_text_encoder(testing::data_dir() / model);
  encoder->train();  // dropout on: the re-run must draw the same masks
  encoder->set_activation_checkpointing(checkpointing);
  at::manual_seed(7);
  const torch::Tensor ids = at::randint(4, 400, {3, 17}, at::kLong);
  torch::Tensor mask = at::ones({3, 17}, at::kLong);
  mask.narrow(1, 9, 8)[1].zero_();
  at::manual_seed(11);
  const torch::Tensor hidden = encoder->forward(ids, mask);
  const torch::Tensor loss = (pool(hidden, mask, Pooling::kMean).pow(2)).sum() + hidden[0][0].sum();
  loss.backward();
  std::map<std::string, torch::Tensor> out;
  for (const auto& item : encoder->named_parameters()) {
    EXPECT_TRUE(item.value().grad().defined()) << model << " " << item.key();
    if (item.value().grad().defined()) out[item.key()] = item.value().grad().clone();
  }
  return out;
}

void expect_same_gradients(const std::string& model) {
  const auto plain = gradients(model, false);
  const auto checkpointed = gradients(model, true);
  ASSERT_EQ(plain.size(), checkpointed.size());
  // Attention's key bias adds the same q.b to every key of a query, which
  // softmax cancels: its true gradient is 0 and what backward returns is
  // rounding noise (~1e-9 here), whose value depends on the BLAS kernel. So
  // each difference is measured against the larger of the parameter's own
  // gradient and 1e-4 of the largest gradient in the model.
  double largest = 0;
  for (const auto& [name, grad] : plain)
    largest = std::max(largest, grad.abs().max().item<double>());
  for (const auto& [name, grad] : plain) {
    const double scale = std::max(grad.abs().max().item<double>(), 1e-4 * largest) + 1e-12;
    EXPECT_LT((grad - checkpointed.at(name)).abs().max().item<double>() / scale, 1e-5)
        << model << " " << name << ": largest gradient " << largest << ", this one's "
        << grad.abs().max().item<double>();
  }
}

TEST(ActivationCheckpointing, BertGradientsUnchanged) { expect_same_gradients("bert"); }
TEST(ActivationCheckpointing, DebertaV3GradientsUnchanged) { expect_same_gradients("deberta_v3"); }
TEST(ActivationCheckpointing, DebertaV2GradientsUnchanged) { expect_same_gradients("deberta_v2"); }

TEST(ActivationCheckpointing, FunctionReturnsInputGradients) {
  const torch::Tensor a = at::randn({4, 5}).requires_grad_(true);
  const torch::Tensor b = at::randn({5, 3}).requires_grad_(true);
  auto f = [](const std::vector<torch::Tensor>& in) { return at::tanh(at::matmul(in[0], in[1])); };
  const auto plain = torch::autograd::grad({f({a, b}).sum()}, {a, b});
  const auto saved = torch::autograd::grad({checkpoint(f, {a, b}).sum()}, {a, b});
  EXPECT_TRUE(at::allclose(plain[0], saved[0]));
  EXPECT_TRUE(at::allclose(plain[1], saved[1]));
}

}  // namespace
}  // namespace cadclip::text

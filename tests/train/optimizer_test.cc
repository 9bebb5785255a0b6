#include "cadclip/train/optimizer.h"

#include "cadclip/text/text_model.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <memory>
#include <vector>

namespace cadclip::train {
namespace {

// Two groups as the trainer makes them (with and without decay), a matrix, a
// vector and a parameter that never gets a gradient.
struct Params {
  std::vector<at::Tensor> decay, plain;
  at::Tensor unused;
};

Params make_params() {
  at::manual_seed(3);
  Params p;
  p.decay = {at::randn({24, 16}).set_requires_grad(true),
             at::randn({7, 5}).set_requires_grad(true)};
  p.plain = {at::randn({16}).set_requires_grad(true)};
  p.unused = at::randn({3}).set_requires_grad(true);
  return p;
}

std::vector<torch::optim::OptimizerParamGroup> groups_of(const Params& p) {
  auto options = [](double decay) {
    torch::optim::AdamWOptions o(1e-2);
    o.weight_decay(decay).betas({0.9, 0.98}).eps(1e-6);
    return std::make_unique<torch::optim::AdamWOptions>(o);
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(p.decay, options(0.05));
  auto plain = p.plain;
  plain.push_back(p.unused);
  groups.emplace_back(plain, options(0));
  return groups;
}

Params clone(const Params& p) {
  auto copy = [](const at::Tensor& t) { return t.detach().clone().set_requires_grad(true); };
  Params c;
  for (const auto& t : p.decay) c.decay.push_back(copy(t));
  for (const auto& t : p.plain) c.plain.push_back(copy(t));
  c.unused = copy(p.unused);
  return c;
}

// The same gradients on both copies at each step; `unused` never has one.
void set_grads(Params& p, int step) {
  at::manual_seed(100 + step);
  for (auto* list : {&p.decay, &p.plain})
    for (auto& t : *list) t.mutable_grad() = at::randn_like(t) * (step + 1);
}

double largest_difference(const Params& a, const Params& b) {
  double worst = 0;
  for (size_t i = 0; i < a.decay.size(); ++i)
    worst = std::max(worst, (a.decay[i] - b.decay[i]).abs().max().item<double>());
  for (size_t i = 0; i < a.plain.size(); ++i)
    worst = std::max(worst, (a.plain[i] - b.plain[i]).abs().max().item<double>());
  return worst;
}

TEST(FusedAdamWTest, StepsAsLibTorchsAdamWToRounding) {
  Params reference = make_params(), fused = clone(reference);
  torch::optim::AdamW per_tensor(groups_of(reference));
  FusedAdamW one_kernel(groups_of(fused));
  for (int step = 0; step < 20; ++step) {
    set_grads(reference, step);
    set_grads(fused, step);
    per_tensor.step();
    one_kernel.step();
  }
  // The parameters moved (lr 1e-2 for 20 steps) and stayed together.
  EXPECT_GT((reference.decay[0] - make_params().decay[0]).abs().max().item<double>(), 0.1);
  EXPECT_LT(largest_difference(reference, fused), 1e-5);
  // A parameter without a gradient is neither moved nor given state.
  EXPECT_TRUE(at::equal(fused.unused, make_params().unused));
  EXPECT_EQ(one_kernel.state().count(fused.unused.unsafeGetTensorImpl()), 0u);
  const auto& s = static_cast<const torch::optim::AdamWParamState&>(
      *one_kernel.state().at(fused.decay[1].unsafeGetTensorImpl()));
  EXPECT_EQ(s.step(), 20);
}

TEST(FusedAdamWTest, ContinuesFromTheStateOfThePerTensorStep) {
  // A checkpoint written by either optimizer holds the same AdamWParamState.
  Params reference = make_params(), fused = clone(reference);
  torch::optim::AdamW first(groups_of(reference));
  for (int step = 0; step < 3; ++step) {
    set_grads(reference, step);
    first.step();
  }
  fused = clone(reference);
  FusedAdamW second(groups_of(fused));
  auto carry = [&](const std::vector<at::Tensor>& from, const std::vector<at::Tensor>& to) {
    for (size_t i = 0; i < from.size(); ++i) {
      const auto& s = static_cast<const torch::optim::AdamWParamState&>(
          *first.state().at(from[i].unsafeGetTensorImpl()));
      auto copy = std::make_unique<torch::optim::AdamWParamState>();
      copy->exp_avg(s.exp_avg().clone()).exp_avg_sq(s.exp_avg_sq().clone()).step(s.step());
      second.state()[to[i].unsafeGetTensorImpl()] = std::move(copy);
    }
  };
  carry(reference.decay, fused.decay);
  carry(reference.plain, fused.plain);
  for (int step = 3; step < 6; ++step) {
    set_grads(reference, step);
    set_grads(fused, step);
    first.step();
    second.step();
  }
  EXPECT_LT(largest_difference(reference, fused), 1e-5);
}

TEST(FusedAdamWTest, AStepMovesTheParametersVersionCountersAsAnInPlaceUpdateDoes) {
  // What caches a parameter's value by its version (the text tower's fused
  // no-grad weights) must see each step; the fused kernel alone leaves them.
  Params p = make_params();
  FusedAdamW optimizer(groups_of(p));
  set_grads(p, 0);
  const auto before = p.decay[0]._version(), unused = p.unused._version();
  optimizer.step();
  EXPECT_GT(p.decay[0]._version(), before);
  EXPECT_EQ(p.unused._version(), unused) << "a parameter without a gradient is not touched";
}

TEST(FusedAdamWTest, TheTextTowersNoGradForwardSeesTheStepsWeights) {
  // The no-grad forward (validation; the first pass of activation
  // checkpointing) reads fused weights cached by version: after a step it
  // must compute with the new weights, as the grad-mode forward does.
  text::TextModel model = text::load_text_model("tests/fixtures/text/bert");
  const at::Tensor ids = at::tensor(std::vector<int64_t>{2, 40, 41, 42, 3}).view({1, 5});
  const at::Tensor mask = at::ones_like(ids);
  {
    at::NoGradGuard no_grad;
    (void)model.encoder->forward(ids, mask);  // fills the cache
  }
  std::vector<at::Tensor> parameters = model.encoder->parameters();
  for (auto& p : parameters) p.mutable_grad() = at::ones_like(p);
  FusedAdamW optimizer(parameters, torch::optim::AdamWOptions(1e-2));
  optimizer.step();
  at::Tensor without_grad;
  {
    at::NoGradGuard no_grad;
    without_grad = model.encoder->forward(ids, mask);
  }
  const at::Tensor with_grad = model.encoder->forward(ids, mask).detach();
  EXPECT_LT((without_grad - with_grad).abs().max().item<double>(), 1e-5);
}

TEST(FusedAdamWTest, RefusesAmsgradByName) {
  at::Tensor w = at::zeros({2}).set_requires_grad(true);
  w.mutable_grad() = at::ones({2});
  FusedAdamW optimizer({w}, torch::optim::AdamWOptions(1e-3).amsgrad(true));
  EXPECT_THROW(
      {
        try {
          optimizer.step();
        } catch (const std::exception& e) {
          EXPECT_NE(std::string(e.what()).find("amsgrad"), std::string::npos);
          throw;
        }
      },
      std::exception);
}

}  // namespace
}  // namespace cadclip::train

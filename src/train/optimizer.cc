#include "cadclip/train/optimizer.h"

#include <ATen/ops/_fused_adamw.h>
#include <ATen/ops/full.h>
#include <ATen/ops/zeros_like.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "cadclip/core/error.h"

namespace cadclip::train {

std::vector<torch::optim::OptimizerParamGroup> adamw_groups(torch::nn::Module& model,
                                                            const at::Tensor& extra,
                                                            const AdamWSettings& settings) {
  std::vector<at::Tensor> text_decay, text_plain, new_decay, new_plain;
  for (const auto& item : model.named_parameters()) {
    if (!item.value().requires_grad()) continue;  // frozen
    const bool text = item.key().starts_with("text.");
    // Norms, biases and the temperature (all of rank < 2) get no weight decay.
    const bool plain = item.value().dim() < 2;
    (text ? (plain ? text_plain : text_decay) : (plain ? new_plain : new_decay))
        .push_back(item.value());
  }
  if (extra.defined()) new_plain.push_back(extra);
  auto group = [](std::vector<at::Tensor> params, double lr, double decay) {
    torch::optim::AdamWOptions options(lr);
    options.weight_decay(decay).betas({0.9, 0.98}).eps(1e-6);
    return torch::optim::OptimizerParamGroup(std::move(params),
                                             std::make_unique<torch::optim::AdamWOptions>(options));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.push_back(group(std::move(text_decay), settings.text_lr, settings.weight_decay));
  groups.push_back(group(std::move(text_plain), settings.text_lr, 0));
  groups.push_back(group(std::move(new_decay), settings.lr, settings.weight_decay));
  groups.push_back(group(std::move(new_plain), settings.lr, 0));
  return groups;
}

std::vector<double> adamw_base_lr(const AdamWSettings& settings) {
  return {settings.text_lr, settings.text_lr, settings.lr, settings.lr};
}

namespace {

// One call of the fused kernel: every tensor on one device with one dtype.
struct FusedBatch {
  std::vector<at::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
};

}  // namespace

at::Tensor FusedAdamW::step(LossClosure closure) {
  at::Tensor loss;
  if (closure) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  at::NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    if (o.amsgrad()) throw Error("FusedAdamW: amsgrad is not supported; use torch::optim::AdamW");
    std::map<std::tuple<c10::DeviceType, c10::DeviceIndex, c10::ScalarType>, FusedBatch> batches;
    for (const auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& slot = state()[p.unsafeGetTensorImpl()];
      if (!slot) {
        auto fresh = std::make_unique<torch::optim::AdamWParamState>();
        fresh->exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
        fresh->exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
        slot = std::move(fresh);
      }
      auto& s = static_cast<torch::optim::AdamWParamState&>(*slot);
      s.step(s.step() + 1);
      auto& batch = batches[{p.device().type(), p.device().index(), p.scalar_type()}];
      batch.params.push_back(p);
      batch.grads.push_back(p.grad());
      batch.exp_avgs.push_back(s.exp_avg());
      batch.exp_avg_sqs.push_back(s.exp_avg_sq());
      // The kernel reads the step count (already advanced, as PyTorch's
      // fused AdamW passes it) from a float tensor on the parameter's device.
      batch.steps.push_back(
          at::full({}, static_cast<double>(s.step()), p.options().dtype(at::kFloat)));
    }
    for (auto& [key, b] : batches) {
      at::_fused_adamw_(b.params, b.grads, b.exp_avgs, b.exp_avg_sqs, /*max_exp_avg_sqs=*/{},
                        b.steps, o.lr(), std::get<0>(o.betas()), std::get<1>(o.betas()),
                        o.weight_decay(), o.eps(), /*amsgrad=*/false, /*maximize=*/false);
      // The fused kernel does not move the parameters' version counters, as
      // every other in-place update does; what keys a cache on them (the text
      // tower's fused no-grad weights, which the no-grad forward under
      // activation checkpointing and validation read) would keep the old values.
      for (const at::Tensor& p : b.params) p.unsafeGetTensorImpl()->bump_version();
    }
  }
  return loss;
}

}  // namespace cadclip::train

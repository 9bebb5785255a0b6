#include "cadclip/train/optimizer.h"

#include <memory>
#include <utility>

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

}  // namespace cadclip::train

#include "cadclip/train/loss_scaler.h"

#include <ATen/ATen.h>

namespace cadclip::train {

DynamicLossScaler::DynamicLossScaler(bool enabled, const LossScalerOptions& options,
                                     c10::Device device)
    : enabled_(enabled), options_(options) {
  const auto f = at::TensorOptions().dtype(at::kFloat).device(device);
  scale_ = at::full({1}, options.init_scale, f);
  growth_tracker_ = at::zeros({1}, f.dtype(at::kInt));
  found_inf_ = at::zeros({1}, f);
}

at::Tensor DynamicLossScaler::scale(const at::Tensor& loss) const {
  return enabled_ ? loss * scale_.to(loss.scalar_type()).squeeze() : loss;
}

bool DynamicLossScaler::unscale_and_check(const std::vector<at::Tensor>& parameters) {
  std::vector<at::Tensor> grads;
  for (const auto& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  found_inf_.zero_();
  // One fused pass over every gradient; without scaling it only checks.
  const at::Tensor inverse = enabled_ ? scale_.reciprocal() : at::ones_like(scale_);
  if (!grads.empty()) at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inverse);
  return found_inf_.item<float>() != 0;
}

void DynamicLossScaler::update(bool found_inf) {
  if (!enabled_) return;
  found_inf_.fill_(found_inf ? 1.0 : 0.0);
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, options_.growth, options_.backoff,
                         options_.interval);
}

double DynamicLossScaler::current_scale() const { return enabled_ ? scale_.item<double>() : 1.0; }

std::map<std::string, at::Tensor> DynamicLossScaler::state() const {
  return {{"scaler.scale", scale_.cpu()}, {"scaler.growth_tracker", growth_tracker_.cpu()}};
}

void DynamicLossScaler::load_state(const std::map<std::string, at::Tensor>& state) {
  if (auto it = state.find("scaler.scale"); it != state.end()) scale_.copy_(it->second);
  if (auto it = state.find("scaler.growth_tracker"); it != state.end())
    growth_tracker_.copy_(it->second);
}

}  // namespace cadclip::train

#include "cadclip/train/init_anchor.h"

#include <ATen/ops/lerp.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <algorithm>
#include <cmath>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"

namespace cadclip::train {

InitAnchor::InitAnchor(torch::nn::Module& model, const torch::nn::Module& start, double strength,
                       bool (*may_start_fresh)(const std::string& name))
    : strength_(strength) {
  if (!(strength > 0 && std::isfinite(strength)))
    throw Error(format("--init-anchor {} must be a positive number", strength));
  const auto source = start.named_parameters();
  for (auto& item : model.named_parameters()) {
    if (!item.value().requires_grad()) continue;
    const at::Tensor* value = source.find(item.key());
    const bool differs = value == nullptr || value->sizes() != item.value().sizes();
    if (differs && may_start_fresh != nullptr && may_start_fresh(item.key())) continue;
    if (differs)
      throw Error(format(
          "--init-anchor: tensor {} of the model is not in the --init checkpoint, or has another "
          "shape there: anchor to the checkpoint the run started from",
          item.key()));
    anchors_[item.value().unsafeGetTensorImpl()] = {
        item.value(), value->detach().to(item.value().options()).clone()};
  }
}

void InitAnchor::pull(torch::optim::Optimizer& optimizer) const {
  torch::NoGradGuard no_grad;
  for (auto& group : optimizer.param_groups()) {
    const double weight = std::min(1.0, group.options().get_lr() * strength_);
    if (weight == 0) continue;
    for (const at::Tensor& p : group.params()) {
      const auto it = anchors_.find(p.unsafeGetTensorImpl());
      if (it == anchors_.end()) continue;
      it->second.parameter.detach().lerp_(it->second.start, weight);
    }
  }
}

double InitAnchor::rms_drift() const {
  torch::NoGradGuard no_grad;
  double squares = 0;
  int64_t count = 0;
  for (const auto& [impl, anchor] : anchors_) {
    squares +=
        (anchor.parameter.detach() - anchor.start).to(at::kDouble).square().sum().item<double>();
    count += anchor.parameter.numel();
  }
  return count == 0 ? 0.0 : std::sqrt(squares / static_cast<double>(count));
}

}  // namespace cadclip::train

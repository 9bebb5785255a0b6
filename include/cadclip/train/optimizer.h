// The trainer's AdamW: four parameter groups, the pretrained text tower
// ("text.*") and the new modules, each with and without weight decay (norms,
// biases and the temperature get none), with CLIP's betas (0.9, 0.98) and
// eps 1e-6, stepped by one fused kernel per group. One definition for the
// trainer and the training-step benchmark.
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/optim/adamw.h>

namespace cadclip::train {

// The values come from TrainOptions (lr, text_lr, weight_decay), which holds the defaults.
struct AdamWSettings {
  double lr;            // the new modules (B-Rep tower, heads, quantity branch)
  double text_lr;       // the pretrained text tower
  double weight_decay;  // decoupled; never on norms, biases and the temperature
};

// The groups in this order: text with decay, text without, new with decay,
// new without. Parameters that do not require a gradient (a frozen text
// tower) are left out. `extra` (may be undefined): a trainable tensor outside
// the model, such as SigLIP's bias, put with the new modules without decay.
std::vector<torch::optim::OptimizerParamGroup> adamw_groups(torch::nn::Module& model,
                                                            const at::Tensor& extra,
                                                            const AdamWSettings& settings);
// Each group's learning rate before the schedule, in the order above.
std::vector<double> adamw_base_lr(const AdamWSettings& settings);

// AdamW whose step is ATen's fused kernel (`at::_fused_adamw_`, the kernel
// behind PyTorch's `AdamW(fused=True)`): one pass over each tensor instead of
// the seven of the per-tensor step, about 4x faster on CPU. It computes the
// same update in another order, so results agree with `torch::optim::AdamW`
// to rounding (a few 1e-8 per step), not bit for bit. The state is the same
// AdamWParamState (exp_avg, exp_avg_sq, step), so checkpoints of either load
// into the other. Each step moves the parameters' version counters, as an
// in-place update does. amsgrad is not supported (the trainer never sets it).
class FusedAdamW final : public torch::optim::AdamW {
 public:
  using torch::optim::AdamW::AdamW;
  at::Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace cadclip::train

// The trainer's AdamW: four parameter groups, the pretrained text tower
// ("text.*") and the new modules, each with and without weight decay (norms,
// biases and the temperature get none), with CLIP's betas (0.9, 0.98) and
// eps 1e-6. One definition for the trainer and the training-step benchmark.
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

}  // namespace cadclip::train

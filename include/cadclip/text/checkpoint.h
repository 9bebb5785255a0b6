// Activation checkpointing for LibTorch (which has no torch::utils::checkpoint):
// run a function without keeping its activations, and recompute it during
// backward with the same RNG state, so gradients equal the plain run's.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

namespace cadclip::text {

// Returns fn(inputs). When grad mode is on and some input requires grad, only
// `inputs` are saved; backward re-runs fn on detached copies under the saved
// CPU (and CUDA) RNG state and autocast settings. Tensors that fn uses
// without receiving them must not require grad (parameters of modules are
// fine: their gradients accumulate during the re-run). fn must return one
// tensor.
at::Tensor checkpoint(std::function<at::Tensor(const std::vector<at::Tensor>&)> fn,
                      std::vector<at::Tensor> inputs);

}  // namespace cadclip::text

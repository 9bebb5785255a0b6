// Dynamic loss scaling for fp16, on LibTorch's AMP operators. Nothing is
// skipped silently: every skipped step is returned with its reason for the
// trainer to log and count.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <vector>

namespace cadclip::train {

struct LossScalerOptions {
  double init_scale = 65536.0;  // first scale (2^16)
  double growth = 2.0;          // factor after `interval` finite steps in a row
  double backoff = 0.5;         // factor after a non-finite step
  int64_t interval = 2000;      // finite steps between growths
};

class DynamicLossScaler {
 public:
  DynamicLossScaler(bool enabled, const LossScalerOptions& options, c10::Device device);

  bool enabled() const { return enabled_; }
  // loss * scale (loss itself when disabled).
  at::Tensor scale(const at::Tensor& loss) const;
  // Divides the gradients by the scale in place; true when any is NaN/Inf.
  bool unscale_and_check(const std::vector<at::Tensor>& parameters);
  // Grows or backs off the scale after a step (found_inf from unscale_and_check).
  void update(bool found_inf);
  double current_scale() const;

  std::map<std::string, at::Tensor> state() const;  // for checkpoints
  void load_state(const std::map<std::string, at::Tensor>& state);

 private:
  bool enabled_;
  LossScalerOptions options_;
  at::Tensor scale_;           // [1] fp32
  at::Tensor growth_tracker_;  // [1] int32
  at::Tensor found_inf_;       // [1] fp32
};

}  // namespace cadclip::train

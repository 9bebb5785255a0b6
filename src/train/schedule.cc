#include "cadclip/train/schedule.h"

#include <torch/optim/adamw.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"

namespace cadclip::train {

LearningRateSchedule::LearningRateSchedule(const AdamWSettings& settings, int64_t total_steps,
                                           double warmup_share)
    : settings_(settings),
      base_(adamw_base_lr(settings)),
      total_(total_steps),
      warmup_(static_cast<int64_t>(warmup_share * static_cast<double>(total_steps))) {}

double LearningRateSchedule::factor(int64_t step) const {
  if (warmup_ > 0 && step < warmup_) return static_cast<double>(step + 1) / warmup_;
  const double progress =
      total_ > warmup_ ? static_cast<double>(step - warmup_) / static_cast<double>(total_ - warmup_)
                       : 1;
  return 0.5 * (1 + std::cos(std::numbers::pi * std::min(progress, 1.0)));
}

void LearningRateSchedule::apply(torch::optim::Optimizer& optimizer, int64_t step) const {
  auto& groups = optimizer.param_groups();
  if (groups.size() != base_.size())
    throw Error(
        format("the learning-rate schedule has {} groups, the optimizer {}: make the "
               "optimizer with adamw_groups",
               base_.size(), groups.size()));
  const double f = factor(step);
  for (size_t g = 0; g < groups.size(); ++g)
    static_cast<torch::optim::AdamWOptions&>(groups[g].options()).lr(base_[g] * f);
}

}  // namespace cadclip::train

// The learning-rate schedule: a linear warm-up over the first share of all
// steps, then a cosine decay to zero. Each AdamW group (train/optimizer.h)
// runs at its base rate (lr for the new modules, text_lr for the text tower)
// times the schedule's factor.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/optim/optimizer.h>

#include "cadclip/train/optimizer.h"

namespace cadclip::train {

class LearningRateSchedule {
 public:
  // total_steps: optimizer steps of the whole run; warmup_share in [0, 1].
  LearningRateSchedule(const AdamWSettings& settings, int64_t total_steps, double warmup_share);
  // In (0, 1]: (step + 1) / warmup during the warm-up, then
  // 0.5 (1 + cos(pi progress)) with progress from 0 at the warm-up's end to 1 at the last step.
  double factor(int64_t step) const;
  // The new modules' rate at `step` (B-Rep tower, heads): the one the logs report.
  double new_modules_rate(int64_t step) const { return settings_.lr * factor(step); }
  // Sets each group of an optimizer made from adamw_groups to its rate at `step`.
  void apply(torch::optim::Optimizer& optimizer, int64_t step) const;
  int64_t total_steps() const { return total_; }
  int64_t warmup_steps() const { return warmup_; }

 private:
  AdamWSettings settings_;
  std::vector<double> base_;  // per group, in adamw_groups' order
  int64_t total_;
  int64_t warmup_;
};

}  // namespace cadclip::train

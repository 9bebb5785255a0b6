#include "cadclip/train/training_plan.h"

#include <algorithm>

#include "cadclip/core/error.h"
#include "cadclip/core/format.h"
#include "cadclip/core/log.h"

namespace cadclip::train {

TrainingPlan::TrainingPlan(const PlanOptions& options, const RunPosition& from)
    : options_(options),
      global_step_(from.global_step),
      skipped_(from.skipped),
      consecutive_nonfinite_(from.consecutive_nonfinite) {
  // --stop-after-steps counts the skipped steps of earlier runs too; a run
  // takes at least one step.
  const int64_t most = options.stop_after_steps > 0
                           ? std::max<int64_t>(1, options.stop_after_steps - from.skipped)
                           : -1;
  int64_t planned = 0;
  for (int64_t epoch = from.epoch; epoch < options.epochs; ++epoch) {
    EpochPlan plan{epoch, {}};
    for (int64_t step = epoch == from.epoch ? from.step_in_epoch : 0;
         step < options.steps_per_epoch && planned != most; ++step, ++planned)
      plan.steps.push_back(step);
    epochs_.push_back(std::move(plan));
    if (planned == most) break;
  }
}

std::vector<std::pair<int64_t, int64_t>> TrainingPlan::steps() const {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const EpochPlan& plan : epochs_)
    for (const int64_t step : plan.steps) out.emplace_back(plan.index, step);
  return out;
}

int64_t TrainingPlan::step_count() const {
  int64_t count = 0;
  for (const EpochPlan& plan : epochs_) count += static_cast<int64_t>(plan.steps.size());
  return count;
}

AfterStep TrainingPlan::count(int64_t epoch, int64_t step, double loss,
                              const std::string& skip_reason) {
  if (!skip_reason.empty()) {
    ++skipped_;
    ++consecutive_nonfinite_;
    log::warn("train",
              "step {} (epoch {}, step {}): {}; step skipped ({} skipped in all, {} "
              "in a row, the run stops at {})",
              global_step_, epoch, step, skip_reason, skipped_, consecutive_nonfinite_,
              options_.max_nonfinite_steps);
    if (consecutive_nonfinite_ >= options_.max_nonfinite_steps)
      throw Error(
          format("stopping: {} non-finite steps in a row (last: {}). No checkpoint was "
                 "written after them; lower the learning rate or use fp32/bf16, and "
                 "resume from {}",
                 consecutive_nonfinite_, skip_reason, options_.resume_from.string()));
  } else {
    consecutive_nonfinite_ = 0;
    ++taken_;
    last_loss_ = loss;
  }
  ++global_step_;
  AfterStep after;
  after.stop = options_.stop_after_steps > 0 && taken_ + skipped_ >= options_.stop_after_steps;
  after.save_last = after.stop || (options_.checkpoint_every > 0 &&
                                   global_step_ % options_.checkpoint_every == 0);
  return after;
}

RunPosition TrainingPlan::position(int64_t epoch, int64_t step_in_epoch,
                                   double best_validation) const {
  return {epoch, step_in_epoch, global_step_, best_validation, skipped_, consecutive_nonfinite_};
}

}  // namespace cadclip::train

// The (epoch, step) plan of a run and every rule that ends it: the plan
// starts where the checkpoint left off and runs to the last step of the last
// epoch, cut short by --stop-after-steps; --max-nonfinite-steps skipped steps
// in a row stop the run with an error. The plan also counts the steps taken
// and skipped and says when `last` is saved between epochs (--checkpoint-every).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cadclip/train/checkpointer.h"

namespace cadclip::train {

struct PlanOptions {
  int64_t epochs = 1;
  int64_t steps_per_epoch = 0;
  int64_t stop_after_steps = 0;       // stop after this many steps, skipped ones counted; 0 = never
  int64_t max_nonfinite_steps = 5;    // skipped steps in a row that stop the run
  int64_t checkpoint_every = 0;       // also save `last` every N global steps; 0 = per epoch only
  std::filesystem::path resume_from;  // named in the error that stops the run
};

// The steps of one epoch that this run takes (none: only the epoch's end).
struct EpochPlan {
  int64_t index = 0;
  std::vector<int64_t> steps;
};

// What the loop does after a step.
struct AfterStep {
  bool save_last = false;  // save `last` at the step's end
  bool stop = false;       // stop here, before the epoch's end (--stop-after-steps)
};

class TrainingPlan {
 public:
  // `from`: where the run stands (a checkpoint's position; zero for a fresh run).
  TrainingPlan(const PlanOptions& options, const RunPosition& from);

  // The epochs from the one in progress to the last, each with its steps still to take.
  const std::vector<EpochPlan>& epochs() const { return epochs_; }
  // The same steps as (epoch, step) pairs in order: what the loader makes.
  std::vector<std::pair<int64_t, int64_t>> steps() const;
  int64_t step_count() const;  // steps of the plan

  // Counts the step at (epoch, step): taken with `loss`, or skipped for
  // `skip_reason` (non-empty), which is logged as a warning. Throws
  // cadclip::Error when max_nonfinite_steps were skipped in a row.
  AfterStep count(int64_t epoch, int64_t step, double loss, const std::string& skip_reason);

  int64_t global_step() const { return global_step_; }  // steps taken or skipped in all runs
  int64_t taken() const { return taken_; }              // steps taken in this run
  int64_t skipped() const { return skipped_; }          // steps skipped in all runs
  double last_loss() const { return last_loss_; }       // of the last step taken; 0 before
  // The position a checkpoint at (epoch, step_in_epoch) records.
  RunPosition position(int64_t epoch, int64_t step_in_epoch, double best_validation) const;

 private:
  PlanOptions options_;
  std::vector<EpochPlan> epochs_;
  int64_t global_step_;
  int64_t skipped_;
  int64_t consecutive_nonfinite_;
  int64_t taken_ = 0;
  double last_loss_ = 0;
};

}  // namespace cadclip::train

// What a training run tells: progress on stderr, one metrics line per step
// and per validation (metrics.jsonl and TensorBoard, train/metrics_log.h),
// the checkpoints (train/checkpointer.h) and the run's closing lines. Only
// rank 0 writes and logs; every rank takes part in saving a checkpoint.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "cadclip/core/progress.h"
#include "cadclip/data/pairwise_cache.h"
#include "cadclip/train/checkpointer.h"
#include "cadclip/train/metrics_log.h"
#include "cadclip/train/train_step.h"
#include "cadclip/train/training_plan.h"
#include "cadclip/train/validator.h"

namespace cadclip::train {

class TrainReporter {
 public:
  // A resumed run keeps the metrics up to `step` (the checkpoint's) and goes
  // on after them; a fresh one starts them anew.
  TrainReporter(const std::filesystem::path& run_folder, bool leader, bool resuming, int64_t step,
                std::unique_ptr<Checkpointer> checkpointer);

  // The "sources" record of a run that mixes its sources (--share).
  void sources(const nlohmann::json& per_source);
  // The progress line of the `steps` the run has left.
  void start(int64_t steps);
  // A step of `epoch` counted by `plan`: the progress line and a metrics line.
  void step(int64_t epoch, const TrainingPlan& plan, const StepResult& result);
  // A validation at the end of `epoch`: a metrics line and a log line.
  void validation(int64_t epoch, int64_t global_step, const ValidationReport& report);
  void checkpoint(const std::string& name, const RunPosition& position);
  // The run stopped early as asked (--stop-after-steps) after `steps` steps.
  void stopped(int64_t steps);
  // The run went through its plan.
  void done(const TrainingPlan& plan, int64_t truncated, int64_t max_text_length);
  // What the pairwise cache kept over the run, within budget_mb MiB.
  void pairwise(const data::PairwiseCache::Stats& kept, int64_t budget_mb);

 private:
  bool leader_;
  std::unique_ptr<MetricsLog> metrics_;
  std::unique_ptr<Checkpointer> checkpointer_;
  std::unique_ptr<Progress> progress_;
};

}  // namespace cadclip::train

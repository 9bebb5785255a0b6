// What a training run puts into a checkpoint besides the weights, and takes
// back when it resumes: the AdamW moments, the loss scale, every rank's RNG
// state (dropout), SigLIP's bias, the momentum side, the counters of skipped
// steps. train/checkpoint.h writes and reads the files; this gathers the state.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/optim/adamw.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cadclip/model/checkpoint_io.h"
#include "cadclip/model/model_config.h"
#include "cadclip/train/communicator.h"
#include "cadclip/train/loss_scaler.h"
#include "cadclip/train/momentum_encoders.h"

namespace cadclip::train {

// Where a run stands, as a checkpoint records it.
struct RunPosition {
  int64_t epoch = 0;          // epoch in progress
  int64_t step_in_epoch = 0;  // steps already taken in it
  int64_t global_step = 0;    // steps taken in all
  double best_validation = -1;
  int64_t skipped = 0;                // non-finite steps skipped in all
  int64_t consecutive_nonfinite = 0;  // ... in a row, up to now
};

// The parts of a run whose state a checkpoint holds; the momentum side may be null.
struct RunParts {
  model::BuiltModel& built;
  torch::optim::AdamW& optimizer;
  const at::Tensor& siglip_bias;  // undefined without SigLIP
  DynamicLossScaler& scaler;
  const MomentumEncoders* momentum;
};

class Checkpointer {
 public:
  Checkpointer(std::filesystem::path run_folder, Communicator& comm, RunParts parts);
  // Writes <run>/checkpoints/<name>.json on rank 0, every rank's RNG gathered;
  // all ranks wait for it.
  void save(const std::string& name, const RunPosition& position) const;
  // Puts a checkpoint's optimizer moments, loss scale and this rank's RNG
  // state back. Refuses (naming `checkpoint`) a mid-epoch checkpoint of
  // another process count, whose batches this run could not repeat.
  void restore(const model::TrainingState& state, const std::filesystem::path& checkpoint) const;

 private:
  std::filesystem::path out_;
  Communicator& comm_;
  RunParts parts_;
};

// The settings of `asked` that fix a model's shape and numerics and differ
// from the checkpoint's `saved`, each as "--flag asked (the checkpoint has saved)".
std::vector<std::string> resume_conflicts(const model::ModelConfig& asked,
                                          const model::ModelConfig& saved);

// The model config of the checkpoint `pointer` names (its config.json only).
model::ModelConfig checkpoint_config(const std::filesystem::path& pointer);

}  // namespace cadclip::train

// Checkpoints: weights as safetensors (brep, heads and temperature in
// model.safetensors; the text tower as a Hugging Face folder in text/), the
// model config as JSON, the training state in state.safetensors. Written
// atomically (a new folder, then a pointer file replaced atomically), and
// health-checked for NaN/Inf before writing and after reading.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cadclip/model/model_config.h"

namespace cadclip::train {

// The training state that is not weights.
struct TrainingState {
  int64_t epoch = 0;                                // epoch in progress
  int64_t step_in_epoch = 0;                        // steps already taken in that epoch
  int64_t global_step = 0;                          // optimizer steps taken in all
  double best_metric = -1;                          // best validation text->CAD R@1 so far
  std::map<std::string, at::Tensor> tensors;        // optimizer moments, scaler, RNG state, queues
  nlohmann::json extra = nlohmann::json::object();  // small values (skipped steps, ...)
};

// Writes <run>/checkpoints/<name>.json -> a new folder holding model.safetensors,
// text/ (config, tokenizer files, model.safetensors), config.json and
// state.safetensors; then removes folders that no pointer names. Refuses
// (cadclip::Error naming the tensors) when any tensor holds NaN or Inf.
void save_checkpoint(const std::filesystem::path& run_folder, const std::string& name,
                     const model::BuiltModel& model, const TrainingState& state);

// `path` is a checkpoint pointer (<name>.json), a checkpoint folder, or a run
// folder (then checkpoints/last.json). Refuses a sick or incomplete checkpoint
// with a message naming the tensors or files.
model::BuiltModel load_model_from_checkpoint(const std::filesystem::path& path);
TrainingState load_training_state(const std::filesystem::path& path);

// The checkpoint folder a path resolves to (see load_model_from_checkpoint).
std::filesystem::path resolve_checkpoint(const std::filesystem::path& path);

}  // namespace cadclip::train

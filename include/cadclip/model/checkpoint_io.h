// Checkpoints, written and read in one place: weights as safetensors (brep,
// heads and temperature in model.safetensors; the text tower as a Hugging
// Face folder in text/), the model config as JSON, the training state in
// state.safetensors. Written atomically (a new folder, then a pointer file
// replaced atomically), and health-checked for NaN/Inf before writing and
// after reading. In the model layer, so that eval, index and serve load a
// checkpoint without the train layer.
#pragma once

#include <ATen/core/Tensor.h>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cadclip/core/safetensors.h"
#include "cadclip/model/model_config.h"

namespace cadclip::model {

// What a training run saves beside the weights to resume.
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
                     const BuiltModel& model, const TrainingState& state);

// The checkpoint folder a path resolves to: `path` is a checkpoint pointer
// (<name>.json), a checkpoint folder, or a run folder (then
// checkpoints/last.json). Throws cadclip::Error naming the path otherwise.
std::filesystem::path resolve_checkpoint(const std::filesystem::path& path);

// The model of a checkpoint (see resolve_checkpoint), in eval mode on the CPU.
// Refuses a sick (NaN/Inf), incomplete or changed checkpoint (a weight file
// whose sha256 is not the one its pointer recorded) with a message naming
// the tensors or files.
BuiltModel load_model_from_checkpoint(const std::filesystem::path& path);

// Checks `files` of the checkpoint `path` (as in resolve_checkpoint; names
// relative to its folder: "model.safetensors", "text/model.safetensors",
// "state.safetensors") against the sha256 sums that the pointer naming it
// recorded when it was saved (for a folder: every pointer beside it that
// names it); throws cadclip::Error naming the file that differs. A file no
// pointer records a sum for (older checkpoints: only model_sha256) passes.
void verify_checkpoint_files(const std::filesystem::path& path,
                             const std::vector<std::string>& files);

// Opens one safetensors file of a checkpoint; refuses it (cadclip::Error
// naming the file and tensors) when a tensor holds NaN or Inf.
SafetensorsReader open_checkpoint_file(const std::filesystem::path& path);

// A checkpoint's identity: sha256 over its model.safetensors and
// text/model.safetensors (hex). Equal weights, equal identity, wherever the
// folder lies.
std::string checkpoint_identity(const std::filesystem::path& path);

// A released model: a checkpoint folder that holds what training changed
// and names the rest. Its text tower's pretrained weights stay in the
// installed text model folder, found by their sha256 (text/base.json), and
// only text tensors that differ from them are kept (text/changed.safetensors).
struct ExportOptions {
  std::filesystem::path text_base;  // the pretrained text folder the run started from
  std::string name;                 // the folder name under the output (e.g. cadclip-minilm-v1)
  bool fp16 = true;                 // store the B-Rep tower, heads and changed text tensors in
                                    // fp16 (half the size)
};
// Writes <out>/<name>/ (model.safetensors, config.json, text/ small files,
// text/base.json, text/changed.safetensors when a text tensor changed) and
// the pointer <out>/default.json with the files' sha256 sums; returns the
// pointer. Throws cadclip::Error when the checkpoint's text tensors are not
// the base's shape or the base folder has no model.safetensors.
std::filesystem::path export_model(const std::filesystem::path& checkpoint,
                                   const std::filesystem::path& out, const ExportOptions& options);

// The pretrained text folder a released model's text/base.json names: the
// first of $CADCLIP_TEXT_MODEL, the folders base.json lists and
// /opt/cadclip/models/<name> whose model.safetensors has the recorded
// sha256. Throws cadclip::Error naming the folders tried and the fix.
std::filesystem::path find_text_base(const std::filesystem::path& base_json);

// The model cadclip uses when none is named: $CADCLIP_MODEL, else the
// released model's pointer (models/default.json) in /opt/cadclip/models/cadclip
// or in the source tree this binary was built from. Throws cadclip::Error
// saying how to name one when none exists.
std::filesystem::path default_model();

// Copies what load_model_from_checkpoint needs of the checkpoint `path` (see
// resolve_checkpoint) into the folder `to`, created: model.safetensors,
// config.json and text/ (its weights, or a released model's base.json and
// changed tensors, and the tokenizer's small files), not the training state.
// load_model_from_checkpoint(to) then loads the same model, and checkpoint_identity(to) is the
// checkpoint's.
void copy_checkpoint_model(const std::filesystem::path& path, const std::filesystem::path& to);

// The training state of a checkpoint (see resolve_checkpoint), checked as
// load_model_from_checkpoint checks the weights.
TrainingState load_training_state(const std::filesystem::path& path);

}  // namespace cadclip::model

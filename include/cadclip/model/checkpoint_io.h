// Reading a two-tower model back from a checkpoint that train::save_checkpoint
// wrote (model.safetensors, text/, config.json); lives in the model layer so
// that eval, index and serve can load a checkpoint without the train layer.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cadclip/core/safetensors.h"
#include "cadclip/model/model_config.h"

namespace cadclip::model {

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

}  // namespace cadclip::model

// Reading a two-tower model back from a checkpoint that train::save_checkpoint
// wrote (model.safetensors, text/, config.json); lives in the model layer so
// that eval, index and serve can load a checkpoint without the train layer.
#pragma once

#include <filesystem>
#include <string>

#include "cadclip/core/safetensors.h"
#include "cadclip/model/model_config.h"

namespace cadclip::model {

// The checkpoint folder a path resolves to: `path` is a checkpoint pointer
// (<name>.json), a checkpoint folder, or a run folder (then
// checkpoints/last.json). Throws cadclip::Error naming the path otherwise.
std::filesystem::path resolve_checkpoint(const std::filesystem::path& path);

// The model of a checkpoint (see resolve_checkpoint), in eval mode on the CPU.
// Refuses a sick (NaN/Inf) or incomplete checkpoint with a message naming the
// tensors or files.
BuiltModel load_model_from_checkpoint(const std::filesystem::path& path);

// Opens one safetensors file of a checkpoint; refuses it (cadclip::Error
// naming the file and tensors) when a tensor holds NaN or Inf.
SafetensorsReader open_checkpoint_file(const std::filesystem::path& path);

// A checkpoint's identity: sha256 over its model.safetensors and
// text/model.safetensors (hex). Equal weights, equal identity, wherever the
// folder lies.
std::string checkpoint_identity(const std::filesystem::path& path);

}  // namespace cadclip::model

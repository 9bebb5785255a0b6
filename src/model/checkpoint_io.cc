#include "cadclip/model/checkpoint_io.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <nlohmann/json.hpp>
#include <set>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/hash.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/core/tensor_health.h"
#include "cadclip/data/tensor_io.h"

namespace cadclip::model {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTextPrefix = "text.encoder.";

// Every parameter and buffer of the model by name.
std::vector<std::pair<std::string, at::Tensor>> named_state(const torch::nn::Module& module) {
  std::vector<std::pair<std::string, at::Tensor>> state;
  for (const auto& item : module.named_parameters()) state.emplace_back(item.key(), item.value());
  for (const auto& item : module.named_buffers()) state.emplace_back(item.key(), item.value());
  return state;
}

void load_into(torch::nn::Module& module, const std::string& prefix, const SafetensorsReader& file,
               const std::set<std::string>& skip_prefixes) {
  at::NoGradGuard no_grad;
  std::vector<std::string> missing;
  for (auto& [name, target] : named_state(module)) {
    bool skipped = false;
    for (const auto& s : skip_prefixes) skipped |= name.starts_with(s);
    if (skipped) continue;
    const TensorInfo* info = file.find(prefix + name);
    if (info == nullptr) {
      missing.push_back(name);
      continue;
    }
    const at::Tensor value = data::read_tensor(file, *info);
    if (value.sizes() != target.sizes())
      throw Error(
          format("{}: tensor '{}' has shape {} but the model needs {}; the checkpoint "
                 "belongs to another model configuration",
                 file.path().string(), name, value.sizes(), target.sizes()));
    target.copy_(value);
  }
  if (!missing.empty()) {
    std::string names;
    for (const auto& n : missing) names += (names.empty() ? "" : ", ") + n;
    throw Error(format("{} lacks {} tensors the model needs: {}", file.path().string(),
                       missing.size(), names));
  }
}

}  // namespace

SafetensorsReader open_checkpoint_file(const fs::path& path) {
  SafetensorsReader file = SafetensorsReader::open(path);
  const HealthReport health = scan_health(file);
  if (!health.healthy())
    throw Error(
        format("refusing checkpoint file {}: tensors hold NaN or Inf: {}. Resume from an "
               "earlier checkpoint (best.json or an older run).",
               path.string(), health.sick_summary()));
  return file;
}

fs::path resolve_checkpoint(const fs::path& path) {
  fs::path pointer;
  if (fs::is_regular_file(path) && path.extension() == ".json") {
    pointer = path;
  } else if (fs::is_directory(path) && fs::exists(path / "model.safetensors")) {
    return path;
  } else if (fs::is_directory(path) && fs::exists(path / "checkpoints" / "last.json")) {
    pointer = path / "checkpoints" / "last.json";
  } else {
    throw Error(
        format("{} is no checkpoint: pass a run folder, a checkpoint pointer "
               "(checkpoints/last.json or best.json) or a checkpoint folder",
               path.string()));
  }
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(read_text_file(pointer));
  } catch (const nlohmann::json::exception& e) {
    throw Error(format("checkpoint pointer {} is not valid JSON: {}", pointer.string(), e.what()));
  }
  const fs::path folder = pointer.parent_path() / json.value("folder", std::string());
  if (!fs::exists(folder / "model.safetensors"))
    throw Error(format("checkpoint pointer {} names {}, which has no model.safetensors",
                       pointer.string(), folder.string()));
  return folder;
}

BuiltModel load_model_from_checkpoint(const fs::path& path) {
  const fs::path folder = resolve_checkpoint(path);
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(read_text_file(folder / "config.json"));
  } catch (const nlohmann::json::exception& e) {
    throw Error(format("{}: config.json is not valid JSON: {}", folder.string(), e.what()));
  }
  ModelConfig config = model_config_from_json(json);
  config.text_folder = (folder / config.text_folder).string();
  // build_model reads the text weights from text/model.safetensors; check
  // their health first so that a sick text tower is named, not loaded.
  open_checkpoint_file(folder / "text" / "model.safetensors");
  BuiltModel built = build_model(config);
  const SafetensorsReader weights = open_checkpoint_file(folder / "model.safetensors");
  load_into(*built.model, "", weights, {kTextPrefix});
  built.model->eval();
  return built;
}

std::string checkpoint_identity(const fs::path& path) {
  const fs::path folder = resolve_checkpoint(path);
  return sha256_hex(sha256_file_hex(folder / "model.safetensors") + "\n" +
                    sha256_file_hex(folder / "text" / "model.safetensors"));
}

}  // namespace cadclip::model

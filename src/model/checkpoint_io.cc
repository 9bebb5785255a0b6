#include "cadclip/model/checkpoint_io.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

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

namespace {

// The pointer files of <run>/checkpoints that name `folder`.
std::vector<fs::path> pointers_naming(const fs::path& folder) {
  std::vector<fs::path> pointers;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder.parent_path(), ec)) {
    if (entry.path().extension() != ".json" || !entry.is_regular_file()) continue;
    const nlohmann::json json =
        nlohmann::json::parse(read_text_file(entry.path()), nullptr, /*allow_exceptions=*/false);
    if (json.is_object() && json.value("folder", std::string()) == folder.filename().string())
      pointers.push_back(entry.path());
  }
  return pointers;
}

// The key of a pointer that records the sha256 of a checkpoint file.
const char* sha256_key(const std::string& file) {
  if (file == "model.safetensors") return "model_sha256";
  if (file == "text/model.safetensors") return "text_sha256";
  if (file == "state.safetensors") return "state_sha256";
  return nullptr;
}

}  // namespace

void verify_checkpoint_files(const fs::path& path, const std::vector<std::string>& files) {
  const fs::path folder = resolve_checkpoint(path);
  std::vector<fs::path> pointers;
  if (fs::is_regular_file(path) && path.extension() == ".json") {
    pointers.push_back(path);
  } else if (fs::is_directory(path) && !fs::exists(path / "model.safetensors")) {
    pointers.push_back(path / "checkpoints" / "last.json");
  } else {
    pointers = pointers_naming(folder);
  }
  std::map<std::string, std::string> computed;
  for (const fs::path& pointer : pointers) {
    const nlohmann::json json =
        nlohmann::json::parse(read_text_file(pointer), nullptr, /*allow_exceptions=*/false);
    if (!json.is_object()) continue;
    for (const std::string& file : files) {
      const char* key = sha256_key(file);
      if (key == nullptr || !json.contains(key) || !json[key].is_string()) continue;
      const std::string recorded = json[key].get<std::string>();
      if (!computed.count(file)) computed[file] = sha256_file_hex(folder / file);
      if (computed[file] != recorded)
        throw Error(
            format("refusing checkpoint file {}: its sha256 is {}, but {} recorded {} when it "
                   "was saved; the file was changed or damaged since. Use another checkpoint "
                   "(best.json or an earlier run), or train again.",
                   (folder / file).string(), computed[file].substr(0, 16), pointer.string(),
                   recorded.substr(0, 16)));
    }
  }
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
  // their health first so that a sick text tower is named, not loaded. Then
  // both files against the sums the pointer recorded: damage that leaves
  // the values finite shows only there.
  open_checkpoint_file(folder / "text" / "model.safetensors");
  const SafetensorsReader weights = open_checkpoint_file(folder / "model.safetensors");
  verify_checkpoint_files(path, {"model.safetensors", "text/model.safetensors"});
  BuiltModel built = build_model(config);
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

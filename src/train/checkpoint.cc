#include "cadclip/train/checkpoint.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <set>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/hash.h"
#include "cadclip/core/log.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/core/tensor_health.h"
#include "cadclip/data/tensor_io.h"
#include "cadclip/model/checkpoint_io.h"
#include "cadclip/model/pooled_text.h"

namespace cadclip::train {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTextPrefix = "text.encoder.";
// The small files of a Hugging Face / sentence-transformers folder that the
// text tower needs besides its weights.
constexpr const char* kTextFiles[] = {"config.json",
                                      "tokenizer.json",
                                      "tokenizer_config.json",
                                      "vocab.txt",
                                      "spm.model",
                                      "special_tokens_map.json",
                                      "modules.json",
                                      "sentence_bert_config.json",
                                      "added_tokens.json",
                                      "1_Pooling/config.json"};

// Every parameter and buffer of the model by name.
std::vector<std::pair<std::string, at::Tensor>> named_state(const torch::nn::Module& module) {
  std::vector<std::pair<std::string, at::Tensor>> state;
  for (const auto& item : module.named_parameters()) state.emplace_back(item.key(), item.value());
  for (const auto& item : module.named_buffers()) state.emplace_back(item.key(), item.value());
  return state;
}

// Names of tensors holding NaN or Inf, with counts.
std::string sick_tensors(const std::vector<std::pair<std::string, at::Tensor>>& tensors) {
  std::string sick;
  for (const auto& [name, t] : tensors) {
    if (!t.is_floating_point()) continue;
    const at::Tensor bad = ~at::isfinite(t.detach());
    const int64_t count = bad.sum().item<int64_t>();
    if (count == 0) continue;
    if (!sick.empty()) sick += ", ";
    sick += format("{} ({} of {})", name, count, t.numel());
  }
  return sick;
}

void write_tensors(const fs::path& path,
                   const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                   const std::map<std::string, std::string>& metadata) {
  SafetensorsWriter writer;
  for (const auto& [name, t] : tensors) data::add_tensor(writer, name, t);
  for (const auto& [key, value] : metadata) writer.set_metadata(key, value);
  writer.write(path);
}

}  // namespace

fs::path resolve_checkpoint(const fs::path& path) { return model::resolve_checkpoint(path); }

void save_checkpoint(const fs::path& run_folder, const std::string& name,
                     const model::BuiltModel& built, const TrainingState& state) {
  const auto all = named_state(*built.model);
  std::vector<std::pair<std::string, at::Tensor>> main_part, text_part;
  for (const auto& [tensor_name, t] : all) {
    if (tensor_name.starts_with(kTextPrefix)) {
      text_part.emplace_back(tensor_name.substr(std::string(kTextPrefix).size()), t);
    } else {
      main_part.emplace_back(tensor_name, t);
    }
  }
  std::vector<std::pair<std::string, at::Tensor>> state_tensors(state.tensors.begin(),
                                                                state.tensors.end());
  std::string sick = sick_tensors(all);
  const std::string sick_state = sick_tensors(state_tensors);
  if (!sick_state.empty()) sick += (sick.empty() ? "" : ", ") + sick_state;
  if (!sick.empty())
    throw Error(format("refusing to write checkpoint '{}' at step {}: tensors hold NaN or Inf: {}",
                       name, state.global_step, sick));

  const fs::path checkpoints = run_folder / "checkpoints";
  // A folder of its own, never one that exists: the model being saved may be
  // reading its text files from a checkpoint of the same name and step.
  std::string folder_name = format("{}-step{}", name, state.global_step);
  for (int n = 1; fs::exists(checkpoints / folder_name); ++n)
    folder_name = format("{}-step{}.{}", name, state.global_step, n);
  const fs::path folder = checkpoints / folder_name;
  fs::create_directories(folder / "text");

  write_tensors(folder / "model.safetensors", main_part, {{"format", "pt"}});
  write_tensors(folder / "text" / "model.safetensors", text_part, {{"format", "pt"}});
  if (!fs::exists(fs::path(built.config.text_folder) / "config.json"))
    throw Error(
        format("cannot save checkpoint '{}': the text model folder {} has no config.json "
               "any more",
               name, built.config.text_folder));
  for (const char* file : kTextFiles) {
    const fs::path source = fs::path(built.config.text_folder) / file;
    if (!fs::exists(source)) continue;  // each folder has only some of them
    fs::create_directories((folder / "text" / file).parent_path());
    const std::string content = read_text_file(source);
    write_text_atomic(folder / "text" / file, content);
  }
  model::ModelConfig saved = built.config;
  saved.text_folder = "text";  // relative to the checkpoint folder
  write_text_atomic(folder / "config.json", model::to_json(saved).dump(2) + "\n");
  nlohmann::json info = {{"epoch", state.epoch},
                         {"step_in_epoch", state.step_in_epoch},
                         {"global_step", state.global_step},
                         {"best_metric", state.best_metric},
                         {"extra", state.extra}};
  write_tensors(folder / "state.safetensors", state_tensors, {{"state", info.dump()}});

  // The commit point: the pointer is replaced atomically, so a crash before
  // this line leaves the previous checkpoint in force.
  nlohmann::json pointer = {{"folder", folder_name},
                            {"epoch", state.epoch},
                            {"global_step", state.global_step},
                            {"model_sha256", sha256_file_hex(folder / "model.safetensors")},
                            {"text_sha256", sha256_file_hex(folder / "text" / "model.safetensors")},
                            {"state_sha256", sha256_file_hex(folder / "state.safetensors")}};
  write_text_atomic(checkpoints / (name + ".json"), pointer.dump(2) + "\n");

  // Folders that no pointer names any more are old checkpoints, except the
  // one a resumed model still reads its text files from.
  std::set<std::string> in_use;
  const fs::path text_source = fs::weakly_canonical(built.config.text_folder);
  if (text_source.parent_path().parent_path() == fs::weakly_canonical(checkpoints))
    in_use.insert(text_source.parent_path().filename().string());
  for (const auto& entry : fs::directory_iterator(checkpoints)) {
    if (entry.path().extension() != ".json") continue;
    try {
      in_use.insert(nlohmann::json::parse(read_text_file(entry.path())).value("folder", ""));
    } catch (const std::exception&) {
      // A pointer being written by nobody else cannot be half-written; skip what is not ours.
    }
  }
  for (const auto& entry : fs::directory_iterator(checkpoints)) {
    if (entry.is_directory() && !in_use.contains(entry.path().filename().string()))
      fs::remove_all(entry.path());
  }
  log::info("checkpoint", "saved '{}' at step {} -> {}", name, state.global_step, folder.string());
}

model::BuiltModel load_model_from_checkpoint(const fs::path& path) {
  return model::load_model_from_checkpoint(path);
}

TrainingState load_training_state(const fs::path& path) {
  const fs::path folder = resolve_checkpoint(path);
  const SafetensorsReader file = model::open_checkpoint_file(folder / "state.safetensors");
  model::verify_checkpoint_files(path, {"state.safetensors"});
  TrainingState state;
  const auto it = file.metadata().find("state");
  if (it == file.metadata().end())
    throw Error(format("{}: state.safetensors has no 'state' metadata", folder.string()));
  const nlohmann::json info = nlohmann::json::parse(it->second);
  state.epoch = info.at("epoch").get<int64_t>();
  state.step_in_epoch = info.at("step_in_epoch").get<int64_t>();
  state.global_step = info.at("global_step").get<int64_t>();
  state.best_metric = info.at("best_metric").get<double>();
  state.extra = info.at("extra");
  for (const TensorInfo& t : file.tensors()) state.tensors[t.name] = data::read_tensor(file, t);
  return state;
}

}  // namespace cadclip::train

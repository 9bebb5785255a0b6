#include "cadclip/model/checkpoint_io.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/format.h"
#include "cadclip/core/hash.h"
#include "cadclip/core/log.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/core/tensor_health.h"
#include "cadclip/data/tensor_io.h"
#include "cadclip/text/text_model.h"

namespace cadclip::model {
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
    throw Error(format("{} lacks {} tensors the model needs: {}", file.path().string(),
                       missing.size(), join(missing)));
  }
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
  if (file == "text/changed.safetensors") return "text_changed_sha256";
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

namespace {

// A released model (export_model): the pretrained text weights from the
// installed folder its base.json names, then what training changed.
BuiltModel load_released_model(const fs::path& path, const fs::path& folder, ModelConfig config) {
  const fs::path base = find_text_base(folder / "text" / "base.json");
  const SafetensorsReader weights = open_checkpoint_file(folder / "model.safetensors");
  const fs::path changed_file = folder / "text" / "changed.safetensors";
  verify_checkpoint_files(path, {"model.safetensors", "text/changed.safetensors"});
  config.text_folder = base.string();
  BuiltModel built = build_model(config);
  load_into(*built.model, "", weights, {kTextPrefix});
  if (fs::exists(changed_file)) {
    const SafetensorsReader changed = open_checkpoint_file(changed_file);
    const auto state = named_state(*built.model);
    at::NoGradGuard no_grad;
    for (const TensorInfo& info : changed.tensors()) {
      const auto it = std::find_if(state.begin(), state.end(), [&](const auto& item) {
        return item.first == std::string(kTextPrefix) + info.name;
      });
      if (it == state.end())
        throw Error(
            format("{}: tensor '{}' is not in the text tower; the file belongs to "
                   "another model",
                   changed_file.string(), info.name));
      it->second.copy_(data::read_tensor(changed, info));
    }
  }
  built.model->eval();
  return built;
}

}  // namespace

BuiltModel load_model_from_checkpoint(const fs::path& path) {
  const fs::path folder = resolve_checkpoint(path);
  ModelConfig config = read_model_config(folder / "config.json");
  if (!fs::exists(folder / "text" / "model.safetensors") &&
      fs::exists(folder / "text" / "base.json"))
    return load_released_model(path, folder, std::move(config));
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
  const fs::path text = folder / "text";
  if (!fs::exists(text / "model.safetensors") && fs::exists(text / "base.json")) {
    const nlohmann::json base = nlohmann::json::parse(read_text_file(text / "base.json"));
    const std::string changed = fs::exists(text / "changed.safetensors")
                                    ? sha256_file_hex(text / "changed.safetensors")
                                    : std::string();
    return sha256_hex(sha256_file_hex(folder / "model.safetensors") + "\n" +
                      base.value("sha256", std::string()) + "\n" + changed);
  }
  return sha256_hex(sha256_file_hex(folder / "model.safetensors") + "\n" +
                    sha256_file_hex(text / "model.safetensors"));
}

fs::path find_text_base(const fs::path& base_json) {
  nlohmann::json base;
  try {
    base = nlohmann::json::parse(read_text_file(base_json));
  } catch (const nlohmann::json::exception& e) {
    throw Error(format("{} is not valid JSON: {}", base_json.string(), e.what()));
  }
  const std::string name = base.value("name", std::string());
  const std::string sha256 = base.value("sha256", std::string());
  if (name.empty() || sha256.empty())
    throw Error(
        format("{} names no pretrained text model (keys name and sha256)", base_json.string()));
  std::vector<fs::path> candidates = {text::default_text_model_folder()};
  for (const auto& folder : base.value("folders", std::vector<std::string>{}))
    candidates.emplace_back(folder);
  candidates.push_back(fs::path("/opt/cadclip/models") / name);
  std::vector<std::string> tried;
  for (const fs::path& folder : candidates) {
    const fs::path weights = folder / "model.safetensors";
    if (!fs::exists(weights)) {
      tried.push_back(format("{} (no model.safetensors)", folder.string()));
      continue;
    }
    const std::string found = sha256_file_hex(weights);
    if (found == sha256) return folder;
    tried.push_back(format("{} (other weights, sha256 {})", folder.string(), found.substr(0, 12)));
  }
  throw Error(format(
      "{} builds on the pretrained text model {} (sha256 {}), which is in none of "
      "{}. Run scripts/setup.sh, which installs it, or set CADCLIP_TEXT_MODEL to "
      "its folder",
      base_json.parent_path().parent_path().string(), name, sha256.substr(0, 12), join(tried)));
}

fs::path default_model() {
  if (const char* env = std::getenv("CADCLIP_MODEL"); env != nullptr && *env != '\0') {
    if (!fs::exists(env))
      throw Error(
          format("CADCLIP_MODEL={} does not exist; point it at a checkpoint (a "
                 "best.json, a run folder or models/default.json)",
                 env));
    return env;
  }
  // A build tree first (<source>/build/<preset>/apps/cadclip: the source's
  // models/), then what scripts/setup.sh installs.
  std::vector<fs::path> candidates;
  std::error_code ec;
  fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (int up = 0; up < 5 && !ec && dir.has_relative_path(); ++up, dir = dir.parent_path())
    candidates.push_back(dir / "models" / "default.json");
  candidates.emplace_back("/opt/cadclip/models/cadclip/default.json");
  for (const fs::path& pointer : candidates)
    if (fs::exists(pointer)) return pointer;
  throw Error(
      format("no model was named and the released model is not installed (looked for {}); "
             "name a checkpoint (a run's checkpoints/best.json) or run scripts/setup.sh",
             join(std::vector<std::string>(candidates.begin(), candidates.end()))));
}

fs::path export_model(const fs::path& checkpoint, const fs::path& out,
                      const ExportOptions& options) {
  const BuiltModel built = load_model_from_checkpoint(checkpoint);
  const fs::path base_weights = options.text_base / "model.safetensors";
  if (!fs::exists(base_weights))
    throw Error(
        format("export: the pretrained text folder {} has no model.safetensors; pass the "
               "folder the run started from (--text-base)",
               options.text_base.string()));
  const text::TextModel base = text::load_text_model(options.text_base, built.config.text);
  std::map<std::string, at::Tensor> base_state;
  for (const auto& [name, t] : named_state(*base.encoder)) base_state[name] = t;

  std::vector<std::pair<std::string, at::Tensor>> main_part, changed;
  for (const auto& [name, t] : named_state(*built.model)) {
    if (!name.starts_with(kTextPrefix)) {
      const bool half = options.fp16 && t.is_floating_point() && name != "log_logit_scale";
      main_part.emplace_back(name, half ? t.to(at::kHalf) : t);
      continue;
    }
    const std::string text_name = name.substr(std::string(kTextPrefix).size());
    const auto it = base_state.find(text_name);
    if (it == base_state.end() || it->second.sizes() != t.sizes())
      throw Error(
          format("export: text tensor '{}' of {} is not in {} with that shape; pass the "
                 "text folder the run started from",
                 text_name, checkpoint.string(), options.text_base.string()));
    if (!at::equal(it->second, t))
      changed.emplace_back(text_name, options.fp16 && t.is_floating_point() ? t.to(at::kHalf) : t);
  }
  const fs::path folder = out / options.name;
  fs::remove_all(folder);
  fs::create_directories(folder / "text");
  write_tensors(folder / "model.safetensors", main_part, {{"format", "pt"}});
  if (!changed.empty())
    write_tensors(folder / "text" / "changed.safetensors", changed, {{"format", "pt"}});
  for (const char* file : kTextFiles) {
    const fs::path source = options.text_base / file;
    if (!fs::exists(source)) continue;
    fs::create_directories((folder / "text" / file).parent_path());
    write_text_atomic(folder / "text" / file, read_text_file(source));
  }
  const nlohmann::json base_json = {
      {"name", fs::weakly_canonical(options.text_base).filename().string()},
      {"sha256", sha256_file_hex(base_weights)},
      {"folders", {fs::absolute(options.text_base).lexically_normal().string()}},
      {"changed_tensors", changed.size()}};
  write_text_atomic(folder / "text" / "base.json", base_json.dump(2) + "\n");
  ModelConfig saved = built.config;
  saved.text_folder = "text";
  write_text_atomic(folder / "config.json", nlohmann::json(saved).dump(2) + "\n");
  nlohmann::json pointer = {{"folder", options.name},
                            {"model_sha256", sha256_file_hex(folder / "model.safetensors")},
                            {"text_base_sha256", base_json["sha256"]}};
  if (!changed.empty())
    pointer["text_changed_sha256"] = sha256_file_hex(folder / "text" / "changed.safetensors");
  const fs::path pointer_file = out / "default.json";
  write_text_atomic(pointer_file, pointer.dump(2) + "\n");
  log::info("export", "{} -> {} ({} B-Rep and head tensors{}, {} text tensors changed)",
            checkpoint.string(), folder.string(), main_part.size(), options.fp16 ? " in fp16" : "",
            changed.size());
  return pointer_file;
}

void copy_checkpoint_model(const fs::path& path, const fs::path& to) {
  const fs::path folder = resolve_checkpoint(path);
  fs::create_directories(to / "text");
  fs::copy_file(folder / "model.safetensors", to / "model.safetensors",
                fs::copy_options::overwrite_existing);
  fs::copy_file(folder / "config.json", to / "config.json", fs::copy_options::overwrite_existing);
  // A released model names its pretrained text weights (base.json) and keeps
  // only what training changed.
  for (const char* weights : {"model.safetensors", "base.json", "changed.safetensors"})
    if (fs::exists(folder / "text" / weights))
      fs::copy_file(folder / "text" / weights, to / "text" / weights,
                    fs::copy_options::overwrite_existing);
  for (const char* file : kTextFiles) {
    const fs::path source = folder / "text" / file;
    if (!fs::exists(source)) continue;  // each folder has only some of them
    fs::create_directories((to / "text" / file).parent_path());
    fs::copy_file(source, to / "text" / file, fs::copy_options::overwrite_existing);
  }
}

void save_checkpoint(const fs::path& run_folder, const std::string& name, const BuiltModel& built,
                     const TrainingState& state) {
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
  ModelConfig saved = built.config;
  saved.text_folder = "text";  // relative to the checkpoint folder
  write_text_atomic(folder / "config.json", nlohmann::json(saved).dump(2) + "\n");
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

TrainingState load_training_state(const fs::path& path) {
  const fs::path folder = resolve_checkpoint(path);
  const SafetensorsReader file = open_checkpoint_file(folder / "state.safetensors");
  verify_checkpoint_files(path, {"state.safetensors"});
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

}  // namespace cadclip::model

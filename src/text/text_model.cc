#include "cadclip/text/text_model.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "cadclip/core/error.h"
#include "cadclip/core/file.h"
#include "cadclip/core/json_fields.h"
#include "cadclip/core/log.h"
#include "cadclip/core/safetensors.h"
#include "cadclip/text/bert.h"
#include "cadclip/text/deberta.h"
#include "cadclip/text/length_groups.h"
#include "json_config.h"

namespace cadclip::text {

CADCLIP_OPTION_FIELDS(
    TextModelOptions, (pooling, "auto (the folder's 1_Pooling/config.json, else cls), cls or mean"),
    (max_length,
     "Tokens per text with [CLS] and [SEP]; longer ones are cut; 0 = the folder's limit"),
    (activation_checkpointing,
     "Recompute the text tower's layers in backward instead of keeping their activations "
     "(less memory, about a third more text compute)"))
namespace fs = std::filesystem;

namespace {

constexpr const char* kModule = "text";

std::string shape_text(at::IntArrayRef shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string list_some(const std::vector<std::string>& names, size_t most = 12) {
  std::string text;
  for (size_t i = 0; i < names.size() && i < most; ++i) text += (i ? ", " : "") + names[i];
  if (names.size() > most) text += format(", ... ({} more)", names.size() - most);
  return text;
}

// The safetensors files of a folder: model.safetensors or the shards named by
// model.safetensors.index.json.
std::vector<SafetensorsReader> open_weights(const fs::path& folder) {
  std::vector<SafetensorsReader> files;
  if (fs::exists(folder / "model.safetensors")) {
    files.push_back(SafetensorsReader::open(folder / "model.safetensors"));
    return files;
  }
  const fs::path index = folder / "model.safetensors.index.json";
  if (fs::exists(index)) {
    const nlohmann::json doc = detail::read_json(index);
    std::set<std::string> shards;
    const nlohmann::json weight_map = doc.value("weight_map", nlohmann::json::object());
    for (const auto& [name, file] : weight_map.items()) shards.insert(file.get<std::string>());
    if (shards.empty()) throw Error(format("{}: the weight_map is empty", index.string()));
    for (const auto& shard : shards) files.push_back(SafetensorsReader::open(folder / shard));
    return files;
  }
  if (fs::exists(folder / "pytorch_model.bin"))
    throw Error(
        format("{}: has pytorch_model.bin only; cadclip reads safetensors. Convert it once "
               "in Python: AutoModel.from_pretrained(folder).save_pretrained(folder, "
               "safe_serialization=True)",
               folder.string()));
  throw Error(
      format("{}: no model.safetensors (or model.safetensors.index.json) found", folder.string()));
}

}  // namespace

std::pair<torch::Tensor, torch::Tensor> to_tensors(const TokenBatch& batch) {
  const auto options = at::TensorOptions().dtype(at::kLong);
  torch::Tensor ids =
      at::from_blob(const_cast<int64_t*>(batch.ids.data()), {batch.batch, batch.length}, options)
          .clone();
  torch::Tensor mask =
      at::from_blob(const_cast<int64_t*>(batch.mask.data()), {batch.batch, batch.length}, options)
          .clone();
  return {ids, mask};
}

void load_weights(TextEncoder& encoder, const fs::path& folder) {
  const std::vector<SafetensorsReader> files = open_weights(folder);
  struct Source {
    const SafetensorsReader* file;
    const TensorInfo* info;
  };
  std::map<std::string, Source> available;
  for (const auto& file : files)
    for (const auto& info : file.tensors()) available[info.name] = {&file, &info};

  // transformers' base_model_prefix: present when a head model was saved.
  const std::string base = encoder.architecture() == "bert" ? "bert." : "deberta.";
  const std::string prefix =
      available.count(base + "embeddings.word_embeddings.weight") ? base : "";

  std::set<std::string> used;
  std::vector<std::string> missing, mismatched, bad_dtype, not_finite;
  torch::NoGradGuard no_grad;
  for (auto& item : encoder.named_parameters(/*recurse=*/true)) {
    const std::string& name = item.key();
    torch::Tensor& param = item.value();
    std::string key = prefix + name;
    if (!available.count(key)) {
      // Old BERT checkpoints name LayerNorm parameters gamma and beta.
      std::string legacy = key;
      if (legacy.ends_with("LayerNorm.weight"))
        legacy.replace(legacy.size() - 6, 6, "gamma");
      else if (legacy.ends_with("LayerNorm.bias"))
        legacy.replace(legacy.size() - 4, 4, "beta");
      if (!available.count(legacy)) {
        missing.push_back(key);
        continue;
      }
      key = legacy;
    }
    used.insert(key);
    const Source& source = available.at(key);
    if (source.info->shape != std::vector<int64_t>(param.sizes().begin(), param.sizes().end())) {
      mismatched.push_back(format("{} is {} in the file, the model wants {}", key,
                                  shape_text(source.info->shape), shape_text(param.sizes())));
      continue;
    }
    const DType dtype = source.info->dtype;
    if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16 &&
        dtype != DType::kF64) {
      bad_dtype.push_back(format("{} ({})", key, dtype_name(dtype)));
      continue;
    }
    std::vector<float> values = source.file->to_f32(*source.info);
    const torch::Tensor loaded =
        at::from_blob(values.data(), param.sizes(), at::TensorOptions().dtype(at::kFloat));
    if (!at::isfinite(loaded).all().item<bool>()) not_finite.push_back(key);
    param.copy_(loaded);
  }
  const std::string where = files.size() == 1 ? files[0].path().string() : folder.string();
  if (!missing.empty())
    throw Error(
        format("{}: {} tensors of the {} encoder are missing: {}. Is this the right "
               "folder, and does config.json match the weights?",
               where, missing.size(), encoder.architecture(), list_some(missing)));
  if (!mismatched.empty())
    throw Error(format("{}: shapes disagree with config.json: {}", where, list_some(mismatched)));
  if (!bad_dtype.empty())
    throw Error(format("{}: cadclip reads F32, F16, BF16 and F64 weights; these are not: {}", where,
                       list_some(bad_dtype)));
  if (!not_finite.empty())
    throw Error(format("{}: weights hold NaN or Inf: {}; the checkpoint is damaged", where,
                       list_some(not_finite)));
  std::vector<std::string> unused;
  for (const auto& [name, source] : available)
    if (!used.count(name)) unused.push_back(name);
  if (!unused.empty())
    log::debug(kModule, "{}: {} tensors not used by the {} encoder (heads and extras): {}", where,
               unused.size(), encoder.architecture(), list_some(unused, 1000));
}

std::shared_ptr<TextEncoder> load_text_encoder(const fs::path& folder) {
  const fs::path config_path = folder / "config.json";
  const nlohmann::json doc = detail::read_json(config_path);
  const std::string type = detail::value_or<std::string>(doc, "model_type", "", config_path);
  std::shared_ptr<TextEncoder> encoder;
  if (type == "bert") {
    encoder = std::make_shared<BertEncoder>(BertConfig::from_file(config_path));
  } else if (type == "deberta-v2") {
    encoder = std::make_shared<DebertaV2Encoder>(DebertaV2Config::from_file(config_path));
  } else {
    throw Error(
        format("{}: model_type '{}' is not supported; cadclip's text encoders are 'bert' "
               "(BERT, MiniLM and other BERT-family sentence encoders) and 'deberta-v2' "
               "(DeBERTa-v2 and v3)",
               config_path.string(), type));
  }
  load_weights(*encoder, folder);
  encoder->eval();
  return encoder;
}

TextModel load_text_model(const fs::path& folder, const TextModelOptions& options) {
  if (!fs::is_directory(folder))
    throw Error(
        format("{}: not a folder; pass a Hugging Face model folder (config.json, "
               "model.safetensors, spm.model or vocab.txt)",
               folder.string()));
  TextModel model;
  model.folder = folder;
  std::string folder_pooling;
  // sentence-transformers: modules.json names the transformer and pooling folders.
  const fs::path modules_path = folder / "modules.json";
  if (fs::exists(modules_path)) {
    nlohmann::json modules;
    try {
      modules = nlohmann::json::parse(read_text_file(modules_path));
    } catch (const nlohmann::json::exception& e) {
      throw Error(format("{}: not valid JSON ({})", modules_path.string(), e.what()));
    }
    for (const auto& module : modules) {
      const std::string type = module.value("type", "");
      const std::string sub = module.value("path", "");
      const fs::path path = sub.empty() ? folder : folder / sub;
      if (type.ends_with("models.Transformer")) {
        model.folder = path;
      } else if (type.ends_with("models.Pooling")) {
        const nlohmann::json pooling = detail::read_json(path / "config.json");
        if (pooling.value("pooling_mode_mean_tokens", false))
          folder_pooling = "mean";
        else if (pooling.value("pooling_mode_cls_token", false))
          folder_pooling = "cls";
        else
          throw Error(
              format("{}: only mean and CLS pooling are supported; this folder asks for "
                     "another mode",
                     (path / "config.json").string()));
      }
    }
  }
  model.encoder = load_text_encoder(model.folder);
  model.encoder->set_activation_checkpointing(options.activation_checkpointing);
  model.tokenizer = load_tokenizer(model.folder);
  if (model.tokenizer->vocab_size() > model.encoder->vocab_size())
    throw Error(
        format("{}: the tokenizer has {} ids and the encoder's vocabulary only {}; the "
               "tokenizer files belong to another model",
               model.folder.string(), model.tokenizer->vocab_size(), model.encoder->vocab_size()));

  if (options.pooling == "auto") {
    model.pooling = folder_pooling == "mean" ? Pooling::kMean : Pooling::kCls;
  } else if (auto pooling = parse_pooling(options.pooling)) {
    model.pooling = *pooling;
  } else {
    throw Error(format("pooling '{}' is not one of auto, cls, mean", options.pooling));
  }

  int64_t length = options.max_length;
  if (length == 0 && fs::exists(model.folder / "sentence_bert_config.json"))
    length =
        detail::value_or<int64_t>(detail::read_json(model.folder / "sentence_bert_config.json"),
                                  "max_seq_length", 0, model.folder);
  if (length == 0 && fs::exists(model.folder / "tokenizer_config.json")) {
    // Unlimited tokenizers say model_max_length = 1e30; such values mean "none".
    const double limit =
        detail::value_or<double>(detail::read_json(model.folder / "tokenizer_config.json"),
                                 "model_max_length", 0.0, model.folder);
    if (limit > 0 && limit < 1e6) length = static_cast<int64_t>(limit);
  }
  if (length == 0) length = 512;
  const int64_t positions = model.encoder->max_positions();
  if (positions > 0 && length > positions) {
    if (options.max_length > 0)
      throw Error(format("max_length {} exceeds the {} positions of {}; choose at most {}",
                         options.max_length, positions, model.folder.string(), positions));
    length = positions;
  }
  if (length < 2) throw Error(format("max_length {} leaves no room for [CLS] and [SEP]", length));
  model.max_length = length;
  log::debug(kModule, "{}: {} encoder, hidden {}, {} tokenizer ({} ids), {} pooling, {} tokens",
             model.folder.string(), model.encoder->architecture(), model.encoder->hidden_size(),
             model.tokenizer->kind(), model.tokenizer->vocab_size(), pooling_name(model.pooling),
             model.max_length);
  return model;
}

torch::Tensor TextModel::embed(std::span<const std::string> texts, bool normalize,
                               int64_t batch_size) const {
  CADCLIP_CHECK(tokenizer && encoder, "TextModel::embed on a model that was not loaded");
  if (batch_size < 1) throw Error(format("batch_size {} must be at least 1", batch_size));
  if (texts.empty()) return at::empty({0, encoder->hidden_size()}, at::kFloat);
  torch::NoGradGuard no_grad;
  // Inputs go where the encoder's weights are; the result comes back to the CPU.
  const auto parameters = encoder->parameters();
  const at::Device device = parameters.empty() ? at::Device(at::kCPU) : parameters[0].device();
  return forward_in_length_groups(
      tokenize_rows(*tokenizer, texts, max_length), tokenizer->pad_id(), {.max_rows = batch_size},
      device, [&](const at::Tensor& ids, const at::Tensor& mask, std::span<const int64_t>) {
        torch::Tensor pooled = pool(encoder->forward(ids, mask), mask, pooling);
        if (normalize) pooled = pooled / pooled.norm(2, -1, true).clamp_min(1e-12);
        return pooled;
      });
}

std::filesystem::path default_text_model_folder() {
  if (const char* env = std::getenv("CADCLIP_TEXT_MODEL"); env != nullptr && *env != '\0')
    return env;
  return "/opt/cadclip/models/all-MiniLM-L6-v2";
}

}  // namespace cadclip::text

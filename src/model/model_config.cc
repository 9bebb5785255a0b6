#include "cadclip/model/model_config.h"

#include <nlohmann/json.hpp>

#include "cadclip/core/error.h"
#include "cadclip/model/pooled_text.h"

namespace cadclip::model {
std::string text_precision_name(c10::ScalarType type) {
  switch (type) {
    case c10::kBFloat16:
      return "bf16";
    case c10::kHalf:
      return "fp16";
    default:
      return "fp32";
  }
}

namespace {

template <class T>
void read(const nlohmann::json& json, const char* key, T& value) {
  const auto it = json.find(key);
  if (it == json.end()) return;  // keep the default
  try {
    value = it->get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(format("model config: '{}' has the wrong type ({})", key, e.what()));
  }
}

}  // namespace

c10::ScalarType parse_text_precision(const std::string& name) {
  if (name == "fp32") return c10::kFloat;
  if (name == "bf16") return c10::kBFloat16;
  if (name == "fp16") return c10::kHalf;
  throw Error(format("text precision '{}' is not fp32, bf16 or fp16", name));
}

nlohmann::json to_json(const ModelConfig& config) {
  const auto& b = config.brep;
  const auto& t = config.two_tower;
  return {
      {"brep",
       {{"width", b.width},
        {"layers", b.layers},
        {"heads", b.heads},
        {"ffn_hidden", b.ffn_hidden},
        {"face_channels", b.face_channels},
        {"edge_width", b.edge_width},
        {"max_hops", b.max_hops},
        {"dropout", b.dropout},
        {"attention_bias_init", b.attention_bias_init}}},
      {"two_tower",
       {{"embed_dim", t.embed_dim},
        {"init_temperature", t.init_temperature},
        {"max_logit_scale", t.max_logit_scale},
        {"text_head_hidden", t.text_head_hidden},
        {"quantity_width", t.quantity_width},
        {"text_precision", text_precision_name(t.text_precision)}}},
      {"text",
       {{"folder", config.text_folder},
        {"pooling", config.text.pooling},
        {"max_length", config.text.max_length},
        {"activation_checkpointing", config.text.activation_checkpointing}}},
  };
}

ModelConfig model_config_from_json(const nlohmann::json& json) {
  ModelConfig config;
  if (!json.is_object()) throw Error("model config is not a JSON object");
  const nlohmann::json empty = nlohmann::json::object();
  const auto& b = json.contains("brep") ? json.at("brep") : empty;
  read(b, "width", config.brep.width);
  read(b, "layers", config.brep.layers);
  read(b, "heads", config.brep.heads);
  read(b, "ffn_hidden", config.brep.ffn_hidden);
  read(b, "face_channels", config.brep.face_channels);
  read(b, "edge_width", config.brep.edge_width);
  read(b, "max_hops", config.brep.max_hops);
  read(b, "dropout", config.brep.dropout);
  read(b, "attention_bias_init", config.brep.attention_bias_init);
  const auto& t = json.contains("two_tower") ? json.at("two_tower") : empty;
  read(t, "embed_dim", config.two_tower.embed_dim);
  read(t, "init_temperature", config.two_tower.init_temperature);
  read(t, "max_logit_scale", config.two_tower.max_logit_scale);
  read(t, "text_head_hidden", config.two_tower.text_head_hidden);  // absent before: 0
  read(t, "quantity_width", config.two_tower.quantity_width);      // absent before: 0
  std::string precision = "fp32";
  read(t, "text_precision", precision);
  config.two_tower.text_precision = parse_text_precision(precision);
  const auto& x = json.contains("text") ? json.at("text") : empty;
  read(x, "folder", config.text_folder);
  read(x, "pooling", config.text.pooling);
  read(x, "max_length", config.text.max_length);
  read(x, "activation_checkpointing", config.text.activation_checkpointing);
  return config;
}

BuiltModel build_model(const ModelConfig& config) {
  config.brep.validate();
  config.two_tower.validate();
  if (config.text_folder.empty())
    throw Error("the model config names no text model folder (text.folder)");
  BuiltModel built;
  built.config = config;
  built.text = text::load_text_model(config.text_folder, config.text);
  built.text.encoder->set_activation_checkpointing(config.text.activation_checkpointing);
  PooledText pooled(built.text.encoder, built.text.pooling);
  built.model = TwoTower(BRepEncoder(config.brep), torch::nn::AnyModule(pooled),
                         built.text.encoder->hidden_size(), config.two_tower);
  return built;
}

}  // namespace cadclip::model
